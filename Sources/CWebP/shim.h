// libwebp and libwebpdemux, Debian package libwebp-dev.
#include <webp/decode.h>
#include <webp/demux.h>
