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
import subprocess
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import INACTIVE, INTEGRITY, SESSION_WIRE, expect_lock_state, wait_lock_state
from carrel_clients import World

HERE = Path(__file__).resolve().parent

PARTICIPANT_UNAVAILABLE = SESSION_WIRE.failure_reason.participant_unavailable.value
# What each party draws: the exam (assessment_client.py's buffer), the
# participant and an untrusted client that must never be seen.
EXAM_COLOUR, PARTICIPANT_COLOUR, UNTRUSTED_COLOUR = (0x33, 0x66, 0xcc), (0x33, 0xcc, 0x66), (0xcc, 0x33, 0x33)
TOLERANCE = 4


PROBE_ATTACKS = ["bind_privileged", "bind_hidden", "capture", "inject_keys", "layer_surface",
                 "clipboard_write", "map_toplevel"]


def policy(tmp_path: Path, on_exit: str = "interrupt") -> Path:
    from carrel_harness import probe_bin
    path = tmp_path / "policy.toml"
    probe_command = ", ".join(f'"{a}"' for a in [str(probe_bin()), "--as", "participant", "--hold", "20",
                                                  *[x for attack in PROBE_ATTACKS for x in ("--attack", attack)]])
    path.write_text(
        "[participants.probe]\n"
        f"command = [{probe_command}]\n" +
        "[participants.calc]\n"
        f"command = [\"{h.paint_bin()}\", \"--color\", \"%02x%02x%02x\"]\n" % PARTICIPANT_COLOUR +
        f"on_exit = \"{on_exit}\"\n"
        "[participants.wrapped]\n"
        f"command = [\"/bin/sh\", \"-c\", \"\\\"{h.paint_bin()}\\\" & sleep 300 & wait\"]\n"
        "[participants.quitter]\n"
        "command = [\"/bin/false\"]\n"
        "[participants.windowless]\n"
        "command = [\"/bin/sleep\", \"30\"]\n"
        "[participants.galculator]\n"
        "command = [\"/usr/bin/galculator\"]\n"
        "[participants.missing]\n"
        "command = [\"/nonexistent/carrel-test-calculator\"]\n" +
        "".join(f"[participants.{name}]\n"
                f"command = [\"/bin/sh\", \"-c\", \"\\\"{h.paint_bin()}\\\" & exec \\\"{sys.executable}\\\" "
                f"\\\"{HERE / 'escaping_participant.py'}\\\" \\\"{tmp_path / (name + '.report')}\\\"\"]\n"
                for name in ("escaper", "escaper2")) +
        "[participants.forker]\n"
        f"command = [\"/bin/sh\", \"-c\", \"\\\"{h.paint_bin()}\\\" & exec \\\"{sys.executable}\\\" "
        f"\\\"{HERE / 'forking_participant.py'}\\\" \\\"{tmp_path / 'forker.pids'}\\\"\"]\n")
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
    def make(on_exit: str = "interrupt", **kwargs) -> World:
        return World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                     args=["--policy", str(policy(tmp_path, on_exit))], **kwargs)
    return make


@pytest.fixture(scope="module")
def xvfb(tmp_path_factory):
    """One Xvfb for the module's visual tests, ended when they are done."""
    from x_display import start_xvfb
    tracker = h.ProcessTracker()
    logdir = tmp_path_factory.mktemp("xvfb")
    display = start_xvfb(tracker, logdir, [])
    yield display
    tracker.end_all()


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
    # Carrel kills the participant before it sends ended, without waiting for
    # it: by now it runs no more (SIGKILL is delivered at once; allow the
    # kernel a moment to finish the exit), and SIGCHLD soon reaps it.
    h.wait_until(lambda: not alive(pids[0]), 1, interval=0.02)
    assert not alive(pids[0]), f"participant pid {pids[0]} still runs after ended\n{world.carrel.evidence()}"
    assert h.wait_until(lambda: not Path(f"/proc/{pids[0]}").exists(), 5), \
        f"participant pid {pids[0]} was never reaped after ended\n{world.carrel.evidence()}"
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


def near(rgb, colour) -> bool:
    return all(abs(a - b) <= TOLERANCE for a, b in zip(rgb, colour))


