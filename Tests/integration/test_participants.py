"""Participants: the programs a session names beside the exam, launched by Carrel.

A session naming a participant from the policy gets it launched on a socket of
its own (carrel-paint here: a real Wayland client that maps a window); `began`
waits for its window; it is terminated and reaped, its socket gone, before
`ended` arrives. A participant that cannot start fails the begin (or the
update) with participant_unavailable and leaves nothing applied. Its exit
during a session follows the policy's on_exit.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import carrel_harness as h
from test_assessment import (ACTIVE, EVENT_TIMEOUT, INACTIVE, INTEGRITY, World, _SESSION,
                             client_python, expect_lock_state, pywayland_protocols, wait_lock_state)

PARTICIPANT_UNAVAILABLE = _SESSION.failure_reason.participant_unavailable.value


def policy(tmp_path: Path, on_exit: str = "interrupt") -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(
        "[participants.calc]\n"
        f"command = [\"{h.paint_bin()}\", \"--color\", \"33cc66\"]\n"
        f"on_exit = \"{on_exit}\"\n"
        "[participants.missing]\n"
        "command = [\"/nonexistent/carrel-test-calculator\"]\n")
    return path


def participants_of(carrel) -> list[int]:
    """Live (not zombie) children of carrel running carrel-paint."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        if int(fields[1]) == carrel.pid and comm.startswith("carrel-paint") and fields[0] != "Z":
            found.append(int(entry))
    return found


def children_of(carrel) -> list[int]:
    """Every child of carrel, zombies included (a zombie was not reaped)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == carrel.pid:
                found.append(int(entry))
    return found


def participant_sockets(world) -> list[str]:
    directory = Path(world.app_display).parent
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("participant-"))


@pytest.fixture
def make_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    def make(on_exit: str = "interrupt") -> World:
        return World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                     args=["--policy", str(policy(tmp_path, on_exit))])
    return make


def begin_with(world, participant: str):
    a = world.client("exam")
    a.map()
    a.bind(version=2)  # participant_unavailable is a version-2 reason
    a.send(f"config c ; participant c {participant}")
    a.begin(config="c")
    return a


def test_a_named_participant_runs_only_during_its_session_and_is_gone_before_ended(make_world):
    world = make_world()
    assert participant_sockets(world) == [], "a participant socket exists outside a session"
    a = begin_with(world, "calc")
    a.began()
    pids = participants_of(world.carrel)
    assert len(pids) == 1, f"expected one running participant, found {pids}\n{world.carrel.evidence()}"
    assert participant_sockets(world) == ["participant-calc"]
    a.send("end s")
    a.expect("session s ended")
    # Carrel stops the participant before it sends ended: by now it is reaped.
    assert not Path(f"/proc/{pids[0]}").exists(), \
        f"participant pid {pids[0]} still exists (running or unreaped) after ended\n{world.carrel.evidence()}"
    assert participant_sockets(world) == [], "the participant's socket outlived its session"
    expect_lock_state(a, INACTIVE)
    world.alive()


def test_a_participant_that_cannot_start_fails_the_begin_and_nothing_is_left_applied(make_world):
    world = make_world()
    a = begin_with(world, "missing")
    m = a.expect(r"session s (began|failed (\d+) (.*))")
    assert m.group(2) == str(PARTICIPANT_UNAVAILABLE), f"begin was answered {m.group(0)!r}"
    assert "missing" in m.group(3) and "/nonexistent/carrel-test-calculator" in m.group(3), m.group(0)
    wait_lock_state(a, INACTIVE)
    assert participant_sockets(world) == []
    # Nothing is held: a session without participants begins at once.
    a.send("config plain")
    a.begin("t", config="plain")
    a.began("t")
    a.send("end t")
    a.expect("session t ended")
    world.alive()


def test_an_update_adding_a_participant_that_cannot_start_changes_nothing(make_world):
    world = make_world()
    a = begin_with(world, "calc")
    a.began()
    before = participants_of(world.carrel)
    a.send("config more ; participant more calc ; participant more missing")
    a.send("update s more")
    m = a.expect(r"session s (updated|update_failed (\d+) .*)")
    assert m.group(2) == str(PARTICIPANT_UNAVAILABLE), f"update was answered {m.group(0)!r}"
    assert participants_of(world.carrel) == before, "the running participant changed with a refused update"
    a.send("config fewer")
    a.send("update s fewer")
    a.expect("session s updated")
    assert h.wait_until(lambda: participants_of(world.carrel) == [], 5), \
        "the participant the update left out still runs"
    assert participant_sockets(world) == []
    a.sync()
    assert not a.matching("session s (interrupted|ended).*"), a.lines
    a.send("end s")
    a.expect("session s ended")
    world.alive()


def test_kill_9_of_a_participant_interrupts_the_session_by_default(make_world):
    world = make_world("interrupt")
    a = begin_with(world, "calc")
    a.began()
    [pid] = participants_of(world.carrel)
    os.kill(pid, signal.SIGKILL)
    m = a.expect(r"session s interrupted (\d+) (.*)")
    assert m.group(1) == str(INTEGRITY) and "calc" in m.group(2), m.group(0)
    assert h.wait_until(lambda: pid not in children_of(world.carrel), 5), "the killed participant was not reaped"
    a.send("end s")
    a.expect("session s ended")
    world.alive()


def test_kill_9_of_a_participant_relaunches_it_when_the_policy_says_so(make_world):
    world = make_world("relaunch")
    a = begin_with(world, "calc")
    a.began()
    [pid] = participants_of(world.carrel)
    os.kill(pid, signal.SIGKILL)
    assert h.wait_until(lambda: participants_of(world.carrel) not in ([], [pid]), 5), \
        f"the participant was not relaunched\n{world.carrel.evidence()}"
    a.sync()
    assert not a.matching("session s (interrupted|ended).*"), a.lines
    a.send("end s")
    a.expect("session s ended")
    assert participants_of(world.carrel) == []
    world.alive()
