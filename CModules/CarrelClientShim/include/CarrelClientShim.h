#ifndef CARREL_CLIENT_SHIM_H
#define CARREL_CLIENT_SHIM_H

// Client-side umbrella for Carrel's own Wayland clients (test clients,
// AssessmentKit). Kept apart from CarrelShim: client and server headers of the
// same protocol cannot share a translation unit.
#include <stdint.h>
#include <wayland-client.h>
#include "xdg-shell-client-protocol.h"

/// Creates an anonymous shared-memory file of `size` bytes for wl_shm; -1 on error.
int carrel_client_shm_create(size_t size);

#endif