def test_exam_and_participant_side_by_side_and_no_untrusted_frame_as_x_shows_it(make_world, xvfb, paint_bin,
                                                                                 artifacts_dir):
    from x_display import save, screenshot
    world = make_world(backend="x11", env={"DISPLAY": xvfb})
    stranger = world.carrel.client([str(paint_bin), "--color", "%02x%02x%02x" % UNTRUSTED_COLOUR, "--animate"],
                                   name="untrusted-paint")
    a = begin_with(world, "calc")
    a.began()
    # carrel's X window sits at the screen's corner, 1280x720 (no window manager):
    # the exam keeps the left 854 pixels, the participant the right 426.
    exam_points, participant_points = [(100, 100), (500, 360), (840, 700)], [(870, 100), (1100, 360), (1270, 700)]
    shots, last = [], [None]

    def laid_out():
        image = screenshot(xvfb)
        last[0] = image
        shots.append(image)
        return all(near(image.pixel(x, y), EXAM_COLOUR) for x, y in exam_points) and \
            all(near(image.pixel(x, y), PARTICIPANT_COLOUR) for x, y in participant_points)

    ok = h.wait_until(laid_out, 10, interval=0.2)
    png = save(last[0], artifacts_dir, "participants-side-by-side")
    assert ok, (f"exam #3366cc at {exam_points} and participant #33cc66 at {participant_points} expected; "
                f"got {[last[0].pixel(x, y) for x, y in exam_points + participant_points]}; screenshot {png}\n"
                f"{world.carrel.evidence()}")
    for _ in range(5):
        shots.append(screenshot(xvfb))
        time.sleep(0.1)
    for index, image in enumerate(shots):
        seen = [(x, y) for y in range(0, 720, 8) for x in range(0, 1280, 8)
                if near(image.pixel(x, y), UNTRUSTED_COLOUR)]
        assert not seen, f"the untrusted window showed in screenshot {index} at {seen[:5]}"
    a.send("end s")
    a.expect("session s ended")
    assert participants_of(world.carrel) == []
    assert stranger.alive()
    world.alive()


def test_ctrl_alt_tab_moves_focus_between_exam_and_participant(make_world, xvfb):
    h.require_tool("xdotool")
    from x_display import x_windows
    world = make_world(backend="x11", env={"DISPLAY": xvfb})
    a = begin_with(world, "calc")
    a.began()
    env = h.clean_env({"DISPLAY": xvfb})
    window = x_windows(xvfb)[0]
    subprocess.run(["xdotool", "windowfocus", "--sync", window], env=env, check=True, timeout=10)
    switches = []
    focused_before = len(world.carrel.trace(effect="focus"))
    for _ in range(2):
        subprocess.run(["xdotool", "key", "ctrl+alt+Tab"], env=env, check=True, timeout=10)

        def switched():
            found = [(f.get("role"), f.get("participant")) for f in world.carrel.trace(effect="focus")[focused_before:]]
            return found if len(found) > len(switches) else None

        found = h.wait_until(switched, 5)
        assert found, f"Ctrl+Alt+Tab did not switch focus\n{world.carrel.evidence()}"
        switches = found
    # The calculator mapped beneath the exam, which kept focus: the first
    # switch goes to the calculator, the second back (Carrel's trace).
    assert switches == [("participant", "calc"), ("app", None)], switches
    a.sync()
    assert not a.matching("session s (interrupted|ended).*"), "the focus switch must not leave the session"
    a.send("end s")
    a.expect("session s ended")
    world.alive()


def test_galculator_as_participant_shows_beside_the_exam_and_is_gone_after_ended(make_world, xvfb, artifacts_dir):
    """A real GTK3 application (Wayland backend) as the participant."""
    from x_display import save, screenshot
    if not Path("/usr/bin/galculator").exists():
        pytest.fail("/usr/bin/galculator is missing; install it (Debian package galculator; "
                    "meson-helpers/packages.sh lists it)")
    world = make_world(backend="x11", env={"DISPLAY": xvfb})
    a = begin_with(world, "galculator")
    a.began()
    [pid] = [p for p in children_of(world.carrel) if Path(f"/proc/{p}/comm").read_text().strip() == "galculator"]
    last = [None]

    def drawn():
        # The column right of the exam shows the calculator: not the exam's
        # colour, and not one flat colour (buttons, a display, labels).
        image = last[0] = screenshot(xvfb)
        column = {image.pixel(x, y) for x in range(880, 1270, 10) for y in range(10, 710, 10)}
        exam = {image.pixel(x, y) for x in range(10, 840, 40) for y in range(10, 710, 40)}
        return exam == {EXAM_COLOUR} and EXAM_COLOUR not in column and len(column) > 3

    ok = h.wait_until(drawn, 15, interval=0.3)
    png = save(last[0], artifacts_dir, "participants-galculator")
    assert ok, f"galculator did not show in the right column beside the exam; screenshot {png}\n{world.carrel.evidence()}"
    a.send("end s")
    a.expect("session s ended")
    # Killed before ended (the kernel finishing the exit a moment later), reaped on SIGCHLD.
    h.wait_until(lambda: not alive(pid), 1, interval=0.02)
    assert not alive(pid), f"galculator (pid {pid}) still runs after ended"
    assert h.wait_until(lambda: not Path(f"/proc/{pid}").exists(), 5), f"galculator (pid {pid}) was never reaped"
    assert participant_sockets(world) == []
    world.alive()


