"""What a person would see: carrel nested in Xvfb (wlroots' x11 backend), the
screenshot taken by the X server (`xwd -root`), not reported by carrel."""

import select
import shutil
import time

import pytest

import carrel_harness as h
from x_display import SCREEN, save, screenshot, start_xvfb

# Carrel's X11 window sits at the screen's top-left corner (no window manager).
# wlroots 0.15's x11 backend opens a 1024x768 output; 1280x720 was asked for in
# the brief. The screen (SCREEN, in x_display.py) holds either, and every point
# checked lies inside both, so the test proves the app's colour fills the output
# from corner to corner (not just a small window) whichever size carrel picks.
POINTS = [(20, 20), (512, 384), (640, 360), (1000, 700)]
COLOUR = (0xd2, 0x6a, 0x1e)  # not carrel-paint's default, so --color must be honoured
TOLERANCE = 4
HALF = 10  # checks a 21x21 square around each point


def off_colour(image):
    """The checked pixels that are not COLOUR (±TOLERANCE)."""
    return [(xy, rgb) for cx, cy in POINTS for xy, rgb in image.region(cx, cy, HALF)
            if any(abs(a - b) > TOLERANCE for a, b in zip(rgb, COLOUR))]


def test_app_colour_fills_the_screen_as_x_shows_it(carrel, paint_bin, procs, logdir, logs,
                                                     artifacts_dir):
    display = start_xvfb(procs, logdir, logs)

    # The check can fail: before carrel runs, the centre is not the colour.
    before = screenshot(display)
    assert (before.width, before.height) == SCREEN, f"Xvfb screen is {before.width}x{before.height}"
    assert len(off_colour(before)) == len(POINTS) * (2 * HALF + 1) ** 2, \
        "the bare X screen already shows the test colour somewhere"

    colour = "%02x%02x%02x" % COLOUR
    c = carrel.start(app=[str(paint_bin), "--color", colour], backend="x11",
                     env={"DISPLAY": display})
    last = [before]

    def shows_colour():
        last[0] = screenshot(display)
        return not off_colour(last[0])

    ok = h.wait_until(shows_colour, 20, interval=0.25)
    png = save(last[0], artifacts_dir, "visual-app-colour")
    bad = off_colour(last[0])
    assert ok, (f"within 20 s the squares around {POINTS} did not all show #{colour} "
                f"(±{TOLERANCE}); {len(bad)} of {len(POINTS) * (2 * HALF + 1) ** 2} pixels "
                f"differ, e.g. {bad[:3]}; "
                f"screenshot: {png}\ncarrel alive: {c.alive()}\n{c.evidence()}")
    assert c.alive(), c.evidence()
    c.signal(15)
    assert c.wait_exit() == 0, c.evidence()


def test_before_the_app_draws_the_output_is_black_not_what_was_behind_it(carrel, procs, logdir, logs,
                                                                          artifacts_dir):
    """Carrel commits no frame of its own while its scene is empty (the
    app's first buffer then shows without waiting a refresh period); what
    a person sees meanwhile is the black wlroots lights the output with,
    never the screen behind it."""
    # A white root window: what was on the screen before Carrel.
    display = start_xvfb(procs, logdir, logs, extra=("-wr",))

    def not_black(image):
        return [(xy, rgb) for cx, cy in POINTS for xy, rgb in image.region(cx, cy, HALF)
                if any(v > TOLERANCE for v in rgb)]

    # The check can fail: the bare X screen is white there.
    before = screenshot(display)
    assert len(not_black(before)) == len(POINTS) * (2 * HALF + 1) ** 2, \
        "the bare X screen is not white around the points checked"

    # An app that never connects: nothing but Carrel's own scene could draw.
    c = carrel.start(app=["/bin/sleep", "60"], backend="x11", env={"DISPLAY": display})
    last = [before]

    def black():
        last[0] = screenshot(display)
        return not not_black(last[0])

    ok = h.wait_until(black, 20, interval=0.25)
    png = save(last[0], artifacts_dir, "visual-before-app")
    assert ok, (f"within 20 s the squares around {POINTS} were not all black; e.g. {not_black(last[0])[:3]}; "
                f"screenshot: {png}\n{c.evidence()}")
    # And it stays black: nothing of the X screen shows through later.
    time.sleep(1.0)
    later = screenshot(display)
    assert not not_black(later), (f"a second later the output was no longer black: {not_black(later)[:3]}; "
                                  f"screenshot: {save(later, artifacts_dir, 'visual-before-app-later')}")
    assert c.alive(), c.evidence()
    c.signal(15)
    assert c.wait_exit() == 0, c.evidence()


# An app short of the output in both directions, redrawn every frame: on the
# pixman renderer each frame then copies the app's damage alone, without
# clearing it first, and the strip the app leaves is cleared only when it
# is damaged. Inside: the app's colour (animated: each channel's low four
# bits vary); outside it, inside the output: black, in every frame.
SHORT_APP = (1000, 700)
INSIDE = [(20, 20), (500, 350), (980, 680)]
OUTSIDE = [(1012, 350), (500, 712), (1012, 712)]
ANIMATED_TOLERANCE = 16
OUTSIDE_HALF = 2


def test_an_app_short_of_the_output_redrawn_every_frame_shows_black_around_it(
        carrel, paint_bin, procs, logdir, logs, artifacts_dir):
    display = start_xvfb(procs, logdir, logs)
    colour = "%02x%02x%02x" % COLOUR

    def wrong(image):
        bad = [(xy, rgb) for cx, cy in INSIDE for xy, rgb in image.region(cx, cy, HALF)
               if any(abs(a - b) > ANIMATED_TOLERANCE for a, b in zip(rgb, COLOUR))]
        bad += [(xy, rgb) for cx, cy in OUTSIDE for xy, rgb in image.region(cx, cy, OUTSIDE_HALF)
                if any(v > TOLERANCE for v in rgb)]
        return bad

    # The check can fail: the bare X screen, before Carrel starts (once it is
    # ready the app may already be drawn: newer wlroots get there sooner).
    last = [screenshot(display)]
    assert wrong(last[0]), "the bare X screen already looks like the app over black"
    c = carrel.start(app=[str(paint_bin), "--color", colour, "--animate",
                          "--fixed-size", "%dx%d" % SHORT_APP], backend="x11", env={"DISPLAY": display})

    def shows_app():
        last[0] = screenshot(display)
        return not wrong(last[0])

    ok = h.wait_until(shows_app, 20, interval=0.25)
    png = save(last[0], artifacts_dir, "visual-short-app")
    assert ok, (f"within 20 s the screen never showed #{colour} (±{ANIMATED_TOLERANCE}) around {INSIDE} and "
                f"black around {OUTSIDE}; e.g. {wrong(last[0])[:3]}; screenshot: {png}\n{c.evidence()}")
    # Every later frame is right too, and the frames do change what is shown
    # (the copy reaches the screen, not just the first frame).
    seen = {last[0].pixel(*INSIDE[1])}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(seen) < 3:
        image = screenshot(display)
        bad = wrong(image)
        assert not bad, (f"a later frame went wrong: {bad[:3]}; screenshot: "
                         f"{save(image, artifacts_dir, 'visual-short-app-later')}\n{c.evidence()}")
        seen.add(image.pixel(*INSIDE[1]))
    assert len(seen) >= 3, f"the animated app's colour never changed on screen in 10 s (saw {seen})\n{c.evidence()}"
    assert c.alive(), c.evidence()
    c.signal(15)
    assert c.wait_exit() == 0, c.evidence()
