"""The seat's metrics for the room's Prometheus, against the real binary.

With `[metrics] textfile_dir` set, Carrel keeps `carrel.prom` in that directory
(what node-exporter's textfile collector serves) in step with the session and
the blocked attempts; `promtool check metrics` accepts every version of it. A
directory Carrel cannot write costs the seat nothing: the session runs, the
error is logged once and `carrelctl status` says so. The alert rules in
dist/prometheus pass their `promtool test rules` unit tests.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_clients import Ctl, WithAuditLog, WithControlSocket, World, guessed_bind

ADMINISTRATIVE = 2
SAMPLE = re.compile(r'^([a-z_]+)(\{[a-z_]+="[^"]*"\})? (\S+)$')


def promtool() -> str:
    return h.require_tool("promtool")


def metrics(path: Path) -> dict:
    """The samples of a text exposition file: {'name{labels}': value}."""
    found = {}
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        found[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return found


def check_metrics(path: Path) -> None:
    r = subprocess.run([promtool(), "check", "metrics"], stdin=open(path), capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 0, f"promtool check metrics refused {path}:\n{r.stdout}{r.stderr}\n{path.read_text()}"


def state(path: Path) -> str:
    values = metrics(path)
    current = [s for s in ("idle", "pending", "active", "interrupted", "ending")
               if values[f'carrel_session_state{{state="{s}"}}'] == 1]
    assert len(current) == 1 and sum(v for k, v in values.items() if k.startswith("carrel_session_state{")) == 1, values
    return current[0]


def wait_for(path: Path, predicate, what: str, carrel) -> dict:
    """Waits (bounded) until the file's samples satisfy `predicate`."""
    last = [None]

    def ok():
        if not path.exists():
            return False
        last[0] = metrics(path)
        return predicate(last[0])
    assert h.wait_until(ok, 10), f"{path} never showed {what}; last: {last[0]}\n{carrel.evidence()}"
    return last[0]


def seat(carrel, procs, logdir, logs, tmp_path, python, protocols, control_dir, carrelctl, directory: Path,
         audit_log: Path | None = None):
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[metrics]\ntextfile_dir = "{directory}"\n')
    socket_path = control_dir / "ctl" / "control.sock"
    factory = WithAuditLog(carrel, audit_log) if audit_log else carrel
    world = World(WithControlSocket(factory, socket_path), procs, logdir, logs, tmp_path, python, protocols,
                  args=["--policy", str(policy)])
    return world, Ctl(carrelctl, socket_path, logdir, logs)


def test_carrel_prom_follows_the_session_and_blocked_attempts(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir, carrelctl):
    directory = tmp_path / "node-exporter"
    directory.mkdir()
    started = time.time()
    world, ctl = seat(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir,
                      carrelctl, directory)
    prom = directory / "carrel.prom"
    # The chain's sample joins the file once the (here empty) log was checked.
    before = wait_for(prom, lambda v: "carrel_audit_chain_ok" in v, "the audit chain's sample", world.carrel)
    assert state(prom) == "idle"
    assert started - 2 <= before["carrel_session_state_since_seconds"] <= time.time() + 2, before
    assert before["carrel_session_deadline_seconds"] == 0, before
    assert before['carrel_blocked_attempts_total{kind="capture"}'] == 0, before
    assert before["carrel_audit_chain_ok"] == 1, before
    assert any(k.startswith("carrel_build_info{version=") and v == 1 for k, v in before.items()), before
    # node-exporter runs as its own user: the file must be readable by others.
    assert stat.S_IMODE(os.stat(prom).st_mode) == 0o644, oct(os.stat(prom).st_mode)
    check_metrics(prom)
    assert ctl.status()["metrics"] == {"textfile": str(prom), "problem": None}

    app = world.client("exam")
    app.map()
    app.bind()
    app.send("config c ; time_limit c 600")
    app.begin(config="c")
    app.began()
    now = time.time()
    during = wait_for(prom, lambda v: v['carrel_session_state{state="active"}'] == 1, "the active state",
                      world.carrel)
    assert now - 5 <= during["carrel_session_state_since_seconds"] <= now + 1, during
    assert now + 600 - 5 <= during["carrel_session_deadline_seconds"] <= now + 600 + 2, during
    check_metrics(prom)

    # A screen capture tried during the session (a guessed bind of screencopy) is counted as such.
    public = str(world.carrel.runtime_dir / world.carrel.socket_name)
    assert guessed_bind(public, "zwlr_screencopy_manager_v1") is not None, "the guessed bind was not refused"
    blocked = wait_for(prom, lambda v: v['carrel_blocked_attempts_total{kind="capture"}'] == 1,
                       "one blocked capture", world.carrel)
    assert blocked['carrel_blocked_attempts_total{kind="clipboard"}'] == 0, blocked

    # The proctor interrupts: the seat shows interrupted (not ending), with its cause counted.
    ctl.json("end", "--reason", "proctor: exam over")
    app.expect(rf"session s interrupted {ADMINISTRATIVE} .*")
    interrupted = wait_for(prom, lambda v: v['carrel_session_state{state="interrupted"}'] == 1,
                           "the interrupted state", world.carrel)
    assert interrupted['carrel_interruptions_total{cause="administrative"}'] == 1, interrupted
    assert interrupted['carrel_interruptions_total{cause="time_limit"}'] == 0, interrupted
    check_metrics(prom)

    app.send("end s")
    app.expect("session s ended")
    after = wait_for(prom, lambda v: v['carrel_session_state{state="idle"}'] == 1, "idle again", world.carrel)
    assert after['carrel_sessions_total{outcome="ended"}'] == 1, after
    assert after['carrel_sessions_total{outcome="failed"}'] == 0, after
    assert after["carrel_session_deadline_seconds"] == 0, after
    assert after['carrel_blocked_attempts_total{kind="capture"}'] == 1, after
    check_metrics(prom)
    # Replaced by rename: no temporary file is left beside it.
    assert sorted(p.name for p in directory.iterdir()) == ["carrel.prom"], list(directory.iterdir())
    world.alive()