def test_the_probe_as_a_participant_is_blocked_from_capture_layers_privileged_globals_and_the_exam(
        make_world, xvfb, procs):
    """carrel-probe launched by Carrel as the participant: on a seat with a
    keyboard, with its window shown beside the exam (map_toplevel succeeds: a
    participant's window is meant to show), everything else is refused."""
    import json
    world = make_world(backend="x11", env={"DISPLAY": xvfb})
    a = begin_with(world, "probe")
    a.began()

    def summary():
        for line in world.carrel.stdout_path.read_text(errors="replace").splitlines():
            if line.startswith("{") and '"summary"' in line:
                return json.loads(line)
        return None

    found = h.wait_until(summary, 30, interval=0.2)
    assert found, f"the probe printed no summary\n{world.carrel.evidence()}"
    verdicts = {r["attack"]: r for r in map(json.loads, (l for l in world.carrel.stdout_path.read_text().splitlines()
                                                          if l.startswith('{"attack"')))}
    assert set(verdicts) == set(PROBE_ATTACKS), verdicts
    assert found["role"] == "participant", found
    for attack in PROBE_ATTACKS:
        expected = "succeeded" if attack == "map_toplevel" else "blocked"
        assert verdicts[attack]["verdict"] == expected, f"{attack}: {verdicts[attack]}"
    a.sync()
    assert not a.matching("session s (interrupted|ended).*"), a.lines
    a.send("end s")
    a.expect("session s ended")
    world.alive()


def processes_on(world, socket_name: str) -> list[int]:
    """Every process whose environment points WAYLAND_DISPLAY at this world's
    socket socket_name (its whole path: another Carrel's participant of the
    same name, in a suite run beside this one, is not this one's)."""
    wanted = b"WAYLAND_DISPLAY=" + str(Path(world.app_display).parent / socket_name).encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if wanted in environ:
                found.append(int(entry))
    return found


def test_a_participant_started_through_a_shell_ends_with_everything_it_started(make_world):
    world = make_world()
    a = begin_with(world, "wrapped")
    a.began()
    running = processes_on(world, "participant-wrapped")
    assert len(running) >= 3, f"expected the shell, carrel-paint and sleep, found {running}"
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: processes_on(world, "participant-wrapped") == [], 3), \
        f"left behind after ended: {processes_on(world, 'participant-wrapped')}"
    world.alive()


@pytest.mark.parametrize("participant,why", [("quitter", "exited before the session began"),
                                             ("windowless", "showed no window")])
def test_a_participant_that_exits_at_once_or_shows_no_window_fails_the_begin(make_world, participant, why):
    world = make_world()
    a = begin_with(world, participant)
    m = a.expect(r"session s (began|failed (\d+) (.*))")
    assert m.group(2) == str(PARTICIPANT_UNAVAILABLE), f"begin was answered {m.group(0)!r}"
    assert participant in m.group(3) and why in m.group(3), m.group(0)
    wait_lock_state(a, INACTIVE)
    assert participant_sockets(world) == []
    assert processes_on(world, f"participant-{participant}") == [], "the participant outlived its failed begin"
    world.alive()


