"""An input method for test_input_method.py that records the key repeat its
keyboard grabs are told, run by carrel as the policy's `[input_method]
command` (so it gets the input-method role and carrel's connection, through
WAYLAND_SOCKET).

    python repeat_info_input_method.py GENERATED_DIR REPORT_FILE [fcitx5 flags ignored]

It grabs the keyboard, releases the grab and grabs again (a fresh grab is
given the keyboard anew, as after a relaunch), then stays. To REPORT_FILE, one
line each: `grab N PID` when grab N is made, `repeat N RATE DELAY` for each
repeat_info grab N receives, `keymap N` and `key N` for its keymap and keys,
and `settled N` once a roundtrip after the grab has returned (all the grab's
first events were read by then)."""

import os
import sys
import time

sys.path.insert(0, sys.argv[1])
REPORT = sys.argv[2]

from pywayland.client import Display  # noqa: E402
from carrel_im.wayland import WlSeat  # noqa: E402
from carrel_im.input_method_unstable_v2 import ZwpInputMethodManagerV2  # noqa: E402


def note(line):
    with open(REPORT, "a") as f:
        f.write(line + "\n")


display = Display()
display.connect()
registry = display.get_registry()
names = {}
registry.dispatcher["global"] = lambda _r, name, interface, version: names.__setitem__(interface, name)
display.roundtrip()
seat = registry.bind(names["wl_seat"], WlSeat, 1)
manager = registry.bind(names["zwp_input_method_manager_v2"], ZwpInputMethodManagerV2, 1)
input_method = manager.get_input_method(seat)
display.roundtrip()


def grab(number):
    note(f"grab {number} {os.getpid()}")
    keyboard = input_method.grab_keyboard()
    keyboard.dispatcher["repeat_info"] = lambda _g, rate, delay: note(f"repeat {number} {rate} {delay}")
    keyboard.dispatcher["keymap"] = lambda _g, _format, fd, _size: (note(f"keymap {number}"), os.close(fd))
    keyboard.dispatcher["key"] = lambda *_: note(f"key {number}")
    display.roundtrip()
    display.roundtrip()
    note(f"settled {number}")
    return keyboard


first = grab(1)
first.release()
display.roundtrip()
second = grab(2)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    display.dispatch(block=False)
    display.roundtrip()
    time.sleep(0.2)
