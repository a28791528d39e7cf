"""Faults around a session: outputs coming and going while a session
begins or runs, the exam window destroyed while beginning, a client that never
acks configure, a client that stops reading its socket, SIGTERM while beginning,
and a client hoarding wl_shm pools.

Every test runs the real binary headless with real clients: the pywayland exam
client of test_assessment.py, and raw-wire clients (Tests/fuzz/carrel_fuzz.py's
`Conn` and message helpers) where a client must misbehave in ways no toolkit
would. Each checks that Carrel survives and that the session contract holds:
every begin is answered exactly once (began or failed), nothing follows a
terminal event, interrupted comes when a restriction stops holding, and the lock
is free afterwards (a new session begins).

"During beginning" is made deterministic by stopping Carrel (SIGSTOP) while the
exam client sends begin and the fault is queued (a signal for the output hook or
SIGTERM), then continuing it: Carrel handles the begin and the fault in one turn
of its event loop, before any frame can be presented, so the fault lands between
begin and began.
"""

from __future__ import annotations

import array
import os
import re
import signal
import socket
import struct
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import CANCELLED, INTEGRITY, RESTRICTION_FAILED, WIRE
from carrel_clients import World

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import carrel_fuzz as wire  # noqa: E402

HOTPLUG = {"CARREL_TEST_OUTPUT_HOTPLUG": "1"}

SHUTDOWN = WIRE.CarrelAssessmentSessionV1.interruption_reason.shutdown.value
ANSWER = r"session {s} (began|failed (\d+) .*)"


def world_with(carrel, procs, logdir, logs, tmp_path, python, protocols, env=None) -> World:
    return World(carrel, procs, logdir, logs, tmp_path, python, protocols, env=env)


@pytest.fixture
def hotplug_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    return world_with(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                      env=HOTPLUG)


@pytest.fixture
def world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    return world_with(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols)


def ready_exam(w, name="exam"):
    exam = w.client(name)
    exam.map()
    exam.bind()
    return exam


def outputs_logged(w) -> int:
    return len(re.findall(r"output HEADLESS-\d+ \d+x\d+", w.carrel.stderr_path.read_text()))


def plug(w, sig=signal.SIGUSR1) -> None:
    """Plugs (SIGUSR1) an output and waits until Carrel has it."""
    before = outputs_logged(w)
    w.carrel.signal(sig)
    assert h.wait_until(lambda: outputs_logged(w) > before, 10), \
        f"the test hook did not plug an output\n{w.carrel.evidence()}"


def begin_with_fault_queued(w, exam, fault, session="s") -> None:
    """Sends begin while Carrel is stopped, queues `fault` (a callable that
    signals Carrel), then lets Carrel run: begin and fault are handled in the
    same turn of its loop, i.e. the fault comes after begin and before began."""
    w.carrel.signal(signal.SIGSTOP)
    try:
        assert h.wait_until(lambda: h.proc_state(w.carrel.pid) == "T", 5), "carrel did not stop"
        exam.begin(session)
        time.sleep(0.3)  # the client writes begin into the socket
        fault()
    finally:
        w.carrel.signal(signal.SIGCONT)


def answer(exam, session="s") -> tuple[str, int | None]:
    """The one answer to begin: ("began", None) or ("failed", reason)."""
    m = exam.expect(ANSWER.format(s=session), what="the answer to begin")
    return ("began", None) if m.group(1) == "began" else ("failed", int(m.group(2)))


def assert_answered_once(exam, session="s") -> None:
    exam.sync()
    answers = exam.matching(ANSWER.format(s=session))
    assert len(answers) == 1, f"begin answered {len(answers)} times: {answers}\n{exam.evidence()}"


def assert_new_session_begins(exam, session="again", window="w") -> None:
    """The lock is free: a fresh session begins and ends."""
    exam.begin(session, window=window)
    exam.began(session)
    exam.send(f"end {session}")
    exam.expect(f"session {session} ended")