def alive(pid: int) -> bool:
    """Whether pid runs (a zombie has ended: it can do nothing more)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


def test_participants_processes_that_leave_their_group_or_tree_reach_no_other_socket_and_end_by_ended(make_world, tmp_path):
    """Two participants (escaping_participant.py) each start a process that
    calls setsid and one that double-forks out of its tree, all running as
    Carrel's user; each knocks on the app's socket and the other
    participant's. Carrel refuses every such connection (it is the subreaper:
    the double-forked one is its orphan, still known) and ends all four
    before it sends `ended`."""
    world = make_world()
    a = world.client("exam")
    a.map()
    a.bind(version=2)
    a.send("config c ; participant c escaper ; participant c escaper2")
    a.begin(config="c")
    a.began()
    reports = [tmp_path / "escaper.report", tmp_path / "escaper2.report"]

    def lines():
        return [line for r in reports if r.exists() for line in r.read_text().splitlines()]

    def knocked_everywhere():
        seen = lines()
        return all(any(line.startswith(f"{kind} ") and line.endswith(f" {socket}") for line in seen)
                   for kind in ("setsid", "double-fork") for socket in ("app", "participant-escaper",
                                                                        "participant-escaper2"))
    assert h.wait_until(knocked_everywhere, 15, interval=0.1), \
        f"the escaped processes did not try every socket: {lines()}\n{world.carrel.evidence()}"
    connected = [line for line in lines() if " connected " in line]
    assert not connected, f"a process that left its participant connected to a private socket: {connected}"
    escaped = {int(line.split()[2]): line.split()[1] for line in lines() if line.startswith("escaped ")}
    assert sorted(escaped.values()) == ["double-fork", "double-fork", "setsid", "setsid"], escaped
    orphans = [pid for pid, kind in escaped.items() if kind == "double-fork"]
    assert all(int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) == world.carrel.pid
               for pid in orphans), "the double-forked processes were not taken in by Carrel (the subreaper)"
    a.send("end s")
    a.expect("session s ended")
    # SIGKILL was sent before `ended`; allow the kernel a moment to finish them.
    h.wait_until(lambda: not any(alive(pid) for pid in escaped), 1, interval=0.02)
    survivors = {pid: kind for pid, kind in escaped.items() if alive(pid)}
    assert not survivors, f"outlived the session: {survivors}\n{world.carrel.evidence()}"
    refused = {entry["socket"] for entry in world.carrel.trace(event="connection_refused")}
    assert refused == {"app", "participant-escaper", "participant-escaper2"}, f"refusals traced: {refused}"
    world.alive()


def test_a_participant_that_keeps_forking_ends_with_its_cgroup(make_world, tmp_path):
    """A participant starts a runner that forks and exits hundreds of times
    a second (`forking_participant.py`): any list of its processes is out of
    date before it can be acted on. Carrel, able to make cgroups here,
    started the participant in one of its own and kills that cgroup as it
    stops it: after `ended` no runner generation is alive, and the cgroup is
    gone. (Unprivileged and undelegated, Carrel cannot make the cgroup, and
    this runner is exactly what the README says can outlive a stop then.)"""
    if os.geteuid() != 0:
        pytest.skip("needs root: an unprivileged Carrel without a delegated cgroup cannot make one per participant")
    from privileged_setup import MOUNT
    # Carrel as an exam machine runs it: the cgroup v2 hierarchy on /sys/fs/cgroup
    # (this machine may mount it elsewhere, beside v1's: then in a mount namespace of Carrel's).
    wrapper = tmp_path / "carrel-with-cgroup2"
    wrapper.write_text(f"#!/bin/sh\nexec unshare -m sh -c '{MOUNT}exec \"$0\" \"$@\"' {h.carrel_bin()} \"$@\"\n")
    wrapper.chmod(0o755)
    old = os.environ.get("CARREL_BIN")
    os.environ["CARREL_BIN"] = str(wrapper)
    try:
        world = make_world()
    finally:
        if old is None:
            os.environ.pop("CARREL_BIN", None)
        else:
            os.environ["CARREL_BIN"] = old

    def cgroup_exists() -> bool:
        return subprocess.run(["unshare", "-m", "sh", "-c", MOUNT + f"test -d /sys/fs/cgroup/{cgroup.name}"]).returncode == 0
    a = begin_with(world, "forker")
    a.began()
    pids = tmp_path / "forker.pids"

    def generations() -> list[int]:
        return [int(line) for line in pids.read_text().split()] if pids.exists() else []
    assert h.wait_until(lambda: len(generations()) > 50, 15, interval=0.05), \
        f"the runner did not get going: {generations()[-5:]}\n{world.carrel.evidence()}"
    cgroup = Path("/sys/fs/cgroup") / f"carrel-{world.carrel.pid}-participant-forker"
    assert f"::/{cgroup.name}\n" in Path(f"/proc/{generations()[-1]}/cgroup").read_text() or not alive(generations()[-1]), \
        f"the runner is not in {cgroup}"
    a.send("end s")
    a.expect("session s ended")
    time.sleep(0.5)
    count = len(generations())
    living = [pid for pid in generations()[-20:] if alive(pid)]
    assert not living, f"runner generations outlived the session: {living}\n{world.carrel.evidence()}"
    time.sleep(0.3)
    assert len(generations()) == count, "the runner still forks after the session ended"
    assert h.wait_until(lambda: not cgroup_exists(), 12), f"{cgroup} outlived its participant"
    world.alive()
