// See vips_loader.h.
#include "vips_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

vips_functions vips_api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int status = -1;

/// Where libvips is told it lives (VIPSHOME) unless the environment says otherwise: a directory
/// with no `lib/vips-modules-8.x`, so vips_init loads none of Debian's modules (HEIF, JPEG XL,
/// ImageMagick, OpenSlide, Poppler loaders: 33 more shared libraries). Flipbook only resizes; the
/// modules cost 40 ms and about 12 MB of every process that scales a frame.
#define NO_MODULES_HOME "/nonexistent/flipbook-no-vips-modules"

/// Binds `name` from `library` into `*slot`; 0 when it is there.
static int bind_symbol(void *library, const char *name, void *slot) {
    void *function = dlsym(library, name);
    *(void **)slot = function;
    return function ? 0 : -1;
}

static void start(void) {
    // Kept loaded for the life of the process (never dlclose'd): libvips starts threads of its own.
    void *library = dlopen("libvips.so.42", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    int (*init)(const char *) = NULL;
    int (*version)(int) = NULL;
    void (*cache_set_max)(int) = NULL;
    void (*concurrency_set)(int) = NULL;
    void (*leak_set)(gboolean) = NULL;
    // g_object_unref comes from libgobject, which libvips needs: dlsym finds it through libvips.
    if (bind_symbol(library, "vips_init", &init) || bind_symbol(library, "vips_version", &version)
        || bind_symbol(library, "vips_cache_set_max", &cache_set_max) || bind_symbol(library, "vips_concurrency_set", &concurrency_set)
        || bind_symbol(library, "vips_leak_set", &leak_set) || bind_symbol(library, "vips_region_new", &vips_api.region_new)
        || bind_symbol(library, "vips_region_prepare", &vips_api.region_prepare)
        || bind_symbol(library, "vips_image_new_from_memory", &vips_api.image_new_from_memory)
        || bind_symbol(library, "vips_shrink", &vips_api.shrink) || bind_symbol(library, "vips_error_buffer", &vips_api.error_buffer)
        || bind_symbol(library, "vips_error_clear", &vips_api.error_clear)
        || bind_symbol(library, "vips_version_string", &vips_api.version_string)
        || bind_symbol(library, "g_object_unref", &vips_api.object_unref))
        return;
    // What VIPS_INIT checks: the library's ABI is the one these headers describe.
    if (version(3) - version(5) != VIPS_LIBRARY_CURRENT - VIPS_LIBRARY_AGE) return;
    setenv("VIPSHOME", NO_MODULES_HOME, 0);
    if (init("flipbook")) return;
    cache_set_max(0);
    concurrency_set(1);
    leak_set(FALSE);
    status = 0;
}

int vips_loader_start(void) {
    pthread_once(&once, start);
    return status;
}
