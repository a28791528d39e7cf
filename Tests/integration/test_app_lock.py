"""App-requested lock (ASAM), its on-screen confirmation and the banner.

An untrusted client may ask for a lock only if the executable it runs is on
the allowlist (`--app-lock-allow PATH`, a policy override), as carrel reads it
from /proc/PID/exe when the client connects. The pywayland client is a Python
script, so its /proc/PID/exe is the interpreter: the tests copy the interpreter
to a path of their own and allowlist that copy; the same script under the
ordinary interpreter is a client that is not on the list.

The confirmation and the banner are drawn by carrel itself; the tests look for
them in a screenshot the X server takes (carrel on the x11 backend under Xvfb)
and answer the prompt with real key presses (XTEST, through xdotool).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import ACTIVE, INACTIVE, MANAGER, NOT_ENTITLED, lock_only
from carrel_clients import World
from x_display import CENTRE, PROMPT, colour_count, screenshot, start_xvfb, x_windows

# Overlay.swift's background colours.
BANNER = (0x8A, 0x1C, 0x7C)
BANNER_SECONDS = 3
EXAM = (0x33, 0x66, 0xCC)  # assessment_client.py's window


class AppLockWorld(World):
    """A World whose clients can also run under the allowlisted interpreter."""

    def __init__(self, *args, exam_python: Path, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.exam_python = exam_python
        # The copy is not inside the venv: give it the venv's packages (pywayland).
        r = subprocess.run([self.python, "-c", "import pywayland, os; "
                            "print(os.path.dirname(os.path.dirname(pywayland.__file__)))"],
                           capture_output=True, text=True, check=True, timeout=30)
        self.site_packages = r.stdout.strip()

    def env(self, role: str) -> dict:
        env = super().env(role)
        env["PYTHONPATH"] = self.site_packages
        return env

    def exam_client(self, name: str):
        """An untrusted client run by the allowlisted interpreter."""
        ordinary = self.python
        self.python = str(self.exam_python)
        try:
            return self.client(name, role="untrusted")
        finally:
            self.python = ordinary


def sees_manager(driver) -> bool:
    return bool(driver.matching(f"global \\d+ {MANAGER} \\d+"))


def make_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
               exam_python, args=(), backend="headless", env=None) -> AppLockWorld:
    return AppLockWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                        backend=backend, env=env,
                        args=["--app-lock-allow", str(exam_python), *args],
                        exam_python=exam_python)


# ---------------------------------------------------------------------------
# Allowlisted or not


def test_allowlisted_app_locks_only_with_a_lock_only_configuration(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, exam_python):
    w = make_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                   exam_python)
    exam = w.exam_client("exam")
    assert sees_manager(exam), f"the allowlisted client does not see {MANAGER}\n{exam.evidence()}"
    exam.map()
    exam.bind()

    # Anything but lock-only: refused, whatever else it asks for.
    exam.begin("s1", "null")
    m = exam.expect(r"session s1 (began|failed (\d+) (.*))")
    assert m.group(2) == str(NOT_ENTITLED), f"null configuration: {m.group(0)}\n{w.carrel.evidence()}"
    assert "lock-only" in m.group(3), m.group(0)
    exam.send("config few ; allow few 0 ; allow few 3")
    exam.begin("s2", "few")
    m = exam.expect(r"session s2 (began|failed (\d+) (.*))")
    assert m.group(2) == str(NOT_ENTITLED), f"two features allowed: {m.group(0)}"

    # Lock-only: began, and ended when asked.
    lock_only(exam)
    exam.begin("s3", "c")
    exam.began("s3")
    exam.expect(f"manager m lock_state {ACTIVE}")
    exam.send("end s3")
    exam.expect("session s3 ended")
    w.alive()


def test_untrusted_client_not_on_the_list_cannot_see_or_bind_the_manager(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, exam_python):
    w = make_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                   exam_python)
    exam = w.exam_client("exam")
    names = [int(line.split()[1]) for line in exam.matching(f"global \\d+ {MANAGER} \\d+")]
    assert len(names) == 1, f"the allowlisted client does not see {MANAGER}: {exam.lines}"
    # The same script under the ordinary interpreter: not on the list.
    other = w.client("other", role="untrusted")
    assert not sees_manager(other), f"a client not on the allowlist sees {MANAGER}: {other.lines}"
    assert other.matching("global \\d+ wl_compositor \\d+"), other.lines
    other.send(f"bind_manager m {names[0]}")  # forced: the name the allowlisted client got
    interface, code = other.protocol_error()
    assert (interface, code) == ("wl_registry", 0), f"forced bind: {interface} {code}"
    w.alive()


def test_app_lock_hides_the_app_and_shows_the_locking_client(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, exam_python):
    """During an app-requested lock the locking client holds the lock: the app
    role's own begin fails already_active, and the app keeps its rights after."""
    w = make_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                   exam_python)
    app = w.client("app", role="app")
    app.map()
    app.bind()
    exam = w.exam_client("exam")
    exam.map()
    exam.bind()
    lock_only(exam)
    exam.begin("s", "c")
    exam.began("s")
    app.begin("a")
    assert app.expect(r"session a (began|failed (\d+) .*)").group(2) == "1", "app began during the lock"
    exam.send("end s")
    exam.expect("session s ended")
    app.begin("a2")
    app.began("a2")
    app.send("end a2")
    app.expect("session a2 ended")
    log = w.carrel.stderr_path.read_text(errors="replace")
    assert "app-requested lock by " + str(exam_python) in log, w.carrel.evidence()
    w.alive()


