"""A session's periodic check of its network table never holds up the
compositor's loop, the one that draws the exam and reads the student's keys.

While a session holds the network, Carrel checks every second that its
nftables table is still there and unchanged (`nft list table`, run by Carrel
as root; with the privileged helper, the helper's own run of it). Here the
`nft` Carrel runs is a wrapper that makes the listing slow, or hang: a
client's round trips to Carrel must keep coming back at once meanwhile, the
session must go on while the slow listings say all is well, and a listing
that hangs must end the session at its bound (5 s), saying so, rather than
freeze the screen. Before, each check ran on the loop: every round trip
waited for it.

The same through the privileged helper (the shipped layout): there the
helper lists the table, and Carrel must not wait for its answer. And the
media provider's verify, which asks each MPRIS player on the session bus
whether it plays: a player slow to answer holds up nothing either.

A session's begin, update and end do not wait either: the ruleset's load
at begin (`nft -f`, or the helper's) and the table's delete at the end run
while the loop goes on answering; a load that hangs fails the begin with
restriction_failed at its bound, leaving nothing applied. The media
provider's first pause of every player at begin: a player slow to pause
holds up nothing, one that never answers fails the begin at 2 s. The
media provider's connection to the session bus at begin: a bus daemon slow
to let Carrel in (slow_bus_proxy.py) holds up nothing, one silent for 2 s
fails the begin.

A seat service that restarts during a session (a unit the policy's
network_exempt_units names gets a new cgroup): the verify loads the ruleset
again while the loop goes on answering; a reload that hangs interrupts the
session at nft's bound (5 s).

A participant the privileged helper starts (the shipped layout): a helper
slow to answer the spawn (slow_helper_proxy.py holds it) holds up nothing,
and one that never answers fails the begin with participant_unavailable at
the link's bound (12 s). Nor does an end wait for the helper's answer to
the participant's kill.

The input method the helper starts: a session's begin restarts it (the
session turns its prediction off); a helper slow to answer its new start
holds up nothing, and one that never answers reaches the link's bound (the
session is interrupted, the engine's start fails and is relaunched after a
back-off, as a launch that failed). Nor does a slow answer to the SIGTERM
that ends the engine at a session's begin or end hold anything up, nor one
to the SIGTERM a forced end sends the app the helper started.

Root only, like the other network tests (a network namespace, cgroup v2 and
nftables; test_providers.py says how).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import INTEGRITY, RESTRICTION_FAILED, SESSION_WIRE
from media_bus import Player, media_world
from netns import SYSTEM_PYTHON, FakeUnit, Namespace, NetWorld, begin_session, log_text, start_server, tool
from privileged_setup import PrivilegedWorld, account

HERE = Path(__file__).resolve().parent
PARTICIPANT_UNAVAILABLE = SESSION_WIRE.failure_reason.participant_unavailable.value

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: a network namespace, nftables and cgroup v2")


def slow_nft(tmp_path: Path, seconds: float, hang: bool = False, on: str = "list") -> tuple[Path, Path]:
    """A directory holding an `nft` whose `on` runs (its first argument:
    `list`, `-f` for a load, `delete`) wait `seconds` first (with `hang`,
    become that wait and never run: the pid it records is then the process
    that must be killed), and the file it records each such run's pid in."""
    real = tool("nft")
    directory = tmp_path / "slow-nft"
    directory.mkdir()
    mark = tmp_path / "slow-listing"
    script = directory / "nft"
    wait = f"exec sleep {seconds}" if hang else f"sleep {seconds}"
    script.write_text("#!/bin/sh\n"
                      f'if [ "$1" = "{on}" ]; then echo "$$" >> {mark}; {wait}; fi\n'
                      f'exec {real} "$@"\n')
    script.chmod(0o755)
    return directory, mark


def slow_path(directory: Path) -> str:
    return f"{directory}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.fixture
def slow_netns(request, tmp_path):
    """`request.param`: the seconds the listing takes, or (seconds, which run: `list`, `-f`, `delete`)."""
    seconds, on = request.param if isinstance(request.param, tuple) else (request.param, "list")
    # Past nft's 5 s bound: the run hangs (nothing is left of it once killed).
    directory, mark = slow_nft(tmp_path, seconds, hang=seconds > 5, on=on)
    path = slow_path(directory)
    ns = Namespace(tmp_path, carrel_prefix=f"env PATH={path} ")
    ns.mark = mark
    yield ns
    ns.delete()


def round_trips(driver, seconds: float) -> list[float]:
    """Round trips to Carrel (wl_display.sync) one after another for
    `seconds`: how long each took."""
    took = []
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
        start = time.monotonic()
        driver.send(f"sync rt{n}")
        driver.expect(f"synced rt{n}", timeout=30, what="a round trip to carrel")
        took.append(time.monotonic() - start)
        time.sleep(0.05)
    return took


