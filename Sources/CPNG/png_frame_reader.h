// Reads one PNG frame with libpng's full API. In C, and whole inside one function, because
// libpng reports errors by longjmp, which must not cross Swift frames.
#ifndef FLIPBOOK_PNG_FRAME_READER_H
#define FLIPBOOK_PNG_FRAME_READER_H

#include <png.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/// Fills `length` bytes at `destination` with the next bytes of a PNG that is produced as it is
/// read; returns 0 when it cannot (the data ends or is damaged).
typedef int (*flipbook_png_pull)(void *context, uint8_t *destination, size_t length);

struct flipbook_png_reader {
    const uint8_t *data;
    size_t size;
    size_t offset;
    /// When set, bytes come from here instead of `data`.
    flipbook_png_pull pull;
    void *context;
    char *message;
    size_t message_capacity;
};

static inline void flipbook_png_record(struct flipbook_png_reader *reader, const char *text) {
    if (reader->message_capacity == 0) return;
    strncpy(reader->message, text, reader->message_capacity - 1);
    reader->message[reader->message_capacity - 1] = '\0';
}

static inline void flipbook_png_on_error(png_structp png, png_const_charp text) {
    flipbook_png_record((struct flipbook_png_reader *)png_get_error_ptr(png), text ? text : "libpng error");
    png_longjmp(png, 1);
}

static inline void flipbook_png_on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static inline void flipbook_png_read_bytes(png_structp png, png_bytep destination, size_t length) {
    struct flipbook_png_reader *reader = (struct flipbook_png_reader *)png_get_io_ptr(png);
    if (reader->pull != NULL) {
        // The pull function returns before libpng is told; no longjmp crosses its frames.
        if (!reader->pull(reader->context, destination, length)) png_error(png, "the PNG data ends early");
        return;
    }
    if (length > reader->size - reader->offset) png_error(png, "the PNG data ends early");
    memcpy(destination, reader->data + reader->offset, length);
    reader->offset += length;
}

static inline int flipbook_png_read_rgba8_with(struct flipbook_png_reader reader, uint32_t width, uint32_t height,
                                               uint8_t *out);

/// Decodes a whole PNG held in memory into 8-bit, non-premultiplied RGBA rows of
/// `width * 4` bytes, the way Chromium reduces every PNG layout to 8 bits per channel:
/// palettes and gray expanded, tRNS as alpha, 16-bit samples reduced to their high byte
/// (not rounded), Adam7 interlacing undone. No gamma or colour conversion is applied.
///
/// `out` must hold `width * height * 4` bytes. Returns 1 on success; 0 on failure, with a
/// NUL-terminated reason in `message` (at most `message_capacity` bytes).
static inline int flipbook_png_read_rgba8(const uint8_t *data, size_t size, uint32_t width, uint32_t height,
                            uint8_t *out, char *message, size_t message_capacity) {
    struct flipbook_png_reader reader = {data, size, 0, NULL, NULL, message, message_capacity};
    return flipbook_png_read_rgba8_with(reader, width, height, out);
}

/// The same, for a PNG produced as it is read: `pull(context, …)` is asked for the bytes in
/// order (a frame's data is inflated piece by piece as libpng needs it, never held whole).
static inline int flipbook_png_read_rgba8_pulling(flipbook_png_pull pull, void *context, uint32_t width,
                                                  uint32_t height, uint8_t *out, char *message,
                                                  size_t message_capacity) {
    struct flipbook_png_reader reader = {NULL, 0, 0, pull, context, message, message_capacity};
    return flipbook_png_read_rgba8_with(reader, width, height, out);
}

/// Both of the above: `reader` says where the bytes come from.
static inline int flipbook_png_read_rgba8_with(struct flipbook_png_reader reader, uint32_t width, uint32_t height,
                                               uint8_t *out) {
    flipbook_png_record(&reader, "");
    if (width == 0 || height == 0) {
        flipbook_png_record(&reader, "an empty frame");
        return 0;
    }
    png_bytep *rows = malloc(sizeof(png_bytep) * height);
    if (rows == NULL) {
        flipbook_png_record(&reader, "out of memory");
        return 0;
    }
    for (uint32_t y = 0; y < height; y++) rows[y] = out + (size_t)y * width * 4;

    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, flipbook_png_on_error, flipbook_png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        flipbook_png_record(&reader, "libpng could not allocate a reader");
        return 0;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        return 0;
    }
    png_set_read_fn(png, &reader, flipbook_png_read_bytes);
    png_read_info(png, info);
    if (png_get_image_width(png, info) != width || png_get_image_height(png, info) != height) {
        png_error(png, "the frame's size differs from its control chunk");
    }
    int color = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    // tRNS is matched against the full 16-bit sample, before the reduction below.
    int keyed = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (keyed) png_set_tRNS_to_alpha(png);
    if (depth == 16) png_set_strip_16(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if (!(color & PNG_COLOR_MASK_ALPHA) && !keyed) png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    (void)png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) {
        png_error(png, "libpng's output rows are not 8-bit RGBA");
    }
    png_read_image(png, rows);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    return 1;
}

#endif
