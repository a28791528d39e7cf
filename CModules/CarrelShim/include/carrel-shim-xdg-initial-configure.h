#ifndef CARREL_SHIM_XDG_INITIAL_CONFIGURE_H
#define CARREL_SHIM_XDG_INITIAL_CONFIGURE_H

#include "carrel-shim-wlroots.h"

/// Sends `xdg_surface`'s first configure on its initial commit, for as long
/// as its wl_surface lives: wlroots 0.18 leaves that configure to the
/// compositor, and without it the surface never maps. Nothing to do (true) on
/// older wlroots, which send it themselves. False when out of memory.
bool carrel_xdg_configure_on_initial_commit(struct wlr_xdg_surface *xdg_surface);

#endif
