// Linux system calls the Glibc module does not import (glibc declares their wrappers only under
// _GNU_SOURCE, and the SYS_ numbers are macros of macros): the CPU affinity mask, anonymous
// memory files, punching holes in them, the calling thread's kernel id and name, and flushing
// one file system.
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/// Writes this process's CPU affinity mask into `mask` (`size` bytes); returns the bytes the
/// kernel wrote, or -1 with errno set.
static inline long flipbook_sched_getaffinity(void *mask, unsigned long size) {
    return syscall(SYS_sched_getaffinity, 0, size, mask);
}

/// An anonymous memory file (memfd_create with MFD_CLOEXEC), or -1 with errno set.
static inline int flipbook_memfd_create(const char *name) {
    return (int)syscall(SYS_memfd_create, name, 0x0001U /* MFD_CLOEXEC */);
}

/// Frees the pages of `[offset, offset + length)` of `fd`, keeping its size
/// (fallocate FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE); 0 or -1 with errno set.
static inline int flipbook_punch_hole(int fd, long offset, long length) {
    return (int)syscall(SYS_fallocate, fd, 0x02 | 0x01, offset, length);
}

/// The calling thread's kernel id (gettid), for a per-thread nice value.
static inline int flipbook_thread_id(void) { return (int)syscall(SYS_gettid); }

/// Writes to disk everything the file system holding `fd` has pending (syncfs); 0 or -1 with
/// errno set.
static inline int flipbook_syncfs(int fd) { return (int)syscall(SYS_syncfs, fd); }

/// Names the calling thread (prctl PR_SET_NAME: the kernel keeps the first 15 bytes), as `top -H`
/// and debuggers show it; 0 or -1 with errno set.
static inline int flipbook_set_thread_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
