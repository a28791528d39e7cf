"""Guided Access through `carrelctl lock` / `carrelctl unlock` against the real
binary: the administrator pins the app without its cooperation; an untrusted
client's window (carrel-probe's map_toplevel) is hidden while locked and shown
after unlock; wrong passcodes are refused, counted and rate limited (even the
right passcode is not checked during the wait); without a passcode hash in the
policy Guided Access is off. The hash comes from `carrel hash-passcode`."""

from __future__ import annotations

import json
import time
import subprocess
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_clients import CTL_TIMEOUT, EXIT_REFUSED, Ctl, Factory, World, guided_world

PASSCODE = "correct horse"


@pytest.fixture(scope="module")
def passcode_hash() -> str:
    r = subprocess.run([str(h.carrel_bin()), "hash-passcode"], input=PASSCODE + "\n", env=h.clean_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.fixture
def locked_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir,
                 carrelctl, passcode_hash):
    return guided_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                        control_dir, carrelctl, f'[guided_access]\npasscode_hash = "{passcode_hash}"\n')


def unlock(ctl: Ctl, passcode: str) -> tuple[int, dict, str]:
    """carrelctl --json unlock with the passcode on stdin (never on the command line)."""
    argv = [str(ctl.binary), "--socket", str(ctl.socket_path), "--json", "unlock"]
    r = subprocess.run(argv, input=passcode + "\n", env=h.clean_env(), capture_output=True, text=True,
                       timeout=CTL_TIMEOUT)
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, f"unlock --json printed {r.stdout!r} (stderr {r.stderr!r})"
    return r.returncode, json.loads(lines[0]), r.stderr


def probe_map(world: World, name: str):
    from carrel_harness import probe_bin
    from probe import PROBE_TIMEOUT, ProbeRun
    client = world.carrel.client([str(probe_bin()), "--attack", "map_toplevel", "--timeout", "1.5"], name=name)
    return ProbeRun(client, client.wait_exit(PROBE_TIMEOUT))


def app_window(world: World):
    app = world.client("pinned-app")
    app.map()
    return app


def test_lock_hides_every_other_window_and_the_passcode_unlocks(locked_world):
    world, ctl = locked_world
    app = app_window(world)
    probe_map(world, "probe-before").expect("map_toplevel", "succeeded")

    locked = ctl.json("lock")
    session = locked["outcome"]["session"]
    assert h.wait_until(lambda: ctl.status()["state"] == "active", 10), ctl.status()
    status = ctl.status()
    assert status["mode"] == "guided_access" and status["session"]["id"] == session, status
    assert status["session"]["app"]["pid"] == app.pid and status["session"]["app"]["role"] == "app", status
    assert status["restrictions"]["hide_untrusted_windows"] is True, status
    probe_map(world, "probe-locked").expect("map_toplevel", "blocked")

    # A second lock is refused while the first holds.
    ctl.json("lock", expect=EXIT_REFUSED)

    status_code, answer, stderr = unlock(ctl, "not the passcode")
    assert status_code == EXIT_REFUSED and answer["error"]["code"] == "wrong_passcode", answer
    assert "1 in a row" in answer["error"]["message"] and PASSCODE not in stderr
    assert ctl.status()["state"] == "active", "a wrong passcode unlocked"

    status_code, answer, _ = unlock(ctl, PASSCODE)
    assert status_code == 0 and answer["outcome"]["session"] == session, answer
    assert h.wait_until(lambda: ctl.status()["state"] == "none", 10), ctl.status()
    assert ctl.status()["mode"] == "standard"
    probe_map(world, "probe-after").expect("map_toplevel", "succeeded")
    log = world.carrel.stderr_path.read_text()
    assert "guided access: wrong passcode (1 in a row)" in log and "guided access: unlocked" in log, log[-2000:]
    assert PASSCODE not in log and "not the passcode" not in log, "a passcode reached the log"
    app.sync()
    world.alive()


def test_wrong_passcodes_are_rate_limited_even_the_right_one_waits(locked_world):
    world, ctl = locked_world
    app_window(world)
    ctl.json("lock")
    assert h.wait_until(lambda: ctl.status()["state"] == "active", 10), ctl.status()
    for n in (1, 2, 3):
        code, answer, _ = unlock(ctl, f"guess {n}")
        assert code == EXIT_REFUSED and answer["error"]["code"] == "wrong_passcode", answer
        assert f"{n} in a row" in answer["error"]["message"], answer
    assert "next attempt is checked in" in answer["error"]["message"], answer
    code, answer, _ = unlock(ctl, PASSCODE)
    assert code == EXIT_REFUSED and answer["error"]["code"] == "rate_limited", answer
    assert ctl.status()["state"] == "active", "the right passcode was checked during the wait"
    world.alive()


