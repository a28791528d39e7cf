"""`carrelctl end --force` against the real binary: an exam app that hangs.

The session's app is the pywayland client of test_assessment.py on Carrel's
app socket. It never ends its session on `interrupted` (it only reports the
event), so it stands for an app that hangs: Carrel gives it 1 s after
`ended` to exit by itself, then sends SIGTERM. In one test it also ignores
SIGTERM (started through `sh -c 'trap "" TERM; exec …'`: an ignored signal
stays ignored across exec), so only SIGKILL after the grace period stops it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import carrel_harness as h
from assessment_protocol import ADMINISTRATIVE
from carrel_clients import CLIENT, Driver

NOTICE, GRACE = 1.0, 5.0  # ControlRequest.forceEndNotice, .forceEndGrace


def hung_client(world, name: str, ignore_sigterm: bool) -> Driver:
    """A client on the app socket like World.client, optionally deaf to SIGTERM."""
    world.count += 1
    label = f"{world.count}-{name}-app"
    stderr_path = world.logdir / f"{label}.stderr"
    transcript = world.logdir / f"{label}.transcript"
    world.logs += [(f"client {label} transcript", transcript), (f"client {label} stderr", stderr_path)]
    argv = [world.python, str(CLIENT)]
    if ignore_sigterm:
        argv = ["sh", "-c", 'trap "" TERM; exec "$0" "$@"', *argv]
    with open(stderr_path, "wb") as err:
        proc = world.procs.spawn(label, argv, env=world.env("app"), stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=err)
    driver = Driver(label, proc, stderr_path, transcript)
    driver.expect("ready", what="connected and globals listed")
    driver.map()
    driver.bind()
    driver.send("config c ; time_limit c 600")
    driver.begin(config="c")
    driver.began()
    return driver


def app_stop_records(world) -> list[str]:
    records = [json.loads(line) for line in world.carrel.audit_log.read_text().splitlines()]
    return [r.get("detail", "") for r in records if r["event"] == "app_stop"]


def test_force_end_of_an_app_that_ignores_interrupted_and_sigterm(ctl_world):
    world, ctl = ctl_world
    a = hung_client(world, "hung", ignore_sigterm=True)

    # The polite way first: the app hears interrupted and does nothing.
    assert ctl.run("end", "--reason", "fire alarm").returncode == 0
    a.expect(rf"session s interrupted {ADMINISTRATIVE} fire alarm")
    a.sync()
    assert ctl.status()["state"] == "ending", "the app ignored interrupted, so the session stays"

    started = time.monotonic()
    outcome = ctl.json("end", "--reason", "app hangs", "--force")["outcome"]
    assert outcome["forced"] is True and outcome["app_stop_grace_seconds"] == GRACE, outcome
    assert outcome["message"] == "app hangs", outcome
    # Already interrupted: it hears why the session ends now, then ended.
    a.expect(rf"session s interrupted {ADMINISTRATIVE} app hangs")
    a.expect("session s ended", what="ended after end --force")
    status = ctl.status()
    assert status["state"] == "none" and status["session"] is None and status["restrictions"] is None, status
    # An end the app sends now (it may have sent it before hearing ended) is no protocol error.
    a.send("end s")
    a.sync()
    assert not a.matching(r".*(protocol error|already_ended).*"), a.lines

    # SIGTERM is ignored: it lives through the notice and the grace period, then SIGKILL.
    assert h.wait_until(lambda: a.proc.poll() is not None, NOTICE + GRACE + 5), \
        f"the hung app still runs {NOTICE + GRACE + 5}s after end --force\n{world.carrel.evidence()}"
    took = time.monotonic() - started
    assert a.proc.returncode == -signal.SIGKILL, f"the app ended with {a.proc.returncode}, not SIGKILL"
    assert took >= NOTICE + GRACE - 0.5, f"killed after {took:.1f}s, before the notice and grace period"
    steps = app_stop_records(world)
    assert len(steps) == 2 and "SIGTERM sent" in steps[0] and "SIGKILL sent" in steps[1], steps
    assert all("app hangs" in step for step in steps), steps
    world.alive()


def test_force_end_of_an_active_session_sends_interrupted_then_ended_and_sigterm_stops_the_app(ctl_world):
    world, ctl = ctl_world
    a = hung_client(world, "exam", ignore_sigterm=False)

    r = ctl.run("end", "--reason", "exam over", "--force")
    assert r.returncode == 0, r.stderr
    assert "ended by force" in r.stdout and "SIGKILL after 5 s" in r.stdout, r.stdout
    a.expect(rf"session s interrupted {ADMINISTRATIVE} exam over")
    a.expect("session s ended", what="ended after interrupted")
    assert h.wait_until(lambda: a.proc.poll() is not None, NOTICE + GRACE), "the app outlived SIGTERM"
    assert a.proc.returncode == -signal.SIGTERM, a.proc.returncode
    assert ctl.status()["state"] == "none"
    steps = app_stop_records(world)
    assert len(steps) == 1 and "SIGTERM sent" in steps[0], steps

    # Nothing left to end.
    assert ctl.json("end", "--reason", "again", "--force", expect=1)["error"]["code"] == "no_session"
    world.alive()


def test_force_end_in_single_app_mode_stops_the_launched_app_and_it_comes_back(
        carrel, carrelctl, control_dir, logdir, logs, tmp_path):
    """The launched app (the demo exam, sleeping in its session) is the one stopped; Single
    App Mode relaunches it, and its next session begins."""
    from carrel_clients import Ctl
    from carrel_harness import demo_bin

    script = tmp_path / "hang.script"
    script.write_text("begin\nwait-began\nsleep 300\n")
    path = control_dir / "ctl" / "control.sock"
    c = carrel.start(app=[demo_bin(), "--script", script], args=["--kiosk", "--control-socket", str(path)])
    ctl = Ctl(carrelctl, path, logdir, logs)

    def active_session():
        status = ctl.status()
        return status["session"] if status["state"] == "active" else None
    first = h.wait_until(active_session, 20, interval=0.2)
    assert first, f"the demo exam's session never began\n{c.evidence()}"
    pid = first["app"]["pid"]

    outcome = ctl.json("end", "--reason", "exam app frozen", "--force")["outcome"]
    assert outcome["session"] == first["id"] and outcome["forced"] is True, outcome
    assert h.wait_until(lambda: not os.path.exists(f"/proc/{pid}"), NOTICE + GRACE + 3), \
        f"the launched app (pid {pid}) still runs\n{c.evidence()}"
    second = h.wait_until(lambda: (s := active_session()) and s["id"] != first["id"] and s, 20, interval=0.2)
    assert second and second["app"]["pid"] != pid, f"Single App Mode did not bring the app back\n{c.evidence()}"
    assert c.alive()
    assert "SIGTERM sent to pid %d" % pid in c.stderr_path.read_text(errors="replace")


def test_force_end_of_an_app_that_exits_on_ended_sends_no_signal(ctl_world):
    world, ctl = ctl_world
    a = hung_client(world, "polite", ignore_sigterm=False)
    # The app quits the moment it hears ended, as a polite app does: no round trip
    # through the test eats into the notice period on a slow machine.
    a.send("exit_on_ended")
    a.sync()
    assert ctl.run("end", "--reason", "exam over", "--force").returncode == 0
    a.expect("session s ended", what="ended after end --force")
    assert h.wait_until(lambda: a.proc.poll() is not None, NOTICE), "the client did not exit"
    assert a.proc.returncode == 0, a.proc.returncode
    steps = h.wait_until(lambda: app_stop_records(world) or None, NOTICE + 2)
    assert steps and len(steps) == 1 and "exited by itself" in steps[0], steps
    world.alive()
