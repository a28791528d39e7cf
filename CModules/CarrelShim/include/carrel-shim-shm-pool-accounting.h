#ifndef CARREL_SHIM_SHM_POOL_ACCOUNTING_H
#define CARREL_SHIM_SHM_POOL_ACCOUNTING_H

// wl_shm pools per client (shm_pool_accounting.c).

#include "carrel-shim-wlroots.h"

/// Counts the wl_shm_pool objects each client holds (a resource-created
/// listener per client, a destroy listener per pool) and calls
/// `admit(context, client, pools_held)` each time a client creates one, with
/// the count including the new pool. When `admit` returns false the caller has
/// already posted an error to the client; the pool is left to libwayland,
/// which frees it with the client. Stable libwayland API (1.14+).
typedef bool (*carrel_shm_pool_admit)(void *context, struct wl_client *client, uint32_t pools_held);
void carrel_install_shm_pool_accounting(struct wl_display *display, carrel_shm_pool_admit admit, void *context);

#endif