def finish(exam, session, outcome) -> None:
    """Ends a session that began; a failed one needs (and gets) nothing more."""
    if outcome == "began":
        exam.send(f"end {session}")
        exam.expect(f"session {session} ended", what="ended after end")
    exam.collect(0.3)
    terminal = [i for i, line in enumerate(exam.lines)
                if re.fullmatch(f"session {session} (ended|failed .*)", line)]
    assert len(terminal) == 1, f"{len(terminal)} terminal events for {session}\n{exam.evidence()}"
    after = [line for line in exam.lines[terminal[0] + 1:] if line.startswith(f"session {session} ")]
    assert not after, f"events after the terminal one: {after}\n{exam.evidence()}"


def map_count(pid: int) -> int:
    with open(f"/proc/{pid}/maps") as f:
        return sum(1 for _ in f)


# ---------------------------------------------------------------------------
# 1. Outputs unplugged and plugged while beginning and while active


def test_output_plugged_while_beginning_fails_or_interrupts(hotplug_world):
    """An output that appears between begin and began was not vetted: the
    session either fails(restriction_failed) or, if it began, hears
    interrupted(integrity). It never simply begins."""
    w = hotplug_world
    exam = ready_exam(w)
    begin_with_fault_queued(w, exam, lambda: w.carrel.signal(signal.SIGUSR1))
    outcome, reason = answer(exam)
    if outcome == "failed":
        assert reason == RESTRICTION_FAILED, f"failed with {reason}\n{exam.evidence()}"
    else:
        exam.expect(rf"session s interrupted {INTEGRITY} .*",
                    what="interrupted(integrity): an output appeared before began")
    assert_answered_once(exam)
    finish(exam, "s", outcome)
    w.alive()
    print(f"plug while beginning: {outcome} {reason}")
    assert outputs_logged(w) == 2, w.carrel.evidence()
    assert_new_session_begins(exam)  # on two outputs now


def test_output_unplugged_while_beginning_then_the_lock_is_free(hotplug_world):
    """Two outputs; one goes between begin and began. Carrel no longer waits for
    a frame on it: begin is answered once (began, since the remaining output
    presents), and afterwards a new session begins on one output."""
    w = hotplug_world
    plug(w)
    exam = ready_exam(w)
    begin_with_fault_queued(w, exam, lambda: w.carrel.signal(signal.SIGUSR2))
    outcome, reason = answer(exam)
    assert outcome == "began", f"unplugging an output failed the begin ({reason})\n{exam.evidence()}"
    assert_answered_once(exam)
    finish(exam, "s", outcome)
    w.alive()
    assert_new_session_begins(exam)


def test_output_unplugged_during_a_session_keeps_it_and_carrel(hotplug_world):
    """Unplugging a display mid-session restricts nothing less (no interrupted
    is owed); the session goes on, ends normally, and a replug outside the
    session is harmless."""
    w = hotplug_world
    plug(w)
    exam = ready_exam(w)
    exam.begin()
    exam.began()
    w.carrel.signal(signal.SIGUSR2)
    time.sleep(0.5)
    exam.sync()
    w.alive()
    assert not exam.matching(r"session s (ended|failed .*)"), exam.evidence()
    finish(exam, "s", "began")
    plug(w)
    exam.sync()
    assert not exam.matching(r"session s interrupted .*"), "unplug or replug interrupted the session"
    assert_new_session_begins(exam)  # two outputs again: began waits for both


# ---------------------------------------------------------------------------
# 2. The exam window destroyed while beginning


def test_toplevel_destroyed_while_beginning_is_answered_once_and_leaks_nothing(world):
    """The XML: destroying the session's surface does not end the session. With
    the window destroyed right after begin (same batch, before any answer),
    begin is still answered exactly once; ending it frees the lock and a new
    window's session begins."""
    exam = ready_exam(world)
    exam.send("begin s m w null ; close_window w")
    outcome, reason = answer(exam)
    print(f"toplevel destroyed while beginning: {outcome} {reason}")
    assert_answered_once(exam)
    finish(exam, "s", outcome)
    world.alive()
    exam.map("w2")
    assert_new_session_begins(exam, window="w2")


