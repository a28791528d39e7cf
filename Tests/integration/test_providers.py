"""Restriction providers (network, media) against the real binary.

network: for real, inside a network namespace each test creates (`ip netns`),
with carrel started through `ip netns exec NS unshare -m` and a cgroup v2
hierarchy mounted on /sys/fs/cgroup inside that mount namespace (nftables
resolves cgroup paths there). A TCP server listens on the namespace's
loopback; carrel's app is netprobe.py, which connects when the test asks it
through a FIFO, from the cgroup carrel launched it into; "outside" is a
process the test starts in the namespace. The session itself is begun by the
pywayland assessment client on the app socket (see test_assessment.py), or,
for an app-requested lock, by that client run under an allowlisted copy of the
interpreter inside the namespace: then only its process keeps the network.

media: a fake MPRIS player (fake_mpris_player.py, Debian's python3-dbus) on a
private session bus (`dbus-daemon --session`) started by the test.

Everything here needs root (netns, nftables, cgroups); without it the tests skip.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import INTEGRITY, RESTRICTION_FAILED, lock_only
from carrel_clients import World
from media_bus import Player, media_world
from netns import (MOUNT_CGROUP2, NETPROBE, PORT, SYSTEM_PYTHON, FakeUnit, Namespace, NetWorld, app_connect, begin_session,
                   log_text, run, start_server, tool)

HERE = Path(__file__).resolve().parent
PLAYER = HERE / "fake_mpris_player.py"


pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="restriction providers need root "
                                "(network namespaces, nftables, cgroups)")


@pytest.fixture
def netns(tmp_path):
    ns = Namespace(tmp_path)
    yield ns
    ns.delete()


# ---------------------------------------------------------------------------
# network


def test_network_only_the_app_connects_during_a_session(carrel, procs, logdir, logs, tmp_path,
                                                        client_python, pywayland_protocols, netns):
    start_server(netns, procs, logdir)
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns)
    assert netns.outside_connect() == "ok", "before the session everyone connects"
    assert w.app_connect() == "ok"
    assert not netns.table_exists(), "nothing is restricted before a session"

    a = begin_session(w)
    assert netns.table_exists(), f"began without carrel's nftables table\n{log_text(w)}"
    outside = netns.outside_connect()
    assert outside.startswith("fail"), f"a process outside the session connected: {outside}"
    assert w.app_connect() == "ok", "the session's app must keep its network"
    assert (w.state_dir / "providers.state").read_text().splitlines()[1].startswith("network\t")

    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not netns.table_exists(), 5), "the table outlived the session"
    assert netns.outside_connect() == "ok", "after ended everyone connects again"
    assert w.app_connect() == "ok"
    # The record goes right after the table, in the same turn of carrel's loop.
    assert h.wait_until(lambda: not (w.state_dir / "providers.state").exists(), 5), \
        "state file left after revert"
    w.alive()


def test_network_follows_the_owner_of_an_app_requested_lock(carrel, procs, logdir, logs, tmp_path,
                                                            client_python, pywayland_protocols, netns,
                                                            exam_python):
    """An allowlisted untrusted client locks (app-requested lock): during the
    lock its own process reaches the loopback server and the launched app,
    hidden, does not; afterwards the client is back in its own cgroup."""
    start_server(netns, procs, logdir)
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns,
                 args=("--provider", "network", "--app-lock-allow", str(exam_python)))
    site = run([client_python, "-c", "import pywayland, os; "
                "print(os.path.dirname(os.path.dirname(pywayland.__file__)))"]).stdout.strip()
    # The allowlisted interpreter, exec'd inside the namespace (same pid all along,
    # so carrel reads the allowlisted executable from /proc/PID/exe).
    in_netns = tmp_path / "exam-python-in-netns"
    in_netns.write_text(f"#!/bin/sh\nexec {netns.ip} netns exec {netns.name} {exam_python} \"$@\"\n")
    in_netns.chmod(0o755)
    ordinary, w.python = w.python, str(in_netns)
    untrusted_env = w.env
    w.env = lambda role: {**untrusted_env(role), "PYTHONPATH": site}
    try:
        exam = w.client("exam", role="untrusted")
    finally:
        w.python, w.env = ordinary, untrusted_env
    exam_cgroup = Path(f"/proc/{exam.proc.pid}/cgroup").read_text().split("0::", 1)[1].split()[0]

    def exam_connect(tag) -> str:
        exam.send(f"connect {PORT} {tag}")
        return exam.expect(rf"connect {tag} (.*)", what=f"the exam client's connection {tag}").group(1)

    assert exam_connect("before") == "ok" and w.app_connect() == "ok", "before the lock everyone connects"
    exam.map()
    exam.bind()
    lock_only(exam)
    exam.begin("s", "c")
    exam.began("s")
    assert netns.table_exists(), f"began without carrel's nftables table\n{log_text(w)}"
    owner_cgroup = Path(f"/proc/{exam.proc.pid}/cgroup").read_text()
    assert "-owner" in owner_cgroup, f"the locking client was not moved into the owner's cgroup: {owner_cgroup}"
    during = exam_connect("during")
    assert during == "ok", f"the client owning the lock lost its network: {during}\n{log_text(w)}"
    app = w.app_connect()
    assert app.startswith("fail"), f"the launched app, hidden by another client's lock, connected: {app}"
    outside = netns.outside_connect()
    assert outside.startswith("fail"), f"a process outside the session connected: {outside}"
    exam.sync()
    assert not exam.matching(r"session s interrupted .*"), \
        f"verify (every second, several times by now) found the owner's ruleset changed\n{log_text(w)}"

    exam.send("end s")
    exam.expect("session s ended")
    assert h.wait_until(lambda: not netns.table_exists(), 5), "the table outlived the lock"
    back = Path(f"/proc/{exam.proc.pid}/cgroup").read_text().split("0::", 1)[1].split()[0]
    assert back == exam_cgroup, f"the locking client was not moved back to {exam_cgroup}: {back}"
    assert exam_connect("after") == "ok" and w.app_connect() == "ok", "after ended everyone connects"
    w.alive()


def test_network_established_connection_of_another_process_stops(carrel, procs, logdir, logs, tmp_path,
                                                                  client_python, pywayland_protocols, netns):
    """A connection opened before began stops moving once the session holds."""
    # Both ends of one loopback connection live in a process outside the
    # session; each "go" sends a byte one way and reads it the other.
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns)
    holder = subprocess.Popen(
        [netns.ip, "netns", "exec", netns.name, sys.executable, "-c",
         "import socket,sys,time\n"
         "s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(1)\n"
         "c=socket.create_connection(s.getsockname()); p,_=s.accept()\n"
         "print('connected',flush=True)\n"
         "for line in sys.stdin:\n"
         "    c.settimeout(2)\n"
         "    try:\n"
         "        p.sendall(b'x'); print('got', c.recv(1), flush=True)\n"
         "    except OSError as e: print('fail', e, flush=True)\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    procs.tracked.append(h.Tracked("holder", holder, holder.pid, None, True))

    def exchange() -> str:
        holder.stdin.write("go\n")
        holder.stdin.flush()
        ready, _, _ = select.select([holder.stdout], [], [], 8)
        assert ready, "the holder did not answer"
        return holder.stdout.readline().strip()

    assert holder.stdout.readline().strip() == "connected"
    assert exchange() == "got b'x'"
    a = begin_session(w)
    assert exchange().startswith("fail"), "an established connection of another process kept working"
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not netns.table_exists(), 5)
    w.alive()


def test_network_the_seats_own_services_the_policy_names_keep_it(carrel, procs, logdir, logs, tmp_path,
                                                                 client_python, pywayland_protocols, netns):
    """providers.network_exempt_units: a running unit the policy names keeps the
    network beside the app, one it does not name loses it, and a named unit
    that starts during the session is let through by the next verify."""
    start_server(netns, procs, logdir)
    tag = f"{os.getpid()}-{tmp_path.name[-8:]}"
    policy = tmp_path / "policy.toml"
    policy.write_text('[providers]\nnetwork = true\nverify_interval_ms = 100\n'
                      f'network_exempt_units = ["carrel-test-ssh-{tag}.service", "carrel-test-dhcp-{tag}@*.service"]\n')
    named, unnamed = FakeUnit(netns, f"carrel-test-ssh-{tag}.service"), FakeUnit(netns, f"carrel-test-cron-{tag}.service")
    late = None
    try:
        w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns,
                     args=("--policy", str(policy)))
        a = begin_session(w)
        assert netns.table_exists(), f"began without carrel's nftables table\n{log_text(w)}"
        assert named.connect() == "ok", f"the named service lost its network\n{log_text(w)}"
        assert unnamed.connect().startswith("fail"), "a service the policy does not name kept the network"
        assert netns.outside_connect().startswith("fail")
        assert w.app_connect() == "ok"
        late = FakeUnit(netns, f"carrel-test-dhcp-{tag}@eth0.service")
        assert h.wait_until(lambda: late.connect() == "ok", 5, interval=0.3), \
            f"a named unit started during the session never got its network\n{log_text(w)}"
        a.send("end s")
        a.expect("session s ended")
        assert h.wait_until(lambda: not netns.table_exists(), 5)
        w.alive()
    finally:
        procs.end_all()
        for unit in (late, unnamed, named):
            if unit:
                unit.remove()


def test_network_table_removed_mid_session_interrupts_with_integrity(carrel, procs, logdir, logs, tmp_path,
                                                                    client_python, pywayland_protocols, netns):
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns)
    a = begin_session(w)
    netns.exec([netns.nft, "delete", "table", "inet", "carrel"])
    m = a.expect(r"session s interrupted (\d+) (.*)", what="interrupted(integrity) after the table went")
    assert int(m.group(1)) == INTEGRITY, a.lines
    assert "network" in m.group(2), f"the message must name the provider: {m.group(2)!r}"
    w.alive()


def test_network_without_cgroup2_fails_closed(carrel, procs, logdir, logs, tmp_path,
                                              client_python, pywayland_protocols):
    ns = Namespace(tmp_path, mount_cgroup2=False)
    try:
        w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, ns)
        a = w.client("exam")
        a.map()
        a.bind()
        a.begin()
        m = a.expect(r"session s (began|failed (\d+) (.*))", what="the answer to begin")
        assert m.group(1) != "began", "began without the network restriction it was asked for"
        assert int(m.group(2)) == RESTRICTION_FAILED, a.lines
        assert "network" in m.group(3) and "cgroup" in m.group(3), m.group(3)
        assert not ns.table_exists()
        w.alive()
    finally:
        ns.delete()


def test_network_without_cap_net_admin_fails_closed(carrel, procs, logdir, logs, tmp_path,
                                                    client_python, pywayland_protocols):
    """Root without CAP_NET_ADMIN (dropped from the bounding set): nft is refused."""
    setpriv = tool("setpriv")
    ns = Namespace(tmp_path, carrel_prefix=f"{setpriv} --bounding-set -net_admin ")
    try:
        w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, ns)
        a = w.client("exam")
        a.map()
        a.bind()
        a.begin()
        m = a.expect(r"session s (began|failed (\d+) (.*))", what="the answer to begin")
        assert m.group(1) != "began", "began without the network restriction it was asked for"
        assert int(m.group(2)) == RESTRICTION_FAILED, a.lines
        assert "network" in m.group(3) and "CAP_NET_ADMIN" in m.group(3), m.group(3)
        assert not ns.table_exists()
        assert not (w.state_dir / "providers.state").exists(), "a failed apply left its record"
        w.alive()
    finally:
        ns.delete()


def test_network_reverted_at_next_start_after_a_crash(carrel, procs, logdir, logs, tmp_path,
                                                      client_python, pywayland_protocols, netns):
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns)
    begin_session(w)
    assert netns.table_exists()
    w.carrel.signal(signal.SIGKILL)
    w.carrel.wait_exit()
    assert netns.table_exists(), "test premise: a crash leaves the table"
    assert (w.state_dir / "providers.state").exists()
    # The crashed run's app is orphaned in the cgroup; once it is gone the
    # next start removes the cgroup too.
    app_pid = int(Path(str(w.record) + ".pid").read_text())
    cgroup = Path(f"/proc/{app_pid}/cgroup").read_text().split("0::/", 1)[1].split()[0]
    assert cgroup.startswith("carrel-"), cgroup
    os.kill(app_pid, signal.SIGKILL)
    assert h.wait_until(lambda: not h.pid_running(app_pid), 5)

    w.start_carrel(carrel, ("--provider", "network"), client_python)
    assert h.wait_until(lambda: "recovered: reverted restriction provider network" in log_text(w), 10), \
        log_text(w)
    assert not netns.table_exists(), "the next start did not revert what the crashed run left"
    gone = netns.exec(["unshare", "-m", "sh", "-c", f"{MOUNT_CGROUP2}test ! -e /sys/fs/cgroup/{cgroup}"],
                      check=False)
    assert gone.returncode == 0, f"the crashed run's cgroup {cgroup} was left behind"
    assert not (w.state_dir / "providers.state").exists()
    w.alive()


def test_network_reverted_when_the_client_disconnects(carrel, procs, logdir, logs, tmp_path,
                                                     client_python, pywayland_protocols, netns):
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns)
    a = begin_session(w)
    assert netns.table_exists()
    a.proc.kill()
    assert h.wait_until(lambda: not netns.table_exists(), 5), "the table outlived the disconnected session"
    assert h.wait_until(lambda: not (w.state_dir / "providers.state").exists(), 5), \
        "state file left after revert"
    w.alive()


def test_network_reverted_on_sigterm(carrel, procs, logdir, logs, tmp_path,
                                     client_python, pywayland_protocols, netns):
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns)
    begin_session(w)
    assert netns.table_exists()
    w.carrel.signal(signal.SIGTERM)
    w.carrel.wait_exit()
    assert not netns.table_exists(), f"SIGTERM left the table\n{log_text(w)}"
    assert not (w.state_dir / "providers.state").exists()
    assert "restriction providers reverted: network" in log_text(w)


# ---------------------------------------------------------------------------
# media


def test_media_players_paused_at_began_and_again_when_they_play(carrel, procs, logdir, logs, tmp_path,
                                                                client_python, pywayland_protocols,
                                                                session_bus):
    """Verify runs only once a minute here: the second pause comes from PropertiesChanged."""
    music, video = Player(procs, logdir, session_bus.address, "music"), \
        Player(procs, logdir, session_bus.address, "video")
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, session_bus.address,
                    verify_ms=60_000)
    assert music.count("pause") == 0
    a = begin_session(w)
    for player in (music, video):
        assert h.wait_until(lambda: player.count("pause") == 1, 5), f"not paused at began: {player.lines()}"
    music.play()
    assert h.wait_until(lambda: music.count("pause") == 2, 5), \
        f"a player that started playing during the session was not paused again: {music.lines()}"
    assert video.count("pause") == 1, "a paused player is left alone"
    a.send("end s")
    a.expect("session s ended")
    music.play()
    time.sleep(1.5)
    assert music.count("pause") == 2, "paused after the session ended"
    assert music.count("play") == 0 and video.count("play") == 0, "carrel resumed a player"
    w.alive()


def test_media_player_playing_without_announcing_it_is_paused_by_verify(carrel, procs, logdir, logs, tmp_path,
                                                                        client_python, pywayland_protocols,
                                                                        session_bus):
    player = Player(procs, logdir, session_bus.address, "quiet")
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, session_bus.address,
                    verify_ms=300)
    a = begin_session(w)
    assert h.wait_until(lambda: player.count("pause") == 1, 5), player.lines()
    player.play(quietly=True)
    assert h.wait_until(lambda: player.count("pause") == 2, 5), \
        f"verify did not pause a player found playing: {player.lines()}"
    a.send("end s")
    a.expect("session s ended")
    player.play(quietly=True)
    time.sleep(1.0)  # several verify periods
    assert player.count("pause") == 2, "verified after the session ended"
    w.alive()


def test_media_bus_lost_mid_session_interrupts_with_integrity(carrel, procs, logdir, logs, tmp_path,
                                                              client_python, pywayland_protocols, session_bus):
    player = Player(procs, logdir, session_bus.address, "lost")
    w = media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                    session_bus.address, verify_ms=300)
    a = begin_session(w)
    assert h.wait_until(lambda: player.count("pause") == 1, 5), player.lines()
    session_bus.proc.kill()
    m = a.expect(r"session s interrupted (\d+) (.*)", what="interrupted(integrity) after the bus went")
    assert int(m.group(1)) == INTEGRITY and "media" in m.group(2), m.group(0)
    # Carrel must not spin on the dead connection while the session stays interrupted.
    before = sum(int(x) for x in Path(f"/proc/{w.carrel.pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
    time.sleep(1.0)
    after = sum(int(x) for x in Path(f"/proc/{w.carrel.pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
    assert after - before < 50, f"carrel used {after - before} clock ticks in 1 s while idle"
    a.send("end s")
    a.expect("session s ended")
    w.alive()
    # The audit log has the failed verify, before the interruption it caused.
    events = audit_events(w)
    failed = [i for i, e in enumerate(events) if e[0] == "provider_failed"]
    interrupted = [i for i, e in enumerate(events) if e[0] == "interrupted"]
    assert failed and events[failed[0]][1] == "verify" and "media" in events[failed[0]][2], events
    assert interrupted and failed[0] < interrupted[0], events


def audit_events(w) -> list:
    """The carrel's audit records, (event, reason, detail)."""
    import json
    return [(r["event"], r.get("reason"), r.get("detail", ""))
            for r in map(json.loads, Path(w.carrel.audit_log).read_text().splitlines())]


