// Scales one RGBA frame (see flipbook_resample.h): reductions with clipped_lanczos.c, the
// largest box-shrunk first by box_shrink.c; enlargements with pixman.
//
// A reduction follows Pillow's LANCZOS conventions (the quality reference of issue 21): the
// Lanczos-3 kernel stretched by the factor, applied horizontally first and then vertically with
// 8-bit samples clamped in between, each axis only when its size changes, and near the edges a
// window clipped to the frame with its weights renormalised (no edge extension), in Pillow's
// integer arithmetic, so the premultiplied samples match Pillow's. libvips's reducers could not
// take this place: vips_resize reduces vertically first and extends the frame by copying its edge
// pixels (28 dB against Pillow on corpus frames ≤ 100 px), its horizontal reducer (8.14) is
// scalar (1.7× the whole frame's time), and its vectorised vertical one has 6-bit weights
// (48.5 dB at best) and was slower than clipped_lanczos.c's vectorised passes
// (BENCHMARKS.md, "Resampling library"). Only a reduction by more than MAX_DIRECT_REDUCE
// box-shrinks by whole factors first (box_shrink.c: each block's mean, as libvips's vips_shrink
// and Pillow's reduce take it), leaving at least SHRINK_GAP for the kernel, whose outputs stay
// centred where the whole frame's are. Samples are the frame's own sRGB values. A frame with any
// transparency is premultiplied into 8-bit samples first (as browsers' and Pillow's scalers do),
// scaled, then unpremultiplied with rounding to nearest; an opaque frame is scaled as it is. Each
// call works on its own thread: Flipbook's decode threads are the parallelism.
//
// libvips cannot enlarge with its Lanczos kernel (its reducer refuses factors below 1, and
// vips_resize enlarges with a bicubic affine a quarter pixel off centre: 30–34 dB against
// Pillow's Lanczos, BENCHMARKS.md "Resampling library"). When either axis grows, pixman scales
// instead: its separable-convolution filter with a Lanczos-3 kernel, premultiplied 8-bit
// (a8r8g8b8), one axis per composite — horizontally, then vertically — so each output pixel
// costs the taps of two one-dimensional kernels, not of their product (47–51 dB measured).
#include "flipbook_resample.h"
#include "alpha.h"
#include "box_shrink.h"
#include "clipped_lanczos.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pixman.h>  // libpixman-1-dev

/// Reductions up to this factor use the kernel alone; larger ones shrink first.
#define MAX_DIRECT_REDUCE 40.0
/// What the kernel is left to reduce after that shrink.
#define SHRINK_GAP 16.0

/// Puts `what` in `error` and returns `code`.
static int fail(char *error, size_t size, int code, const char *what) {
    if (error && size > 0) snprintf(error, size, "%s", what);
    return code;
}

/// Phases of pixman's filter per input pixel, as a power of two (16).
#define PIXMAN_SUBSAMPLE_BITS 4

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

int flipbook_resample_shrinks_first(int sw, int sh, int dw, int dh) {
    if (dw <= 0 || dh <= 0) return 0;
    return fmax((double)sw / dw, (double)sh / dh) > MAX_DIRECT_REDUCE;
}

/// The kernels of reducing sw×sh samples, which cover span_w×span_h (the frame's own size, or
/// less for a box-shrunk frame whose last blocks are partial), to dw×dh, copied out of the
/// thread's kept ones (a second clipped_lanczos_kept call moves the first's entry); an axis
/// whose size and span do not change has none (`in` 0). 0, or -1 when out of memory.
static int kernels(int sw, double span_w, int sh, double span_h, int dw, int dh, clipped_lanczos *horizontal,
                   clipped_lanczos *vertical) {
    memset(horizontal, 0, sizeof *horizontal);
    memset(vertical, 0, sizeof *vertical);
    const clipped_lanczos *kept;
    if (dw != sw || span_w != sw) {
        if (!(kept = clipped_lanczos_kept(sw, span_w, dw))) return -1;
        *horizontal = *kept;
    }
    if (dh != sh || span_h != sh) {
        if (!(kept = clipped_lanczos_kept(sh, span_h, dh))) return -1;
        *vertical = *kept;
    }
    return 0;
}

