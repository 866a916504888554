// VECTOR_CLONES: how CResample's integer loops are compiled for the CPU they run on.
#ifndef FLIPBOOK_VECTOR_CLONES_H
#define FLIPBOOK_VECTOR_CLONES_H

/// The scaling passes' inner loops vectorise (clang, -O2) into 32-bit multiplies, which x86-64's
/// baseline (SSE2) lacks: on x86-64 a function marked VECTOR_CLONES is also compiled for SSE4.1
/// and AVX2 and the best the CPU runs is chosen at load time. The arithmetic is integer, so every
/// version gives the same bytes. (Measured on clipped_lanczos.c's passes, with libvips doing the
/// vertical one, 1280×720 → 320×180: 6.8 → 4.4 ms a frame.)
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define VECTOR_CLONES __attribute__((target_clones("avx2", "sse4.1", "default")))
#else
#define VECTOR_CLONES
#endif

#endif
