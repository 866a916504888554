// Per-frame encode cost of a single frame as AVIF against WebP, on the same RGBA frames (the
// service's 320-px renditions), with the service's settings: AVIF by libavif + libaom at
// cpu-used SPEED (default 6), end-usage=q, cq-level 35 (quality 44), THREADS threads; WebP by
// libwebp lossy at quality 55 (the player's frames), method 2. For issue 36's decision on
// format=auto for frames (BENCHMARKS.md, "AVIF single frames").
//   cc -O2 frame_cost.c -o frame_cost -lavif -lwebp
//   ./frame_cost FRAMES.rgba WIDTH HEIGHT [SPEED [THREADS [OUTDIR]]]   (FRAMES: raw RGBA, frame
//   after frame; OUTDIR: each encoded frame kept as OUTDIR/NNNN.avif and NNNN.webp)
// Prints, per encoder: frames, mean and median ms per frame (CPU time of the process and wall),
// and mean bytes.
#include <avif/avif.h>
#include <webp/encode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *outdir = NULL;
static int frame_number = 0;

static void keep(const char *ext, const uint8_t *data, size_t size) {
    if (!outdir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%04d.%s", outdir, frame_number, ext);
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(data, 1, size, out) != size) { perror(path); exit(1); }
    fclose(out);
}

static size_t avif_frame(const uint8_t *rgba, int w, int h, int speed, int threads) {
    avifImage *image = avifImageCreate(w, h, 8, AVIF_PIXEL_FORMAT_YUV420);
    image->yuvRange = AVIF_RANGE_FULL;
    image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGBA;
    rgb.depth = 8;
    rgb.ignoreAlpha = 1;
    rgb.rowBytes = w * 4;
    rgb.pixels = (uint8_t *)rgba;
    avifImageRGBToYUV(image, &rgb);
    avifEncoder *encoder = avifEncoderCreate();
    encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
    encoder->maxThreads = threads;
    encoder->speed = speed;
    encoder->minQuantizer = 0;
    encoder->maxQuantizer = 63;
    avifEncoderSetCodecSpecificOption(encoder, "end-usage", "q");
    avifEncoderSetCodecSpecificOption(encoder, "cq-level", "35");
    avifRWData out = AVIF_DATA_EMPTY;
    if (avifEncoderWrite(encoder, image, &out) != AVIF_RESULT_OK) { fprintf(stderr, "avif failed\n"); exit(1); }
    size_t size = out.size;
    keep("avif", out.data, out.size);
    avifRWDataFree(&out);
    avifEncoderDestroy(encoder);
    avifImageDestroy(image);
    return size;
}

static size_t webp_frame(const uint8_t *rgba, int w, int h) {
    WebPConfig config;
    WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, 55);
    config.method = 2;
    WebPPicture picture;
    WebPPictureInit(&picture);
    picture.width = w;
    picture.height = h;
    WebPPictureImportRGBA(&picture, rgba, w * 4);
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    if (!WebPEncode(&config, &picture)) { fprintf(stderr, "webp failed\n"); exit(1); }
    size_t size = writer.size;
    keep("webp", writer.mem, writer.size);
    WebPMemoryWriterClear(&writer);
    WebPPictureFree(&picture);
    return size;
}

static void report(const char *name, double *cpu, double *wall, size_t bytes, int n) {
    double cpu_sum = 0, wall_sum = 0;
    for (int i = 0; i < n; i++) { cpu_sum += cpu[i]; wall_sum += wall[i]; }
    qsort(cpu, n, sizeof *cpu, compare);
    qsort(wall, n, sizeof *wall, compare);
    printf("%-5s frames %d  cpu ms/frame mean %.2f median %.2f  wall ms/frame mean %.2f median %.2f  bytes/frame %zu\n",
           name, n, cpu_sum / n, cpu[n / 2], wall_sum / n, wall[n / 2], bytes / n);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: frame_cost FRAMES.rgba WIDTH HEIGHT [SPEED [THREADS]]\n"); return 2; }
    int w = atoi(argv[2]), h = atoi(argv[3]);
    int speed = argc > 4 ? atoi(argv[4]) : 6, threads = argc > 5 ? atoi(argv[5]) : 1;
    outdir = argc > 6 ? argv[6] : NULL;
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 1; }
    size_t size = (size_t)w * h * 4;
    uint8_t *frame = malloc(size);
    int capacity = 4096, n = 0;
    double *cpu[2] = { malloc(capacity * sizeof(double)), malloc(capacity * sizeof(double)) };
    double *wall[2] = { malloc(capacity * sizeof(double)), malloc(capacity * sizeof(double)) };
    size_t bytes[2] = { 0, 0 };
    while (n < capacity && fread(frame, 1, size, file) == size) {
        frame_number = n + 1;
        for (int k = 0; k < 2; k++) {  // alternately, so both see the same load
            double c = now(CLOCK_PROCESS_CPUTIME_ID), t = now(CLOCK_MONOTONIC);
            bytes[k] += k == 0 ? avif_frame(frame, w, h, speed, threads) : webp_frame(frame, w, h);
            cpu[k][n] = now(CLOCK_PROCESS_CPUTIME_ID) - c;
            wall[k][n] = now(CLOCK_MONOTONIC) - t;
        }
        n++;
    }
    if (n == 0) { fprintf(stderr, "no frames\n"); return 1; }
    printf("%dx%d, AVIF cpu-used %d, %d thread(s); WebP q55 method 2\n", w, h, speed, threads);
    report("avif", cpu[0], wall[0], bytes[0], n);
    report("webp", cpu[1], wall[1], bytes[1], n);
    return 0;
}
