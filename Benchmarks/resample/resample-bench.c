// resample-bench: scales RGBA frames with Flipbook's resampler, libvips and pixman, side by side
// (issue 21).
//
//   resample-bench [-n REPS] [-o OUTDIR] [-b SUBSAMPLE_BITS] [-m METHOD[,METHOD...]] [-c]
//                  FRAME.png:W[,W...] ...
//
// Each FRAME.png (8-bit, read as straight RGBA with libpng's simplified API) is scaled to every
// width W given after its colon, the height following the aspect: H = round(h * W / w). Every
// method takes the same straight-RGBA buffer in memory and gives a straight-RGBA buffer back, so
// the timings include whatever premultiplying, swizzling and unpremultiplying a method needs; PNG
// reading and writing are not timed. Methods:
//
//   vips-float        vips_premultiply (float) → vips_reduce(LANCZOS3) → vips_unpremultiply →
//                     vips_round(RINT) → vips_cast(uchar)
//   vips-float-trunc  the same without vips_round: vips_cast truncates toward zero
//   vips-u8           premultiplied into 8 bits by hand (rounded) → vips_resize(LANCZOS3, gap 0)
//                     → unpremultiplied by hand (rounded): what Sources/CResample did at 296dc79
//   vips-opaque       vips_reduce(LANCZOS3) on the uchar frame as it is (opaque frames only)
//   vips-affine       enlargements only: vips_premultiply → vips_affine (bicubic, centred) →
//                     vips_unpremultiply → vips_round → vips_cast
//   pixman            premultiplied a8r8g8b8 → separable-convolution filter (IMPULSE reconstruct,
//                     LANCZOS3 sample, SUBSAMPLE_BITS phases bits, default 4), scale transform,
//                     REPEAT_PAD, composite32(SRC) → unpremultiplied by hand (rounded)
//   pixman-2pass      the same as two composites, horizontal then vertical (8-bit in between)
//   flipbook          flipbook_resample_rgba, the one call through which Flipbook scales frames:
//                     Sources/CResample as this program was built with it (mk/resample.mk's
//                     RESAMPLE_SOURCES, so two checkouts' resamplers can be timed side by side)
//
// vips_reduce refuses factors below 1, so for an enlargement the vips-float methods call
// vips_resize instead (which enlarges with vips_affine and an interpolator, not the reducer).
// pixman's Lanczos is stretched by max(1, factor): the kernel's own width when enlarging.
//
// The methods run interleaved, REPS times each (default 9); -m runs only the methods named.
// Times are wall-clock, or with -c the process's CPU time, all its threads' (libvips hands work
// to threads of its own), which a shared machine's other processes add less to. One line per (frame, width, method) on stdout, tab-separated: frame
// sw sh dw dh opaque method median_ms min_ms max_ms output.png. Outputs are written to OUTDIR
// (default .) as STEM_DWxDH_METHOD.png.
#include <errno.h>
#include <math.h>
#include <png.h>
#include <pixman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vips/vips.h>

#include "flipbook_resample.h"

typedef struct {
    int w, h;
    uint8_t *px;  // straight RGBA, w*h*4
} Frame;

typedef int (*Method)(const Frame *src, int dw, int dh, uint8_t *dst);

static int subsample_bits = 4;
static clockid_t timing_clock = CLOCK_MONOTONIC;

static void die(const char *what, const char *detail) {
    fprintf(stderr, "resample-bench: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void vips_die(const char *what) {
    die(what, vips_error_buffer());
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(timing_clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int load_png(const char *path, Frame *f) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&image, path)) die(path, image.message);
    image.format = PNG_FORMAT_RGBA;
    f->w = (int)image.width;
    f->h = (int)image.height;
    f->px = malloc(PNG_IMAGE_SIZE(image));
    if (!f->px) die("out of memory", NULL);
    if (!png_image_finish_read(&image, NULL, f->px, 0, NULL)) die(path, image.message);
    return 0;
}

static void save_png(const char *path, const uint8_t *px, int w, int h) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)w;
    image.height = (png_uint_32)h;
    image.format = PNG_FORMAT_RGBA;
    if (!png_image_write_to_file(&image, path, 0, px, 0, NULL)) die(path, image.message);
}

