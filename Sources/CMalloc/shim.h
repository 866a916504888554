// glibc's malloc extensions (malloc_trim, mallopt), which the Glibc module does not import.
#include <malloc.h>
