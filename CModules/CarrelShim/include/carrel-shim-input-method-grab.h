#ifndef CARREL_SHIM_INPUT_METHOD_GRAB_H
#define CARREL_SHIM_INPUT_METHOD_GRAB_H

#include "carrel-shim-wlroots.h"

/// Gives the input method's keyboard grab `keyboard` (wlroots'
/// `wlr_input_method_keyboard_grab_v2_set_keyboard`: keymap, repeat info and
/// modifiers when the keyboard changes) and then tells the grab that keys do
/// not repeat: `repeat_info(0, 0)`, which the protocol defines as no repeat.
/// wlroots sends the keyboard's own rate and delay, and an engine that runs
/// its own repeat timer from them (fcitx5 does) types a key again whenever
/// it reads the key's release late, which a loaded machine makes happen: a
/// key the student never typed. The engine passes keys on to the app, and
/// the app repeats a held key itself from its wl_keyboard's repeat info, so
/// nothing is lost but the engine's own repeat while it composes.
///
/// wlroots also re-sends the keyboard's repeat info to the grab whenever the
/// keyboard's changes (a listener on the keyboard's `repeat_info` signal);
/// that listener is pointed at the same `repeat_info(0, 0)`. Nothing is sent
/// when the grab already has `keyboard` (wlroots sends nothing then either),
/// so calling this before every key costs nothing on the wire.
void carrel_input_method_grab_set_keyboard_without_repeat(struct wlr_input_method_keyboard_grab_v2 *grab,
                                                          struct wlr_keyboard *keyboard);

#endif
