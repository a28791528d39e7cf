"""A window that tries to keep the seat with xdg_popup grabs, for
test_role_areas.py. Run as a participant (by the policy's command) or as the
exam (on the app socket, `--exam PARTICIPANT`: it begins a session naming
that participant with this window as the session's surface).

    python grabbing_window.py GENERATED_DIR REPORT_FILE MODE [--exam PARTICIPANT]

GENERATED_DIR holds `carrel_hostile` (pywayland's scanner output for
wayland.xml, xdg-shell, viewporter and carrel-assessment-v1). MODE:
  on-focus  each time the window gets the keyboard it opens a popup with a
            grab (the serial of that keyboard enter), as a menu would
  at-once   opens a popup with a grab as soon as it is mapped, with no
            focus and a made-up serial, and again whenever one is dismissed
  none      grabs nothing (the exam, say)
What it saw goes to REPORT_FILE, a line each: `mapped`, `began`,
`enter`, `leave`, `key KEYCODE pressed|released`, `button BUTTON`,
`grabbed`, `popup-done`."""

import os
import sys
import time

sys.path.insert(0, sys.argv[1])
REPORT = sys.argv[2]
MODE = sys.argv[3]
EXAM_PARTICIPANT = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--exam" else None

from carrel_hostile.wayland import WlCompositor, WlSeat, WlShm  # noqa: E402
from carrel_hostile.xdg_shell import XdgWmBase  # noqa: E402
from carrel_hostile.carrel_assessment_v1 import CarrelAssessmentManagerV1  # noqa: E402
from wayland_test_client import TestClient  # noqa: E402

client = TestClient(REPORT)
note, bind, keep, display = client.note, client.bind, client.keep, client.display
compositor = bind(WlCompositor, 4)
shm = bind(WlShm, 1)
wm_base = bind(XdgWmBase, 2)
wm_base.dispatcher["ping"] = lambda base, serial: base.pong(serial)
seat = bind(WlSeat, 5)


def paint(surface, width, height, colour):
    surface.attach(client.buffer(shm, WlShm, width, height, colour), 0, 0)
    surface.damage_buffer(0, 0, width, height)
    surface.commit()


surface = compositor.create_surface()
xdg_surface = wm_base.get_xdg_surface(surface)
toplevel = xdg_surface.get_toplevel()
toplevel.set_title("grabbing window")
size = {"width": 0, "height": 0}
state = {"configured": False, "popup": None, "wanted": MODE == "at-once"}


def on_toplevel_configure(_t, width, height, _states):
    size["width"], size["height"] = width or 640, height or 480


def on_configure(xs, serial):
    xs.ack_configure(serial)
    if state["configured"]:
        surface.commit()
        return
    state["configured"] = True
    paint(surface, size["width"], size["height"], (0x80, 0x80, 0x80))
    note("mapped")


toplevel.dispatcher["configure"] = on_toplevel_configure
xdg_surface.dispatcher["configure"] = on_configure
surface.commit()
keep += [surface, xdg_surface, toplevel]


def open_grabbing_popup(serial):
    """A menu-sized popup in the window, grabbing the seat with `serial`."""
    if state["popup"] is not None:
        return
    positioner = wm_base.create_positioner()
    positioner.set_size(120, 90)
    positioner.set_anchor_rect(20, 20, 1, 1)
    popup_surface = compositor.create_surface()
    popup_xdg = wm_base.get_xdg_surface(popup_surface)
    popup = popup_xdg.get_popup(xdg_surface, positioner)

    def on_popup_configure(xs, configure_serial):
        xs.ack_configure(configure_serial)
        paint(popup_surface, 120, 90, (0xc0, 0x40, 0x40))

    def on_done(_p):
        note("popup-done")
        popup.destroy()
        popup_xdg.destroy()
        popup_surface.destroy()
        state["popup"] = None
        if MODE == "at-once":
            state["wanted"] = True

    popup_xdg.dispatcher["configure"] = on_popup_configure
    popup.dispatcher["popup_done"] = on_done
    popup.grab(seat, serial)
    popup_surface.commit()
    state["popup"] = popup
    keep.extend([positioner, popup_surface, popup_xdg, popup])
    note("grabbed")


def on_capabilities(_seat, caps):
    if caps & WlSeat.capability.keyboard.value and "keyboard" not in state:
        keyboard = _seat.get_keyboard()
        keyboard.dispatcher["keymap"] = lambda _k, _f, fd, _s: os.close(fd)

        def on_enter(_k, serial, _surface, _keys):
            note("enter")
            if MODE == "on-focus":
                open_grabbing_popup(serial)

        keyboard.dispatcher["enter"] = on_enter
        keyboard.dispatcher["leave"] = lambda _k, _serial, _surface: note("leave")
        keyboard.dispatcher["key"] = lambda _k, _serial, _time, key, key_state: note(
            f"key {key} {'pressed' if key_state else 'released'}")
        state["keyboard"] = keyboard
    if caps & WlSeat.capability.pointer.value and "pointer" not in state:
        pointer = _seat.get_pointer()
        pointer.dispatcher["button"] = lambda _p, _serial, _time, button, button_state: note(
            f"button {button}") if button_state else None
        state["pointer"] = pointer


seat.dispatcher["capabilities"] = on_capabilities
while not state["configured"]:
    display.dispatch(block=True)
display.roundtrip()

if EXAM_PARTICIPANT:
    manager = bind(CarrelAssessmentManagerV1, 2)
    configuration = manager.create_configuration()
    configuration.add_participant(EXAM_PARTICIPANT)
    session = manager.begin(surface, configuration)
    session.dispatcher["began"] = lambda _s: note("began")
    session.dispatcher["failed"] = lambda _s, reason, message: note(f"failed {reason} {message}")
    keep += [manager, configuration, session]

deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    if state["wanted"]:
        state["wanted"] = False
        # No input ever reached this window: the serial is made up.
        open_grabbing_popup(1)
    display.roundtrip()
    time.sleep(0.05)
