/* cairo for carrel-demo-exam's text; pkg-config "cairo" supplies the path. */
#include <cairo.h>
