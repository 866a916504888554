// libavif (Debian package libavif-dev; its encoders libaom and SVT-AV1, decoder dav1d).
#include <avif/avif.h>
