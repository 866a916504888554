// libwebp, libwebpdemux and libwebpmux, Debian package libwebp-dev.
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>
