#ifndef FLIPBOOK_PNG_FRAME_READER_H
#define FLIPBOOK_PNG_FRAME_READER_H

#include <stddef.h>
#include <stdint.h>

/// Decodes a whole PNG held in memory into 8-bit, non-premultiplied RGBA rows of
/// `width * 4` bytes, the way Chromium reduces every PNG layout to 8 bits per channel:
/// palettes and gray expanded, tRNS as alpha, 16-bit samples reduced to their high byte
/// (not rounded), Adam7 interlacing undone. No gamma or colour conversion is applied.
///
/// `out` must hold `width * height * 4` bytes. Returns 1 on success; 0 on failure, with a
/// NUL-terminated reason in `message` (at most `message_capacity` bytes).
int flipbook_png_read_rgba8(const uint8_t *png, size_t size, uint32_t width, uint32_t height,
                            uint8_t *out, char *message, size_t message_capacity);

#endif