def test_media_without_a_session_bus_fails_closed(carrel, procs, logdir, logs, tmp_path,
                                                  client_python, pywayland_protocols):
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              env={"DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"},
              args=("--provider", "media", "--provider-state-dir", str(tmp_path / "state")))
    a = w.client("exam")
    a.map()
    a.bind()
    a.begin()
    m = a.expect(r"session s (began|failed (\d+) (.*))", what="the answer to begin")
    assert m.group(1) != "began", "began without the media restriction it was asked for"
    assert int(m.group(2)) == RESTRICTION_FAILED and "media" in m.group(3), m.group(0)
    w.alive()
    assert [e[:2] for e in audit_events(w) if e[0] == "provider_failed"] == [("provider_failed", "apply")], audit_events(w)


@pytest.mark.parametrize("named_by", ["begin", "update"])
def test_network_only_the_participant_the_policy_allows_connects_beside_the_app(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns, named_by):
    """Participants Carrel launched, each in a cgroup of its own: `network =
    true`'s is one the ruleset lets through, `network = false`'s is not; the
    app keeps its network; other processes have none. The same whether the participants are named at begin or added by an
    update of the running session (the ruleset is loaded again for them)."""
    start_server(netns, procs, logdir)
    trigger = tmp_path / "participants-go"
    policy = participants_policy(tmp_path, trigger, {"allowed": True, "denied": False})
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns,
                 args=("--provider", "network", "--policy", str(policy)))
    a = w.client("exam")
    a.map()
    a.bind()
    a.send("config c ; participant c allowed ; participant c denied")
    if named_by == "begin":
        a.begin(config="c")
        a.began()
    else:
        a.begin()
        a.began()
        assert participant_cgroups("allowed") == [], "test premise: nobody runs as a participant before the update"
        a.send("update s c")
        m = a.expect(r"session s (updated|update_failed .*)")
        assert m.group(1) == "updated", f"the update adding the participants was answered {m.group(0)!r}\n{log_text(w)}"
        assert h.wait_until(lambda: participant_cgroups("allowed") and participant_cgroups("denied"), 10), \
            f"the participants the update added never ran\n{log_text(w)}"
    assert netns.table_exists(), f"began without carrel's nftables table\n{log_text(w)}"
    trigger.touch()
    outcomes = {}
    for name in ("allowed", "denied"):
        outcomes[name] = participant_outcome(tmp_path, name, w)
    assert outcomes["allowed"] == "ok", f"the participant with network = true did not connect: {outcomes}"
    assert outcomes["denied"].startswith("fail"), f"the participant with network = false connected: {outcomes}"
    assert w.app_connect() == "ok", "the session's app must keep its network"
    outside = netns.outside_connect()
    assert outside.startswith("fail"), f"a process outside the session connected: {outside}"
    cgroups = {name: participant_cgroups(name) for name in ("allowed", "denied")}
    assert cgroups["allowed"] and all(c.endswith("-participant-allowed") for c in cgroups["allowed"]), \
        f"the participant that keeps the network is not in a cgroup of its own: {cgroups}"
    # The other has a cgroup of its own too (so that its stop kills all of
    # it), which the ruleset does not let through.
    assert cgroups["denied"] and all(c.endswith("-participant-denied") for c in cgroups["denied"]), \
        f"the participant without network is not in a cgroup of its own: {cgroups}"
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not netns.table_exists(), 5), "the table outlived the session"

    def cgroup_dirs():
        listing = netns.exec(["unshare", "-m", "sh", "-c", "mount -t cgroup2 none /sys/fs/cgroup && ls /sys/fs/cgroup"],
                             check=False).stdout
        return [name for name in listing.split() if name.startswith(f"carrel-{w.carrel.pid}-participant-")]
    assert h.wait_until(lambda: cgroup_dirs() == [], 5), f"the participant's cgroup outlived its session: {cgroup_dirs()}"
    w.alive()


