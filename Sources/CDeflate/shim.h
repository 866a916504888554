// libdeflate (whole-buffer DEFLATE/zlib compression, CRC-32), Debian package libdeflate-dev.
#include <libdeflate.h>