/// The source rectangle [*x0, *x1) × [*y0, *y1) that output rectangle (rx, ry, rw, rh) reads.
static void reach(const clipped_lanczos *horizontal, const clipped_lanczos *vertical, int rx, int ry, int rw, int rh,
                  int *x0, int *x1, int *y0, int *y1) {
    if (horizontal->in) clipped_lanczos_window(horizontal, rx, rx + rw, x0, x1);
    else *x0 = rx, *x1 = rx + rw;
    if (vertical->in) clipped_lanczos_window(vertical, ry, ry + rh, y0, y1);
    else *y0 = ry, *y1 = ry + rh;
}

/// The reducing path on 8-bit RGBA `pixels` (`sw` wide, premultiplied, or opaque), with the
/// axes' `kernels()`: output rectangle (rx, ry, rw, rh) of the reduction into `out` (rows
/// `out_stride` bytes apart) — horizontally, then vertically, 8 bits in between, each axis only
/// when its size changes. Each output sample is a function of its windows' samples alone, so a
/// rectangle comes out with exactly the bytes it has in the whole frame's reduction. Reads only
/// the source rectangle reach() names.
static int reduce_rect(const clipped_lanczos *horizontal, const clipped_lanczos *vertical, const uint8_t *pixels,
                       int sw, uint8_t *out, size_t out_stride, int rx, int ry, int rw, int rh, char *error,
                       size_t error_size) {
    size_t stride = (size_t)sw * 4;
    if (!horizontal->in && !vertical->in) {
        for (int y = 0; y < rh; y++)
            memcpy(out + (size_t)y * out_stride, pixels + (size_t)(ry + y) * stride + (size_t)rx * 4, (size_t)rw * 4);
        return 0;
    }
    if (!vertical->in) {
        clipped_lanczos_columns(horizontal, pixels + (size_t)ry * stride, stride, rh, rx, rx + rw, out, out_stride);
        return 0;
    }
    if (!horizontal->in) {
        if (clipped_lanczos_rows(vertical, pixels + (size_t)rx * 4, stride, 0, rw, ry, ry + rh, out, out_stride))
            return fail(error, error_size, -4, "out of memory");
        return 0;
    }
    int y0, y1;  // the rows the vertical pass reads, made by the horizontal one
    clipped_lanczos_window(vertical, ry, ry + rh, &y0, &y1);
    size_t middle_stride = (size_t)rw * 4;
    uint8_t *middle = malloc(middle_stride * (size_t)(y1 - y0));
    if (!middle) return fail(error, error_size, -4, "out of memory");
    clipped_lanczos_columns(horizontal, pixels + (size_t)y0 * stride, stride, y1 - y0, rx, rx + rw, middle,
                            middle_stride);
    int status = clipped_lanczos_rows(vertical, middle, middle_stride, y0, rw, ry, ry + rh, out, out_stride);
    free(middle);
    return status ? fail(error, error_size, -4, "out of memory") : 0;
}

/// Premultiplies source rectangle [x0, x1) × [y0, y1) of `src` into the same place in `buffer`.
static void premultiply(const uint8_t *src, int sw, uint8_t *buffer, int x0, int x1, int y0, int y1) {
    for (int y = y0; y < y1; y++) {
        size_t i = ((size_t)y * sw + x0) * 4, end = ((size_t)y * sw + x1) * 4;
        for (; i < end; i += 4) {
            unsigned a = src[i + 3];
            buffer[i + 0] = premultiplied(src[i + 0], a);
            buffer[i + 1] = premultiplied(src[i + 1], a);
            buffer[i + 2] = premultiplied(src[i + 2], a);
            buffer[i + 3] = (uint8_t)a;
        }
    }
}

