// Scaling RGBA frames, reductions in Pillow's LANCZOS conventions (the largest box-shrunk first),
// enlargements with pixman: the calls Swift makes.
#ifndef FLIPBOOK_RESAMPLE_H
#define FLIPBOOK_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

/// Scales `src` (sw×sh RGBA, 8 bits per sample, not premultiplied, rows packed) to dw×dh into
/// `dst` (dw×dh×4 bytes) with a Lanczos-3 kernel, each axis on its own, horizontally first: when
/// neither axis grows, with the window clipped at the frame's edges and renormalised (as Pillow
/// does), else with pixman's. Colour is scaled premultiplied by alpha unless `opaque` says every
/// pixel is opaque (reductions; pixman always premultiplies). Returns 0, or a negative
/// code with a message in `error` (NUL-terminated, at most `error_size` bytes).
int flipbook_resample_rgba(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh,
                           int opaque, char *error, size_t error_size);

/// Scaling a frame that differs from the one before only inside source rectangle (x, y, w, h):
/// fills `rect` (x, y, w, h) with the output pixels that can differ — those whose kernel windows
/// reach into it (w or h 0 when none do) — and returns 1, when sw×sh → dw×dh is a reduction by
/// the kernel alone (not enlarging, not box-shrunk first: the only scalings whose output pixels
/// are made apart); else 0. Every other output pixel is the previous frame's.
int flipbook_resample_affected(int sw, int sh, int dw, int dh, int x, int y, int w, int h, int rect[4]);

/// The source rectangle (x, y, w, h) that output rectangle (rx, ry, rw, rh) of the same kind of
/// scaling reads; 1, or 0 when the scaling is not a reduction by the kernel alone.
int flipbook_resample_reach(int sw, int sh, int dw, int dh, int rx, int ry, int rw, int rh, int rect[4]);

/// Output rectangle (rx, ry, rw, rh) of flipbook_resample_rgba's reduction of `src` into `dst`
/// (rw×rh×4 bytes): exactly the bytes that rectangle has in the whole output. Reads only the
/// source rectangle flipbook_resample_reach names. 0, or a negative code with a message, also
/// for a scaling flipbook_resample_affected refuses or a rectangle outside the output.
int flipbook_resample_rgba_rect(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, int opaque, int rx,
                                int ry, int rw, int rh, char *error, size_t error_size);

/// 1 when scaling sw×sh to dw×dh box-shrinks first (a reduction by more than 40×: box_shrink.c
/// takes each block's mean, then the kernel reduces what is left), else 0.
int flipbook_resample_shrinks_first(int sw, int sh, int dw, int dh);

/// For tests: reduces `src` (sw×sh RGBA) horizontally to `dw` columns with the pass this CPU
/// runs (AVX2 on x86-64 when it has it) and with the portable one, and compares. 1 when the
/// bytes are the same, 0 when not, -1 when out of memory.
int flipbook_resample_columns_agree(const uint8_t *src, int sw, int sh, int dw);

#endif
