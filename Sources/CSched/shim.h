// The raw sched_getaffinity system call, which the Glibc module does not import (glibc declares
// its wrapper only under _GNU_SOURCE, and the SYS_ numbers are macros of macros).
#include <unistd.h>
#include <sys/syscall.h>

/// Writes this process's CPU affinity mask into `mask` (`size` bytes); returns the bytes the
/// kernel wrote, or -1 with errno set.
static inline long flipbook_sched_getaffinity(void *mask, unsigned long size) {
    return syscall(SYS_sched_getaffinity, 0, size, mask);
}
