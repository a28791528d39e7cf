/* The first configure of an xdg popup, which wlroots 0.18 leaves to the
 * compositor (due on the popup's initial commit; older wlroots send it
 * themselves). Toplevels get theirs from their View; popups have no Swift
 * object, so this listener lives as long as the popup's wl_surface. */
#include "CarrelShim.h"

#include <stdlib.h>

#if WLR_VERSION_MINOR >= 18
struct carrel_initial_configure {
    struct wlr_xdg_surface *xdg_surface;
    struct wl_listener commit;
    struct wl_listener destroy;
};

static void carrel_initial_configure_commit(struct wl_listener *listener, void *data) {
    (void)data;
    struct carrel_initial_configure *c = wl_container_of(listener, c, commit);
    if (c->xdg_surface->initial_commit) {
        wlr_xdg_surface_schedule_configure(c->xdg_surface);
    }
}

static void carrel_initial_configure_destroy(struct wl_listener *listener, void *data) {
    (void)data;
    struct carrel_initial_configure *c = wl_container_of(listener, c, destroy);
    wl_list_remove(&c->commit.link);
    wl_list_remove(&c->destroy.link);
    free(c);
}
#endif

bool carrel_xdg_configure_on_initial_commit(struct wlr_xdg_surface *xdg_surface) {
#if WLR_VERSION_MINOR >= 18
    struct carrel_initial_configure *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return false;
    }
    c->xdg_surface = xdg_surface;
    c->commit.notify = carrel_initial_configure_commit;
    wl_signal_add(&xdg_surface->surface->events.commit, &c->commit);
    c->destroy.notify = carrel_initial_configure_destroy;
    wl_signal_add(&xdg_surface->surface->events.destroy, &c->destroy);
#else
    (void)xdg_surface;
#endif
    return true;
}
