// giflib, Debian package libgif-dev.
#include <gif_lib.h>