def participants_policy(tmp_path, trigger, network: dict) -> Path:
    """A policy whose participants (name → `network` key) each show a
    window, wait for `trigger`, then try to connect to the test's server and
    write the outcome to NAME-result."""
    policy = tmp_path / "policy.toml"
    lines = []
    for name, allowed in network.items():
        result = tmp_path / f"{name}-result"
        script = (f'"{h.paint_bin()}" & while [ ! -e "{trigger}" ]; do sleep 0.05; done; '
                  f'"{sys.executable}" "{NETPROBE}" connect {PORT} > "{result}.tmp"; mv "{result}.tmp" "{result}"; wait')
        lines += [f"[participants.{name}]", f"command = [\"/bin/sh\", \"-c\", {json.dumps(script)}]",
                  f"network = {'true' if allowed else 'false'}"]
    policy.write_text("\n".join(lines) + "\n")
    return policy


def participant_outcome(tmp_path, name: str, w) -> str:
    """What participant `name`'s connection attempt came to."""
    result = tmp_path / f"{name}-result"
    assert h.wait_until(result.exists, 10), f"participant {name} never tried to connect\n{log_text(w)}"
    return result.read_text().strip()


def test_network_the_configuration_takes_away_from_a_participant_and_the_app(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns):
    """deny_participant_network and deny_owner_network (protocol version 3):
    a participant the policy gives the network, and the app, lose it for the
    session; another participant the policy gives it keeps it. After the
    session the app connects again."""
    start_server(netns, procs, logdir)
    trigger = tmp_path / "participants-go"
    policy = participants_policy(tmp_path, trigger, {"kept": True, "taken": True})
    w = NetWorld(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, netns,
                 args=("--provider", "network", "--policy", str(policy)))
    a = w.client("exam")
    a.map()
    a.bind(version=3)
    a.send("config c ; participant c kept ; participant c taken ; deny_network c taken ; deny_owner_network c")
    a.begin(config="c")
    a.began()
    assert netns.table_exists(), f"began without carrel's nftables table\n{log_text(w)}"
    trigger.touch()
    outcomes = {name: participant_outcome(tmp_path, name, w) for name in ("kept", "taken")}
    assert outcomes["kept"] == "ok", f"a participant whose network the configuration left alone lost it: {outcomes}"
    assert outcomes["taken"].startswith("fail"), f"a participant whose network the configuration denied connected: {outcomes}"
    app = w.app_connect()
    assert app.startswith("fail"), f"the app connected though the configuration denied its network: {app}"
    # One cgroup let through, the kept participant's: not the app's, not the
    # taken participant's (launched into a cgroup of its own all the same).
    ruleset = netns.exec([netns.nft, "list", "table", "inet", "carrel"], check=False).stdout
    output_chain = ruleset.split("chain output", 1)[1].split("}", 1)[0]
    assert output_chain.count("socket cgroupv2") == 1, ruleset
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not netns.table_exists(), 5), "the table outlived the session"
    assert w.app_connect() == "ok", "after ended the app connects again"
    w.alive()


def participant_cgroups(name: str) -> list:
    """The cgroup v2 paths of every process running as participant `name`
    (its WAYLAND_DISPLAY is that participant's socket)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            cgroup = Path(f"/proc/{entry}/cgroup").read_text()
        except OSError:
            continue
        if any(e.startswith(b"WAYLAND_DISPLAY=") and e.endswith(f"/participant-{name}".encode()) for e in environ):
            found += [line[3:] for line in cgroup.splitlines() if line.startswith("0::")]
    return found

