// One axis of a Lanczos-3 reduction in Pillow's conventions (see clipped_lanczos.h): output i's
// centre is (i + ½)·scale in continuous input coordinates (scale = span / out: the input's
// length over the outputs' count, as Pillow's resize over a box), the kernel is stretched by
// the scale (support 3·scale), its window is the input samples whose centres fall within the
// support, clipped to the image, and the weights are divided by their sum, so an edge output
// averages only real samples. Weights are fixed point with CLIPPED_LANCZOS_BITS fraction bits,
// each sum starts at a half for rounding, and results clamp to 0…255: the same integer
// arithmetic as Pillow's 8-bit resampler, so the values match it exactly.
#include "clipped_lanczos.h"
#include "vector_clones.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static double sinc(double x) {
    if (x == 0.0) return 1.0;
    x *= M_PI;
    return sin(x) / x;
}

static double lanczos3(double x) { return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3.0) : 0.0; }

/// A weight's low part in the split form (see clipped_lanczos.h): 11 bits, so the high part of
/// a 22-bit weight (at most about 1.2 · 2^22 in magnitude) fits 16 bits.
#define SPLIT_LOW_BITS 11
#define SPLIT_LOW_MASK ((1 << SPLIT_LOW_BITS) - 1)

static inline uint8_t clamped(int32_t sum) {
    if (sum <= 0) return 0;
    if (sum >= (int32_t)(256u << CLIPPED_LANCZOS_BITS)) return 255;
    return (uint8_t)(sum >> CLIPPED_LANCZOS_BITS);
}

int clipped_lanczos_make(clipped_lanczos *kernel, int in, double span, int out) {
    memset(kernel, 0, sizeof *kernel);
    double scale = span / out, stretch = scale < 1.0 ? 1.0 : scale;
    double support = 3.0 * stretch, inverse = 1.0 / stretch;
    int taps = (int)ceil(support) * 2 + 1;
    kernel->in = in;
    kernel->out = out;
    kernel->span = span;
    kernel->taps = taps;
    kernel->first = malloc(sizeof(int) * (size_t)out);
    kernel->count = malloc(sizeof(int) * (size_t)out);
    kernel->weights = malloc(sizeof(int32_t) * (size_t)out * (size_t)taps);
    kernel->quads = (taps + 3) / 4;
    kernel->split = calloc((size_t)out * (size_t)kernel->quads * 8, sizeof(int16_t));
    double *raw = malloc(sizeof(double) * (size_t)taps);
    if (!kernel->first || !kernel->count || !kernel->weights || !kernel->split || !raw) {
        free(raw);
        clipped_lanczos_free(kernel);
        return -1;
    }
    for (int i = 0; i < out; i++) {
        double centre = (i + 0.5) * scale;
        int first = (int)(centre - support + 0.5), end = (int)(centre + support + 0.5);
        if (first < 0) first = 0;
        if (end > in) end = in;
        int count = end - first;
        double sum = 0.0;
        for (int t = 0; t < count; t++) {
            raw[t] = lanczos3((t + first - centre + 0.5) * inverse);
            sum += raw[t];
        }
        int32_t *w = kernel->weights + (size_t)i * taps;
        for (int t = 0; t < taps; t++) {
            double v = t < count && sum != 0.0 ? raw[t] / sum : 0.0;
            w[t] = (int32_t)(v < 0 ? v * (1 << CLIPPED_LANCZOS_BITS) - 0.5 : v * (1 << CLIPPED_LANCZOS_BITS) + 0.5);
            int16_t *quad = kernel->split + ((size_t)i * kernel->quads + (size_t)t / 4) * 8;
            int32_t low = w[t] & SPLIT_LOW_MASK;
            quad[t % 4] = (int16_t)((w[t] - low) >> SPLIT_LOW_BITS);
            quad[4 + t % 4] = (int16_t)low;
        }
        kernel->first[i] = first;
        kernel->count[i] = count;
    }
    free(raw);
    return 0;
}

void clipped_lanczos_free(clipped_lanczos *kernel) {
    free(kernel->first);
    free(kernel->count);
    free(kernel->weights);
    free(kernel->split);
    kernel->first = kernel->count = NULL;
    kernel->weights = NULL;
    kernel->split = NULL;
}

