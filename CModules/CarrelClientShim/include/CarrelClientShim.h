#ifndef CARREL_CLIENT_SHIM_H
#define CARREL_CLIENT_SHIM_H

// Client-side umbrella for Carrel's own Wayland clients (test clients,
// AssessmentKit). Kept apart from CarrelShim: client and server headers of the
// same protocol cannot share a translation unit.
#include <stdint.h>
#include <wayland-client.h>
#include "xdg-shell-client-protocol.h"
#include "carrel-assessment-v1-client-protocol.h"

/// Creates an anonymous shared-memory file of `size` bytes for wl_shm; -1 on error.
int carrel_client_shm_create(size_t size);

/// The interface description wl_registry_bind needs for the global named
/// `name` (e.g. "wl_compositor"), or NULL if Carrel's clients never bind it.
/// Swift cannot take the address of an imported `extern const` struct.
const struct wl_interface *carrel_client_interface(const char *name);

#endif