static int is_opaque(const Frame *f) {
    size_t n = (size_t)f->w * f->h;
    for (size_t i = 0; i < n; i++)
        if (f->px[i * 4 + 3] != 255) return 0;
    return 1;
}

static inline uint8_t premul(unsigned c, unsigned a) {
    return (uint8_t)((c * a + 127) / 255);
}

static inline uint8_t unpremul(unsigned c, unsigned a) {
    unsigned v = (c * 255 + a / 2) / a;  // a > 0; a colour above its alpha (overshoot) clamps
    return v > 255 ? 255 : (uint8_t)v;
}

// Copies a finished vips image (uchar, 4 bands, dw×dh) into dst.
static int vips_take(VipsImage *out, int dw, int dh, uint8_t *dst) {
    if (out->Xsize != dw || out->Ysize != dh || out->Bands != 4 || out->BandFmt != VIPS_FORMAT_UCHAR) {
        fprintf(stderr, "resample-bench: libvips made %dx%d, %d bands, format %d; wanted %dx%d uchar RGBA\n",
                out->Xsize, out->Ysize, out->Bands, out->BandFmt, dw, dh);
        return -1;
    }
    size_t size = 0;
    void *mem = vips_image_write_to_memory(out, &size);
    if (!mem) vips_die("vips_image_write_to_memory");
    memcpy(dst, mem, (size_t)dw * dh * 4);
    g_free(mem);
    return 0;
}

// Lanczos-3 to dw×dh: vips_reduce when shrinking on both axes, else vips_resize.
static int lanczos3_to(VipsImage *in, VipsImage **out, int dw, int dh) {
    double hs = (double)in->Xsize / dw, vs = (double)in->Ysize / dh;
    if (hs >= 1.0 && vs >= 1.0)
        return vips_reduce(in, out, hs, vs, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
    return vips_resize(in, out, 1.0 / hs, "vscale", 1.0 / vs, "kernel", VIPS_KERNEL_LANCZOS3, NULL);
}

static int vips_float_common(const Frame *src, int dw, int dh, uint8_t *dst, int round) {
    VipsImage *in = vips_image_new_from_memory(src->px, (size_t)src->w * src->h * 4, src->w, src->h, 4,
                                               VIPS_FORMAT_UCHAR);
    if (!in) vips_die("vips_image_new_from_memory");
    in->Type = VIPS_INTERPRETATION_sRGB;
    VipsImage *t[5] = {NULL};
    if (vips_premultiply(in, &t[0], NULL)) vips_die("vips_premultiply");
    if (lanczos3_to(t[0], &t[1], dw, dh)) vips_die("vips_reduce");
    if (vips_unpremultiply(t[1], &t[2], NULL)) vips_die("vips_unpremultiply");
    VipsImage *last = t[2];
    if (round) {
        if (vips_round(t[2], &t[3], VIPS_OPERATION_ROUND_RINT, NULL)) vips_die("vips_round");
        last = t[3];
    }
    if (vips_cast(last, &t[4], VIPS_FORMAT_UCHAR, NULL)) vips_die("vips_cast");
    int status = vips_take(t[4], dw, dh, dst);
    for (int i = 4; i >= 0; i--)
        if (t[i]) g_object_unref(t[i]);
    g_object_unref(in);
    return status;
}

static int m_vips_float(const Frame *src, int dw, int dh, uint8_t *dst) {
    return vips_float_common(src, dw, dh, dst, 1);
}

static int m_vips_float_trunc(const Frame *src, int dw, int dh, uint8_t *dst) {
    return vips_float_common(src, dw, dh, dst, 0);
}

static int m_vips_u8(const Frame *src, int dw, int dh, uint8_t *dst) {
    size_t n = (size_t)src->w * src->h;
    uint8_t *buf = malloc(n * 4);
    if (!buf) die("out of memory", NULL);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = src->px + i * 4;
        uint8_t *q = buf + i * 4;
        q[0] = premul(p[0], p[3]);
        q[1] = premul(p[1], p[3]);
        q[2] = premul(p[2], p[3]);
        q[3] = p[3];
    }
    VipsImage *in = vips_image_new_from_memory(buf, n * 4, src->w, src->h, 4, VIPS_FORMAT_UCHAR);
    if (!in) vips_die("vips_image_new_from_memory");
    in->Type = VIPS_INTERPRETATION_sRGB;
    VipsImage *out = NULL;
    if (vips_resize(in, &out, (double)dw / src->w, "vscale", (double)dh / src->h, "kernel", VIPS_KERNEL_LANCZOS3,
                    "gap", 0.0, NULL))
        vips_die("vips_resize");
    int status = vips_take(out, dw, dh, dst);
    g_object_unref(out);
    g_object_unref(in);
    free(buf);
    if (status) return status;
    size_t m = (size_t)dw * dh;
    for (size_t i = 0; i < m; i++) {
        uint8_t *q = dst + i * 4;
        unsigned a = q[3];
        if (a == 0) {
            q[0] = q[1] = q[2] = 0;
            continue;
        }
        q[0] = unpremul(q[0], a);
        q[1] = unpremul(q[1], a);
        q[2] = unpremul(q[2], a);
    }
    return 0;
}

