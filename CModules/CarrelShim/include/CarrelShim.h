#ifndef CARREL_SHIM_H
#define CARREL_SHIM_H

// The one place the compositor imports C from. wlroots 0.15 only exposes its
// unstable API with this define; keep every wlroots-version-specific include
// here so a port to 0.17+ touches few places.
#define WLR_USE_UNSTABLE 1

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <wayland-server-core.h>
#include <wayland-server-protocol.h>
#include <xkbcommon/xkbcommon.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>

#include "xdg-shell-protocol.h"
#include "carrel-assessment-v1-protocol.h"

#include <wlr/backend.h>
#include <wlr/backend/headless.h>
#include <wlr/backend/session.h>
#include <wlr/backend/multi.h>
#include <wlr/backend/wayland.h>
#include <wlr/backend/x11.h>
#include <wlr/render/allocator.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_buffer.h>
#include <wlr/types/wlr_compositor.h>
#include <wlr/types/wlr_cursor.h>
#include <wlr/types/wlr_data_device.h>
#include <wlr/types/wlr_idle.h>
#include <wlr/types/wlr_idle_inhibit_v1.h>
#include <wlr/types/wlr_input_device.h>
#include <wlr/types/wlr_keyboard.h>
#include <wlr/types/wlr_output.h>
#include <wlr/types/wlr_output_damage.h>
#include <wlr/types/wlr_output_layout.h>
#include <wlr/types/wlr_pointer.h>
#include <wlr/types/wlr_presentation_time.h>
#include <wlr/types/wlr_primary_selection.h>
#include <wlr/types/wlr_primary_selection_v1.h>
#include <wlr/types/wlr_scene.h>
#include <wlr/types/wlr_screencopy_v1.h>
#include <wlr/types/wlr_seat.h>
#include <wlr/types/wlr_touch.h>
#include <wlr/types/wlr_viewporter.h>
#include <wlr/types/wlr_xcursor_manager.h>
#include <wlr/types/wlr_xdg_decoration_v1.h>
#include <wlr/types/wlr_xdg_output_v1.h>
#include <wlr/types/wlr_xdg_shell.h>
#include <wlr/util/box.h>
#include <wlr/util/log.h>

// MARK: - Listener trampoline
//
// Swift cannot use wl_container_of (a macro). A carrel_listener embeds the
// wl_listener and carries a callback plus an opaque context; the trampoline in
// shim.c is the only wl_container_of in the project.
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

/// Refuses `xdg_surface.get_popup` requests whose parent is the popup's own
/// xdg_surface or a popup below it. wlroots 0.15 accepts such a parent, links
/// the popup into its own subtree and then recurses without end when it is
/// destroyed (a crash any client can cause; found by the wire fuzzer). The
/// guard sees each request before wlroots does (a protocol logger), posts
/// `xdg_wm_base.invalid_popup_parent` and hands wlroots a null parent, so the
/// cycle is never built and the client is disconnected. wlroots-version-specific:
/// reads `wlr_xdg_surface` as 0.15 lays it out; 0.17 checks this itself.
struct wl_protocol_logger *carrel_install_popup_guard(struct wl_display *display);

/// Fails every pending screencopy frame (of `output`, or of every output when
/// NULL): the client hears `failed` and no pixels are copied. wlroots 0.15 has
/// no call for this; the shim runs the frame's own output-destroy handler,
/// which sends `failed` and frees the frame (version-specific: reads
/// `wlr_screencopy_manager_v1.frames`). `each` (may be NULL) hears the client
/// of every frame before it fails (the audit log). Returns how many failed.
int carrel_screencopy_fail_frames(struct wlr_screencopy_manager_v1 *manager, struct wlr_output *output,
                                  void (*each)(void *data, struct wl_client *client), void *data);

/// Refuses `wl_subsurface.place_above` / `place_below` on a subsurface whose
/// parent surface was destroyed. wlroots 0.15 keeps such a subsurface with a
/// NULL parent and dereferences it in these two requests (a crash any client
/// can cause; found by the soak). The guard, a protocol logger, posts
/// `wl_subsurface.bad_surface` (there is no parent or sibling left to place
/// against) and hides the wlr_subsurface from the handler for this one
/// request (user data NULL: wlroots' handler then returns early), restoring it
/// before wlroots' own destroy callback runs. wlroots-version-specific: 0.16+
/// destroys the subsurface with its parent; the guard can go with the port.
struct wl_protocol_logger *carrel_install_subsurface_guard(struct wl_display *display);

