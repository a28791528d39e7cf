/* The bridge between wlroots' C conventions and Swift: the listener
 * trampoline (the project's only wl_container_of for listeners), wlroots'
 * varargs logging turned into plain strings both ways, small accessors Swift
 * cannot express, and the monotonic clock for frame-done timestamps. */
#include "CarrelShim.h"
#include "log_internal.h"

#include <stdarg.h>
#include <stdio.h>

/* The wlroots the build asked for (CARREL_WLROOTS, a define from
 * Package.swift) must be the one whose headers were found: a header missing
 * from a newer wlroots' prefix silently resolves to the distribution's 0.15
 * copy in /usr/include. */
#if defined(CARREL_WLROOTS_0_20) && WLR_VERSION_MINOR != 20
#error "built for wlroots 0.20 (CARREL_WLROOTS=0.20) but <wlr/version.h> is another version: point PKG_CONFIG_PATH at wlroots 0.20's prefix"
#elif defined(CARREL_WLROOTS_0_19) && WLR_VERSION_MINOR != 19
#error "built for wlroots 0.19 (CARREL_WLROOTS=0.19) but <wlr/version.h> is another version: point PKG_CONFIG_PATH at wlroots 0.19's prefix"
#elif defined(CARREL_WLROOTS_0_18) && WLR_VERSION_MINOR != 18
#error "built for wlroots 0.18 (CARREL_WLROOTS=0.18) but <wlr/version.h> is another version: point PKG_CONFIG_PATH at wlroots 0.18's prefix"
#elif defined(CARREL_WLROOTS_0_17) && WLR_VERSION_MINOR != 17
#error "built for wlroots 0.17 (CARREL_WLROOTS=0.17) but <wlr/version.h> is another version: point PKG_CONFIG_PATH at wlroots 0.17's prefix"
#elif !defined(CARREL_WLROOTS_0_17) && !defined(CARREL_WLROOTS_0_18) && !defined(CARREL_WLROOTS_0_19) \
    && !defined(CARREL_WLROOTS_0_20) && WLR_VERSION_MINOR != 15
#error "built for wlroots 0.15 (CARREL_WLROOTS unset) but found another wlroots: set CARREL_WLROOTS to its version (0.17, 0.18, 0.19 or 0.20)"
#endif

static void carrel_listener_notify(struct wl_listener *listener, void *data) {
    struct carrel_listener *l = wl_container_of(listener, l, listener);
    l->callback(l->context, data);
}

void carrel_listener_connect(struct carrel_listener *l, struct wl_signal *signal,
                             void (*callback)(void *context, void *data), void *context) {
    l->callback = callback;
    l->context = context;
    l->listener.notify = carrel_listener_notify;
    wl_signal_add(signal, &l->listener);
}

void carrel_listener_connect_client_destroy(struct carrel_listener *l, struct wl_client *client,
                                            void (*callback)(void *context, void *data), void *context) {
    l->callback = callback;
    l->context = context;
    l->listener.notify = carrel_listener_notify;
    wl_client_add_destroy_listener(client, &l->listener);
}

void carrel_listener_connect_client_created(struct carrel_listener *l, struct wl_display *display,
                                            void (*callback)(void *context, void *data), void *context) {
    l->callback = callback;
    l->context = context;
    l->listener.notify = carrel_listener_notify;
    wl_display_add_client_created_listener(display, &l->listener);
}

void carrel_listener_disconnect(struct carrel_listener *l) {
    if (l->listener.link.next == NULL) {
        return;
    }
    wl_list_remove(&l->listener.link);
    l->listener.link.next = NULL;
    l->listener.link.prev = NULL;
}

static carrel_log_sink log_sink;

static void carrel_log_callback(enum wlr_log_importance importance, const char *fmt, va_list args) {
    char line[1024];
    vsnprintf(line, sizeof line, fmt, args);
    if (log_sink) {
        log_sink((int)importance, line);
    }
}

void carrel_log_init(int verbosity, carrel_log_sink sink) {
    log_sink = sink;
    wlr_log_init((enum wlr_log_importance)verbosity, carrel_log_callback);
}

void carrel_vlog(int importance, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    _wlr_vlog((enum wlr_log_importance)importance, fmt, args);
    va_end(args);
}

void carrel_log(int importance, const char *message) {
    carrel_vlog(importance, "%s", message);
}

const char *carrel_global_interface_name(const struct wl_global *global) {
    return wl_global_get_interface(global)->name;
}

void carrel_resource_post_error(struct wl_resource *resource, uint32_t code, const char *message) {
    wl_resource_post_error(resource, code, "%s", message);
}

const struct wl_interface *carrel_assessment_manager_interface(void) {
    return &carrel_assessment_manager_v1_interface;
}

const struct wl_interface *carrel_assessment_configuration_interface(void) {
    return &carrel_assessment_configuration_v1_interface;
}

const struct wl_interface *carrel_assessment_session_interface(void) {
    return &carrel_assessment_session_v1_interface;
}

struct timespec carrel_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now;
}

#if WLR_VERSION_MINOR >= 17
void carrel_scene_set_calculate_visibility(struct wlr_scene *scene, bool on) {
    CARREL_WLR_PRIVATE(scene).calculate_visibility = on;
}
#endif

#if WLR_VERSION_MINOR >= 18
pixman_region32_t *carrel_scene_output_pending_commit_damage(struct wlr_scene_output *scene_output) {
    return &CARREL_WLR_PRIVATE(scene_output).pending_commit_damage;
}
#endif