/// Turns `rows` rows of `width` reduced pixels of `dst` (rows `stride` bytes apart) into the
/// output: an opaque frame's alpha set to 255 (the clamped sums of weights that add up to one
/// give 255; this makes sure of it), a premultiplied frame's colour divided by its alpha.
static void finish_output(uint8_t *dst, size_t stride, int width, int rows, int opaque) {
    for (int y = 0; y < rows; y++) {
        uint8_t *p = dst + (size_t)y * stride;
        for (int x = 0; x < width; x++, p += 4) {
            if (opaque) {
                p[3] = 255;
                continue;
            }
            unsigned a = p[3];
            if (a == 0) {
                p[0] = p[1] = p[2] = 0;
                continue;
            }
            // Rounded to nearest; a colour above its alpha (the kernel's overshoot) clamps to 255.
            p[0] = unpremultiplied(p[0], a);
            p[1] = unpremultiplied(p[1], a);
            p[2] = unpremultiplied(p[2], a);
        }
    }
}

/// Output rectangle (rx, ry, rw, rh) of a reduction by the kernel alone (no shrink first), for
/// an opaque frame or not, into `dst` (rows `dst_stride` bytes apart). The same size is the
/// frame's own pixels.
static int reduce_frame_rect(const uint8_t *src, int sw, int sh, uint8_t *dst, size_t dst_stride, int dw, int dh,
                             int opaque, int rx, int ry, int rw, int rh, char *error, size_t error_size) {
    clipped_lanczos horizontal, vertical;
    if (kernels(sw, sw, sh, sh, dw, dh, &horizontal, &vertical)) return fail(error, error_size, -4, "out of memory");
    int premultiplies = !opaque && (horizontal.in || vertical.in);
    uint8_t *buffer = NULL;
    if (premultiplies) {
        int x0, x1, y0, y1;
        reach(&horizontal, &vertical, rx, ry, rw, rh, &x0, &x1, &y0, &y1);
        // Full-sized so the passes address it as the source; only the reached rectangle is
        // written (and read: the AVX2 pass may load up to three pixels past a window, with zero
        // weights).
        if (!(buffer = malloc((size_t)sw * sh * 4))) return fail(error, error_size, -4, "out of memory");
        premultiply(src, sw, buffer, x0, x1, y0, y1);
    }
    int status =
        reduce_rect(&horizontal, &vertical, buffer ? buffer : src, sw, dst, dst_stride, rx, ry, rw, rh, error, error_size);
    free(buffer);
    if (status == 0 && (opaque || premultiplies)) finish_output(dst, dst_stride, rw, rh, opaque);
    return status;
}

/// The whole factor a reduction of `n` samples to `d` box-shrinks by first: as large as leaves
/// the kernel at least SHRINK_GAP, at least 1.
static int shrink_factor(int n, int d) { return (int)fmax(1.0, floor((double)n / d / SHRINK_GAP)); }

/// A reduction by more than MAX_DIRECT_REDUCE: box-shrunk by whole factors (box_shrink.c;
/// premultiplied on the way unless opaque), then the kernel over the shrunk frame, its outputs
/// centred where the whole frame's are — each shrunk pixel stands for kx×ky source pixels, so the
/// shrunk frame spans sw/kx × sh/ky of them, the last, partial blocks included (Pillow's resize
/// with `reducing_gap` does the same).
static int shrink_then_reduce(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, int opaque,
                              char *error, size_t error_size) {
    int kx = shrink_factor(sw, dw), ky = shrink_factor(sh, dh);
    if ((int64_t)kx * ky > BOX_SHRINK_MAX_BLOCK) return fail(error, error_size, -2, "the frame is too large to shrink");
    int w = box_shrink_length(sw, kx), h = box_shrink_length(sh, ky);
    uint8_t *shrunk = malloc((size_t)w * h * 4);
    if (!shrunk) return fail(error, error_size, -4, "out of memory");
    clipped_lanczos horizontal, vertical;
    int status = 0;
    if (box_shrink_rgba(src, sw, sh, kx, ky, !opaque, shrunk) ||
        kernels(w, (double)sw / kx, h, (double)sh / ky, dw, dh, &horizontal, &vertical))
        status = fail(error, error_size, -4, "out of memory");
    else
        status = reduce_rect(&horizontal, &vertical, shrunk, w, dst, (size_t)dw * 4, 0, 0, dw, dh, error, error_size);
    free(shrunk);
    if (status == 0) finish_output(dst, (size_t)dw * 4, dw, dh, opaque);
    return status;
}

