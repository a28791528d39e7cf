"""`carrel --assessment[=CONFIG.toml] -- APP`: a session Carrel begins on behalf
of an app that does not speak carrel-assessment-v1 (weston-simple-shm, foot),
when the app's first window maps, and ends when the app exits. The attacks are
real tools on the public socket (untrusted role), as in test_enforcement.py and
test_probe.py.
"""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

import carrel_harness as h
from carrel_log import began, stderr, wait_log
from probe import REGISTRY_ATTACKS, run_probe
from x_display import start_required_xvfb

FRAME_DONE = re.compile(r"wl_callback[@#]\d+\.done\(")


def app_pid(c) -> int:
    m = h.wait_until(lambda: re.search(r"launched app \S+ as pid (\d+)", stderr(c)), 10)
    assert m, f"carrel never launched the app\n{c.evidence()}"
    return int(m.group(1))


def assert_grim_fails(c, tmp_path):
    h.require_tool("grim")
    shot = tmp_path / "grim.png"
    grim = c.client(["grim", str(shot)], name="grim")
    status = grim.wait_exit()
    assert status != 0 and not shot.exists(), f"grim captured the screen (status {status})"
    assert "screencopy" in (grim.stdout() + grim.stderr()).lower(), f"grim failed otherwise: {grim.stderr()}"


def hidden_window(c):
    """An untrusted weston-simple-shm; returns a function counting its frame callbacks."""
    h.require_tool("weston-simple-shm")
    intruder = c.client(["weston-simple-shm"], name="intruder", env={"WAYLAND_DEBUG": "1"})
    assert h.wait_until(lambda: "xdg_toplevel" in intruder.stderr(), 10), intruder.stderr()[-2000:]
    return intruder, lambda: len(FRAME_DONE.findall(intruder.stderr()))


def assert_gets_no_frames(frames, when):
    time.sleep(0.3)
    before = frames()
    time.sleep(1.0)
    # wl_display.sync callbacks also say done; a drawing client would show ~60 a second.
    got = frames() - before
    assert got <= 3, f"{when}: the untrusted window got {got} frame callbacks in 1 s: it is shown"


def assert_probe_blocked(c, probe):
    run = run_probe(c, probe, "--timeout", "1.5")
    for attack in REGISTRY_ATTACKS + ["steal_focus", "clipboard_read"]:
        run.expect(attack, "blocked")
    assert "seat has no keyboard" not in run.detail("steal_focus"), \
        f"the seat has no keyboard, so steal_focus proves nothing\n{run.evidence()}"
    return run


def assert_alive_and_audited(c):
    assert c.alive(), f"carrel died\n{c.evidence()}"
    assert "scene invariant broken" not in stderr(c), c.evidence()


def test_session_on_behalf_of_simple_shm(carrel, probe, procs, logdir, logs, tmp_path):
    display = start_required_xvfb(procs, logdir, logs)
    c = carrel.start(app=["weston-simple-shm"], args=["--assessment"], backend="x11",
                     env={"DISPLAY": display})
    pid = app_pid(c)
    began(c, "weston-simple-shm")
    # `began` only after the frame with the restrictions up was presented.
    text = stderr(c)
    assert text.index("restrictions up for") < text.index("session began (on behalf of"), c.evidence()
    assert_grim_fails(c, tmp_path)
    intruder, frames = hidden_window(c)
    assert_gets_no_frames(frames, "during the session")
    assert_probe_blocked(c, probe)
    assert_alive_and_audited(c)
    assert intruder.alive()
    # The app exits: the session ends, then Carrel exits with the app's status.
    os.kill(pid, signal.SIGINT)
    status = c.wait_exit()
    assert status == 0, f"weston-simple-shm ends with 0 on SIGINT; carrel gave {status}\n{c.evidence()}"
    text = stderr(c)
    assert "session ended (on behalf of weston-simple-shm)" in text, c.evidence()
    assert text.index("app exited") < text.index("session ended (on behalf of"), c.evidence()