# ---------------------------------------------------------------------------
# On screen: confirmation and banner


# carrel's X window is 1280x720 at the screen's corner (no window manager).
TOP = (140, 0, 1140, 140)


def press(display: str, key: str) -> None:
    """A real key press (XTEST) into carrel's window, which gets the input focus."""
    h.require_tool("xdotool")
    env = h.clean_env({"DISPLAY": display})
    window = x_windows(display)[0]
    subprocess.run(["xdotool", "windowfocus", "--sync", window], env=env, check=True, timeout=10)
    subprocess.run(["xdotool", "key", key], env=env, check=True, timeout=10)


def x11_lock_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                   exam_python):
    display = start_xvfb(procs, logdir, logs)
    w = make_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                   exam_python, backend="x11", env={"DISPLAY": display},
                   args=["--app-lock-confirm", "--banner-seconds", str(BANNER_SECONDS)])
    assert h.wait_until(lambda: len(x_windows(display)) >= 1, 10), w.carrel.evidence()
    return w, display


def ask(w, display, artifacts_dir, name, before_begin=lambda: None):
    """Begins a lock-only session and waits for the prompt on screen."""
    exam = w.exam_client("exam")
    exam.map()
    exam.bind()
    before_begin()
    before = screenshot(display)
    assert colour_count(before, PROMPT, CENTRE) == 0, "prompt colour on screen before begin"
    lock_only(exam, time_limit=5400)
    exam.begin("s", "c")
    shot = h.wait_until(lambda: (lambda i: i if colour_count(i, PROMPT, CENTRE) > 200 else None)(
        screenshot(display)), 10, interval=0.2)
    last = screenshot(display)
    (artifacts_dir / f"{name}-prompt.png").write_bytes(last.to_png())
    assert shot, f"no confirmation prompt on screen\n{w.carrel.evidence()}"
    exam.collect(0.5)
    assert not exam.matching(r"session s .*"), f"begin answered before the person did: {exam.lines}"
    return exam


def paint(w, paint_bin, name, colour, role):
    """carrel-paint filling its window with colour, as a client of role."""
    out = w.logdir / f"paint-{name}.log"
    w.logs.append((f"paint {name}", out))
    with open(out, "wb") as f:
        return w.procs.spawn(f"paint-{name}", [str(paint_bin), "--color", colour], env=w.env(role),
                             stdout=f, stderr=subprocess.STDOUT)


WHOLE = (0, 0, 1280, 720)
APP = (0xFF, 0x00, 0xFF)  # the app role's window
STRANGER = (0xFF, 0x88, 0x00)  # another untrusted client's window


