// Decodes every frame of an AVIF with libavif (dav1d), as browsers built on libavif do (the
// file's CICP honoured: its matrix, range; an unspecified matrix read as libavif reads it), and
// writes each as a binary PPM, DIR/frame_0001.ppm onwards. For scripts/bench/derived/avif.sh.
//   cc -O2 avif_frames.c -o avif_frames -lavif && ./avif_frames IN.avif DIR
#include <avif/avif.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: avif_frames IN.avif DIR\n"); return 2; }
    avifDecoder *decoder = avifDecoderCreate();
    if (avifDecoderSetIOFile(decoder, argv[1]) != AVIF_RESULT_OK || avifDecoderParse(decoder) != AVIF_RESULT_OK) {
        fprintf(stderr, "%s: libavif cannot parse it\n", argv[1]);
        return 1;
    }
    int count = 0;
    while (avifDecoderNextImage(decoder) == AVIF_RESULT_OK) {
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, decoder->image);
        rgb.format = AVIF_RGB_FORMAT_RGB;
        rgb.depth = 8;
        avifRGBImageAllocatePixels(&rgb);
        if (avifImageYUVToRGB(decoder->image, &rgb) != AVIF_RESULT_OK) return 1;
        char path[4096];
        snprintf(path, sizeof path, "%s/frame_%04d.ppm", argv[2], ++count);
        FILE *out = fopen(path, "wb");
        if (!out) { perror(path); return 1; }
        fprintf(out, "P6\n%u %u\n255\n", rgb.width, rgb.height);
        for (uint32_t y = 0; y < rgb.height; y++) fwrite(rgb.pixels + y * rgb.rowBytes, 1, rgb.width * 3, out);
        fclose(out);
        avifRGBImageFreePixels(&rgb);
    }
    avifDecoderDestroy(decoder);
    return count > 0 ? 0 : 1;
}
