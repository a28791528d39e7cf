#ifndef CARREL_SHIM_BRIDGE_H
#define CARREL_SHIM_BRIDGE_H

// What Swift cannot do with wlroots' and libwayland's C conventions by itself
// (bridge.c).

#include "carrel-shim-wlroots.h"

// MARK: - Listener trampoline
//
// Swift cannot use wl_container_of (a macro). A carrel_listener embeds the
// wl_listener and carries a callback plus an opaque context; the trampoline in
// bridge.c is the only wl_container_of for listeners in the project.
struct carrel_listener {
    struct wl_listener listener;
    void (*callback)(void *context, void *data);
    void *context;
};

/// Prepares `l` to call `callback(context, data)` and adds it to `signal`.
void carrel_listener_connect(struct carrel_listener *l, struct wl_signal *signal,
                             void (*callback)(void *context, void *data), void *context);
/// Prepares `l` like carrel_listener_connect, for a client's destruction.
void carrel_listener_connect_client_destroy(struct carrel_listener *l, struct wl_client *client,
                                            void (*callback)(void *context, void *data), void *context);
/// Prepares `l` like carrel_listener_connect, for every client `display`
/// creates (libwayland has no signal getter for it either).
void carrel_listener_connect_client_created(struct carrel_listener *l, struct wl_display *display,
                                            void (*callback)(void *context, void *data), void *context);
/// Removes `l` from whatever signal it is on; safe to call twice.
void carrel_listener_disconnect(struct carrel_listener *l);

// MARK: - Logging
//
// wlroots logs through a printf-style callback with a va_list; Swift cannot
// format C varargs portably, so the shim formats and hands over a string.
typedef void (*carrel_log_sink)(int importance, const char *message);
/// Routes wlroots' own log lines to `sink` at `verbosity` (enum wlr_log_importance).
void carrel_log_init(int verbosity, carrel_log_sink sink);
/// Logs one preformatted line through wlroots' logger (_wlr_vlog).
void carrel_log(int importance, const char *message);

// MARK: - Small accessors Swift cannot express

/// The interface name of a global, for the global filter.
const char *carrel_global_interface_name(const struct wl_global *global);

/// wl_resource_post_error without printf-style varargs, which Swift cannot pass.
void carrel_resource_post_error(struct wl_resource *resource, uint32_t code, const char *message);

/// The generated wl_interface tables of carrel-assessment-v1 (const globals
/// Swift cannot take a stable address of).
const struct wl_interface *carrel_assessment_manager_interface(void);
const struct wl_interface *carrel_assessment_configuration_interface(void);
const struct wl_interface *carrel_assessment_session_interface(void);

#if WLR_VERSION_MINOR >= 17
/// Turns the scene's visibility computation on or off (a private field since 0.19).
void carrel_scene_set_calculate_visibility(struct wlr_scene *scene, bool on);
#endif
#if WLR_VERSION_MINOR >= 18
/// The damage a scene output's next commit renders (a private field since 0.19).
pixman_region32_t *carrel_scene_output_pending_commit_damage(struct wlr_scene_output *scene_output);
#endif

/// Current CLOCK_MONOTONIC as a timespec (frame-done timestamps).
struct timespec carrel_now(void);

#endif