static int m_vips_opaque(const Frame *src, int dw, int dh, uint8_t *dst) {
    VipsImage *in = vips_image_new_from_memory(src->px, (size_t)src->w * src->h * 4, src->w, src->h, 4,
                                               VIPS_FORMAT_UCHAR);
    if (!in) vips_die("vips_image_new_from_memory");
    in->Type = VIPS_INTERPRETATION_sRGB;
    VipsImage *out = NULL;
    if (lanczos3_to(in, &out, dw, dh)) vips_die("vips_reduce");
    int status = vips_take(out, dw, dh, dst);
    g_object_unref(out);
    g_object_unref(in);
    return status;
}

// One pixman composite: src (premultiplied a8r8g8b8, sw×sh) to dst (dw×dh), Lanczos-3 on each axis
// whose factor is not 1 and a single tap (BOX of one pixel, one phase) on an axis left as it is.
static void pixman_pass(uint32_t *sbuf, int sw, int sh, uint32_t *dbuf, int dw, int dh) {
    pixman_image_t *s = pixman_image_create_bits(PIXMAN_a8r8g8b8, sw, sh, sbuf, sw * 4);
    pixman_image_t *d = pixman_image_create_bits(PIXMAN_a8r8g8b8, dw, dh, dbuf, dw * 4);
    if (!s || !d) die("pixman_image_create_bits failed", NULL);
    double sx = (double)sw / dw, sy = (double)sh / dh;
    pixman_transform_t t;
    pixman_transform_init_scale(&t, pixman_double_to_fixed(sx), pixman_double_to_fixed(sy));
    if (!pixman_image_set_transform(s, &t)) die("pixman_image_set_transform failed", NULL);
    int nparams = 0;
    pixman_kernel_t kx = sw == dw ? PIXMAN_KERNEL_BOX : PIXMAN_KERNEL_LANCZOS3;
    pixman_kernel_t ky = sh == dh ? PIXMAN_KERNEL_BOX : PIXMAN_KERNEL_LANCZOS3;
    pixman_fixed_t *params = pixman_filter_create_separable_convolution(
        &nparams, pixman_double_to_fixed(fmax(1.0, sx)), pixman_double_to_fixed(fmax(1.0, sy)), PIXMAN_KERNEL_IMPULSE,
        PIXMAN_KERNEL_IMPULSE, kx, ky, sw == dw ? 0 : subsample_bits, sh == dh ? 0 : subsample_bits);
    if (!params) die("pixman_filter_create_separable_convolution failed", NULL);
    if (!pixman_image_set_filter(s, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, params, nparams))
        die("pixman_image_set_filter failed", NULL);
    free(params);
    pixman_image_set_repeat(s, PIXMAN_REPEAT_PAD);
    pixman_image_composite32(PIXMAN_OP_SRC, s, NULL, d, 0, 0, 0, 0, 0, 0, dw, dh);
    pixman_image_unref(s);
    pixman_image_unref(d);
}