@pytest.mark.parametrize("slow_netns", [3], indirect=True)
def test_a_slow_table_check_holds_up_no_round_trip_and_the_session_goes_on(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns):
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns)
    a = begin_session(w)
    took = round_trips(a, 8.0)
    listings = slow_netns.mark.read_text().split() if slow_netns.mark.exists() else []
    assert len(listings) >= 2, f"carrel never listed its table through the slow nft\n{log_text(w)}"
    # Each listing took 3 s; a loop that waited for one would hold a round trip that long.
    assert max(took) < 1.5, (f"a round trip waited {max(took):.2f} s while nft listed the table "
                             f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{log_text(w)}")
    assert not any("interrupted" in line for line in a.lines), \
        f"slow but correct listings interrupted the session: {a.lines}\n{log_text(w)}"
    assert slow_netns.table_exists()
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not slow_netns.table_exists(), 5), "the table outlived the session"
    w.alive()


@pytest.mark.parametrize("slow_netns", [60], indirect=True)
def test_a_hung_table_check_interrupts_the_session_at_its_bound_and_holds_up_nothing(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns):
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns)
    a = begin_session(w)
    began = time.monotonic()
    took = round_trips(a, 4.0)
    assert slow_netns.mark.exists(), f"carrel never listed its table through the hung nft\n{log_text(w)}"
    assert max(took) < 1.5, f"a round trip waited {max(took):.2f} s while nft hung\n{log_text(w)}"
    m = a.expect(r"session s interrupted (\d+) (.*)", timeout=20, what="interrupted(integrity) at the check's bound")
    waited = time.monotonic() - began
    assert int(m.group(1)) == INTEGRITY, a.lines
    assert "network" in m.group(2) and "5.0 s" in m.group(2), f"the message must say the check did not finish: {m.group(2)!r}"
    # The first check starts 1 s after began and is killed 5 s later.
    assert waited >= 5.5, f"interrupted after {waited:.1f} s, before the check's bound"
    # Interrupted is not the end: restrictions stay until the app ends the session.
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not slow_netns.table_exists(), 5), "the table outlived the session"
    # The hung listing was killed: none of its processes is left.
    pids = [int(p) for p in slow_netns.mark.read_text().split()]
    assert h.wait_until(lambda: not any(Path(f"/proc/{p}").exists() for p in pids), 5), \
        f"the hung nft (pids {pids}) outlived the check"
    w.alive()


def test_a_slow_privileged_helper_holds_up_no_round_trip_and_the_session_goes_on(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, tmp_path):
    directory, mark = slow_nft(tmp_path, 3)
    # The helper's own nft (its verify and revert list the table first) is the slow one.
    machine.start_helper(path=slow_path(directory))
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine)
    a = begin_session(w)
    took = round_trips(a, 8.0)
    listings = mark.read_text().split() if mark.exists() else []
    assert len(listings) >= 2, f"the helper never listed the table through the slow nft\n{w.log()}"
    assert max(took) < 1.5, (f"a round trip waited {max(took):.2f} s while the helper listed the table "
                             f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{w.log()}")
    assert not a.matching(r"session s interrupted .*"), f"slow but correct answers interrupted the session\n{w.log()}"
    assert machine.ns.table_exists()
    a.send("end s")
    a.expect("session s ended", timeout=20)
    assert h.wait_until(lambda: not machine.ns.table_exists(), 10), "the table outlived the session"
    w.alive()


def test_a_media_player_slow_to_answer_holds_up_no_round_trip(carrel, procs, logdir, logs, tmp_path, client_python,
                                                               pywayland_protocols, session_bus):
    player = Player(procs, logdir, session_bus.address, "slow")
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, session_bus.address,
                    verify_ms=300)
    a = begin_session(w)
    assert h.wait_until(lambda: player.count("pause") == 1, 5), player.lines()
    # Under the calls' 2 s bound: slow, not failed.
    player.stall(1.5)
    before = player.count("get")
    took = round_trips(a, 6.0)
    assert player.count("get") - before >= 2, f"no verify asked the player during the round trips: {player.lines()}"
    assert max(took) < 0.75, (f"a round trip waited {max(took):.2f} s while the player took 1.5 s to answer "
                              f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{log_text(w)}")
    assert not any("interrupted" in line for line in a.lines), \
        f"a slow but answering player interrupted the session: {a.lines}\n{log_text(w)}"
    player.play(quietly=True)
    assert h.wait_until(lambda: player.count("pause") == 2, 10), f"verify did not pause it: {player.lines()}"
    a.send("end s")
    a.expect("session s ended")
    w.alive()


def report(took: list[float]) -> None:
    """Says the longest round trip (seen with pytest -s): the figure the README quotes."""
    print(f"\nlongest round trip {max(took) * 1000:.0f} ms (median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})")


def began_during(exam, seconds: float) -> list[float]:
    """Asks for a session, then measures round trips for `seconds` while
    its begin is under way; how long each took."""
    exam.map()
    exam.bind()
    exam.begin()
    return round_trips(exam, seconds)


def pids_gone(mark: Path) -> bool:
    pids = [int(p) for p in mark.read_text().split()] if mark.exists() else []
    return not any(Path(f"/proc/{p}").exists() for p in pids)


@pytest.mark.parametrize("slow_netns", [(3, "-f")], indirect=True)
def test_a_slow_ruleset_load_at_begin_holds_up_no_round_trip_and_the_session_begins(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns):
    start_server(slow_netns, procs, logdir)
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns)
    a = w.client("exam")
    asked = time.monotonic()
    took = began_during(a, 2.5)
    a.began()
    waited = time.monotonic() - asked
    assert slow_netns.mark.exists(), f"carrel never loaded its ruleset through the slow nft\n{log_text(w)}"
    # The load took 3 s; a loop that waited for it would hold a round trip that long.
    assert max(took) < 1.0, (f"a round trip waited {max(took):.2f} s while nft loaded the ruleset "
                             f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{log_text(w)}")
    assert waited >= 3.0, f"began after {waited:.1f} s, before the ruleset was loaded"
    assert slow_netns.table_exists(), "began without the table"
    assert w.app_connect() == "ok", "the session's app lost the network"
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not slow_netns.table_exists(), 5), "the table outlived the session"
    w.alive()


