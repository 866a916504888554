// libx264 (Debian package libx264-dev): the H.264 encoder of MP4 previews.
#include <stdint.h>
#include <x264.h>

// x264_encoder_open is a macro naming the build's own symbol (x264_encoder_open_164), which
// Swift cannot call; this calls it.
static inline x264_t *flipbook_x264_encoder_open(x264_param_t *param) {
    return x264_encoder_open(param);
}