def test_unlock_without_a_lock_and_lock_without_an_app_window_are_refused(locked_world):
    world, ctl = locked_world
    code, answer, _ = unlock(ctl, PASSCODE)
    assert code == EXIT_REFUSED and answer["error"]["code"] == "wrong_state", answer
    refused = ctl.json("lock", expect=EXIT_REFUSED)
    assert refused["error"]["code"] == "no_app", refused
    world.alive()


def test_lock_is_refused_when_the_policy_has_no_passcode(carrel, procs, logdir, logs, tmp_path, client_python,
                                                         pywayland_protocols, control_dir, carrelctl):
    world, ctl = guided_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                              control_dir, carrelctl, "")
    app_window(world)
    refused = ctl.json("lock", expect=EXIT_REFUSED)
    assert refused["error"]["code"] == "not_configured", refused
    assert "hash-passcode" in refused["error"]["message"], refused
    assert ctl.status()["state"] == "none"
    world.alive()


def test_on_screen_passcode_entry_with_the_policys_unlock_keys(carrel, procs, logdir, logs, tmp_path,
                                                               client_python, pywayland_protocols,
                                                               control_dir, carrelctl, passcode_hash,
                                                               artifacts_dir):
    """Under Xvfb with real key presses (xdotool): during a lock the policy's unlock keys
    open Carrel's own passcode prompt (drawn by Carrel, seen in an X screenshot); a wrong
    passcode typed there leaves the lock and is counted; the right one unlocks and the
    prompt goes; the passcode is not logged."""
    from x_display import CENTRE, PROMPT, colour_count, press_keys, screenshot, start_xvfb, x_windows

    display = start_xvfb(procs, logdir, logs)
    path = control_dir / "ctl" / "control.sock"
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[guided_access]\npasscode_hash = "{passcode_hash}"\nunlock_keys = "Ctrl+Alt+Shift+U"\n')
    world = World(Factory(carrel, ["--control-socket", str(path), "--policy", str(policy)]), procs, logdir,
                  logs, tmp_path, client_python, pywayland_protocols, backend="x11", env={"DISPLAY": display})
    ctl = Ctl(carrelctl, path, logdir, logs)
    assert h.wait_until(lambda: len(x_windows(display)) >= 1, 10), world.carrel.evidence()
    app = app_window(world)
    press_keys(display, "ctrl+alt+shift+u")  # no lock: nothing opens
    time.sleep(0.5)
    assert colour_count(screenshot(display), PROMPT, CENTRE) == 0, "a prompt without a lock"

    ctl.json("lock")
    assert h.wait_until(lambda: ctl.status()["state"] == "active", 10), ctl.status()
    press_keys(display, "ctrl+alt+shift+u")
    assert h.wait_until(lambda: colour_count(screenshot(display), PROMPT, CENTRE) > 100, 5), \
        f"no passcode prompt on screen\n{world.carrel.evidence()}"
    (artifacts_dir / "guided-access-prompt.png").write_bytes(screenshot(display).to_png())

    env = h.clean_env({"DISPLAY": display})
    subprocess.run(["xdotool", "type", "--delay", "30", "wrong"], env=env, check=True, timeout=20)
    press_keys(display, "Return")
    assert h.wait_until(lambda: "guided access: wrong passcode (1 in a row)" in
                        world.carrel.stderr_path.read_text(), 10), world.carrel.evidence()
    assert ctl.status()["state"] == "active" and colour_count(screenshot(display), PROMPT, CENTRE) > 100

    subprocess.run(["xdotool", "type", "--delay", "30", PASSCODE], env=env, check=True, timeout=20)
    press_keys(display, "Return")
    assert h.wait_until(lambda: ctl.status()["state"] == "none", 10), \
        f"the right passcode typed at the machine did not unlock\n{world.carrel.evidence()}"
    assert h.wait_until(lambda: colour_count(screenshot(display), PROMPT, CENTRE) == 0, 5), "the prompt stayed"
    assert PASSCODE not in world.carrel.stderr_path.read_text(), "the typed passcode reached the log"
    app.sync()
    world.alive()