# ---------------------------------------------------------------------------
# 3. A client that never acks configure


class RawClient:
    """A raw-wire client (no toolkit): binds globals by interface, sends what a
    test asks, reads only when told to."""

    def __init__(self, path: str) -> None:
        self.conn = wire.Conn(path)
        self.next_id = 3
        self.conn.registry = 2
        self.conn.send(wire.message(1, 1, struct.pack("<I", 2)))  # wl_display.get_registry
        assert self.conn.roundtrip(self.new_id(), 5), "no registry round trip"

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def bind(self, interface: str, version: int) -> int:
        name = next((n for n, (i, _) in self.conn.globals.items() if i == interface), None)
        assert name is not None, f"no {interface} among {self.conn.globals}"
        oid = self.new_id()
        body = (struct.pack("<I", name) + wire.wl_string(interface.encode())
                + struct.pack("<II", version, oid))
        self.conn.send(wire.message(2, 0, body))
        return oid

    def close(self) -> None:
        self.conn.close()


def unacked_toplevel(path: str) -> RawClient:
    """A client that makes an xdg_toplevel, commits, and never acks (or reads)
    the configure, never answers a ping and never attaches a buffer."""
    c = RawClient(path)
    compositor = c.bind("wl_compositor", 4)
    wm_base = c.bind("xdg_wm_base", 1)
    surface, xdg_surface, toplevel = c.new_id(), c.new_id(), c.new_id()
    c.conn.send(wire.message(compositor, 0, struct.pack("<I", surface)))
    c.conn.send(wire.message(wm_base, 2, struct.pack("<II", xdg_surface, surface)))
    c.conn.send(wire.message(xdg_surface, 1, struct.pack("<I", toplevel)))
    c.conn.send(wire.message(toplevel, 2, wire.wl_string(b"never acks")))  # set_title
    c.conn.send(wire.message(surface, 6))  # wl_surface.commit: asks for the first configure
    return c


@pytest.mark.parametrize("role", ["untrusted", "app"])
def test_client_that_never_acks_configure_does_not_hold_up_a_session(world, role):
    """A toplevel that was configured and never acked (nor read, nor drawn)
    exists while another client's session begins: began comes as usual, within
    the policy's bounded wait, and the session ends normally."""
    path = world.app_display if role == "app" else str(world.carrel.runtime_dir / world.carrel.socket_name)
    stuck = unacked_toplevel(path)
    try:
        time.sleep(0.3)
        exam = ready_exam(world)
        started = time.monotonic()
        exam.begin()
        exam.began()
        took = time.monotonic() - started
        assert took < 3.0, f"began took {took:.1f}s with a client that never acks configure"
        finish(exam, "s", "began")
        world.alive()
        # Only now does it read: configure events, and no protocol error.
        stuck.conn.pump(0.2)
        assert not stuck.conn.closed, "the unacking client was disconnected"
        assert stuck.conn.error is None, f"the unacking client got {stuck.conn.error}"
    finally:
        stuck.close()


# ---------------------------------------------------------------------------
# 4. A client that stops reading its socket during a session


