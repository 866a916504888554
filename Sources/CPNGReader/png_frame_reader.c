// libpng's full read API, kept in C: libpng reports errors by longjmp, which must not cross
// Swift frames. Every libpng call of a decode happens inside flipbook_png_read_rgba8.
#include "png_frame_reader.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

struct reader {
    const uint8_t *data;
    size_t size;
    size_t offset;
    char *message;
    size_t message_capacity;
};

static void record(struct reader *reader, const char *text) {
    if (reader->message_capacity == 0) return;
    strncpy(reader->message, text, reader->message_capacity - 1);
    reader->message[reader->message_capacity - 1] = '\0';
}

static void on_error(png_structp png, png_const_charp text) {
    record((struct reader *)png_get_error_ptr(png), text ? text : "libpng error");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void read_bytes(png_structp png, png_bytep destination, size_t length) {
    struct reader *reader = (struct reader *)png_get_io_ptr(png);
    if (length > reader->size - reader->offset) png_error(png, "the PNG data ends early");
    memcpy(destination, reader->data + reader->offset, length);
    reader->offset += length;
}

int flipbook_png_read_rgba8(const uint8_t *data, size_t size, uint32_t width, uint32_t height,
                            uint8_t *out, char *message, size_t message_capacity) {
    struct reader reader = {data, size, 0, message, message_capacity};
    record(&reader, "");
    if (width == 0 || height == 0) {
        record(&reader, "an empty frame");
        return 0;
    }
    png_bytep *rows = malloc(sizeof(png_bytep) * height);
    if (rows == NULL) {
        record(&reader, "out of memory");
        return 0;
    }
    for (uint32_t y = 0; y < height; y++) rows[y] = out + (size_t)y * width * 4;

    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        record(&reader, "libpng could not allocate a reader");
        return 0;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        return 0;
    }
    png_set_read_fn(png, &reader, read_bytes);
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