@pytest.mark.parametrize("slow_netns", [(60, "-f")], indirect=True)
def test_a_hung_ruleset_load_fails_the_begin_at_its_bound_and_leaves_nothing_applied(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns):
    start_server(slow_netns, procs, logdir)
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns)
    a = w.client("exam")
    asked = time.monotonic()
    took = began_during(a, 4.0)
    assert max(took) < 1.0, f"a round trip waited {max(took):.2f} s while nft hung\n{log_text(w)}"
    m = a.expect(r"session s (began|failed (\d+) (.*))", timeout=20, what="failed(restriction_failed) at the load's bound")
    waited = time.monotonic() - asked
    assert m.group(1) != "began", f"began without its ruleset\n{log_text(w)}"
    assert int(m.group(2)) == RESTRICTION_FAILED, a.lines
    assert "network" in m.group(3) and "5.0 s" in m.group(3), f"the message must say the load did not finish: {m.group(3)!r}"
    assert 5.0 <= waited < 9.0, f"failed after {waited:.1f} s, not at the load's 5 s bound"
    assert h.wait_until(lambda: not slow_netns.table_exists(), 5), "a failed begin left the table"
    assert h.wait_until(lambda: pids_gone(slow_netns.mark), 5), "the hung nft outlived its bound"
    # Carrel still answers, and nothing of the session holds: the app keeps its network.
    round_trips(a, 0.3)
    assert w.app_connect() == "ok"
    w.alive()


@pytest.mark.parametrize("slow_netns", [(3, "delete")], indirect=True)
def test_an_end_while_the_table_delete_is_slow_ends_at_once_and_holds_up_nothing(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns):
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow_netns)
    a = begin_session(w)
    assert slow_netns.table_exists()
    asked = time.monotonic()
    a.send("end s")
    a.expect("session s ended")
    ended = time.monotonic() - asked
    took = round_trips(a, 2.5)
    assert slow_netns.mark.exists(), f"carrel never deleted its table through the slow nft\n{log_text(w)}"
    assert ended < 1.0, f"ended {ended:.2f} s after the end was asked, waiting for nft's delete\n{log_text(w)}"
    assert max(took) < 1.0, f"a round trip waited {max(took):.2f} s while nft deleted the table\n{log_text(w)}"
    state = w.state_dir / "providers.state"
    if slow_netns.table_exists():
        # A crash now must still find the table to revert on record.
        assert state.exists(), "the record went before the table's delete was done"
    assert h.wait_until(lambda: not slow_netns.table_exists(), 10), "the table outlived the session"
    assert h.wait_until(lambda: not state.exists(), 5), "the record outlived the table's delete"
    # The next begin's load comes after the delete: the new session holds its table.
    a.begin("s2")
    a.began("s2")
    assert slow_netns.table_exists(), "the second session began without its table"
    a.send("end s2")
    a.expect("session s2 ended")
    w.alive()


