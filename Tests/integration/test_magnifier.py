"""The magnifier Carrel draws itself (`screen_magnifier`), as the X server shows it:
carrel nested in Xvfb (wlroots' x11 backend, pixman renderer), carrel-paint filling
the output with a checkerboard of 2x2-pixel cells, real key presses (XTEST, through
xdotool) and the X server's own screenshots (`xwd -root`).

The session is carrel-paint's own (`--session --allow-magnifier --end-after-ms`),
so the screen after its `end` can be checked while the app still runs; or
Carrel's own (`--assessment=CONFIG`), which `carrelctl end` interrupts.

Expected pixels are computed here from the pattern and the magnifier's rule (the
point under the pointer stays where it is: the region's origin is
pointer - pointer // zoom), not taken from Carrel."""

import subprocess
import time

import pytest

import carrel_harness as h
from carrel_clients import Ctl
from carrel_log import began, stderr
from x_display import save, screenshot, start_xvfb, x_windows

CELL = 2
COLOUR = (0xd2, 0x6a, 0x1e)
WHITE = (0xff, 0xff, 0xff)
POINTER = (400, 300)
# Boxes checked pixel by pixel, away from the pointer (a cursor image there
# would be neither pattern) and inside a 1024x768 or larger output.
BOXES = [(40, 40, 120, 120), (600, 480, 680, 560), (900, 100, 980, 180)]
TOLERANCE = 4
# evdev codes of the keys carrel-paint --print-keys reports.
KEY_EQUAL, KEY_C = 13, 46
# carrel-paint ends its own session this long after began: time for every step before.
SESSION_MS = 12000


