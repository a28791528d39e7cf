/* The input method's keyboard grab without key repeat (see the header for
 * why). The fields reached (keyboard, resource, and the repeat_info listener
 * wlroots keeps in the grab) are named alike in wlroots 0.15 to 0.20; 0.19
 * moved the listener under WLR_PRIVATE. Every release from 0.15 to 0.20 sends
 * repeat_info from set_keyboard when the keyboard changes and from that
 * listener, and from nowhere else. */
#include "CarrelShim.h"

/* zwp_input_method_keyboard_grab_v2.repeat_info, the fourth event (keymap,
 * key, modifiers, repeat_info) in input-method-unstable-v2.xml: wlroots
 * installs no server header for the protocol, so it is posted by opcode. */
#define CARREL_IM_KEYBOARD_GRAB_REPEAT_INFO 3

/* The grab's repeat_info listener as a member path, for wl_container_of. */
#if WLR_VERSION_MINOR >= 19
#define CARREL_GRAB_REPEAT_INFO_LISTENER WLR_PRIVATE.keyboard_repeat_info
#else
#define CARREL_GRAB_REPEAT_INFO_LISTENER keyboard_repeat_info
#endif

static void carrel_grab_send_no_repeat(struct wlr_input_method_keyboard_grab_v2 *grab) {
    /* rate 0: no repeat, whatever the delay. */
    wl_resource_post_event(grab->resource, CARREL_IM_KEYBOARD_GRAB_REPEAT_INFO, (int32_t)0, (int32_t)0);
}

/* Replaces wlroots' handle_keyboard_repeat_info, which would send the
 * keyboard's new rate and delay. */
static void carrel_grab_keyboard_repeat_info(struct wl_listener *listener, void *data) {
    (void)data;
    struct wlr_input_method_keyboard_grab_v2 *grab =
        wl_container_of(listener, grab, CARREL_GRAB_REPEAT_INFO_LISTENER);
    carrel_grab_send_no_repeat(grab);
}

void carrel_input_method_grab_set_keyboard_without_repeat(struct wlr_input_method_keyboard_grab_v2 *grab,
                                                          struct wlr_keyboard *keyboard) {
    struct wlr_keyboard *before = grab->keyboard;
    wlr_input_method_keyboard_grab_v2_set_keyboard(grab, keyboard);
    /* wlroots sent nothing when the keyboard is unchanged or none, and on
     * 0.15 it gives up before taking the keyboard when the keymap cannot be
     * shared (then its listeners are not linked either). */
    if (keyboard == NULL || keyboard == before || grab->keyboard != keyboard) {
        return;
    }
    grab->CARREL_GRAB_REPEAT_INFO_LISTENER.notify = carrel_grab_keyboard_repeat_info;
    carrel_grab_send_no_repeat(grab);
}
