// Scales one RGBA frame (see flipbook_resample.h): reductions with libvips, enlargements with
// pixman.
//
// vips_resize with `gap` 0 reduces each axis with the Lanczos-3 kernel straight from the source
// (no box pre-shrink, which is faster and blurrier), in the image's own sRGB values; only a
// reduction by more than MAX_DIRECT_REDUCE (which libvips's reducer refuses) box-shrinks by an
// integer factor first, leaving at least SHRINK_GAP for the kernel. A frame with any transparency
// is premultiplied into 8-bit samples first (as browsers' and Pillow's scalers do), scaled, then
// unpremultiplied with rounding to nearest; an opaque frame is scaled as it is. The operation
// cache is off (every frame is new) and each call evaluates on its own thread: Flipbook's decode
// threads are the parallelism. Measured on 2 cores, 1280×720 → 320×180: 4 ms a frame;
// premultiplying into floats instead cost 27 ms, into 16 bits 15 ms.
//
// libvips cannot enlarge with its Lanczos kernel (its reducer refuses factors below 1, and
// vips_resize enlarges with a bicubic affine a quarter pixel off centre: 30–34 dB against
// Pillow's Lanczos, BENCHMARKS.md "Resampling library"). When either axis grows, pixman scales
// instead: its separable-convolution filter with a Lanczos-3 kernel, premultiplied 8-bit
// (a8r8g8b8), one axis per composite — horizontally, then vertically — so each output pixel
// costs the taps of two one-dimensional kernels, not of their product (47–51 dB measured).
#include "flipbook_resample.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pixman.h>     // libpixman-1-dev
#include <vips/vips.h>  // libvips-dev

/// Reductions up to this factor use the kernel alone; larger ones shrink first.
#define MAX_DIRECT_REDUCE 40.0
/// What the kernel is left to reduce after that shrink.
#define SHRINK_GAP 16.0

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_status = 0;

/// Where libvips is told it lives (VIPSHOME) unless the environment says otherwise: a directory
/// with no `lib/vips-modules-8.x`, so vips_init loads none of Debian's modules (HEIF, JPEG XL,
/// ImageMagick, OpenSlide, Poppler loaders: 33 more shared libraries). Flipbook only resizes; the
/// modules cost 40 ms and about 12 MB of every process that scales a frame.
#define NO_MODULES_HOME "/nonexistent/flipbook-no-vips-modules"

static void start_vips(void) {
    setenv("VIPSHOME", NO_MODULES_HOME, 0);
    if (VIPS_INIT("flipbook")) {
        init_status = -1;
        return;
    }
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    vips_leak_set(FALSE);
}

static int fail(char *error, size_t size, int code, const char *what) {
    if (error && size > 0) {
        const char *detail = vips_error_buffer();
        snprintf(error, size, "%s%s%s", what, detail && *detail ? ": " : "", detail ? detail : "");
        // libvips keeps one error buffer per process; this call's message has been taken.
        vips_error_clear();
    }
    return code;
}

/// Phases of pixman's filter per input pixel, as a power of two (16).
#define PIXMAN_SUBSAMPLE_BITS 4

static inline uint8_t premultiplied(unsigned c, unsigned a) { return (uint8_t)((c * a + 127) / 255); }

static inline uint8_t unpremultiplied(unsigned c, unsigned a) {
    unsigned v = (c * 255 + a / 2) / a;  // a > 0; a colour above its alpha (overshoot) clamps
    return v > 255 ? 255 : (uint8_t)v;
}