static int pixman_common(const Frame *src, int dw, int dh, uint8_t *dst, int two_pass) {
    size_t n = (size_t)src->w * src->h, m = (size_t)dw * dh;
    uint32_t *sbuf = malloc(n * 4), *dbuf = malloc(m * 4), *mid = NULL;
    if (!sbuf || !dbuf) die("out of memory", NULL);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = src->px + i * 4;
        unsigned a = p[3];
        sbuf[i] = (uint32_t)a << 24 | (uint32_t)premul(p[0], a) << 16 | (uint32_t)premul(p[1], a) << 8 |
                  premul(p[2], a);
    }
    if (two_pass) {
        // Horizontal, then vertical: pixman's "separable" filter evaluates every (x, y) tap pair
        // for each output pixel; two one-axis passes take the sum of the taps, not their product.
        mid = malloc((size_t)dw * src->h * 4);
        if (!mid) die("out of memory", NULL);
        pixman_pass(sbuf, src->w, src->h, mid, dw, src->h);
        pixman_pass(mid, dw, src->h, dbuf, dw, dh);
    } else {
        pixman_pass(sbuf, src->w, src->h, dbuf, dw, dh);
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t v = dbuf[i];
        unsigned a = v >> 24;
        uint8_t *q = dst + i * 4;
        if (a == 0) {
            q[0] = q[1] = q[2] = q[3] = 0;
            continue;
        }
        q[0] = unpremul((v >> 16) & 0xff, a);
        q[1] = unpremul((v >> 8) & 0xff, a);
        q[2] = unpremul(v & 0xff, a);
        q[3] = (uint8_t)a;
    }
    free(sbuf);
    free(dbuf);
    free(mid);
    return 0;
}

static int m_pixman(const Frame *src, int dw, int dh, uint8_t *dst) {
    return pixman_common(src, dw, dh, dst, 0);
}

static int m_pixman_2pass(const Frame *src, int dw, int dh, uint8_t *dst) {
    return pixman_common(src, dw, dh, dst, 1);
}

// Enlargement with libvips, centred: float premultiplied → vips_affine (bicubic, the best kernel
// libvips's affine offers; idx/idy put output pixel centres on the input's sample grid the way
// the reducer and Pillow do) → unpremultiply → round → uchar.
static int m_vips_affine(const Frame *src, int dw, int dh, uint8_t *dst) {
    VipsImage *in = vips_image_new_from_memory(src->px, (size_t)src->w * src->h * 4, src->w, src->h, 4,
                                               VIPS_FORMAT_UCHAR);
    if (!in) vips_die("vips_image_new_from_memory");
    in->Type = VIPS_INTERPRETATION_sRGB;
    double sx = (double)dw / src->w, sy = (double)dh / src->h;
    VipsInterpolate *bicubic = vips_interpolate_new("bicubic");
    VipsImage *t[5] = {NULL};
    if (vips_premultiply(in, &t[0], NULL)) vips_die("vips_premultiply");
    if (vips_affine(t[0], &t[1], sx, 0.0, 0.0, sy, "interpolate", bicubic, "idx", 0.5 - 0.5 / sx, "idy",
                    0.5 - 0.5 / sy, "extend", VIPS_EXTEND_COPY, "oarea", vips_array_int_newv(4, 0, 0, dw, dh),
                    NULL))
        vips_die("vips_affine");
    if (vips_unpremultiply(t[1], &t[2], NULL)) vips_die("vips_unpremultiply");
    if (vips_round(t[2], &t[3], VIPS_OPERATION_ROUND_RINT, NULL)) vips_die("vips_round");
    if (vips_cast(t[3], &t[4], VIPS_FORMAT_UCHAR, NULL)) vips_die("vips_cast");
    int status = vips_take(t[4], dw, dh, dst);
    for (int i = 4; i >= 0; i--)
        if (t[i]) g_object_unref(t[i]);
    g_object_unref(bicubic);
    g_object_unref(in);
    return status;
}

static int m_flipbook(const Frame *src, int dw, int dh, uint8_t *dst) {
    char error[256];
    if (flipbook_resample_rgba(src->px, src->w, src->h, dst, dw, dh, is_opaque(src), error, sizeof error)) {
        fprintf(stderr, "resample-bench: flipbook_resample_rgba: %s\n", error);
        return -1;
    }
    return 0;
}

static const struct {
    const char *name;
    Method fn;
    int opaque_only, enlarge_only;
} methods[] = {
    {"vips-float", m_vips_float, 0, 0},   {"vips-float-trunc", m_vips_float_trunc, 0, 0},
    {"vips-u8", m_vips_u8, 0, 0},         {"vips-opaque", m_vips_opaque, 1, 0},
    {"vips-affine", m_vips_affine, 0, 1}, {"pixman", m_pixman, 0, 0},
    {"pixman-2pass", m_pixman_2pass, 0, 0}, {"flipbook", m_flipbook, 0, 0},
};
#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))

