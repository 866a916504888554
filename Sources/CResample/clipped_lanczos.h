// One axis of a Lanczos-3 reduction with the window clipped at the image's edges and its weights
// renormalised over the samples that remain (Pillow's convention), in 8-bit RGBA: resample.c's
// two passes.
#ifndef FLIPBOOK_CLIPPED_LANCZOS_H
#define FLIPBOOK_CLIPPED_LANCZOS_H

#include <stddef.h>
#include <stdint.h>

/// The weights for reducing `in` samples to `out` (out ≤ in) along one axis. The outputs cover
/// the first `span` samples' length (span ≤ in; less when the last sample stands for less than a
/// whole one, as the last block of a box shrink does): output i's centre is (i + ½)·span/out.
typedef struct {
    int in, out;
    double span;
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

/// Fills `kernel` for reducing `in` samples, which cover `span` (0 < span ≤ in), to `out`. 0, or
/// -1 when out of memory.
int clipped_lanczos_make(clipped_lanczos *kernel, int in, double span, int out);

/// Frees what clipped_lanczos_make allocated.
void clipped_lanczos_free(clipped_lanczos *kernel);

/// The kernel for reducing `in` samples covering `span` to `out`, kept by the calling thread for
/// its next calls (the few most recently used; freed when the thread ends). Valid until this
/// thread's next call; NULL when out of memory.
const clipped_lanczos *clipped_lanczos_kept(int in, double span, int out);

/// Horizontal pass: outputs x0 ≤ x < x1 of each of `rows` rows of `src` (rows `src_stride` bytes
/// apart, each holding all kernel->in RGBA pixels) into `dst` (rows `dst_stride` bytes apart,
/// output x0 first).
void clipped_lanczos_columns(const clipped_lanczos *kernel, const uint8_t *src, size_t src_stride, int rows, int x0,
                             int x1, uint8_t *dst, size_t dst_stride);

/// The horizontal pass without CPU-specific code (what clipped_lanczos_columns runs on CPUs
/// without AVX2); the same bytes.
void clipped_lanczos_columns_portable(const clipped_lanczos *kernel, const uint8_t *src, size_t src_stride,
                                      int rows, int x0, int x1, uint8_t *dst, size_t dst_stride);

/// Vertical pass: output rows y0 ≤ y < y1, each `width` RGBA pixels, into `dst` (rows
/// `dst_stride` bytes apart, row y0 first), from `src`, whose first row is input row
/// `src_first_row` (rows `src_stride` bytes apart; it must hold every row the outputs' windows
/// reach). 0, or -1 when out of memory.
int clipped_lanczos_rows(const clipped_lanczos *kernel, const uint8_t *src, size_t src_stride, int src_first_row,
                         int width, int y0, int y1, uint8_t *dst, size_t dst_stride);

/// The input samples [*first, *end) that outputs from ≤ i < to read (their windows' union).
void clipped_lanczos_window(const clipped_lanczos *kernel, int from, int to, int *first, int *end);

/// The outputs [*first, *end) whose windows reach into input samples [from, to) (empty: 0, 0).
void clipped_lanczos_reached_by(const clipped_lanczos *kernel, int from, int to, int *first, int *end);

#endif
