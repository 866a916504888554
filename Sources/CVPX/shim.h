// libvpx (Debian package libvpx-dev): the VP9 encoder of WebM previews.
#include <vpx/vp8cx.h>
#include <vpx/vpx_encoder.h>

// vpx_codec_enc_init is a macro naming the ABI version, and vpx_codec_control a variadic
// macro: Swift can call neither, so these call them.
static inline vpx_codec_err_t flipbook_vpx_encoder_open(vpx_codec_ctx_t *context, const vpx_codec_enc_cfg_t *config) {
    return vpx_codec_enc_init(context, vpx_codec_vp9_cx(), config, 0);
}

static inline vpx_codec_err_t flipbook_vpx_control(vpx_codec_ctx_t *context, int control, int value) {
    return vpx_codec_control_(context, control, value);
}