def test_a_hung_load_through_the_privileged_helper_fails_the_begin_and_holds_up_nothing(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, tmp_path):
    directory, mark = slow_nft(tmp_path, 60, hang=True, on="-f")
    # The helper's own nft (its load) hangs; the helper kills it at its 5 s bound and answers.
    machine.start_helper(path=slow_path(directory))
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine)
    a = w.client("exam")
    asked = time.monotonic()
    took = began_during(a, 4.0)
    assert max(took) < 1.0, f"a round trip waited {max(took):.2f} s while the helper's nft hung\n{w.log()}"
    m = a.expect(r"session s (began|failed (\d+) (.*))", timeout=20, what="failed(restriction_failed)")
    waited = time.monotonic() - asked
    assert m.group(1) != "began", f"began without its ruleset\n{w.log()}"
    assert int(m.group(2)) == RESTRICTION_FAILED, a.lines
    assert "network" in m.group(3), m.group(3)
    assert 5.0 <= waited < 15.0, f"failed after {waited:.1f} s"
    assert h.wait_until(lambda: not machine.ns.table_exists(), 10), "a failed begin left the table"
    round_trips(a, 0.3)
    w.alive()


def test_a_media_player_slow_to_pause_at_begin_holds_up_no_round_trip_and_the_session_begins(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, session_bus):
    player = Player(procs, logdir, session_bus.address, "slow")
    # Under the calls' 2 s bound: slow, not failed.
    player.stall_pause(1.5)
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, session_bus.address,
                    verify_ms=300)
    a = w.client("exam")
    took = began_during(a, 1.2)
    a.began()
    assert player.count("pause") >= 1, player.lines()
    assert max(took) < 0.75, (f"a round trip waited {max(took):.2f} s while the player took 1.5 s to pause "
                              f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{log_text(w)}")
    a.send("end s")
    a.expect("session s ended")
    w.alive()


def test_a_media_player_silent_past_its_bound_at_begin_fails_the_begin_and_holds_up_nothing(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, session_bus):
    player = Player(procs, logdir, session_bus.address, "silent")
    player.stall_pause(4)
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, session_bus.address,
                    verify_ms=300)
    a = w.client("exam")
    asked = time.monotonic()
    took = began_during(a, 1.5)
    m = a.expect(r"session s (began|failed (\d+) (.*))", timeout=10, what="failed(restriction_failed) at the call's bound")
    waited = time.monotonic() - asked
    assert max(took) < 0.75, f"a round trip waited {max(took):.2f} s while the player did not answer\n{log_text(w)}"
    assert m.group(1) != "began", f"began though a player was never paused\n{log_text(w)}"
    assert int(m.group(2)) == RESTRICTION_FAILED, a.lines
    assert "media" in m.group(3), m.group(3)
    assert 2.0 <= waited < 4.0, f"failed after {waited:.1f} s, not at the call's 2 s bound"
    round_trips(a, 0.3)
    w.alive()


def slow_session_bus(procs, logdir, tmp_path: Path, delay: float) -> tuple[str, str]:
    """A private bus daemon and, in front of it, slow_bus_proxy.py holding
    its answers to each connection for `delay` seconds: the daemon's
    address (for the players) and the proxy's (for Carrel)."""
    if subprocess.run([SYSTEM_PYTHON, "-c", "import dbus, gi"], capture_output=True).returncode != 0:
        pytest.skip("python3-dbus and python3-gi are not installed (meson-helpers/packages.sh installs them)")
    daemon_path, proxy_path = tmp_path / "bus", tmp_path / "slow-bus"
    daemon = procs.spawn("dbus-daemon-path", [tool("dbus-daemon"), "--session", "--nofork",
                                              f"--address=unix:path={daemon_path}"], env=h.clean_env())
    assert h.wait_until(daemon_path.exists, 10), f"dbus-daemon did not listen (exit {daemon.poll()})"
    out = logdir / "slow-bus.stdout"
    with open(out, "wb") as o:
        procs.spawn("slow-bus", [SYSTEM_PYTHON, HERE / "slow_bus_proxy.py", proxy_path, daemon_path, str(delay)],
                    env=h.clean_env(), stdout=o, stderr=subprocess.STDOUT)
    assert h.wait_until(lambda: "ready" in out.read_text(), 10), out.read_text()
    return f"unix:path={daemon_path}", f"unix:path={proxy_path}"