/// One pixman composite of `source` (sw×sh, premultiplied a8r8g8b8) onto `target` (dw×dh):
/// Lanczos-3 on an axis whose size changes, one tap on the other.
static int pixman_pass(uint32_t *source, int sw, int sh, uint32_t *target, int dw, int dh) {
    pixman_image_t *s = pixman_image_create_bits(PIXMAN_a8r8g8b8, sw, sh, source, sw * 4);
    pixman_image_t *d = pixman_image_create_bits(PIXMAN_a8r8g8b8, dw, dh, target, dw * 4);
    int status = -1;
    if (!s || !d) goto done;
    double sx = (double)sw / dw, sy = (double)sh / dh;
    pixman_transform_t transform;
    pixman_transform_init_scale(&transform, pixman_double_to_fixed(sx), pixman_double_to_fixed(sy));
    int count = 0;
    pixman_fixed_t *parameters = pixman_filter_create_separable_convolution(
        &count, pixman_double_to_fixed(fmax(1.0, sx)), pixman_double_to_fixed(fmax(1.0, sy)), PIXMAN_KERNEL_IMPULSE,
        PIXMAN_KERNEL_IMPULSE, sw == dw ? PIXMAN_KERNEL_BOX : PIXMAN_KERNEL_LANCZOS3,
        sh == dh ? PIXMAN_KERNEL_BOX : PIXMAN_KERNEL_LANCZOS3, sw == dw ? 0 : PIXMAN_SUBSAMPLE_BITS,
        sh == dh ? 0 : PIXMAN_SUBSAMPLE_BITS);
    if (!parameters) goto done;
    int filtered = pixman_image_set_transform(s, &transform) &&
                   pixman_image_set_filter(s, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, parameters, count);
    free(parameters);
    if (!filtered) goto done;
    pixman_image_set_repeat(s, PIXMAN_REPEAT_PAD);
    pixman_image_composite32(PIXMAN_OP_SRC, s, NULL, d, 0, 0, 0, 0, 0, 0, dw, dh);
    status = 0;
done:
    if (s) pixman_image_unref(s);
    if (d) pixman_image_unref(d);
    return status;
}

/// The enlarging path: premultiplied into a8r8g8b8 words, two passes, unpremultiplied back.
static int enlarge_with_pixman(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, char *error,
                               size_t error_size) {
    size_t n = (size_t)sw * sh, m = (size_t)dw * dh;
    uint32_t *source = malloc(n * 4), *middle = malloc((size_t)dw * sh * 4), *target = malloc(m * 4);
    int status = 0;
    if (!source || !middle || !target) {
        status = -4;
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = src + i * 4;
        unsigned a = p[3];
        source[i] = (uint32_t)a << 24 | (uint32_t)premultiplied(p[0], a) << 16 |
                    (uint32_t)premultiplied(p[1], a) << 8 | premultiplied(p[2], a);
    }
    if (pixman_pass(source, sw, sh, middle, dw, sh) || pixman_pass(middle, dw, sh, target, dw, dh)) {
        status = -5;
        snprintf(error, error_size, "pixman could not scale the frame");
        goto done;
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t v = target[i];
        unsigned a = v >> 24;
        uint8_t *q = dst + i * 4;
        if (a == 0) {
            q[0] = q[1] = q[2] = q[3] = 0;
            continue;
        }
        q[0] = unpremultiplied((v >> 16) & 0xff, a);
        q[1] = unpremultiplied((v >> 8) & 0xff, a);
        q[2] = unpremultiplied(v & 0xff, a);
        q[3] = (uint8_t)a;
    }
done:
    free(source);
    free(middle);
    free(target);
    return status;
}

int flipbook_resample_start(void) {
    pthread_once(&once, start_vips);
    return init_status;
}

