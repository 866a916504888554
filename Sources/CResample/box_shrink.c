// See box_shrink.h. A row of blocks at a time (in strips of whole blocks, so that the sums stay
// small however wide the frame): the blocks' source rows are added into one row of 32-bit sums
// per sample (a contiguous loop, which vectorises; each pixel premultiplied on the way when
// asked), then each block's columns of sums are added across and divided once, with rounding, by
// the number of pixels the block holds.
#include "box_shrink.h"
#include "alpha.h"
#include "vector_clones.h"

#include <stdlib.h>
#include <string.h>

/// Adds `row`'s `samples` samples to `sums`, sample by sample.
VECTOR_CLONES static void add_row(uint32_t *sums, const uint8_t *row, size_t samples) {
    for (size_t i = 0; i < samples; i++) sums[i] += row[i];
}

/// Adds `row`'s `pixels` RGBA pixels to `sums`, their colour premultiplied by their alpha.
VECTOR_CLONES static void add_row_premultiplied(uint32_t *sums, const uint8_t *row, size_t pixels) {
    for (size_t x = 0; x < pixels; x++, row += 4, sums += 4) {
        unsigned a = row[3];
        sums[0] += premultiplied(row[0], a);
        sums[1] += premultiplied(row[1], a);
        sums[2] += premultiplied(row[2], a);
        sums[3] += a;
    }
}

/// `width` output pixels into `out` from the column `sums` of `rows` source rows (`sw` pixels):
/// each block of `kx` columns added across and divided by its pixel count.
static void divide_blocks(const uint32_t *sums, int sw, int kx, int rows, int width, uint8_t *out) {
    for (int ox = 0; ox < width; ox++, out += 4) {
        int x0 = ox * kx, x1 = x0 + kx < sw ? x0 + kx : sw;
        uint32_t n = (uint32_t)(x1 - x0) * (uint32_t)rows;
        uint32_t total[4] = {0, 0, 0, 0};
        for (const uint32_t *s = sums + (size_t)x0 * 4, *end = sums + (size_t)x1 * 4; s < end; s += 4)
            for (int c = 0; c < 4; c++) total[c] += s[c];
        for (int c = 0; c < 4; c++) out[c] = (uint8_t)((total[c] + n / 2) / n);
    }
}

/// Source pixels a strip of blocks spans at most (unless one block is wider): the sums of one
/// strip take 64 KiB, whatever the frame's width.
#define STRIP_PIXELS 4096

int box_shrink_rgba(const uint8_t *src, int sw, int sh, int kx, int ky, int premultiply, uint8_t *dst) {
    if (sw <= 0 || sh <= 0 || kx <= 0 || ky <= 0 || (int64_t)kx * ky > BOX_SHRINK_MAX_BLOCK) return -1;
    int width = box_shrink_length(sw, kx), height = box_shrink_length(sh, ky);
    int strip = kx >= STRIP_PIXELS ? kx : STRIP_PIXELS / kx * kx;
    if (strip > sw) strip = sw;
    uint32_t *sums = malloc((size_t)strip * 4 * sizeof *sums);
    if (!sums) return -1;
    // Strip by strip (whole blocks each), then a row of blocks at a time.
    for (int x0 = 0; x0 < sw; x0 += strip) {
        int pixels = sw - x0 < strip ? sw - x0 : strip;
        size_t samples = (size_t)pixels * 4;
        for (int oy = 0; oy < height; oy++) {
            int y0 = oy * ky, y1 = y0 + ky < sh ? y0 + ky : sh;
            memset(sums, 0, samples * sizeof *sums);
            for (int y = y0; y < y1; y++) {
                const uint8_t *row = src + ((size_t)y * sw + x0) * 4;
                if (premultiply) add_row_premultiplied(sums, row, (size_t)pixels);
                else add_row(sums, row, samples);
            }
            divide_blocks(sums, pixels, kx, y1 - y0, box_shrink_length(pixels, kx),
                          dst + ((size_t)oy * width + x0 / kx) * 4);
        }
    }
    free(sums);
    return 0;
}
