// libvips, loaded when first started (dlopen) rather than linked: linking it made every flipbook
// process load it and the ~60 libraries it needs, ≈ 14 ms of each CLI run (BENCHMARKS.md,
// "Resampling library"), while only reductions by more than 40× use it. `flipbook serve`
// still starts it at start, before its threads exist; the CLI only when its frames need it. The
// few functions resample.c calls, bound by name.
#ifndef FLIPBOOK_VIPS_LOADER_H
#define FLIPBOOK_VIPS_LOADER_H

#include <vips/vips.h>  // libvips-dev: the types and constants; the functions come from vips_loader_start

typedef struct {
    VipsRegion *(*region_new)(VipsImage *image);
    int (*region_prepare)(VipsRegion *region, const VipsRect *rect);
    VipsImage *(*image_new_from_memory)(const void *data, size_t size, int width, int height, int bands,
                                        VipsBandFormat format);
    int (*shrink)(VipsImage *in, VipsImage **out, double hshrink, double vshrink, ...);
    const char *(*error_buffer)(void);
    void (*error_clear)(void);
    const char *(*version_string)(void);
    void (*object_unref)(gpointer object);
} vips_functions;

/// The bound functions; valid once vips_loader_start() returned 0.
extern vips_functions vips_api;

/// Loads libvips (once; later calls return the first one's result), binds vips_api, checks its ABI
/// against the headers' and starts it without its modules, its operation cache or worker threads.
/// 0, or -1 when libvips is not installed or does not start.
int vips_loader_start(void);

#endif
