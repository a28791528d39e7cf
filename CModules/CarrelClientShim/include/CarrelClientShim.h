#ifndef CARREL_CLIENT_SHIM_H
#define CARREL_CLIENT_SHIM_H

// Client-side umbrella for Carrel's own Wayland clients (test clients,
// AssessmentKit). Kept apart from CarrelShim: client and server headers of the
// same protocol cannot share a translation unit.
#include <stdint.h>
#include <wayland-client.h>
#include "xdg-shell-client-protocol.h"
#include "carrel-assessment-v1-client-protocol.h"
#include "text-input-unstable-v3-client-protocol.h"
// The demo exam reads typed text through the keymap the compositor sends.
#include <xkbcommon/xkbcommon.h>

/// A wl_pointer listener whose every handler ignores its event: Swift fills
/// in the ones it wants. The struct grows with libwayland (1.23 added
/// axis_relative_direction), so a memberwise literal in Swift fits one
/// libwayland only; libwayland never checks for a NULL handler.
struct wl_pointer_listener carrel_pointer_listener_ignoring_all(void);

/// Creates an anonymous shared-memory file of `size` bytes for wl_shm; -1 on error.
int carrel_client_shm_create(size_t size);

/// The interface description wl_registry_bind needs for the global named
/// `name` (e.g. "wl_compositor"), or NULL if Carrel's clients never bind it.
/// Swift cannot take the address of an imported `extern const` struct.
const struct wl_interface *carrel_client_interface(const char *name);

// carrel-probe: helpers for a client that tests what the compositor refuses.

/// Starts collecting libwayland-client's log messages (such as the text of a
/// protocol error the compositor sent) instead of printing them to stderr,
/// and forgets what was collected before.
void carrel_client_log_capture(void);

/// The log text collected since carrel_client_log_capture (at most 4 KiB).
const char *carrel_client_log_text(void);

/// A description of an interface named `name` with no requests or events, for
/// binding a global whose protocol this client does not carry: enough to
/// learn whether the compositor lets the bind through. Never freed.
const struct wl_interface *carrel_client_opaque_interface(const char *name);

#endif
