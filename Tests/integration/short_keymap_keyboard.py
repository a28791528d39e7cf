"""An on-screen keyboard whose virtual keyboard's keymap is shorter than the
size it states, for test_fuzz.py (found by the fuzzer as the keyboard: wlroots
mapped the stated size and read past the file's end, SIGBUS in Carrel).

    python short_keymap_keyboard.py REPORT_FILE

Run as the policy's keyboard (WAYLAND_SOCKET). It binds the seat and the
virtual keyboard manager, makes a virtual keyboard, sends a keymap whose
memfd holds one page of text (no NUL) but is said to hold 1 MiB, then a sync, and
writes to REPORT_FILE how the connection ended."""

import os
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from carrel_fuzz import Closed, Conn, message, wl_string  # noqa: E402

conn = Conn(fd=int(os.environ["WAYLAND_SOCKET"]))
conn.registry = 2
conn.send(message(1, 1, struct.pack("<I", 2)))          # wl_display.get_registry
assert conn.roundtrip(3, 5), "no registry"
names = {iface: (name, version) for name, (iface, version) in conn.globals.items()}
for iface, new_id, version in (("wl_seat", 4, 1), ("zwp_virtual_keyboard_manager_v1", 5, 1)):
    name = names[iface][0]
    conn.send(message(2, 0, struct.pack("<I", name) + wl_string(iface.encode()) + struct.pack("<II", version, new_id)))
conn.send(message(5, 0, struct.pack("<II", 4, 6)))         # create_virtual_keyboard(seat, id 6)
fd = os.memfd_create("short-keymap")
# A whole page of text and no NUL: a reader that trusts the stated size reads on into the next page.
os.write(fd, b"xkb_keymap {" + b" " * (4096 - 12))
try:
    conn.send(message(6, 0, struct.pack("<II", 1, 1 << 20)), fds=[fd])   # keymap(xkb_v1, fd, 1 MiB)
    answered = conn.roundtrip(7, 5)
except Closed:
    answered = False
Path(sys.argv[1]).write_text(f"answered={answered} error={conn.error} closed={conn.closed}\n")