/// The methods -m names (all when NULL), as a comma-separated list.
static const char *selected = NULL;

static int chosen(int k) {
    if (!selected) return 1;
    size_t n = strlen(methods[k].name);
    for (const char *p = selected; (p = strstr(p, methods[k].name)); p += n)
        if ((p == selected || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

static int skip(int k, int opaque, int sw, int dw) {
    return !chosen(k) || (methods[k].opaque_only && !opaque) || (methods[k].enlarge_only && dw <= sw);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *stem_of(const char *path, char *buf, size_t size) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(buf, size, "%s", base);
    char *dot = strrchr(buf, '.');
    if (dot) *dot = 0;
    return buf;
}

int main(int argc, char **argv) {
    int reps = 9;
    const char *outdir = ".";
    int opt;
    while ((opt = getopt(argc, argv, "n:o:b:m:c")) != -1) {
        switch (opt) {
        case 'n': reps = atoi(optarg); break;
        case 'o': outdir = optarg; break;
        case 'b': subsample_bits = atoi(optarg); break;
        case 'm': selected = optarg; break;
        case 'c': timing_clock = CLOCK_PROCESS_CPUTIME_ID; break;
        default:
            fprintf(stderr, "usage: resample-bench [-n REPS] [-o OUTDIR] [-b BITS] [-m METHODS] [-c] "
                            "FRAME.png:W[,W...] ...\n");
            return 2;
        }
    }
    if (reps < 1 || optind >= argc) die("nothing to do (see the usage at the top of resample-bench.c)", NULL);
    if (VIPS_INIT(argv[0])) vips_die("VIPS_INIT");
    vips_cache_set_max(0);
    vips_concurrency_set(1);

    double *times = malloc(sizeof(double) * reps * NMETHODS);
    for (int a = optind; a < argc; a++) {
        char *spec = strdup(argv[a]);
        char *colon = strrchr(spec, ':');
        if (!colon) die("want FRAME.png:W[,W...]", argv[a]);
        *colon = 0;
        Frame src;
        load_png(spec, &src);
        int opaque = is_opaque(&src);
        char stem[512];
        stem_of(spec, stem, sizeof stem);
        for (char *tok = strtok(colon + 1, ","); tok; tok = strtok(NULL, ",")) {
            int dw = atoi(tok);
            if (dw < 1) die("bad width", tok);
            int dh = (int)lround((double)src.h * dw / src.w);
            if (dh < 1) dh = 1;
            uint8_t *dst[NMETHODS];
            for (int k = 0; k < NMETHODS; k++) {
                dst[k] = calloc((size_t)dw * dh, 4);
                if (!dst[k]) die("out of memory", NULL);
            }
            // Interleaved: a burst of load elsewhere hits every method alike.
            for (int r = 0; r < reps; r++) {
                for (int k = 0; k < NMETHODS; k++) {
                    if (skip(k, opaque, src.w, dw)) continue;
                    double t0 = now_ms();
                    if (methods[k].fn(&src, dw, dh, dst[k])) die(methods[k].name, "failed");
                    times[k * reps + r] = now_ms() - t0;
                }
            }
            for (int k = 0; k < NMETHODS; k++) {
                if (skip(k, opaque, src.w, dw)) {
                    free(dst[k]);
                    continue;
                }
                double *t = times + k * reps;
                qsort(t, reps, sizeof(double), cmp_double);
                double median = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
                char out[1024];
                snprintf(out, sizeof out, "%s/%s_%dx%d_%s.png", outdir, stem, dw, dh, methods[k].name);
                save_png(out, dst[k], dw, dh);
                printf("%s\t%d\t%d\t%d\t%d\t%d\t%s\t%.3f\t%.3f\t%.3f\t%s\n", spec, src.w, src.h, dw, dh, opaque,
                       methods[k].name, median, t[0], t[reps - 1], out);
                fflush(stdout);
                free(dst[k]);
            }
        }
        free(src.px);
        free(spec);
    }
    free(times);
    vips_shutdown();
    return 0;
}