def test_a_session_bus_slow_to_let_carrel_in_at_begin_holds_up_no_round_trip_and_the_session_begins(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    bus, slow = slow_session_bus(procs, logdir, tmp_path, 1.5)
    player = Player(procs, logdir, bus, "behind-slow-bus")
    # Under the 2 s bound: slow, not failed.
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, slow, verify_ms=300)
    a = w.client("exam")
    asked = time.monotonic()
    took = began_during(a, 2.5)
    report(took)
    a.began()
    waited = time.monotonic() - asked
    assert max(took) < 0.75, (f"a round trip waited {max(took):.2f} s while the session bus took 1.5 s to answer "
                              f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{log_text(w)}")
    assert waited >= 1.5, f"began after {waited:.1f} s, before the session bus let carrel in"
    assert player.count("pause") >= 1, f"began without pausing the player: {player.lines()}"
    a.send("end s")
    a.expect("session s ended")
    w.alive()


def test_a_session_bus_silent_past_its_bound_at_begin_fails_the_begin_and_holds_up_nothing(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    bus, silent = slow_session_bus(procs, logdir, tmp_path, 60)
    Player(procs, logdir, bus, "behind-silent-bus")
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, silent, verify_ms=300)
    a = w.client("exam")
    asked = time.monotonic()
    took = began_during(a, 1.5)
    report(took)
    m = a.expect(r"session s (began|failed (\d+) (.*))", timeout=40, what="failed(restriction_failed) at the bus's bound")
    waited = time.monotonic() - asked
    assert max(took) < 0.75, f"a round trip waited {max(took):.2f} s while the session bus did not answer\n{log_text(w)}"
    assert m.group(1) != "began", f"began though no player could be paused\n{log_text(w)}"
    assert int(m.group(2)) == RESTRICTION_FAILED, a.lines
    assert "media" in m.group(3) and "session bus" in m.group(3), m.group(3)
    assert 2.0 <= waited < 4.0, f"failed after {waited:.1f} s, not at the bus's 2 s bound"
    round_trips(a, 0.3)
    w.alive()


@pytest.fixture
def reload_netns(request, tmp_path):
    """A namespace whose `nft -f` (a load) waits `request.param` seconds
    (hangs past 5) once the test creates the file `ns.armed`: the load at
    begin is quick, the verify's reload is slow."""
    seconds = request.param
    directory = tmp_path / "slow-nft"
    directory.mkdir()
    mark, armed = tmp_path / "slow-reload", tmp_path / "armed"
    wait = f"exec sleep {seconds}" if seconds > 5 else f"sleep {seconds}"
    (directory / "nft").write_text("#!/bin/sh\n"
                                   f'if [ "$1" = "-f" ] && [ -e {armed} ]; then echo "$$" >> {mark}; {wait}; fi\n'
                                   f'exec {tool("nft")} "$@"\n')
    (directory / "nft").chmod(0o755)
    ns = Namespace(tmp_path, carrel_prefix=f"env PATH={slow_path(directory)} ")
    ns.mark, ns.armed = mark, armed
    yield ns
    ns.delete()


def restart_a_seat_service(w, ns, procs, tmp_path):
    """Begins a session under a policy naming a seat service, then starts
    that service (a new cgroup, as a restart makes) with nft's loads made
    slow: the unit, and when it started."""
    tag = f"{os.getpid()}-{tmp_path.name[-8:]}"
    a = begin_session(w)
    assert ns.table_exists()
    ns.armed.write_text("")
    unit = FakeUnit(ns, f"carrel-test-seat-{tag}.service")
    return a, unit, time.monotonic()


def seat_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, ns) -> NetWorld:
    tag = f"{os.getpid()}-{tmp_path.name[-8:]}"
    policy = tmp_path / "policy.toml"
    policy.write_text('[providers]\nnetwork = true\nverify_interval_ms = 200\n'
                      f'network_exempt_units = ["carrel-test-seat-{tag}.service"]\n')
    return NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, ns,
                    args=("--policy", str(policy)))


