// Shrinking 8-bit RGBA by whole factors with a box filter: what resample.c does to a large
// reduction before its Lanczos kernel, so that the kernel's windows stay a few dozen taps long.
#ifndef FLIPBOOK_BOX_SHRINK_H
#define FLIPBOOK_BOX_SHRINK_H

#include <stdint.h>

/// The most pixels one block may hold: 255 × this fits the 32-bit sums.
#define BOX_SHRINK_MAX_BLOCK (1 << 24)

/// How many samples `n` samples shrink to by `factor`: ⌈n / factor⌉ — the last block holds
/// what remains when `factor` does not divide `n`.
static inline int box_shrink_length(int n, int factor) { return n / factor + (n % factor != 0); }

/// Shrinks `src` (sw×sh RGBA, rows packed) by `kx` across and `ky` down into `dst`
/// (box_shrink_length(sw, kx) × box_shrink_length(sh, ky) RGBA, rows packed): each output sample
/// is the mean of its block's samples, rounded to nearest, a partial block at the right or bottom
/// edge averaging only the pixels it holds. With `premultiply`, each source pixel's colour is
/// first multiplied by its alpha and rounded to 8 bits, as resample.c premultiplies a frame, so
/// `dst` is the box shrink of the premultiplied frame. 0, or -1 when out of memory or when a
/// block would hold more than BOX_SHRINK_MAX_BLOCK pixels.
int box_shrink_rgba(const uint8_t *src, int sw, int sh, int kx, int ky, int premultiply, uint8_t *dst);

#endif
