/* Popup grabs, for Core's rule that only the focused window's client may
 * hold the seat: wlroots keeps its xdg_popup grab in a per-seat record on
 * the shell's list and swaps the seat's grab interfaces for it. */
#include "CarrelShim.h"

static struct wlr_xdg_popup_grab *carrel_seat_popup_grab(struct wlr_xdg_shell *shell, struct wlr_seat *seat) {
    struct wlr_xdg_popup_grab *grab;
    wl_list_for_each(grab, &shell->popup_grabs, link) {
        if (grab->seat != seat) {
            continue;
        }
        if (seat->pointer_state.grab == &grab->pointer_grab ||
                seat->keyboard_state.grab == &grab->keyboard_grab ||
                seat->touch_state.grab == &grab->touch_grab) {
            return grab;
        }
    }
    return NULL;
}

struct wl_client *carrel_popup_grab_client(struct wlr_xdg_shell *shell, struct wlr_seat *seat) {
    struct wlr_xdg_popup_grab *grab = carrel_seat_popup_grab(shell, seat);
    return grab ? grab->client : NULL;
}

void carrel_popup_grab_end(struct wlr_xdg_shell *shell, struct wlr_seat *seat) {
    struct wlr_xdg_popup_grab *grab = carrel_seat_popup_grab(shell, seat);
    if (grab == NULL) {
        return;
    }
    /* The pointer's first: ending it dismisses the popups (newer wlroots end
     * the other two with it); then whichever is still held. */
    if (seat->pointer_state.grab == &grab->pointer_grab) {
        wlr_seat_pointer_end_grab(seat);
    }
    if (seat->keyboard_state.grab == &grab->keyboard_grab) {
        wlr_seat_keyboard_end_grab(seat);
    }
    if (seat->touch_state.grab == &grab->touch_grab) {
        wlr_seat_touch_end_grab(seat);
    }
}