@pytest.mark.parametrize("reload_netns", [3], indirect=True)
def test_a_slow_reload_for_a_restarted_seat_service_holds_up_no_round_trip_and_lets_it_through(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, reload_netns):
    start_server(reload_netns, procs, logdir)
    w = seat_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, reload_netns)
    unit = None
    try:
        a, unit, started = restart_a_seat_service(w, reload_netns, procs, tmp_path)
        took = round_trips(a, 4.5)
        report(took)
        assert reload_netns.mark.exists(), f"carrel never loaded its ruleset again for the new service\n{log_text(w)}"
        # The reload took 3 s; a loop that waited for it would hold a round trip that long.
        assert max(took) < 1.0, (f"a round trip waited {max(took):.2f} s while nft reloaded the ruleset "
                                 f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{log_text(w)}")
        assert h.wait_until(lambda: unit.connect() == "ok", 5, interval=0.3), \
            f"the restarted service never got its network\n{log_text(w)}"
        assert not a.matching(r"session s interrupted .*"), f"a slow but good reload interrupted the session\n{log_text(w)}"
        a.send("end s")
        a.expect("session s ended")
        assert h.wait_until(lambda: not reload_netns.table_exists(), 10), "the table outlived the session"
        w.alive()
    finally:
        procs.end_all()
        if unit:
            unit.remove()


@pytest.mark.parametrize("reload_netns", [60], indirect=True)
def test_a_hung_reload_for_a_restarted_seat_service_interrupts_the_session_at_its_bound_and_holds_up_nothing(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, reload_netns):
    w = seat_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, reload_netns)
    unit = None
    try:
        a, unit, started = restart_a_seat_service(w, reload_netns, procs, tmp_path)
        took = round_trips(a, 4.0)
        report(took)
        assert reload_netns.mark.exists(), f"carrel never loaded its ruleset again for the new service\n{log_text(w)}"
        assert max(took) < 1.0, (f"a round trip waited {max(took):.2f} s while nft hung reloading the ruleset "
                                 f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{log_text(w)}")
        m = a.expect(r"session s interrupted (\d+) (.*)", timeout=20, what="interrupted(integrity) at the reload's bound")
        waited = time.monotonic() - started
        assert int(m.group(1)) == INTEGRITY, a.lines
        assert "network" in m.group(2) and "5.0 s" in m.group(2), f"the message must say the reload did not finish: {m.group(2)!r}"
        assert waited >= 5.0, f"interrupted after {waited:.1f} s, before the reload's bound"
        a.send("end s")
        a.expect("session s ended")
        assert h.wait_until(lambda: not reload_netns.table_exists(), 10), "the table outlived the session"
        assert h.wait_until(lambda: pids_gone(reload_netns.mark), 5), "the hung nft outlived its bound"
        w.alive()
    finally:
        procs.end_all()
        if unit:
            unit.remove()


def slow_helper_proxy(procs, logdir, machine, delay: float, what: str, skip: int = 0) -> Path:
    """slow_helper_proxy.py in front of the running helper, as Carrel's
    user; `machine.socket` (carrel's --privileged-helper) is the proxy's
    from now on. The proxy's output."""
    # A copy Carrel's user can read, and a socket in a directory of its own.
    proxy = machine.carrel_dir / "slow_helper_proxy.py"
    proxy.write_bytes((HERE / "slow_helper_proxy.py").read_bytes())
    listen = machine.carrel_dir / "slow-helper.sock"
    out = logdir / "slow-helper.stdout"
    user = machine.carrel_user
    with open(out, "wb") as o:
        procs.spawn("slow-helper", ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups",
                                    SYSTEM_PYTHON, proxy, listen, machine.socket, what, str(delay), str(skip)],
                    env=h.clean_env(), stdout=o, stderr=subprocess.STDOUT)
    assert h.wait_until(lambda: "ready" in out.read_text(), 10), out.read_text()
    machine.socket = listen
    return out


def slow_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols,
                      delay: float, what: str = "participant", skip: int = 0, policy_text: str | None = None,
                      helper_args: tuple[str, ...] = ()) -> tuple[PrivilegedWorld, Path]:
    """The helper behind slow_helper_proxy.py, which holds a participant's
    spawn (`what`: or another role's, or every signal) `delay` seconds, the
    first `skip` of them let through at once; carrel (policy: `policy_text`,
    else participant `calc`, the paint client) talks to the proxy. The
    world, and the proxy's output."""
    machine.start_helper(*helper_args)
    out = slow_helper_proxy(procs, logdir, machine, delay, what, skip)
    policy = machine.carrel_dir / "policy.toml"
    policy.write_text(policy_text or ("[participants.calc]\n"
                                      f"command = [\"{h.paint_bin()}\", \"--color\", \"33cc66\"]\n"
                                      "network = true\n"))
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine,
                        args=["--policy", str(policy)])
    return w, out


def begin_with_participant(a) -> None:
    a.map()
    a.bind(version=2)
    a.send("config c ; participant c calc")
    a.begin(config="c")


