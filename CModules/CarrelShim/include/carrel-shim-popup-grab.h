#ifndef CARREL_SHIM_POPUP_GRAB_H
#define CARREL_SHIM_POPUP_GRAB_H

#include "carrel-shim-wlroots.h"

/// The client whose xdg_popup grab holds `seat`'s pointer, keyboard or touch
/// grab now; NULL when no popup grab holds any (none, or a drag's). wlroots
/// starts a popup's grab on the client's request alone, without checking its
/// serial, and while it lasts the seat ignores keyboard enters: a grab left
/// standing keeps the keyboard where it was whatever focus Carrel gives.
struct wl_client *carrel_popup_grab_client(struct wlr_xdg_shell *shell, struct wlr_seat *seat);

/// Ends whatever popup grab holds `seat`'s grabs: its popups are dismissed
/// (popup_done) and the seat's default grabs are back, so the next keyboard
/// enter takes effect. Nothing happens when no popup grab holds the seat.
void carrel_popup_grab_end(struct wlr_xdg_shell *shell, struct wlr_seat *seat);

#endif