def checker(x: int, y: int) -> tuple:
    return COLOUR if (x // CELL + y // CELL) % 2 == 0 else WHITE


def inverted(rgb: tuple) -> tuple:
    return tuple(255 - c for c in rgb)


def high_contrast(rgb: tuple) -> tuple:
    """Rec. 601 luma in whole levels, contrast doubled around 128, clamped."""
    luma = (77 * rgb[0] + 150 * rgb[1] + 29 * rgb[2]) >> 8
    level = max(0, min(255, (luma - 128) * 2 + 128))
    return (level, level, level)


FILTERS = {False: lambda rgb: rgb, True: inverted, "high_contrast": high_contrast}


def expected_pixel(x: int, y: int, zoom: int, invert) -> tuple:
    ox, oy = POINTER[0] - POINTER[0] // zoom, POINTER[1] - POINTER[1] // zoom
    return FILTERS[invert](checker(ox + x // zoom, oy + y // zoom))


def mismatches(image, zoom: int, invert: bool) -> list:
    bad = []
    for x0, y0, x1, y1 in BOXES:
        for y in range(y0, y1):
            for x in range(x0, x1):
                want = expected_pixel(x, y, zoom, invert)
                got = image.pixel(x, y)
                if any(abs(a - b) > TOLERANCE for a, b in zip(got, want)):
                    bad.append(((x, y), got, want))
    return bad


def start(carrel, paint_bin, procs, logdir, logs, tmp_path, control_dir, *, allow, own_session_ms=None):  # noqa: F811
    """Carrel with carrel-paint's checkerboard in a session allowing `allow`: Carrel's
    own (`--assessment`), or with `own_session_ms` carrel-paint's, which it ends
    that long after began."""
    display = start_xvfb(procs, logdir, logs)
    socket = control_dir / "ctl" / "control.sock"
    app = [str(paint_bin), "--checker", str(CELL), "--color", "%02x%02x%02x" % COLOUR, "--print-keys"]
    args = ["--control-socket", str(socket)]
    if own_session_ms is None:
        config = tmp_path / "exam.toml"
        config.write_text("allow = [%s]\n" % ", ".join(f'"{name}"' for name in allow))
        args.append(f"--assessment={config}")
    else:
        assert allow in ([], ["screen_magnifier"])
        app += ["--session", "--end-after-ms", str(own_session_ms)] + (["--allow-magnifier"] if allow else [])
    c = carrel.start(app=app, args=args, backend="x11", env={"DISPLAY": display})
    if own_session_ms is None:
        began(c, str(paint_bin))
    else:
        assert h.wait_until(lambda: "milestone began" in c.stdout_path.read_text(errors="replace"), 15), \
            f"carrel-paint's session never began\n{c.evidence()}"
    assert h.wait_until(lambda: x_windows(display), 10), "carrel has no X window"
    env = h.clean_env({"DISPLAY": display})
    subprocess.run(["xdotool", "windowfocus", "--sync", x_windows(display)[0]], env=env, check=True, timeout=10)
    subprocess.run(["xdotool", "mousemove", "--sync", str(POINTER[0]), str(POINTER[1])], env=env, check=True,
                   timeout=10)
    return c, display, env, socket


def wait_for_screen(display, zoom, invert, artifacts_dir, name, c, timeout=15):
    shot = [None]

    def shows():
        shot[0] = screenshot(display)
        return not mismatches(shot[0], zoom, invert)

    ok = h.wait_until(shows, timeout, interval=0.25)
    png = save(shot[0], artifacts_dir, name)
    bad = mismatches(shot[0], zoom, invert)
    assert ok, (f"{name}: within {timeout} s the screen did not show the checkerboard at {zoom}x"
                f"{'' if invert is False else ' inverted' if invert is True else ' ' + invert}: {len(bad)} pixels differ, e.g. (point, got, want) {bad[:4]}; "
                f"screenshot {png}\n{c.evidence()}")
    return shot[0]


def assert_unchanged_for(display, seconds, artifacts_dir, name, c):
    """Nothing to wait for when nothing happens: the plain pattern, every
    quarter second for `seconds`, ample time for a zoom to show."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        shot = screenshot(display)
        bad = mismatches(shot, 1, False)
        assert not bad, (f"{name}: the keys changed the screen: (point, got, want) {bad[:4]}; "
                         f"{save(shot, artifacts_dir, name)}\n{c.evidence()}")
        time.sleep(0.25)


def keys_seen(c) -> list:
    """`key CODE pressed|released` lines carrel-paint printed: keys that reached the app."""
    return [line for line in c.stdout_path.read_text(errors="replace").splitlines() if line.startswith("key ")]


def press(env, *keys):
    subprocess.run(["xdotool", "key", "--delay", "60", *keys], env=env, check=True, timeout=20)


def test_allowed_magnifier_zooms_inverts_and_is_gone_after_end(carrel, paint_bin, procs, logdir, logs,
                                                                tmp_path, control_dir, artifacts_dir):  # noqa: F811
    h.require_tool("xdotool")
    c, display, env, _ = start(carrel, paint_bin, procs, logdir, logs, tmp_path, control_dir,
                               allow=["screen_magnifier"], own_session_ms=SESSION_MS)
    out = lambda: c.stdout_path.read_text(errors="replace")  # noqa: E731
    wait_for_screen(display, 1, False, artifacts_dir, "magnifier-before", c)
    # The check can fail: the unzoomed pattern is not the zoomed one.
    assert mismatches(screenshot(display), 2, False), "the 1x and 2x patterns cannot be told apart here"

    press(env, "super+alt+equal")
    wait_for_screen(display, 2, False, artifacts_dir, "magnifier-zoom-2", c)
    press(env, "super+alt+equal")
    wait_for_screen(display, 3, False, artifacts_dir, "magnifier-zoom-3", c)
    press(env, "super+alt+minus")
    wait_for_screen(display, 2, False, artifacts_dir, "magnifier-zoom-back-to-2", c)

    # Inverted: exact complements, #d26a1e becomes #2d95e1 and white black.
    press(env, "super+alt+c")
    shot = wait_for_screen(display, 2, True, artifacts_dir, "magnifier-inverted", c)
    seen = {shot.pixel(x, y) for x in range(40, 48) for y in range(40, 48)}
    assert seen == {(0x2d, 0x95, 0xe1), (0, 0, 0)}, f"the inverted cells are {seen}"

    # Zoom off keeps the filter; zoom in again.
    press(env, "super+alt+0")
    wait_for_screen(display, 1, True, artifacts_dir, "magnifier-zoom-off-still-inverted", c)
    press(env, "super+alt+equal")
    wait_for_screen(display, 2, True, artifacts_dir, "magnifier-zoomed-again", c)
    # High contrast: #d26a1e is luma 128, mid-grey; white stays white.
    press(env, "super+alt+c")
    shot = wait_for_screen(display, 2, "high_contrast", artifacts_dir, "magnifier-high-contrast", c)
    seen = {shot.pixel(x, y) for x in range(40, 48) for y in range(40, 48)}
    assert seen == {(128, 128, 128), (255, 255, 255)}, f"the high-contrast cells are {seen}"
    # Carrel kept every press of its keys (a release may reach the app, as for
    # the emergency binding: the app never saw the press).
    pressed = [line for line in keys_seen(c) if line.endswith("pressed")]
    for code in (KEY_EQUAL, KEY_C):
        assert f"key {code} pressed" not in pressed, f"a magnifier key reached the app: {pressed}\n{c.evidence()}"
    assert "milestone end " not in out(), \
        f"the session ended before every step was checked; raise SESSION_MS ({SESSION_MS})\n{c.evidence()}"

    # carrel-paint ends its session: the screen is the plain pattern again.
    assert h.wait_until(lambda: "milestone ended" in out(), SESSION_MS / 1000 + 10), \
        f"carrel-paint's session never ended\n{c.evidence()}"
    wait_for_screen(display, 1, False, artifacts_dir, "magnifier-after-end", c)
    assert "magnifier: off: the session's restrictions were lifted" in stderr(c), c.evidence()
    # After the end the keys are ordinary keys: nothing zooms.
    press(env, "super+alt+equal", "super+alt+c")
    assert_unchanged_for(display, 2.0, artifacts_dir, "magnifier-keys-after-end", c)
    assert h.wait_until(lambda: f"key {KEY_C} pressed" in keys_seen(c), 5), \
        f"after end the keys did not reach the app: {keys_seen(c)}\n{c.evidence()}"
    assert c.alive(), c.evidence()


def test_interruption_turns_the_magnifier_off(carrel, paint_bin, procs, logdir, logs, tmp_path,
                                              control_dir, carrelctl, artifacts_dir):  # noqa: F811
    """`carrelctl end` interrupts Carrel's own session (administrative): the
    restrictions stay until the app exits, the magnifier goes at once and its
    keys are ordinary keys while the session is interrupted."""
    h.require_tool("xdotool")
    c, display, env, socket = start(carrel, paint_bin, procs, logdir, logs, tmp_path, control_dir,
                                    allow=["screen_magnifier"])
    wait_for_screen(display, 1, False, artifacts_dir, "magnifier-interrupt-before", c)
    press(env, "super+alt+equal", "super+alt+c")
    wait_for_screen(display, 2, True, artifacts_dir, "magnifier-interrupt-zoomed", c)
    r = Ctl(carrelctl, socket, logdir, logs).run("end", "--reason", "the magnifier test is over")
    assert r.returncode == 0 and "interrupted (administrative)" in r.stdout, \
        f"carrelctl end: {r.stdout!r} {r.stderr!r}\n{c.evidence()}"
    wait_for_screen(display, 1, False, artifacts_dir, "magnifier-interrupt-after", c)
    assert "magnifier: off: the session was interrupted" in stderr(c), c.evidence()
    assert f"key {KEY_EQUAL} pressed" not in keys_seen(c), f"the zoom key reached the app: {keys_seen(c)}"
    press(env, "super+alt+equal")
    assert_unchanged_for(display, 2.0, artifacts_dir, "magnifier-keys-while-interrupted", c)
    assert h.wait_until(lambda: f"key {KEY_EQUAL} pressed" in keys_seen(c), 5), \
        f"while interrupted the zoom key did not reach the app: {keys_seen(c)}\n{c.evidence()}"
    assert c.alive(), c.evidence()


def test_denied_magnifier_keys_change_nothing(carrel, paint_bin, procs, logdir, logs, tmp_path,
                                              control_dir, artifacts_dir):  # noqa: F811
    h.require_tool("xdotool")
    c, display, env, _ = start(carrel, paint_bin, procs, logdir, logs, tmp_path, control_dir, allow=[])
    wait_for_screen(display, 1, False, artifacts_dir, "magnifier-denied-before", c)
    press(env, "super+alt+equal", "super+alt+equal", "super+alt+c")
    assert_unchanged_for(display, 2.0, artifacts_dir, "magnifier-denied-changed", c)
    # Denied, they are ordinary keys: the app gets them.
    pressed = [line for line in keys_seen(c) if line.endswith("pressed")]
    assert pressed.count(f"key {KEY_EQUAL} pressed") == 2 and f"key {KEY_C} pressed" in pressed, \
        f"with screen_magnifier denied the keys did not reach the app: {keys_seen(c)}\n{c.evidence()}"
    assert "magnifier:" not in stderr(c), c.evidence()
    assert c.alive(), c.evidence()


def count_white(image) -> int:
    """Pure white pixels: on the demo's question screen only its answer field is white."""
    count = 0
    for row in image.rgb_rows():
        at = row.find(b"\xff\xff\xff")
        while at != -1:
            if at % 3 == 0:
                count += 1
            at = row.find(b"\xff\xff\xff", at + 3)
    return count


def test_zoom_follows_the_text_cursor(carrel, procs, logdir, logs, tmp_path, artifacts_dir):
    """The demo exam's free-text field reports its text cursor (text-input-v3, which
    Carrel offers with a policy input method, to a window that may compose): zoomed 3x with the pointer at the top,
    away from the field, typing moves the view to the field, whose white then fills
    far more of the screen than unzoomed; moving the pointer takes the view back."""
    from input_method import restarted_engine_composes_for_demo, start_demo
    h.require_tool("xdotool")
    h.require_tool("fcitx5")
    c, display, _, box, empty = start_demo(carrel, procs, logdir, logs, tmp_path, allow_input_method=True,
                                           also_allow=("screen_magnifier",))
    plain = count_white(empty)
    restarted_engine_composes_for_demo(c)
    env = h.clean_env({"DISPLAY": display})
    subprocess.run(["xdotool", "windowfocus", "--sync", x_windows(display)[0]], env=env, check=True, timeout=10)
    # At 3x the view shows a third of the output's height: with the pointer at the
    # top it is the top third, and the field (in the middle) is out of view.
    top = (640, 2)
    assert box[1] > 260, f"the field {box} is not below the top third; the test needs it there"
    subprocess.run(["xdotool", "mousemove", "--sync", str(top[0]), str(top[1])], env=env, check=True, timeout=10)
    press(env, "super+alt+equal", "super+alt+equal")
    assert h.wait_until(lambda: "magnifier: zoom 3×" in stderr(c), 10), c.evidence()
    at_pointer = [None]

    def field_out_of_view():
        at_pointer[0] = screenshot(display)
        return count_white(at_pointer[0]) < plain / 2

    ok = h.wait_until(field_out_of_view, 10, interval=0.25)
    png = save(at_pointer[0], artifacts_dir, "magnifier-demo-at-pointer")
    assert ok, f"zoomed at the pointer in {top}, the field {box} should be out of view: {png}\n{c.evidence()}"

    # mozc composes x, Return commits it: the text cursor moves.
    press(env, "x", "Return")
    followed = [None]

    def field_fills():
        followed[0] = screenshot(display)
        return count_white(followed[0]) > 1.5 * plain

    ok = h.wait_until(field_fills, 10, interval=0.25)
    png = save(followed[0], artifacts_dir, "magnifier-demo-at-text-cursor")
    assert ok, (f"after typing, the zoomed view did not move to the field {box} ({plain} white pixels "
                f"unzoomed, {count_white(followed[0])} now): {png}\n{c.evidence()}")
    # The pointer moves again: the view follows it back to the corner.
    subprocess.run(["xdotool", "mousemove", "--sync", str(top[0] + 5), str(top[1])], env=env, check=True,
                   timeout=10)
    back = [None]

    def field_gone():
        back[0] = screenshot(display)
        return count_white(back[0]) < plain / 2

    ok = h.wait_until(field_gone, 10, interval=0.25)
    assert ok, f"the view did not follow the pointer back: {save(back[0], artifacts_dir, 'magnifier-demo-back')}"
    assert c.alive(), c.evidence()