def test_client_that_stops_reading_does_not_block_carrel(world):
    """An untrusted client floods wl_display.sync (each answered with two
    events) and never reads, so its socket fills up. Carrel must not block on
    it: the exam client's round trips stay fast throughout, the stuck client is
    disconnected (or merely lags), and the session ends normally."""
    exam = ready_exam(world)
    exam.begin()
    exam.began()
    path = str(world.carrel.runtime_dir / world.carrel.socket_name)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    sock.connect(path)
    sock.setblocking(False)
    # wl_display.sync(new wl_callback): fresh ids in order, as libwayland requires.
    def batch(first):
        return b"".join(wire.message(1, 0, struct.pack("<I", first + i)) for i in range(256))
    sent = 0  # syncs queued whole; a partly sent batch is finished before the next
    pending = b""
    disconnected = False
    slowest = 0.0
    last_probe = 0
    deadline = time.monotonic() + 8.0
    try:
        while time.monotonic() < deadline:
            if not pending:
                pending = batch(2 + sent)
                sent += 256
            try:
                pending = pending[sock.send(pending):]
            except BlockingIOError:
                time.sleep(0.01)  # Carrel is not reading us right now: fine, keep probing
            except (BrokenPipeError, ConnectionResetError):
                disconnected = True
                break
            if sent - last_probe >= 2048 or sent <= 1024:
                last_probe = sent
                started = time.monotonic()
                exam.sync()
                slowest = max(slowest, time.monotonic() - started)
        for _ in range(5):
            started = time.monotonic()
            exam.sync()
            slowest = max(slowest, time.monotonic() - started)
    finally:
        sock.close()
    print(f"stuck client: {sent} syncs sent, disconnected={disconnected}, "
          f"slowest exam round trip {slowest * 1000:.0f} ms")
    world.alive()
    assert sent >= 1024, f"only {sent} syncs went out; the flood never filled the socket"
    # libwayland buffers a bounded amount per client; past it the client is dropped
    # ("error in client communication"), which also bounds Carrel's memory.
    assert disconnected, f"the client that never reads was still connected after {sent} syncs"
    assert slowest < 1.0, f"an exam round trip took {slowest:.2f}s while a client did not read"
    assert not exam.matching(r"session s (ended|failed .*|interrupted .*)"), exam.evidence()
    finish(exam, "s", "began")


# ---------------------------------------------------------------------------
# 5. SIGTERM while beginning


def test_sigterm_while_beginning_cancels_exits_0_and_leaves_nothing(world):
    """SIGTERM between begin and began: the session fails(cancelled) (never
    began-then-interrupted), Carrel exits 0 within seconds, its app is gone and
    both of its sockets are removed."""
    w = world
    exam = ready_exam(w)
    runtime = w.carrel.runtime_dir
    before = sorted(p.name for p in runtime.iterdir())
    assert w.carrel.socket_name in before, before
    app_pid = int(h.wait_until(lambda: next(
        (pid for pid in os.listdir("/proc") if pid.isdigit() and _is_child_sleep(int(pid), w.carrel.pid)),
        None), 5) or 0)
    assert app_pid, f"carrel's app (sleep) not found among its children\n{w.carrel.evidence()}"
    started = time.monotonic()
    begin_with_fault_queued(w, exam, lambda: w.carrel.signal(signal.SIGTERM))
    status = w.carrel.wait_exit(10)
    took = time.monotonic() - started
    assert status == 0, f"carrel exited {status} on SIGTERM\n{w.carrel.evidence()}"
    assert took < 5.0, f"carrel took {took:.1f}s to exit on SIGTERM"
    exam.collect(0.5)
    answers = exam.matching(ANSWER.format(s="s"))
    assert len(answers) == 1, f"begin answered {answers} before shutdown\n{exam.evidence()}"
    # The XML's failure_reason.cancelled: "before the session began, ... the
    # compositor began shutting down". A frame presented on the way out must not
    # begin the session after the signal was handled.
    assert re.fullmatch(rf"session s failed {CANCELLED} .*", answers[0]), \
        f"shutdown while beginning answered {answers[0]!r}, want failed(cancelled)\n" \
        f"{exam.evidence()}\n{w.carrel.evidence()}"
    print(f"SIGTERM while beginning: {answers[0]} in {took:.2f}s")
    # Nothing left behind: the app is gone and so are both sockets.
    assert h.wait_until(lambda: not h.pid_running(app_pid), 5), f"app {app_pid} outlived carrel"
    after = sorted(p.name for p in runtime.iterdir())
    leftovers = [n for n in after if n.startswith("wayland-") or n.startswith("carrel-")]
    assert not leftovers, f"left behind in XDG_RUNTIME_DIR: {leftovers}"


