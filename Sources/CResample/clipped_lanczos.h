// One axis of a Lanczos-3 reduction with the window clipped at the image's edges and its weights
// renormalised over the samples that remain (Pillow's convention), in 8-bit RGBA: resample.c's
// two passes.
#ifndef FLIPBOOK_CLIPPED_LANCZOS_H
#define FLIPBOOK_CLIPPED_LANCZOS_H

#include <stdint.h>

/// The weights for reducing `in` samples to `out` (out ≤ in) along one axis.
typedef struct {
    int in, out;
    /// The most samples any output's window holds: the stride of `weights`.
    int taps;
    /// Per output: the first input sample of its window and how many samples it holds.
    int *first, *count;
    /// Per output, `taps` fixed-point weights (CLIPPED_LANCZOS_BITS fraction bits), summing to one.
    int32_t *weights;
    /// The same weights for 16-bit multiply-adds: per output, `quads` groups of four taps (zero
    /// past `count`), each as the four weights' high parts (weight >> 11, signed) then their low
    /// parts (weight & 2047), so Σ pixel·weight = (Σ pixel·high) · 2048 + Σ pixel·low exactly.
    int quads;
    int16_t *split;
} clipped_lanczos;

/// Fraction bits of the weights.
#define CLIPPED_LANCZOS_BITS 22

/// Fills `kernel` for reducing `in` samples to `out`. 0, or -1 when out of memory.
int clipped_lanczos_make(clipped_lanczos *kernel, int in, int out);

/// Frees what clipped_lanczos_make allocated.
void clipped_lanczos_free(clipped_lanczos *kernel);

/// The kernel for reducing `in` samples to `out`, kept by the calling thread for its next calls
/// (the few most recently used; freed when the thread ends). Valid until this thread's next
/// call; NULL when out of memory.
const clipped_lanczos *clipped_lanczos_kept(int in, int out);

/// Horizontal pass: every one of `rows` rows of kernel->in RGBA pixels in `src` to kernel->out
/// pixels in `dst` (both packed).
void clipped_lanczos_columns(const clipped_lanczos *kernel, const uint8_t *src, int rows, uint8_t *dst);

/// The horizontal pass without CPU-specific code (what clipped_lanczos_columns runs on CPUs
/// without AVX2); the same bytes.
void clipped_lanczos_columns_portable(const clipped_lanczos *kernel, const uint8_t *src, int rows, uint8_t *dst);

/// Vertical pass: kernel->in rows of `width` RGBA pixels in `src` to kernel->out rows in `dst`
/// (both packed). 0, or -1 when out of memory.
int clipped_lanczos_rows(const clipped_lanczos *kernel, const uint8_t *src, int width, uint8_t *dst);

#endif
