// Premultiplying and unpremultiplying 8-bit samples: the one rounding every scaling path uses.
#ifndef FLIPBOOK_ALPHA_H
#define FLIPBOOK_ALPHA_H

#include <stdint.h>

/// Colour `c` multiplied by alpha `a` (both 0…255), rounded to nearest (as Pillow's RGBa).
static inline uint8_t premultiplied(unsigned c, unsigned a) { return (uint8_t)((c * a + 127) / 255); }

/// Premultiplied colour `c` divided by alpha `a` (a > 0), rounded to nearest; a colour above its
/// alpha (a Lanczos kernel's overshoot) clamps to 255.
static inline uint8_t unpremultiplied(unsigned c, unsigned a) {
    unsigned v = (c * 255 + a / 2) / a;
    return v > 255 ? 255 : (uint8_t)v;
}

#endif