def test_confirmed_with_y_then_banner_for_its_duration(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, exam_python,
        artifacts_dir, paint_bin):
    """The app role's window (on top before the lock) and another untrusted
    client's window (above the exam's) are hidden from the prompt on; the
    locking client's own window is what the screen shows; all back after end."""
    w, display = x11_lock_world(carrel, procs, logdir, logs, tmp_path, client_python,
                                pywayland_protocols, exam_python)
    paint(w, paint_bin, "app", "ff00ff", "app")
    assert h.wait_until(lambda: colour_count(screenshot(display), APP, WHOLE) > 1000, 10), \
        f"the app's window never showed\n{w.carrel.evidence()}"

    def stranger():
        paint(w, paint_bin, "stranger", "ff8800", "untrusted")
        time.sleep(1.0)  # mapped above the exam's window (the app's still covers both)

    def cairo_mapped():
        return "libcairo" in Path(f"/proc/{w.carrel.pid}/maps").read_text()

    # Carrel loads cairo the first time it draws a prompt or banner, not at start.
    assert not cairo_mapped(), "carrel mapped cairo before drawing anything of its own"
    exam = ask(w, display, artifacts_dir, "applock-yes", before_begin=stranger)
    assert cairo_mapped(), "the prompt is on screen but carrel never loaded cairo to draw it"
    prompt = screenshot(display)
    for colour, who in ((APP, "the app"), (STRANGER, "another untrusted client")):
        assert colour_count(prompt, colour, WHOLE) == 0, f"{who} visible while the prompt asks"
    press(display, "y")
    exam.began("s")
    began_at = time.monotonic()
    # The banner is drawn at began, into the next frame: the X server may show it a
    # frame later than the event arrives.
    shots = []

    def banner_shown():
        shots.append(screenshot(display))
        return colour_count(shots[-1], BANNER, TOP) > 100

    shown = h.wait_until(banner_shown, BANNER_SECONDS - 1, interval=0.1)
    image = shots[-1]
    (artifacts_dir / "applock-banner.png").write_bytes(image.to_png())
    assert shown, f"no banner right after began\n{w.carrel.evidence()}"
    assert colour_count(image, PROMPT, CENTRE) == 0, "the prompt stayed after Y"
    assert colour_count(image, EXAM, WHOLE) > 10000, "the locking client's window is not shown"
    for colour, who in ((APP, "the app"), (STRANGER, "another untrusted client")):
        assert colour_count(image, colour, WHOLE) == 0, f"{who} visible during the lock"
    assert time.monotonic() - began_at < BANNER_SECONDS, "screenshot too slow to judge the banner"
    gone = h.wait_until(lambda: colour_count(screenshot(display), BANNER, TOP) == 0,
                        BANNER_SECONDS + 5, interval=0.3)
    assert gone, "the banner stayed beyond its duration"
    assert time.monotonic() - began_at >= BANNER_SECONDS - 0.5, "the banner went too early"
    exam.send("end s")
    exam.expect("session s ended")
    assert h.wait_until(lambda: colour_count(screenshot(display), APP, WHOLE) > 1000, 5), \
        "the app's window did not come back after ended"
    w.alive()


@pytest.mark.parametrize("key", ["n", "Escape"])
def test_refused_with_n_or_escape_fails_not_entitled(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, exam_python,
        artifacts_dir, key):
    w, display = x11_lock_world(carrel, procs, logdir, logs, tmp_path, client_python,
                                pywayland_protocols, exam_python)
    exam = ask(w, display, artifacts_dir, f"applock-{key}")
    press(display, "a")  # no answer: the prompt stays
    exam.collect(0.5)
    assert not exam.matching(r"session s .*"), f"a key other than Y/N answered: {exam.lines}"
    press(display, key)
    m = exam.expect(r"session s (began|failed (\d+) (.*))")
    assert m.group(2) == str(NOT_ENTITLED) and m.group(3) == "refused at the machine", m.group(0)
    exam.expect(f"manager m lock_state {INACTIVE}")
    assert h.wait_until(lambda: colour_count(screenshot(display), PROMPT, CENTRE) == 0, 5), \
        "the prompt stayed after N"
    assert colour_count(screenshot(display), BANNER, TOP) == 0, "a banner after a refusal"
    w.alive()


def test_destroyed_while_asking_takes_the_prompt_down(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, exam_python,
        artifacts_dir):
    """The client gives up while the person is being asked: the prompt goes, the
    lock is released, and a Y pressed afterwards begins nothing."""
    w, display = x11_lock_world(carrel, procs, logdir, logs, tmp_path, client_python,
                                pywayland_protocols, exam_python)
    exam = ask(w, display, artifacts_dir, "applock-destroy")
    exam.send("destroy s")
    exam.expect(f"manager m lock_state {INACTIVE}")
    assert h.wait_until(lambda: colour_count(screenshot(display), PROMPT, CENTRE) == 0, 5), \
        "the prompt stayed after the session was destroyed"
    press(display, "y")
    exam.collect(0.5)
    assert not exam.matching(r"session s .*"), f"events on a destroyed session: {exam.lines}"
    # A new request asks again.
    lock_only(exam, "c2")
    exam.begin("s2", "c2")
    assert h.wait_until(lambda: colour_count(screenshot(display), PROMPT, CENTRE) > 200, 10), \
        "a second request was not asked about"
    press(display, "y")
    exam.began("s2")
    w.alive()