int flipbook_resample_rgba(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
                           int opaque, char *error, size_t error_size) {
    if (sw > 0 && sh > 0 && (dw > sw || dh > sh)) return enlarge_with_pixman(src, sw, sh, dst, dw, dh, error, error_size);
    pthread_once(&once, start_vips);
    if (init_status != 0) return fail(error, error_size, -1, "libvips did not start");
    if (sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0) return fail(error, error_size, -2, "empty image");

    VipsImage *base = vips_image_new_from_memory(src, (size_t)sw * sh * 4, sw, sh, 4, VIPS_FORMAT_UCHAR);
    if (!base) return fail(error, error_size, -3, "cannot wrap the frame");
    base->Type = VIPS_INTERPRETATION_sRGB;

    VipsImage *premultiplied = NULL, *scaled = NULL;
    uint8_t *buffer = NULL;
    int status = 0;
    double hscale = (double)dw / sw, vscale = (double)dh / sh;
    VipsImage *input = base;
    if (!opaque) {
        size_t n = (size_t)sw * sh;
        buffer = malloc(n * 4);
        if (!buffer) {
            status = fail(error, error_size, -4, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n * 4; i += 4) {
            unsigned a = src[i + 3];
            buffer[i + 0] = (uint8_t)((src[i + 0] * a + 127) / 255);
            buffer[i + 1] = (uint8_t)((src[i + 1] * a + 127) / 255);
            buffer[i + 2] = (uint8_t)((src[i + 2] * a + 127) / 255);
            buffer[i + 3] = (uint8_t)a;
        }
        premultiplied = vips_image_new_from_memory(buffer, n * 4, sw, sh, 4, VIPS_FORMAT_UCHAR);
        if (!premultiplied) {
            status = fail(error, error_size, -4, "cannot wrap the premultiplied frame");
            goto done;
        }
        input = premultiplied;
    }
    double factor = fmax(1 / hscale, 1 / vscale);
    double gap = factor > MAX_DIRECT_REDUCE ? SHRINK_GAP : 0.0;
    if (vips_resize(input, &scaled, hscale, "vscale", vscale, "kernel", VIPS_KERNEL_LANCZOS3, "gap", gap, NULL)) {
        status = fail(error, error_size, -5, "resize failed");
        goto done;
    }
    if (scaled->Xsize != dw || scaled->Ysize != dh || scaled->Bands != 4) {
        char what[96];
        snprintf(what, sizeof what, "libvips made %dx%d (%d bands), not %dx%d", scaled->Xsize, scaled->Ysize,
                 scaled->Bands, dw, dh);
        status = fail(error, error_size, -6, what);
        goto done;
    }
    // Evaluated here, on the calling thread, through one region over the whole output: no
    // libvips worker threads, so no hand-offs between threads (64 futex calls a frame with
    // vips_image_write_to_memory, and the CLI's two cores mostly idle). The pixels are the same.
    size_t size = (size_t)dw * dh * 4;
    uint8_t *memory = g_malloc(size);
    VipsRegion *region = vips_region_new(scaled);
    VipsRect all = {0, 0, dw, dh};
    if (!region || vips_region_prepare(region, &all)) {
        if (region) g_object_unref(region);
        g_free(memory);
        status = fail(error, error_size, -7, "evaluation failed");
        goto done;
    }
    for (int y = 0; y < dh; y++) memcpy(memory + (size_t)y * dw * 4, VIPS_REGION_ADDR(region, 0, y), (size_t)dw * 4);
    g_object_unref(region);
    size_t pixels = (size_t)dw * dh;
    if (scaled->BandFmt != VIPS_FORMAT_UCHAR) {
        status = fail(error, error_size, -8, "unexpected sample format");
    } else if (opaque) {
        // An opaque frame stays opaque: the kernel's rounding can leave 254 where weights of a
        // wide kernel do not sum to exactly one.
        memcpy(dst, memory, pixels * 4);
        for (size_t i = 3; i < pixels * 4; i += 4) dst[i] = 255;
    } else {
        const uint8_t *p = memory;
        for (size_t i = 0; i < pixels * 4; i += 4) {
            unsigned a = p[i + 3];
            if (a == 0) {
                dst[i] = dst[i + 1] = dst[i + 2] = dst[i + 3] = 0;
                continue;
            }
            // Rounded to nearest; a colour above its alpha (the kernel's overshoot) clamps to 255.
            unsigned r = (p[i] * 255 + a / 2) / a, g = (p[i + 1] * 255 + a / 2) / a, b = (p[i + 2] * 255 + a / 2) / a;
            dst[i] = r > 255 ? 255 : (uint8_t)r;
            dst[i + 1] = g > 255 ? 255 : (uint8_t)g;
            dst[i + 2] = b > 255 ? 255 : (uint8_t)b;
            dst[i + 3] = (uint8_t)a;
        }
    }
    g_free(memory);

done:
    if (scaled) g_object_unref(scaled);
    if (premultiplied) g_object_unref(premultiplied);
    g_object_unref(base);
    free(buffer);
    return status;
}

const char *flipbook_resample_library_version(void) {
    return vips_version_string();
}
