"""A hostile on-screen keyboard for test_on_screen_keyboard.py, run by carrel
as the policy's `[on_screen_keyboard] command` (so it gets the
on_screen_keyboard role and the connection carrel made for it, through
WAYLAND_SOCKET).

    python hostile_on_screen_keyboard.py GENERATED_DIR REPORT_FILE

It asks for a layer surface on the overlay layer, then for a band like
wvkbd's whose buffer is three times the height it is configured to (red,
reaching far above the band), then for a second band; once REPORT_FILE.go
exists (the test has looked at the band; at most 60 s) it asks for keyboard
focus on its band. What it was told goes to REPORT_FILE,
one line each: `globals ...`, `overlay closed`, `band configured W H`,
`second closed`, `band closed`, `holding`."""

import mmap
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
REPORT = sys.argv[2]
GO = REPORT + ".go"  # the test creates it once it has looked at the band

from pywayland.client import Display  # noqa: E402
from carrel_osk.wayland import WlCompositor, WlShm  # noqa: E402
from carrel_osk.wlr_layer_shell_unstable_v1 import ZwlrLayerShellV1, ZwlrLayerSurfaceV1  # noqa: E402


def note(line):
    with open(REPORT, "a") as f:
        f.write(line + "\n")


display = Display()
display.connect()
registry = display.get_registry()
names = {}
registry.dispatcher["global"] = lambda _r, name, interface, version: names.__setitem__(interface, name)
display.roundtrip()
note("globals " + " ".join(sorted(names)))
compositor = registry.bind(names["wl_compositor"], WlCompositor, 4)
shm = registry.bind(names["wl_shm"], WlShm, 1)
shell = registry.bind(names["zwlr_layer_shell_v1"], ZwlrLayerShellV1, 4)
keep = []


def red_buffer(width, height):
    stride = width * 4
    fd = os.memfd_create("hostile-osk", os.MFD_CLOEXEC)
    os.ftruncate(fd, stride * height)
    with mmap.mmap(fd, stride * height) as data:
        data[:] = b"\x00\x00\xff\xff" * (width * height)  # xrgb8888 red
    pool = shm.create_pool(fd, stride * height)
    os.close(fd)
    buffer = pool.create_buffer(0, width, height, stride, WlShm.format.xrgb8888.value)
    pool.destroy()
    keep.append(buffer)
    return buffer


def layer_surface(layer, name, on_configure=None):
    surface = compositor.create_surface()
    ls = shell.get_layer_surface(surface, None, layer, name)
    anchor = ZwlrLayerSurfaceV1.anchor
    ls.set_anchor(anchor.bottom.value | anchor.left.value | anchor.right.value)
    ls.set_size(0, 250)
    ls.set_exclusive_zone(250)

    def configured(obj, serial, width, height):
        obj.ack_configure(serial)
        if on_configure:
            on_configure(surface, width, height)

    ls.dispatcher["configure"] = configured
    ls.dispatcher["closed"] = lambda *_: note(f"{name} closed")
    surface.commit()
    keep.extend([surface, ls])
    return surface, ls


layers = ZwlrLayerShellV1.layer
layer_surface(layers.overlay.value, "overlay")
display.roundtrip()


def band_configured(surface, width, height):
    note(f"band configured {width} {height}")
    # Three times the band's height: two thirds of it would cover the exam.
    surface.attach(red_buffer(max(width, 1), max(height, 1) * 3), 0, 0)
    surface.damage_buffer(0, 0, 100000, 100000)
    surface.commit()


band, band_ls = layer_surface(layers.top.value, "band", band_configured)
display.roundtrip()
display.roundtrip()
layer_surface(layers.top.value, "second")
display.roundtrip()
note("holding")
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not os.path.exists(GO):
    display.roundtrip()
    time.sleep(0.1)
band_ls.set_keyboard_interactivity(ZwlrLayerSurfaceV1.keyboard_interactivity.exclusive.value)
band.commit()
display.roundtrip()
note("asked for keyboard focus")
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    display.roundtrip()
    time.sleep(0.2)
