// glibc's malloc extensions (malloc_trim, mallopt), which the Glibc module does not import,
// and the calling thread's kernel id (for a per-thread nice value).
#include <malloc.h>
#include <unistd.h>
#include <sys/syscall.h>

static inline int flipbook_thread_id(void) { return (int)syscall(SYS_gettid); }
