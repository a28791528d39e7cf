/* zlib's inflate and deflate for CarrelSEB; pkg-config "zlib" supplies the path. */
#include <zlib.h>