def test_an_unwritable_directory_is_logged_once_shown_by_status_and_the_seat_goes_on(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir, carrelctl):
    # A directory that cannot exist (its parent is a file): unwritable even for root.
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    directory = blocker / "node-exporter"
    world, ctl = seat(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir,
                      carrelctl, directory)
    app = world.client("exam")
    app.map()
    app.bind()
    app.begin()
    app.began()
    status = ctl.status()
    assert status["state"] == "active", status
    problem = status["metrics"]["problem"]
    assert status["metrics"]["textfile"] == str(directory / "carrel.prom"), status
    assert problem and str(directory) in problem and "Not a directory" in problem, status
    assert "textfile_dir" in problem, status
    text = ctl.run("status")
    assert text.returncode == 0 and "NOT WRITTEN" in text.stdout, text.stdout
    app.send("end s")
    app.expect("session s ended")
    world.alive()
    errors = [line for line in world.carrel.stderr_path.read_text().splitlines() if "metrics: cannot write" in line]
    assert len(errors) == 1, errors
    assert "the seat goes on" in errors[0] and "--collector.textfile.directory" in errors[0], errors


def test_the_file_is_renewed_while_nothing_changes_and_a_broken_audit_chain_shows(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir, carrelctl):
    # An audit log whose last record was cut short: Carrel starts, but the chain is not intact.
    log = tmp_path / "audit.jsonl"
    log.write_text('{"seq":1,"prev":"')
    directory = tmp_path / "node-exporter"
    directory.mkdir()
    world, ctl = seat(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir,
                      carrelctl, directory, audit_log=log)
    prom = directory / "carrel.prom"
    # Left out while the chain is walked (on a thread, after the socket), then 0.
    first = wait_for(prom, lambda v: "carrel_audit_chain_ok" in v, "the audit chain's sample", world.carrel)
    assert first["carrel_audit_chain_ok"] == 0, first
    check_metrics(prom)
    text, written = prom.read_text(), os.stat(prom).st_mtime_ns
    # Rewritten every 15 s even with nothing to say: a stale file means a seat that stopped.
    assert h.wait_until(lambda: os.stat(prom).st_mtime_ns != written, 20, interval=0.5), \
        f"carrel.prom was not renewed within 20 s\n{world.carrel.evidence()}"
    assert prom.read_text() == text
    world.alive()


def test_alert_rules_pass_their_unit_tests():
    rules = h.REPO / "dist" / "prometheus"
    check = subprocess.run([promtool(), "check", "rules", str(rules / "carrel-alerts.yml")],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
    r = subprocess.run([promtool(), "test", "rules", "carrel-alerts.test.yml"], cwd=rules,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout + r.stderr, r.stdout + r.stderr
