// zlib, Debian package zlib1g-dev.
#include <zlib.h>
