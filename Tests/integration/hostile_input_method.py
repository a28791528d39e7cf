"""A hostile input method for test_input_method.py, run by carrel as the
policy's `[input_method] command` (so it gets the input-method role and the
connection carrel made for it, through WAYLAND_SOCKET).

    python hostile_input_method.py GENERATED_DIR REPORT_FILE [fcitx5 flags ignored]

It binds the input method twice, grabs the keyboard twice, asks for a
candidate popup with no text input, then for as long as it runs commits
oversized and malformed text: a commit string near the wire's limit, a
preedit whose cursor lies outside it, a deletion far past any text. What it
saw (unavailable, activate) goes to REPORT_FILE, one word a line."""

import sys
import time

sys.path.insert(0, sys.argv[1])
REPORT = sys.argv[2]

from pywayland.client import Display  # noqa: E402
from carrel_im.wayland import WlCompositor, WlSeat  # noqa: E402
from carrel_im.input_method_unstable_v2 import ZwpInputMethodManagerV2  # noqa: E402


def note(word):
    with open(REPORT, "a") as f:
        f.write(word + "\n")


display = Display()
display.connect()
registry = display.get_registry()
names = {}
registry.dispatcher["global"] = lambda _r, name, interface, version: names.__setitem__(interface, name)
display.roundtrip()
note("connected")
seat = registry.bind(names["wl_seat"], WlSeat, 1)
compositor = registry.bind(names["wl_compositor"], WlCompositor, 4)
manager = registry.bind(names["zwp_input_method_manager_v2"], ZwpInputMethodManagerV2, 1)

serials = [0]
first = manager.get_input_method(seat)
second = manager.get_input_method(seat)
first.dispatcher["unavailable"] = lambda *_: note("first-unavailable")
second.dispatcher["unavailable"] = lambda *_: note("second-unavailable")
first.dispatcher["activate"] = lambda *_: note("activate")


def done(*_):
    serials[0] += 1


first.dispatcher["done"] = done
grab = first.grab_keyboard()
again = first.grab_keyboard()
surface = compositor.create_surface()
popup = first.get_input_popup_surface(surface)
display.roundtrip()
note("bound")

# 3878 bytes, inside one wire message; the newline lets the app's `cat` write it.
huge = "HOSTILE" + "語" * 1290 + "\n"
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    first.set_preedit_string("x" * 3000, 5000, -7)
    first.commit_string(huge)
    first.delete_surrounding_text(100000, 100000)
    first.commit(serials[0])
    display.roundtrip()
    note("committed")
    time.sleep(0.2)
