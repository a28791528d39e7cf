"""A hostile on-screen keyboard for test_on_screen_keyboard.py, run by carrel
as the policy's `[on_screen_keyboard] command` (so it gets the
on_screen_keyboard role and the connection carrel made for it, through
WAYLAND_SOCKET).

    python hostile_on_screen_keyboard.py GENERATED_DIR REPORT_FILE

It asks for a layer surface on the overlay layer, then for a band like
wvkbd's whose buffer is three times the height it is configured to (red,
reaching far above the band), then for a second band; once REPORT_FILE.go
exists (the test has looked at the band; at most 60 s) it asks for keyboard
focus on its band. Before that, it gives the band a buffer that fits (grey)
and a desynchronised subsurface 400 pixels above the band, whose red buffer
comes by the subsurface's own commit once the band is shown (`subsurface
attacked`), and waits for REPORT_FILE.go2. What it was told goes to
REPORT_FILE, one line each: `globals ...`, `overlay closed`, `band
configured W H`, `second closed`, `band closed`, `holding`."""

import mmap
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
REPORT = sys.argv[2]
GO = REPORT + ".go"  # the test creates it once it has looked at the band
GO2 = REPORT + ".go2"  # and this once it has looked at the late subsurface

from pywayland.client import Display  # noqa: E402
from carrel_osk.wayland import WlCompositor, WlShm, WlSubcompositor  # noqa: E402
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
subcompositor = registry.bind(names["wl_subcompositor"], WlSubcompositor, 1)
keep = []


def red_buffer(width, height, pixel=b"\x00\x00\xff\xff"):  # xrgb8888 red
    stride = width * 4
    fd = os.memfd_create("hostile-osk", os.MFD_CLOEXEC)
    os.ftruncate(fd, stride * height)
    with mmap.mmap(fd, stride * height) as data:
        data[:] = pixel * (width * height)
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


band_size = {}


def band_configured(surface, width, height):
    note(f"band configured {width} {height}")
    band_size["width"], band_size["height"] = width, height
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
# A band that fits, so it is shown; then a desynchronised subsurface placed
# above it, whose buffer comes later by its own commit: no commit of the
# band's surface follows that Carrel could check.
grey = b"\x40\x40\x40\xff"
width, height = max(band_size["width"], 1), max(band_size["height"], 1)
above = compositor.create_surface()
sub = subcompositor.get_subsurface(above, band)
sub.set_position(0, -400)
sub.set_desync()
keep.extend([above, sub])
band.attach(red_buffer(width, height, grey), 0, 0)
band.damage_buffer(0, 0, width, height)
band.commit()
display.roundtrip()
time.sleep(0.5)
above.attach(red_buffer(width, 400), 0, 0)
above.damage_buffer(0, 0, width, 400)
above.commit()
display.roundtrip()
note("subsurface attacked")
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not os.path.exists(GO2):
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