/// Kernels each thread keeps: a rendition scales every frame of an image between the same two
/// sizes, and making the weights (a sine per tap) cost 7% of a storyboard's time when it was
/// done per frame. Horizontal and vertical kernels of two renditions fit.
#define KERNELS_KEPT 4

/// One thread's kept kernels, most recently used first.
typedef struct {
    clipped_lanczos kernels[KERNELS_KEPT];
    int count;
} kept_kernels;

static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void free_kept(void *value) {
    kept_kernels *kept = value;
    for (int i = 0; i < kept->count; i++) clipped_lanczos_free(&kept->kernels[i]);
    free(kept);
}

static void make_kept_key(void) { pthread_key_create(&kept_key, free_kept); }

const clipped_lanczos *clipped_lanczos_kept(int in, double span, int out) {
    pthread_once(&kept_once, make_kept_key);
    kept_kernels *kept = pthread_getspecific(kept_key);
    if (!kept) {
        if (!(kept = calloc(1, sizeof *kept)) || pthread_setspecific(kept_key, kept)) {
            free(kept);
            return NULL;
        }
    }
    int found = 0;
    while (found < kept->count && (kept->kernels[found].in != in || kept->kernels[found].out != out ||
                                   kept->kernels[found].span != span))
        found++;
    clipped_lanczos kernel;
    if (found < kept->count) {
        kernel = kept->kernels[found];
    } else {
        if (clipped_lanczos_make(&kernel, in, span, out)) return NULL;
        if (kept->count == KERNELS_KEPT) clipped_lanczos_free(&kept->kernels[--kept->count]);
        found = kept->count++;
    }
    memmove(&kept->kernels[1], &kept->kernels[0], sizeof kernel * (size_t)found);
    kept->kernels[0] = kernel;
    return &kept->kernels[0];
}

/// Output x of one row: Σ pixel·weight over its window, in the int32 weights.
static inline void column_sums(const clipped_lanczos *kernel, const uint8_t *row, int x, uint8_t *target) {
    const int32_t *w = kernel->weights + (size_t)x * kernel->taps;
    const uint8_t *p = row + (size_t)kernel->first[x] * 4;
    int32_t sum[4] = {1 << (CLIPPED_LANCZOS_BITS - 1), 1 << (CLIPPED_LANCZOS_BITS - 1),
                      1 << (CLIPPED_LANCZOS_BITS - 1), 1 << (CLIPPED_LANCZOS_BITS - 1)};
    for (int t = 0; t < kernel->count[x]; t++, p += 4)
        for (int c = 0; c < 4; c++) sum[c] += p[c] * w[t];
    for (int c = 0; c < 4; c++) target[x * 4 + c] = clamped(sum[c]);
}