/// Keeps requests on *inert* xdg objects away from wlroots 0.15. When a
/// client destroys a wl_surface before its xdg_surface and xdg_toplevel,
/// wlroots 0.15 clears their user data but most xdg_toplevel handlers (and
/// xdg_surface.get_popup) dereference it anyway: a NULL dereference any
/// client can cause (found by the wire fuzzer). The guard, a protocol logger,
/// sees such a request before it is dispatched and swaps the resource's
/// implementation for an inert one: requests on an inert xdg_toplevel are
/// ignored, `destroy` destroys it, and `get_popup` on
/// an inert xdg_surface is the protocol error `xdg_surface.defunct_role_object`.
/// wlroots-version-specific: re-check at the port whether the new version
/// guards these handlers itself, then drop this.
struct wl_protocol_logger *carrel_install_inert_xdg_guard(struct wl_display *display);

/* The audit log's watch on requests: calls `callback` for the few
 * requests that can be blocked attempts, and for nothing else; other
 * requests cost a switch on their class name's first letter and, for a few,
 * a string compare. (Capture is recorded where frames fail, see
 * carrel_screencopy_fail_frames.) Kinds: */
enum carrel_audit_request {
    CARREL_AUDIT_BIND = 0,        /* wl_registry.bind; `interface` is the one asked for */
    CARREL_AUDIT_RAISE = 1,       /* xdg_toplevel.set_fullscreen / set_maximized */
    CARREL_AUDIT_SELECTION = 2,   /* wl_data_device.set_selection / start_drag, primary set_selection:
                                     remembered, so a refusal that follows names its client */
};
typedef void (*carrel_audit_request_fn)(void *data, struct wl_client *client, int kind, const char *interface);
struct wl_protocol_logger *carrel_install_audit_watch(struct wl_display *display, carrel_audit_request_fn callback, void *data);

/// Frees a drag the compositor refused (never started). wlroots 0.15 frees a
/// drag only when it ends or its data source goes; a refused drag without a
/// source (legal: a drag inside one client) was never freed, so a client
/// could grow Carrel's memory with endless refused start_drag requests (found
/// by the fuzzer under AddressSanitizer). With a source, destroying the
/// source frees the drag as wlroots intends; without, the shim does what
/// wlroots' own drag_destroy does for a drag that never started (0.15's
/// struct layout). wlroots-version-specific: re-check at the port whether the
/// new version frees refused drags itself, then drop this.
void carrel_drag_destroy_refused(struct wlr_drag *drag);

/// Counts the wl_shm_pool objects each client holds (a resource-created
/// listener per client, a destroy listener per pool) and calls
/// `admit(context, client, pools_held)` each time a client creates one, with
/// the count including the new pool. When `admit` returns false the caller has
/// already posted an error to the client; the pool is left to libwayland,
/// which frees it with the client. Stable libwayland API (1.14+).
typedef bool (*carrel_shm_pool_admit)(void *context, struct wl_client *client, uint32_t pools_held);
void carrel_install_shm_pool_accounting(struct wl_display *display, carrel_shm_pool_admit admit, void *context);

/// The generated wl_interface tables of carrel-assessment-v1 (const globals
/// Swift cannot take a stable address of).
const struct wl_interface *carrel_assessment_manager_interface(void);
const struct wl_interface *carrel_assessment_configuration_interface(void);
const struct wl_interface *carrel_assessment_session_interface(void);

/// A wlr_buffer in plain memory that the compositor draws into itself (the
/// confirmation prompt and the banner, with cairo): `width`×`height` pixels of
/// DRM_FORMAT_ARGB8888, which is cairo's CAIRO_FORMAT_ARGB32 on little-endian
/// machines, premultiplied. `*data` and `*stride` receive the pixels; they
/// live until the buffer is dropped and every lock on it released.
/// wlroots-version-specific: implements 0.15's `wlr_buffer_impl` by hand.
/// Returns NULL when memory runs out.
struct wlr_buffer *carrel_memory_buffer_create(int width, int height, void **data, int *stride);

/// Current CLOCK_MONOTONIC as a timespec (frame-done timestamps).
struct timespec carrel_now(void);

#endif
