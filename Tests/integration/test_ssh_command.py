"""`carrelctl ssh-command`, the forced command of an invigilator's SSH key,
against the real binary: what the invigilator typed arrives in
SSH_ORIGINAL_COMMAND; status, extend and end run, end and extend only on the
session they name; anything else is refused before Carrel is asked."""

from __future__ import annotations

import json
import subprocess

import carrel_harness as h
from carrel_clients import begin_session

ADMINISTRATIVE = 2


def ssh(ctl, original: str | None, *args: str) -> subprocess.CompletedProcess:
    """carrelctl ssh-command as sshd runs it for a forced command."""
    env = h.clean_env()
    env.pop("SSH_ORIGINAL_COMMAND", None)
    if original is not None:
        env["SSH_ORIGINAL_COMMAND"] = original
    argv = [str(ctl.binary), "ssh-command", "--socket", str(ctl.socket_path), *args]
    r = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=15)
    ctl.count += 1
    log = ctl.logdir / f"ssh-command-{ctl.count}.txt"
    log.write_text(f"SSH_ORIGINAL_COMMAND: {original!r}\nexit: {r.returncode}\n{r.stdout}--- stderr ---\n{r.stderr}")
    ctl.logs.append((f"ssh-command {ctl.count}", log))
    return r


def test_status_extend_and_end_act_only_on_the_session_they_name(ctl_world):
    world, ctl = ctl_world
    app = begin_session(world, limit=600)
    r = ssh(ctl, "status", "--json")
    assert r.returncode == 0, r.stderr
    session = json.loads(r.stdout)["status"]["session"]["id"]

    # A session number that is not the live one: refused, nothing changes.
    r = ssh(ctl, f"extend {session + 1} 5", "--json")
    assert r.returncode == 1, r
    assert json.loads(r.stdout)["error"]["code"] == "session_changed", r.stdout
    assert "nothing was done" in r.stderr, r.stderr
    assert ctl.status()["session"]["time_limit_seconds"] == 600

    r = ssh(ctl, f"extend {session} 5")
    assert r.returncode == 0 and f"session {session} extended by 300 s" in r.stdout, r
    assert ctl.status()["session"]["time_limit_seconds"] == 900

    r = ssh(ctl, f"end {session + 1} wrong seat")
    assert r.returncode == 1 and "nothing was done" in r.stderr, r
    app.sync()
    assert not app.matching(r"session s interrupted.*"), app.evidence()

    r = ssh(ctl, f"end {session} fire alarm; leave calmly")
    assert r.returncode == 0, r
    app.expect(rf"session s interrupted {ADMINISTRATIVE} fire alarm; leave calmly")
    world.alive()


def test_anything_else_is_refused_before_carrel_is_asked(ctl_world):
    world, ctl = ctl_world
    app = begin_session(world)
    for original, says in [(None, "interactive login"), ("bash -i", "not allowed"), ("reload", "not allowed"),
                           ("unlock 0000", "not allowed"), ("end fire", "session and a reason"),
                           ("extend 1 9999", "600")]:
        r = ssh(ctl, original)
        assert r.returncode == 64, (original, r)
        assert says in r.stderr, (original, r.stderr)
    app.sync()
    assert not app.matching(r"session s interrupted.*"), app.evidence()
    assert ctl.status()["state"] == "active"
    world.alive()