VECTOR_CLONES void clipped_lanczos_columns_portable(const clipped_lanczos *kernel, const uint8_t *src,
                                                    size_t src_stride, int rows, int x0, int x1, uint8_t *dst,
                                                    size_t dst_stride) {
    for (int y = 0; y < rows; y++) {
        const uint8_t *row = src + (size_t)y * src_stride;
        uint8_t *target = dst + (size_t)y * dst_stride - (size_t)x0 * 4;
        for (int x = x0; x < x1; x++) column_sums(kernel, row, x, target);
    }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

/// The horizontal pass with AVX2's 16-bit multiply-adds, four taps at a time: four pixels'
/// bytes regrouped channel by channel (R0 R1 R2 R3 G0 … A3) and widened to 16 bits, times the
/// four taps' weights repeated, each product pair summed into 32 bits — once with the weights'
/// high parts, once with their low parts (clipped_lanczos.h) — and the two sums recombined:
/// exactly the int32 sums of the portable pass, in about half its time (the compiler's own
/// vectorisation of that loop spent most of its instructions regrouping). Outputs whose last
/// group of four would read past the row take the portable path.
__attribute__((target("avx2"))) static void columns_avx2(const clipped_lanczos *kernel, const uint8_t *src,
                                                         size_t src_stride, int rows, int x0, int x1, uint8_t *dst,
                                                         size_t dst_stride) {
    const __m128i regroup = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m128i half = _mm_set1_epi32(1 << (CLIPPED_LANCZOS_BITS - 1));
    const int quads = kernel->quads;
    for (int y = 0; y < rows; y++) {
        const uint8_t *row = src + (size_t)y * src_stride;
        uint8_t *target = dst + (size_t)y * dst_stride - (size_t)x0 * 4;
        for (int x = x0; x < x1; x++) {
            int first = kernel->first[x], groups = (kernel->count[x] + 3) / 4;
            if (first + groups * 4 > kernel->in) {
                column_sums(kernel, row, x, target);
                continue;
            }
            const uint8_t *p = row + (size_t)first * 4;
            const int16_t *w = kernel->split + (size_t)x * quads * 8;
            __m256i high = _mm256_setzero_si256(), low = _mm256_setzero_si256();
            for (int g = 0; g < groups; g++, p += 16, w += 8) {
                __m128i bytes = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), regroup);
                __m256i pixels = _mm256_cvtepu8_epi16(bytes);
                int64_t highs, lows;
                memcpy(&highs, w, 8);
                memcpy(&lows, w + 4, 8);
                high = _mm256_add_epi32(high, _mm256_madd_epi16(pixels, _mm256_set1_epi64x(highs)));
                low = _mm256_add_epi32(low, _mm256_madd_epi16(pixels, _mm256_set1_epi64x(lows)));
            }
            // Lanes: R01 R23 G01 G23 | B01 B23 A01 A23 of Σ high · 2048 + Σ low.
            __m256i sums = _mm256_add_epi32(_mm256_slli_epi32(high, SPLIT_LOW_BITS), low);
            __m128i rg = _mm256_castsi256_si128(sums), ba = _mm256_extracti128_si256(sums, 1);
            __m128i rgba = _mm_add_epi32(_mm_hadd_epi32(rg, ba), half);  // R G B A
            int32_t out[4];
            _mm_storeu_si128((__m128i *)out, rgba);
            for (int c = 0; c < 4; c++) target[x * 4 + c] = clamped(out[c]);
        }
    }
}
#endif

void clipped_lanczos_columns(const clipped_lanczos *kernel, const uint8_t *src, size_t src_stride, int rows, int x0,
                             int x1, uint8_t *dst, size_t dst_stride) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
    if (__builtin_cpu_supports("avx2")) {
        columns_avx2(kernel, src, src_stride, rows, x0, x1, dst, dst_stride);
        return;
    }
#endif
    clipped_lanczos_columns_portable(kernel, src, src_stride, rows, x0, x1, dst, dst_stride);
}

VECTOR_CLONES int clipped_lanczos_rows(const clipped_lanczos *kernel, const uint8_t *src, size_t src_stride,
                                       int src_first_row, int width, int y0, int y1, uint8_t *dst,
                                       size_t dst_stride) {
    size_t samples = (size_t)width * 4;
    // One row of sums, each tap's row added across it in turn: contiguous, so it vectorises.
    int32_t *sums = malloc(sizeof(int32_t) * samples);
    if (!sums) return -1;
    for (int y = y0; y < y1; y++) {
        const int32_t *w = kernel->weights + (size_t)y * kernel->taps;
        const uint8_t *row = src + (size_t)(kernel->first[y] - src_first_row) * src_stride;
        for (size_t i = 0; i < samples; i++) sums[i] = 1 << (CLIPPED_LANCZOS_BITS - 1);
        for (int t = 0; t < kernel->count[y]; t++, row += src_stride)
            for (size_t i = 0; i < samples; i++) sums[i] += row[i] * w[t];
        uint8_t *target = dst + (size_t)(y - y0) * dst_stride;
        for (size_t i = 0; i < samples; i++) target[i] = clamped(sums[i]);
    }
    free(sums);
    return 0;
}

void clipped_lanczos_window(const clipped_lanczos *kernel, int from, int to, int *first, int *end) {
    *first = kernel->in;
    *end = 0;
    for (int i = from; i < to; i++) {
        if (kernel->first[i] < *first) *first = kernel->first[i];
        if (kernel->first[i] + kernel->count[i] > *end) *end = kernel->first[i] + kernel->count[i];
    }
}

void clipped_lanczos_reached_by(const clipped_lanczos *kernel, int from, int to, int *first, int *end) {
    *first = kernel->out;
    *end = 0;
    for (int i = 0; i < kernel->out; i++) {
        if (kernel->first[i] < to && kernel->first[i] + kernel->count[i] > from) {
            if (i < *first) *first = i;
            *end = i + 1;
        }
    }
    if (*end <= *first) *first = *end = 0;
}
