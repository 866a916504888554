// libpng 1.6, Debian package libpng-dev.
#include <png.h>