def _is_child_sleep(pid: int, parent: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/comm") as f:
            comm = f.read().strip()
    except OSError:
        return False
    return int(fields[1]) == parent and comm in ("sleep", "sh")


# ---------------------------------------------------------------------------
# 6. Memory pressure: a client hoarding wl_shm pools


POOLS_TRIED = 5000  # far over the per-client limit (1024), far under vm.max_map_count
MAP_GROWTH_BOUND = 1500  # Carrel's extra mappings while the hoarder is connected


def test_shm_pool_hoarder_is_disconnected_and_another_session_is_unaffected(world):
    """An untrusted client creates wl_shm pools (each one a separate mmap in
    Carrel) without end, one memfd sent again and again, never destroying any.
    Past the per-client limit it gets wl_display.no_memory and is disconnected;
    Carrel's mapping count stays bounded, and an exam client's session begins
    and ends meanwhile. Without the limit the hoarder keeps all its pools and
    Carrel's mappings grow by thousands (and at vm.max_map_count every other
    client's pools and Carrel's own allocations start failing)."""
    exam = ready_exam(world)
    pid = world.carrel.pid
    base = map_count(pid)
    hoarder = RawClient(str(world.carrel.runtime_dir / world.carrel.socket_name))
    shm = hoarder.bind("wl_shm", 1)
    assert hoarder.conn.roundtrip(hoarder.new_id(), 5)
    fd = wire.memfd(4096)
    sock = hoarder.conn.sock
    sock.setblocking(True)
    sock.settimeout(2.0)
    created = 0
    peak = base
    try:
        for _ in range(POOLS_TRIED):
            pool = hoarder.new_id()
            msg = wire.message(shm, 0, struct.pack("<Ii", pool, 4096))  # create_pool(id, fd, size)
            try:
                sock.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
            except (BrokenPipeError, ConnectionResetError):
                break
            except socket.timeout:
                break
            created += 1
            if created % 500 == 0:
                peak = max(peak, map_count(pid))
    finally:
        os.close(fd)
    time.sleep(0.5)
    peak = max(peak, map_count(pid))
    sock.setblocking(False)
    hoarder.conn.pump(1.0)
    error = hoarder.conn.error
    print(f"shm hoarder: {created} create_pool sent, carrel mappings {base} -> peak {peak}, "
          f"error {error}")
    world.alive()
    assert peak - base < MAP_GROWTH_BOUND, \
        f"carrel's mappings grew by {peak - base} for one client's pools (no per-client limit?)"
    assert error is not None and error[1] == 2 and "too many wl_shm pools" in error[2], \
        f"the hoarder was not refused with wl_display.no_memory: {error}\n{world.carrel.evidence()}"
    hoarder.close()
    # Another client's session is unaffected.
    exam.begin()
    exam.began()
    finish(exam, "s", "began")
    assert h.wait_until(lambda: map_count(pid) - base < 100, 5), "the hoarder's pools outlived it"


# ---------------------------------------------------------------------------
# Found by the soak (meson-helpers/soak): wlroots 0.15 dereferences a NULL
# parent in wl_subsurface.place_above/place_below once the parent surface is
# destroyed (SIGSEGV in subsurface_find_sibling). Any client could crash Carrel.


@pytest.mark.parametrize("request_name,opcode", [("place_above", 2), ("place_below", 3), ("set_desync", 5)])
def test_subsurface_restacked_after_its_parent_died_is_refused_not_a_crash(world, request_name, opcode):
    """place_above/place_below on an orphaned subsurface: wl_subsurface.bad_surface
    (nothing left to place against), Carrel alive, another client's session
    untouched. set_desync (and a commit) on one is harmless in 0.15: no error."""
    if opcode in (2, 3) and h.wlroots_version() != "0.15":
        pytest.skip(f"wlroots {h.wlroots_version()} destroys a subsurface with its parent surface and "
                    f"silently ignores {request_name} on its wl_subsurface (no crash to guard, no "
                    f"bad_surface to see); Carrel's guard and this error are wlroots 0.15 only")
    exam = ready_exam(world)
    exam.begin()
    exam.began()
    c = RawClient(str(world.carrel.runtime_dir / world.carrel.socket_name))
    compositor = c.bind("wl_compositor", 4)
    subcompositor = c.bind("wl_subcompositor", 1)
    parent, child, sibling, sub = c.new_id(), c.new_id(), c.new_id(), c.new_id()
    for surface in (parent, child, sibling):
        c.conn.send(wire.message(compositor, 0, struct.pack("<I", surface)))  # create_surface
    c.conn.send(wire.message(subcompositor, 1, struct.pack("<III", sub, child, parent)))  # get_subsurface
    c.conn.send(wire.message(parent, 0))  # wl_surface.destroy: the subsurface loses its parent
    args = struct.pack("<I", sibling) if opcode in (2, 3) else b""
    if opcode == 5:
        c.conn.send(wire.message(sub, 4))  # set_sync first: set_desync then has work to do
    c.conn.send(wire.message(sub, opcode, args))
    try:
        c.conn.send(wire.message(child, 6))  # wl_surface.commit on the orphan
        c.conn.roundtrip(c.new_id(), 3)
    except wire.Closed:
        # Carrel may already have answered the refused request and closed the
        # connection (a busy machine lets it catch up between our sends): the
        # error is still waiting in the socket.
        c.conn.closed = False
    c.conn.pump(0.5)
    print(f"{request_name} after the parent died: {c.conn.error}")
    time.sleep(0.3)
    world.alive()
    if opcode in (2, 3):
        assert c.conn.error is not None and c.conn.error[0] == sub and c.conn.error[1] == 0, \
            f"expected wl_subsurface.bad_surface on wl_subsurface@{sub}, got {c.conn.error}"
    else:
        assert c.conn.error is None, f"set_desync on an orphan is legal, got {c.conn.error}"
    c.close()
    # The other client's session is untouched.
    exam.sync()
    assert not exam.matching(r"session s (ended|failed .*|interrupted .*)"), exam.evidence()
    finish(exam, "s", "began")


def test_refused_drags_without_a_source_are_freed(world):
    """An untrusted client asks for 500 drags with no data source (legal: a drag inside
    one client) from a surface it never got a pointer grab for: each is refused, carrel
    stays up and answers, and — what AddressSanitizer's leak check at exit proves when
    test-all runs this suite under it — every refused drag is freed (wlroots 0.15 kept
    them: 288 bytes each, without bound, found by the fuzzer under ASan)."""
    exam = ready_exam(world)
    c = RawClient(str(world.carrel.runtime_dir / world.carrel.socket_name))
    compositor = c.bind("wl_compositor", 4)
    seat = c.bind("wl_seat", 1)
    manager = c.bind("wl_data_device_manager", 3)
    device, origin, icon = c.new_id(), c.new_id(), c.new_id()
    c.conn.send(wire.message(manager, 1, struct.pack("<II", device, seat)))  # get_data_device
    c.conn.send(wire.message(compositor, 0, struct.pack("<I", origin)))  # create_surface
    c.conn.send(wire.message(compositor, 0, struct.pack("<I", icon)))  # create_surface (the icon)
    for n in range(500):
        # wl_data_device.start_drag(source = null, origin, icon = none or one, serial)
        c.conn.send(wire.message(device, 0, struct.pack("<IIII", 0, origin, icon if n == 0 else 0, n)))
    assert c.conn.roundtrip(c.new_id(), 10), f"no round trip after the drags: {c.conn.error}"
    assert c.conn.error is None, f"a refused drag is not a protocol error: {c.conn.error}"
    assert "refused a drag-and-drop" in world.carrel.stderr_path.read_text()
    c.close()
    exam.sync()
    world.alive()