def test_session_on_behalf_of_foot(carrel, probe, procs, logdir, logs, tmp_path):
    h.require_tool("foot")
    display = start_required_xvfb(procs, logdir, logs)
    # A terminal a candidate could type into: its shell writes a marker, then waits.
    marker = tmp_path / "foot-shell"
    c = carrel.start(app=["foot", "sh", "-c", ': > "$0"; exec sleep 300', str(marker)],
                     args=["--assessment"], backend="x11", env={"DISPLAY": display})
    pid = app_pid(c)
    began(c, "foot")
    assert h.wait_until(marker.exists, 10), f"foot's shell never ran\n{c.evidence()}"
    assert_grim_fails(c, tmp_path)
    intruder, frames = hidden_window(c)
    assert_gets_no_frames(frames, "during foot's session")
    assert_probe_blocked(c, probe)
    assert_alive_and_audited(c)
    os.kill(pid, signal.SIGTERM)
    status = c.wait_exit()
    # foot picks its own status when SIGTERMed; Carrel passes on whichever it was.
    exited = re.search(r"app exited: status (\d+)", stderr(c))
    assert exited and status == int(exited.group(1)), f"carrel gave {status}\n{c.evidence()}"
    assert "session ended (on behalf of foot)" in stderr(c), c.evidence()


def test_time_limit_interrupts_and_restrictions_hold_until_the_app_exits(carrel, tmp_path):
    config = tmp_path / "exam.toml"
    config.write_text('time_limit_seconds = 2\nallow = ["input_method"]\n')
    c = carrel.start(app=["weston-simple-shm"], args=[f"--assessment={config}"])
    pid = app_pid(c)
    start = began(c, "weston-simple-shm")
    assert "time_limit=2s" in stderr(c) and "allow=[input_method]" in stderr(c), c.evidence()
    wait_log(c, "session interrupted (on behalf of weston-simple-shm): time_limit", timeout=10)
    elapsed = time.monotonic() - start
    assert elapsed >= 1.5, f"interrupted {elapsed:.1f}s after began; the limit is 2 s"
    # Interrupted, not ended: the restrictions stay until the app exits.
    assert "session ended" not in stderr(c)
    _, frames = hidden_window(c)
    assert_gets_no_frames(frames, "after the time limit")
    assert "restrictions reverted" not in stderr(c), c.evidence()
    os.kill(pid, signal.SIGINT)
    assert c.wait_exit() == 0, c.evidence()
    text = stderr(c)
    assert "session ended (on behalf of weston-simple-shm)" in text
    assert "restrictions reverted" in text


def test_app_without_a_window_gets_no_session(carrel):
    c = carrel.start(app=["sh", "-c", "exit 5"], args=["--assessment"], wait_ready=False)
    assert c.wait_exit() == 5, c.evidence()
    assert "session began" not in stderr(c) and "beginning a session" not in stderr(c)


@pytest.mark.parametrize("content, key, words", [
    ("time_limit_second = 3\n", "time_limit_second", "unknown key"),
    ('allow = ["spell_czech"]\n', "allow", "unknown feature"),
    ('allow = "input_method"\n', "allow", "array"),
    ("time_limit_minutes = 0\n", "time_limit_minutes", "positive"),
    ("time_limit_minutes = 1.5\n", "time_limit_minutes", "whole number"),
    ("time_limit_minutes = 1\ntime_limit_seconds = 5\n", "time_limit_seconds", "not both"),
    ("allow = [\n", None, "not valid TOML"),
])
def test_bad_config_stops_carrel_before_anything_starts(carrel, tmp_path, content, key, words):
    config = tmp_path / "bad.toml"
    config.write_text(content)
    marker = tmp_path / "app-ran"
    c = carrel.start(app=["sh", "-c", ': > "$0"', str(marker)], args=[f"--assessment={config}"],
                     wait_ready=False)
    assert c.wait_exit() == 2, c.evidence()
    text = stderr(c)
    assert str(config) in text and words in text, c.evidence()
    if key:
        assert f"key `{key}`" in text, c.evidence()
    assert not marker.exists(), "the app was started although the file was bad"
    assert "listening on" not in text, "carrel started although the file was bad"


def test_missing_config_file(carrel, tmp_path):
    missing = tmp_path / "nope.toml"
    c = carrel.start(app=["true"], args=["--assessment-config", str(missing)], wait_ready=False)
    assert c.wait_exit() == 2
    assert f"{missing}: cannot read it" in stderr(c), c.evidence()
