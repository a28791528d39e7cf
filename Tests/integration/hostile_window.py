"""A window that tries every way xdg-shell, wl_subcompositor and wp_viewporter
give it to draw beyond the area Carrel placed it in, for test_role_areas.py.
Run as a participant (by the policy's command) or as the exam (on the app
socket, `--exam PARTICIPANT`: it then begins a session naming that participant
with this window as the session's surface).

    python hostile_window.py GENERATED_DIR COLOUR REPORT_FILE [--exam PARTICIPANT]

GENERATED_DIR holds `carrel_hostile`, pywayland's scanner output for
wayland.xml, xdg-shell, viewporter and carrel-assessment-v1. Every pixel it
draws is COLOUR (rrggbb). What it did goes to REPORT_FILE, a line each;
`attacked` once every attack, the late ones included, is committed."""

import sys
import time

sys.path.insert(0, sys.argv[1])
COLOUR = bytes.fromhex(sys.argv[2])
REPORT = sys.argv[3]
EXAM_PARTICIPANT = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--exam" else None

from carrel_hostile.wayland import WlCompositor, WlShm, WlSubcompositor  # noqa: E402
from carrel_hostile.xdg_shell import XdgPositioner, XdgWmBase  # noqa: E402
from carrel_hostile.viewporter import WpViewporter  # noqa: E402
from carrel_hostile.carrel_assessment_v1 import CarrelAssessmentManagerV1  # noqa: E402
from wayland_test_client import TestClient  # noqa: E402

client = TestClient(REPORT)
note, bind, keep, display = client.note, client.bind, client.keep, client.display
compositor = bind(WlCompositor, 4)
shm = bind(WlShm, 1)
subcompositor = bind(WlSubcompositor, 1)
wm_base = bind(XdgWmBase, 2)
wm_base.dispatcher["ping"] = lambda base, serial: base.pong(serial)
viewporter = bind(WpViewporter, 1) if WpViewporter.name in client.names else None


def buffer(width, height):
    return client.buffer(shm, WlShm, width, height, COLOUR)


def paint(surface, width, height, scale=1):
    surface.set_buffer_scale(scale)
    surface.attach(buffer(width, height), 0, 0)
    surface.damage_buffer(0, 0, width, height)
    surface.commit()


surface = compositor.create_surface()
xdg_surface = wm_base.get_xdg_surface(surface)
toplevel = xdg_surface.get_toplevel()
toplevel.set_title("hostile window")
size = {"width": 0, "height": 0}
configured = {"done": False}


def on_toplevel_configure(_t, width, height, _states):
    size["width"], size["height"] = width or 640, height or 480


def on_configure(xs, serial):
    xs.ack_configure(serial)
    if configured["done"]:
        surface.commit()
        return
    configured["done"] = True
    width, height = size["width"], size["height"]
    # The window's geometry starts far inside a buffer much larger than the
    # window: placed by its geometry, the buffer reaches 1000 pixels beyond
    # the area on every side.
    xs.set_window_geometry(1000, 1000, width, height)
    paint(surface, width + 2000, height + 2000)
    note(f"configured {width} {height}")


toplevel.dispatcher["configure"] = on_toplevel_configure
xdg_surface.dispatcher["configure"] = on_configure
toplevel.set_fullscreen(None)
toplevel.set_maximized()
surface.commit()
keep += [surface, xdg_surface, toplevel]
while not configured["done"]:
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

width, height = size["width"], size["height"]
# Coordinates below are the window's (its geometry's origin, 1000 pixels
# into the surface): left of the window, right of it, above and below.
outside = [(-700, 40), (width + 60, 60), (40, -500), (60, height + 60)]


def subsurface(x, y, synchronised):
    child = compositor.create_surface()
    sub = subcompositor.get_subsurface(child, surface)
    sub.set_position(1000 + x, 1000 + y)
    if not synchronised:
        sub.set_desync()
    keep.extend([child, sub])
    return child


# Subsurfaces placed outside the window now, given buffers later: the
# synchronised ones with a parent commit, the desynchronised ones by a
# commit of their own after the parent's state has long been applied.
early = [subsurface(x, y, synchronised=True) for x, y in outside[:2]]
late = [subsurface(x, y, synchronised=False) for x, y in outside]
surface.commit()
display.roundtrip()
for child in early:
    paint(child, 500, 300)
surface.commit()

# Popups positioned outside the window, with no adjustment allowed and with
# every adjustment allowed, and a popup of a popup reaching further out.
popups = []
for index, (x, y) in enumerate(outside):
    positioner = wm_base.create_positioner()
    positioner.set_size(600, 400)
    positioner.set_anchor_rect(x, y, 1, 1)
    positioner.set_constraint_adjustment(0 if index % 2 == 0 else 63)
    popup_surface = compositor.create_surface()
    popup_xdg = wm_base.get_xdg_surface(popup_surface)
    popup = popup_xdg.get_popup(xdg_surface, positioner)
    popup_xdg.dispatcher["configure"] = lambda xs, serial, s=popup_surface: (xs.ack_configure(serial), paint(s, 900, 700))
    popup_surface.commit()
    keep.extend([positioner, popup_surface, popup_xdg, popup])
    popups.append((popup_surface, popup_xdg))
display.roundtrip()
display.roundtrip()
positioner = wm_base.create_positioner()
positioner.set_size(800, 600)
positioner.set_anchor_rect(-900, -900, 1, 1)
child_surface = compositor.create_surface()
child_xdg = wm_base.get_xdg_surface(child_surface)
child_popup = child_xdg.get_popup(popups[0][1], positioner)
child_xdg.dispatcher["configure"] = lambda xs, serial: (xs.ack_configure(serial), paint(child_surface, 1200, 900))
child_surface.commit()
keep.extend([positioner, child_surface, child_xdg, child_popup])
display.roundtrip()

# A viewport that stretches a small buffer over three thousand pixels, and
# a buffer scale that makes a huge buffer smaller but still oversized.
if viewporter is not None:
    stretched = subsurface(-1500, -800, synchronised=False)
    viewport = viewporter.get_viewport(stretched)
    viewport.set_destination(4000, 3000)
    keep.append(viewport)
    paint(stretched, 16, 16)
scaled = subsurface(width // 2, height // 2, synchronised=False)
paint(scaled, 4000, 3000, scale=2)

time.sleep(0.5)
display.roundtrip()
for child in late:
    paint(child, 900, 600)
display.roundtrip()
note("attacked")
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    display.roundtrip()
    time.sleep(0.1)
