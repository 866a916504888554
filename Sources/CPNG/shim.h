// libpng 1.6, Debian package libpng-dev.
#include <png.h>
// Flipbook's frame reader on libpng's full API (8-bit RGBA as Chromium shows PNGs).
#include "png_frame_reader.h"
