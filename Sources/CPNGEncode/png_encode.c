// libpng's error handling is setjmp/longjmp, which must never cross Swift frames; this file
// keeps every libpng write call (and any longjmp) inside C, and returns plain status codes.
#include "png_encode.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    fb_png_output *output;
    int failed;
    char *error;
    size_t error_size;
} writer_state;

static void on_error(png_structp png, png_const_charp message) {
    writer_state *state = (writer_state *)png_get_error_ptr(png);
    if (state->error && state->error_size > 0) {
        strncpy(state->error, message ? message : "libpng error", state->error_size - 1);
        state->error[state->error_size - 1] = 0;
    }
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

static void on_write(png_structp png, png_bytep data, size_t length) {
    writer_state *state = (writer_state *)png_get_io_ptr(png);
    fb_png_output *out = state->output;
    if (out->size + length > out->capacity) {
        size_t capacity = out->capacity ? out->capacity : 4096;
        while (capacity < out->size + length) capacity *= 2;
        unsigned char *grown = realloc(out->data, capacity);
        if (!grown) png_error(png, "out of memory growing the PNG buffer");
        out->data = grown;
        out->capacity = capacity;
    }
    memcpy(out->data + out->size, data, length);
    out->size += length;
}

static void on_flush(png_structp png) { (void)png; }

int fb_png_encode(const fb_png_input *in, fb_png_output *out, char *error, size_t error_size) {
    writer_state state = { out, 0, error, error_size };
    out->data = NULL;
    out->size = 0;
    out->capacity = 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state, on_error, on_warning);
    if (!png) {
        if (error && error_size) snprintf(error, error_size, "png_create_write_struct failed");
        return -1;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        if (error && error_size) snprintf(error, error_size, "png_create_info_struct failed");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fb_png_free(out);
        return -1;
    }
    png_set_write_fn(png, &state, on_write, on_flush);
    png_set_compression_level(png, in->compression_level);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, in->filters);
    png_set_IHDR(png, info, in->width, in->height, in->bit_depth, in->color_type,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    if (in->color_type == PNG_COLOR_TYPE_PALETTE) {
        png_color colors[256];
        for (int i = 0; i < in->palette_count && i < 256; i++) {
            colors[i].red = in->palette[3 * i];
            colors[i].green = in->palette[3 * i + 1];
            colors[i].blue = in->palette[3 * i + 2];
        }
        png_set_PLTE(png, info, colors, in->palette_count);
        if (in->alpha_count > 0) {
            png_set_tRNS(png, info, in->alphas, in->alpha_count, NULL);
        }
    }
    png_write_info(png, info);
    for (uint32_t y = 0; y < in->height; y++) {
        png_write_row(png, in->rows + (size_t)y * in->row_bytes);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

void fb_png_free(fb_png_output *out) {
    free(out->data);
    out->data = NULL;
    out->size = 0;
    out->capacity = 0;
}
