/* A wl_pointer listener that ignores every event, for whichever libwayland
 * the clients are built against (see CarrelClientShim.h). */
#include "CarrelClientShim.h"

static void ignore_enter(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s, wl_fixed_t x, wl_fixed_t y) {
    (void)d; (void)p; (void)serial; (void)s; (void)x; (void)y;
}
static void ignore_leave(void *d, struct wl_pointer *p, uint32_t serial, struct wl_surface *s) {
    (void)d; (void)p; (void)serial; (void)s;
}
static void ignore_motion(void *d, struct wl_pointer *p, uint32_t time, wl_fixed_t x, wl_fixed_t y) {
    (void)d; (void)p; (void)time; (void)x; (void)y;
}
static void ignore_button(void *d, struct wl_pointer *p, uint32_t serial, uint32_t time, uint32_t button, uint32_t state) {
    (void)d; (void)p; (void)serial; (void)time; (void)button; (void)state;
}
static void ignore_axis(void *d, struct wl_pointer *p, uint32_t time, uint32_t axis, wl_fixed_t value) {
    (void)d; (void)p; (void)time; (void)axis; (void)value;
}
static void ignore_frame(void *d, struct wl_pointer *p) {
    (void)d; (void)p;
}
static void ignore_axis_source(void *d, struct wl_pointer *p, uint32_t source) {
    (void)d; (void)p; (void)source;
}
static void ignore_axis_stop(void *d, struct wl_pointer *p, uint32_t time, uint32_t axis) {
    (void)d; (void)p; (void)time; (void)axis;
}
static void ignore_axis_int(void *d, struct wl_pointer *p, uint32_t axis, int32_t value) {
    (void)d; (void)p; (void)axis; (void)value;
}
#if WAYLAND_VERSION_MAJOR > 1 || WAYLAND_VERSION_MINOR >= 23
static void ignore_axis_relative_direction(void *d, struct wl_pointer *p, uint32_t axis, uint32_t direction) {
    (void)d; (void)p; (void)axis; (void)direction;
}
#endif

struct wl_pointer_listener carrel_pointer_listener_ignoring_all(void) {
    return (struct wl_pointer_listener){
        .enter = ignore_enter,
        .leave = ignore_leave,
        .motion = ignore_motion,
        .button = ignore_button,
        .axis = ignore_axis,
        .frame = ignore_frame,
        .axis_source = ignore_axis_source,
        .axis_stop = ignore_axis_stop,
        .axis_discrete = ignore_axis_int,
        .axis_value120 = ignore_axis_int,
#if WAYLAND_VERSION_MAJOR > 1 || WAYLAND_VERSION_MINOR >= 23
        .axis_relative_direction = ignore_axis_relative_direction,
#endif
    };
}