def test_a_participant_the_helper_is_slow_to_start_holds_up_no_round_trip_and_the_session_begins(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    w, out = slow_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, 3)
    a = w.client("exam")
    asked = time.monotonic()
    begin_with_participant(a)
    took = round_trips(a, 2.5)
    report(took)
    a.began()
    waited = time.monotonic() - asked
    assert "held participant" in out.read_text(), f"the participant's spawn never reached the helper\n{w.log()}"
    # The helper answered after 3 s; a loop that waited for it would hold a round trip that long.
    assert max(took) < 1.0, (f"a round trip waited {max(took):.2f} s while the helper took 3 s to start the participant "
                             f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{w.log()}")
    assert waited >= 3.0, f"began after {waited:.1f} s, before the helper started the participant"
    assert "launched participant calc" in w.log(), w.log()
    a.send("end s")
    a.expect("session s ended", timeout=20)
    w.alive()


def test_a_participant_the_helper_never_starts_fails_the_begin_at_its_bound_and_holds_up_nothing(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    w, out = slow_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, 60)
    a = w.client("exam")
    asked = time.monotonic()
    begin_with_participant(a)
    took = round_trips(a, 4.0)
    report(took)
    m = a.expect(r"session s (began|failed (\d+) (.*))", timeout=30, what="failed(participant_unavailable) at the helper's bound")
    waited = time.monotonic() - asked
    assert max(took) < 1.0, f"a round trip waited {max(took):.2f} s while the helper did not answer\n{w.log()}"
    assert m.group(1) != "began", f"began without its participant\n{w.log()}"
    assert int(m.group(2)) == PARTICIPANT_UNAVAILABLE, a.lines
    assert "participant calc" in m.group(3) and "12.0 s" in m.group(3), m.group(3)
    assert 12.0 <= waited < 20.0, f"failed after {waited:.1f} s, not at the helper's 12 s bound"
    round_trips(a, 0.3)
    w.alive()


def test_an_end_while_the_helper_is_slow_to_kill_a_participant_ends_at_once_and_holds_up_nothing(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    w, out = slow_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, 3, what="signal")
    a = w.client("exam")
    begin_with_participant(a)
    a.began()
    asked = time.monotonic()
    a.send("end s")
    a.expect("session s ended", timeout=20)
    ended = time.monotonic() - asked
    took = round_trips(a, 2.5)
    report(took + [ended])  # the end's own answer counts as a round trip
    assert "held signal" in out.read_text(), f"the participant's kill never went through the helper\n{w.log()}"
    # The helper answered the kill after 3 s; an end that waited for it would take that long.
    assert ended < 1.0, f"ended {ended:.2f} s after the end was asked, waiting for the helper's answer to the kill\n{w.log()}"
    assert max(took) < 1.0, f"a round trip waited {max(took):.2f} s while the helper held the kill\n{w.log()}"
    # The kill still reaches the helper once the proxy lets it through: the participant goes.
    assert h.wait_until(lambda: not any("participant-calc" in c for c in machine.session_cgroups()), 15), \
        f"the participant outlived its session: {machine.session_cgroups()}\n{w.log()}"
    w.alive()


# An engine that ignores fcitx5's addon options (they follow the script as
# its $0, $1) and ends with SIGTERM.
ENGINE_POLICY = '[input_method]\ncommand = ["/bin/sh", "-c", "exec sleep 600"]\n'


def engine_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols,
                        delay: float, what: str = "input_method", skip: int = 1) -> tuple[PrivilegedWorld, Path]:
    """slow_helper_world with the input method as the policy's (started by
    the helper as an account of its own), the engine's first start let
    through when `what` is its spawn; the engine is running when it returns."""
    account("carrel-input")
    w, out = slow_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, delay,
                               what=what, skip=skip, policy_text=ENGINE_POLICY,
                               helper_args=("--input-method-user", "carrel-input"))
    assert h.wait_until(lambda: engine_launches(w) == 1, 10), f"the engine never started\n{w.log()}"
    return w, out


def engine_launches(w) -> int:
    return w.log().count("launched input method")


