#ifndef FLIPBOOK_PNG_ENCODE_H
#define FLIPBOOK_PNG_ENCODE_H

#include <stddef.h>
#include <stdint.h>

/// A PNG file produced by fb_png_encode; free `data` with fb_png_free.
typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
} fb_png_output;

/// What to write: rows already in the PNG's own sample layout (packed for bit depths < 8).
typedef struct {
    const unsigned char *rows;      ///< height rows of `row_bytes` bytes each
    size_t row_bytes;
    uint32_t width;
    uint32_t height;
    int color_type;                 ///< PNG_COLOR_TYPE_PALETTE (3), RGB (2) or RGBA (6)
    int bit_depth;                  ///< 1, 2, 4 or 8
    const unsigned char *palette;   ///< palette_count RGB triples (palette images only)
    int palette_count;
    const unsigned char *alphas;    ///< alpha_count tRNS entries (palette images only)
    int alpha_count;
    int compression_level;          ///< zlib level 0–9
    int filters;                    ///< libpng PNG_FILTER_* mask
} fb_png_input;

/// Encodes `input` as a PNG with libpng. Returns 0 on success; on failure returns -1 and
/// writes libpng's message to `error` (never longjmps into the caller, never aborts).
int fb_png_encode(const fb_png_input *input, fb_png_output *output, char *error, size_t error_size);

void fb_png_free(fb_png_output *output);

#endif