int flipbook_resample_rgba(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
                           int opaque, char *error, size_t error_size) {
    if (sw > 0 && sh > 0 && (dw > sw || dh > sh)) return enlarge_with_pixman(src, sw, sh, dst, dw, dh, error, error_size);
    if (sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0) return fail(error, error_size, -2, "empty image");
    if (flipbook_resample_shrinks_first(sw, sh, dw, dh))
        return shrink_then_reduce(src, sw, sh, dst, dw, dh, opaque, error, error_size);
    return reduce_frame_rect(src, sw, sh, dst, (size_t)dw * 4, dw, dh, opaque, 0, 0, dw, dh, error, error_size);
}

/// Whether sw×sh → dw×dh is a reduction by the kernel alone, whose outputs can be made apart.
static int reduces_by_kernel(int sw, int sh, int dw, int dh) {
    return sw > 0 && sh > 0 && dw > 0 && dh > 0 && dw <= sw && dh <= sh && !flipbook_resample_shrinks_first(sw, sh, dw, dh);
}

int flipbook_resample_affected(int sw, int sh, int dw, int dh, int x, int y, int w, int h, int rect[4]) {
    if (!reduces_by_kernel(sw, sh, dw, dh)) return 0;
    clipped_lanczos horizontal, vertical;
    if (kernels(sw, sw, sh, sh, dw, dh, &horizontal, &vertical)) return 0;
    int x0 = x, x1 = x + w, y0 = y, y1 = y + h;
    if (horizontal.in) clipped_lanczos_reached_by(&horizontal, x, x + w, &x0, &x1);
    if (vertical.in) clipped_lanczos_reached_by(&vertical, y, y + h, &y0, &y1);
    if (x1 <= x0 || y1 <= y0) x0 = x1 = y0 = y1 = 0;
    rect[0] = x0;
    rect[1] = y0;
    rect[2] = x1 - x0;
    rect[3] = y1 - y0;
    return 1;
}

int flipbook_resample_reach(int sw, int sh, int dw, int dh, int rx, int ry, int rw, int rh, int rect[4]) {
    if (!reduces_by_kernel(sw, sh, dw, dh)) return 0;
    clipped_lanczos horizontal, vertical;
    if (kernels(sw, sw, sh, sh, dw, dh, &horizontal, &vertical)) return 0;
    int x0, x1, y0, y1;
    reach(&horizontal, &vertical, rx, ry, rw, rh, &x0, &x1, &y0, &y1);
    rect[0] = x0;
    rect[1] = y0;
    rect[2] = x1 - x0;
    rect[3] = y1 - y0;
    return 1;
}

int flipbook_resample_rgba_rect(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, int opaque, int rx,
                                int ry, int rw, int rh, char *error, size_t error_size) {
    if (!reduces_by_kernel(sw, sh, dw, dh)) return fail(error, error_size, -2, "not a reduction by the kernel alone");
    if (rx < 0 || ry < 0 || rw <= 0 || rh <= 0 || rx + rw > dw || ry + rh > dh)
        return fail(error, error_size, -2, "the rectangle is not inside the output");
    return reduce_frame_rect(src, sw, sh, dst, (size_t)rw * 4, dw, dh, opaque, rx, ry, rw, rh, error, error_size);
}

int flipbook_resample_columns_agree(const uint8_t *src, int sw, int sh, int dw) {
    const clipped_lanczos *kernel = clipped_lanczos_kept(sw, sw, dw);
    uint8_t *fast = malloc((size_t)dw * sh * 4), *portable = malloc((size_t)dw * sh * 4);
    int agree = -1;
    if (kernel && fast && portable) {
        clipped_lanczos_columns(kernel, src, (size_t)sw * 4, sh, 0, dw, fast, (size_t)dw * 4);
        clipped_lanczos_columns_portable(kernel, src, (size_t)sw * 4, sh, 0, dw, portable, (size_t)dw * 4);
        agree = memcmp(fast, portable, (size_t)dw * sh * 4) == 0;
    }
    free(fast);
    free(portable);
    return agree;
}