def test_an_engine_the_helper_is_slow_to_restart_holds_up_no_round_trip_and_it_runs(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    w, out = engine_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, 3)
    a = w.client("exam")
    a.map()
    a.bind()
    asked = time.monotonic()
    # No predictive_text: the begin restarts the engine; the helper holds its new start 3 s.
    a.begin()
    took = round_trips(a, 4.0)
    report(took)
    a.began()
    assert "held input_method" in out.read_text(), f"the engine's new start never reached the helper\n{w.log()}"
    # A loop that waited for the helper's answer would hold a round trip 3 s.
    assert max(took) < 1.0, (f"a round trip waited {max(took):.2f} s while the helper took 3 s to start the engine "
                             f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{w.log()}")
    assert h.wait_until(lambda: engine_launches(w) == 2, 10), f"the engine was not started again\n{w.log()}"
    assert time.monotonic() - asked >= 3.0
    assert not a.matching(r"session s interrupted .*"), f"a slow but good start interrupted the session\n{w.log()}"
    a.send("end s")
    a.expect("session s ended", timeout=20)
    w.alive()


def test_an_engine_the_helper_never_restarts_reaches_the_links_bound_and_holds_up_nothing(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    w, out = engine_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, 60)
    a = w.client("exam")
    a.map()
    a.bind()
    asked = time.monotonic()
    a.begin()
    took = round_trips(a, 4.0)
    report(took)
    a.began()
    m = a.expect(r"session s interrupted (\d+) (.*)", timeout=30, what="interrupted(integrity) at the helper's bound")
    waited = time.monotonic() - asked
    assert "held input_method" in out.read_text(), f"the engine's new start never reached the helper\n{w.log()}"
    assert max(took) < 1.0, f"a round trip waited {max(took):.2f} s while the helper did not answer\n{w.log()}"
    assert int(m.group(1)) == INTEGRITY, a.lines
    assert "12.0 s" in m.group(2), m.group(2)
    assert 12.0 <= waited < 20.0, f"interrupted after {waited:.1f} s, not at the helper's 12 s bound"
    # The start failed as a launch that failed: relaunched after a back-off.
    failed = re.compile(r"input method: the engine ended \(could not launch: .*12\.0 s.*\); relaunching in")
    assert h.wait_until(lambda: failed.search(w.log()), 5), w.log()
    round_trips(a, 0.3)
    w.alive()


def test_a_slow_answer_to_the_engines_sigterm_holds_up_nothing_at_begin_or_end(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    w, out = engine_helper_world(carrel, procs, logdir, logs, machine, client_python, pywayland_protocols, 3,
                                 what="signal", skip=0)
    a = w.client("exam")
    a.map()
    a.bind()
    # The begin restarts the engine: its SIGTERM goes through the helper, which answers 3 s late.
    a.begin()
    took = round_trips(a, 4.0)
    a.began()
    assert "held signal" in out.read_text(), f"the engine's SIGTERM never went through the helper\n{w.log()}"
    assert h.wait_until(lambda: engine_launches(w) == 2, 15), f"the engine was not started again\n{w.log()}"
    # The end turns prediction back on: the same again.
    asked = time.monotonic()
    a.send("end s")
    a.expect("session s ended", timeout=20)
    ended = time.monotonic() - asked
    took += round_trips(a, 4.0) + [ended]
    report(took)
    assert out.read_text().count("held signal") >= 2, f"the end's SIGTERM never went through the helper\n{w.log()}"
    assert max(took) < 1.0, (f"a round trip waited {max(took):.2f} s while the helper held the engine's SIGTERM "
                             f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{w.log()}")
    assert h.wait_until(lambda: engine_launches(w) == 3, 15), f"the engine was not started again\n{w.log()}"
    w.alive()


def test_a_slow_answer_to_the_apps_sigterm_at_a_forced_end_holds_up_nothing(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    """As test_privileged's forced end: the session's owner is the app the
    helper started (the assessment client on WAYLAND_SOCKET); after the
    notice its SIGTERM goes through the helper, which answers 3 s late."""
    from carrel_clients import CLIENT, Driver, ctl_bin
    from test_privileged import FifoProcess
    machine.start_helper()
    out = slow_helper_proxy(procs, logdir, machine, 3, "signal")
    protocols = machine.shared / "protocols"
    shutil.copytree(pywayland_protocols, protocols)
    for path in [protocols, *protocols.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    fifo_in, fifo_out = machine.app_dir / "stdin", machine.app_dir / "stdout"
    for fifo in (fifo_in, fifo_out):
        os.mkfifo(fifo, 0o600)
        os.chown(fifo, machine.exam.pw_uid, machine.exam.pw_gid)
    pipes = FifoProcess(fifo_in, fifo_out)
    control = machine.carrel_dir / "control.sock"
    with h.carrel_bin_replaced(machine.wrapper):
        c = carrel.start(app=["sh", "-c", 'exec "$0" "$1" < "$2" > "$3"', client_python, CLIENT, fifo_in, fifo_out],
                         args=["--privileged-helper", str(machine.socket), "--control-socket", str(control)],
                         env={"CARREL_PYWAYLAND_PROTOCOLS": str(protocols), "PYTHONUNBUFFERED": "1"},
                         audit_log=machine.carrel_dir / "audit.jsonl")
    transcript = logdir / "helper-app.transcript"
    logs.append(("the helper's app transcript", transcript))
    a = Driver("helper-app", pipes, logdir / "helper-app.stderr", transcript)
    try:
        a.expect("ready", what="the app connected through WAYLAND_SOCKET")
        a.map()
        a.bind()
        a.begin()
        a.began()
        r = subprocess.run([str(ctl_bin()), "--socket", str(control), "end", "--reason", "app hangs", "--force"],
                           capture_output=True, text=True, timeout=15, env=h.clean_env())
        assert r.returncode == 0, r.stdout + r.stderr
        a.expect("session s ended", what="ended after end --force")
        # The notice (1 s), then the SIGTERM the proxy holds 3 s. The app
        # ends (and carrel with it) about 4 s after the end: the round trips
        # go through the control socket, whose client outlives it, and stop
        # before then.
        took = control_round_trips(control, 3.0)
        report(took)
        assert "held signal" in out.read_text(), f"the app's SIGTERM never went through the helper\n{c.evidence()}"
        assert max(took) < 1.0, (f"a round trip waited {max(took):.2f} s while the helper held the app's SIGTERM "
                                 f"(median {sorted(took)[len(took) // 2] * 1000:.1f} ms over {len(took)})\n{c.evidence()}")
        # The SIGTERM still reaches the app: it ends, and so does carrel (no kiosk).
        assert c.wait_exit() == 128 + signal.SIGTERM, c.evidence()
    finally:
        pipes.close()


def control_round_trips(control: Path, seconds: float) -> list[float]:
    """`carrelctl status` one after another for `seconds`, each answered
    from carrel's loop: how long each took (carrelctl's own start included)."""
    from carrel_clients import ctl_bin
    took = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        start = time.monotonic()
        r = subprocess.run([str(ctl_bin()), "--socket", str(control), "status"],
                           capture_output=True, text=True, timeout=30, env=h.clean_env())
        took.append(time.monotonic() - start)
        assert r.returncode == 0, r.stdout + r.stderr
        time.sleep(0.05)
    return took
