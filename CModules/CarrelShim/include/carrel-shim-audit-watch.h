#ifndef CARREL_SHIM_AUDIT_WATCH_H
#define CARREL_SHIM_AUDIT_WATCH_H

#include "carrel-shim-wlroots.h"

/* The audit log's watch on requests (audit_watch.c): calls `callback` for the few
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

#endif
