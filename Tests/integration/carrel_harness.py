"""Harness for Carrel's integration and visual tests.

Starts the real `carrel` binary and real Wayland clients, tracks every process
it starts by pid and ends them at teardown, and bounds every wait. The fixtures
that hand these objects to tests live in conftest.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence

REPO = Path(__file__).resolve().parents[2]

# Bounds for every wait, in seconds. Generous for a loaded 2-core machine and a
# debug build, but small enough that a hang fails the test instead of the job.
READY_TIMEOUT = 20.0
EXIT_TIMEOUT = 20.0
CLIENT_TIMEOUT = 15.0
TERM_GRACE = 3.0

# Environment that would let a started process reach a display other than the
# one the test controls.
_LEAKY_ENV = ("WAYLAND_DISPLAY", "WAYLAND_SOCKET", "WAYLAND_DEBUG", "DISPLAY",
              "XDG_RUNTIME_DIR", "WLR_BACKENDS", "WLR_RENDERER")


class HarnessError(AssertionError):
    """A bounded wait ran out or a process misbehaved; carries the evidence."""


def carrel_bin() -> Path:
    return Path(os.environ.get("CARREL_BIN", REPO / ".build" / "debug" / "carrel"))


@contextlib.contextmanager
def carrel_bin_replaced(path):
    """CARREL_BIN names `path` (a wrapper around carrel) inside the block, and what it named before after it."""
    old = os.environ.get("CARREL_BIN")
    os.environ["CARREL_BIN"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CARREL_BIN", None)
        else:
            os.environ["CARREL_BIN"] = old


def paint_bin() -> Path:
    return Path(os.environ.get("CARREL_PAINT_BIN", REPO / ".build" / "debug" / "carrel-paint"))


def demo_bin() -> Path:
    return Path(os.environ.get("CARREL_DEMO_BIN", carrel_bin().parent / "carrel-demo-exam"))


def probe_bin() -> Path:
    return Path(os.environ.get("CARREL_PROBE_BIN", REPO / ".build" / "debug" / "carrel-probe"))


def wlroots_version() -> str:
    """The wlroots the binary under test was built against: CARREL_WLROOTS, as
    for the build (test-all sets it for the 0.20 run); bookworm's 0.15 when unset."""
    return os.environ.get("CARREL_WLROOTS") or "0.15"


def log_level() -> str:
    return os.environ.get("CARREL_LOG_LEVEL", "debug")


def clean_env(extra: Optional[Mapping[str, str]] = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY_ENV}
    if extra:
        env.update(extra)
    return env


def require_tool(name: str) -> str:
    """The path of a tool the suite needs; fails the test (not skips) if it is missing."""
    import pytest

    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; the integration suite needs it "
                    "(see Tests/integration/README.md)")
    return path


def wait_until(predicate: Callable[[], object], timeout: float, interval: float = 0.05):
    """Polls predicate until it returns something truthy; returns it, or None at the bound."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


def tail(path: Path, max_bytes: int = 16000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read()
    except OSError as e:
        return f"<cannot read {path}: {e.strerror}>"
    text = data.decode("utf-8", "replace")
    if size > max_bytes:
        text = f"<... {size - max_bytes} bytes before this ...>\n" + text
    return text


def start_xvfb(procs, logdir, logs, screen=(1280, 800), extra=()) -> str:
    """Starts Xvfb on a display it picks itself (-displayfd); returns ':N'.
    `extra`: more Xvfb options (e.g. -wr, a white root window)."""
    if shutil.which("Xvfb") is None:
        import pytest

        # Under CI this skip is a failure (skip_policy.py): packages.sh installs xvfb.
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    log = logdir / "xvfb.log"
    logs.append(("Xvfb log", log))
    r, w = os.pipe()
    try:
        with open(log, "wb") as err:
            proc = procs.spawn("Xvfb", ["Xvfb", "-displayfd", str(w), "-screen", "0",
                                        f"{screen[0]}x{screen[1]}x24", "-nolisten", "tcp",
                                        "-noreset", *extra],
                               env=clean_env(), stderr=err, stdout=err, pass_fds=(w,))
    finally:
        os.close(w)
    data = b""
    deadline = time.monotonic() + 15
    try:
        while b"\n" not in data and time.monotonic() < deadline:
            readable, _, _ = select.select([r], [], [], 0.2)
            if readable:
                chunk = os.read(r, 64)
                if not chunk:
                    break
                data += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(r)
    number = data.decode().strip()
    assert number.isdigit(), (f"Xvfb did not report a display within 15 s (got {data!r}, "
                              f"status {proc.poll()}):\n{tail(log, 3000)}")
    sock = Path(f"/tmp/.X11-unix/X{number}")
    assert wait_until(sock.exists, 10), f"Xvfb said :{number} but {sock} never appeared"
    return f":{number}"


# ---------------------------------------------------------------------------
# Process tracking


def _proc_start_time(pid: int) -> Optional[str]:
    """Field 22 of /proc/PID/stat (start time): tells a pid from a reused one."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return data.rsplit(")", 1)[1].split()[19]


def proc_state(pid: int) -> Optional[str]:
    """The one-letter state of a process, or None if there is no such process."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return data.rsplit(")", 1)[1].split()[0]


def group_members(pgid: int) -> list:
    """Pids of the live processes in process group pgid."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def pid_running(pid: int) -> bool:
    """True while pid names a process that has not ended (zombies have ended)."""
    state = proc_state(pid)
    return state is not None and state not in ("Z", "X")


@dataclass
class Tracked:
    name: str
    proc: Optional[subprocess.Popen]  # None for a pid we did not start directly
    pid: int
    start_time: Optional[str]
    own_group: bool  # started as a session/group leader: signal the group


class ProcessTracker:
    """Every process a test starts, by pid; all of them end at teardown."""

    def __init__(self) -> None:
        self.tracked: list[Tracked] = []

    def spawn(self, name: str, argv: Sequence[str], *, env: Mapping[str, str],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
              stdin=subprocess.DEVNULL, pass_fds: Iterable[int] = (),
              cwd: Optional[str] = None) -> subprocess.Popen:
        proc = subprocess.Popen(list(map(str, argv)), env=dict(env), stdin=stdin,
                                stdout=stdout, stderr=stderr, pass_fds=tuple(pass_fds),
                                cwd=cwd, start_new_session=True)
        self.tracked.append(Tracked(name, proc, proc.pid, _proc_start_time(proc.pid), True))
        return proc

    def adopt(self, name: str, pid: int) -> None:
        """Track a process something we started has started (e.g. a detached grandchild)."""
        self.tracked.append(Tracked(name, None, pid, _proc_start_time(pid), False))

    def _same_process(self, t: Tracked) -> bool:
        if t.proc is not None:
            return t.proc.poll() is None
        return t.start_time is not None and _proc_start_time(t.pid) == t.start_time \
            and pid_running(t.pid)

    def _signal(self, t: Tracked, sig: int) -> None:
        targets = []
        if self._same_process(t):
            targets.append(t.pid)
        if t.own_group:
            # Members of the process group we created for it (what it started and
            # left behind), by pid, found in /proc.
            targets += [pid for pid in group_members(t.pid) if pid != t.pid]
        for pid in targets:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def end_all(self) -> list[str]:
        """SIGTERM everything, SIGKILL what is left after a bounded grace. Returns notes."""
        notes = []
        for t in reversed(self.tracked):
            self._signal(t, signal.SIGTERM)
        deadline = time.monotonic() + TERM_GRACE
        for t in self.tracked:
            while (self._same_process(t) or (t.own_group and group_members(t.pid))) \
                    and time.monotonic() < deadline:
                time.sleep(0.02)
        for t in self.tracked:
            if self._same_process(t):
                notes.append(f"{t.name} (pid {t.pid}) ignored SIGTERM for {TERM_GRACE}s; SIGKILL")
            # Always SIGKILL the groups: members that outlived their leader end here too.
            self._signal(t, signal.SIGKILL)
        for t in self.tracked:
            if t.proc is not None:
                try:
                    t.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    notes.append(f"{t.name} (pid {t.pid}) still not reaped after SIGKILL")
        return notes


# ---------------------------------------------------------------------------
# Runtime directory


def make_runtime_dir() -> Path:
    """A fresh private XDG_RUNTIME_DIR, short enough for sun_path (the app socket
    lives two levels below it), owned by whoever runs the tests, mode 0700."""
    path = Path(tempfile.mkdtemp(prefix="carrel-rt-", dir="/tmp"))
    os.chmod(path, 0o700)
    st = path.stat()
    assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700
    return path


# ---------------------------------------------------------------------------
# Carrel and its clients


@dataclass
class Client:
    name: str
    proc: subprocess.Popen
    stdout_path: Path
    stderr_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_exit(self, timeout: float = CLIENT_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HarnessError(
                f"{self.name} (pid {self.pid}) did not exit within {timeout}s\n"
                f"--- stderr tail ---\n{tail(self.stderr_path, 4000)}") from None

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@dataclass
class Carrel:
    """One running (or finished) carrel process and what a test needs around it."""

    procs: ProcessTracker
    logdir: Path
    runtime_dir: Path
    proc: subprocess.Popen
    stdout_path: Path
    stderr_path: Path
    argv: list
    env: dict
    ready_read_fd: Optional[int]
    socket_name: Optional[str] = None
    _clients: int = field(default=0)
    audit_log: Optional[Path] = None
    trace_path: Optional[Path] = None

    def trace(self, **match) -> list[dict]:
        """The objects of Carrel's `--trace` file so far (each Desk effect, and
        the compositor's own decisions: `event`), those whose fields equal
        every `match` given (`trace(effect="focus", role="app")`)."""
        if self.trace_path is None or not self.trace_path.exists():
            return []
        found = []
        for line in self.trace_path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line being written
            if all(entry.get(key) == value for key, value in match.items()):
                found.append(entry)
        return found

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def evidence(self) -> str:
        return (f"carrel argv: {self.argv}\n"
                f"--- carrel stderr tail ({self.stderr_path}) ---\n{tail(self.stderr_path, 6000)}")

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> str:
        """Waits for the public socket name on the ready fd; checks it names a socket."""
        if self.socket_name is not None:
            return self.socket_name
        assert self.ready_read_fd is not None, "carrel was started without --ready-fd"
        data = b""
        deadline = time.monotonic() + timeout
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise HarnessError(f"carrel wrote no ready line within {timeout}s "
                                   f"(got {data!r}, carrel alive: {self.alive()})\n{self.evidence()}")
            readable, _, _ = select.select([self.ready_read_fd], [], [], min(left, 0.2))
            if readable:
                chunk = os.read(self.ready_read_fd, 4096)
                if not chunk:
                    break  # EOF: carrel closed the fd (or exited) without a full line
                data += chunk
            elif not self.alive() and not data:
                # The pipe may still hold data; the select above would have said so.
                raise HarnessError(f"carrel exited with status {self.proc.returncode} before it "
                                   f"was ready\n{self.evidence()}")
        line = data.decode("utf-8", "replace")
        if "\n" not in line:
            raise HarnessError(f"ready fd closed without a full line: {data!r} "
                               f"(carrel alive: {self.alive()})\n{self.evidence()}")
        name = line.split("\n", 1)[0].strip()
        if not name or "/" in name:
            raise HarnessError(f"ready line {line!r} is not a socket name relative to "
                               f"XDG_RUNTIME_DIR\n{self.evidence()}")
        path = self.runtime_dir / name

        def is_socket() -> bool:
            return path.exists() and stat.S_ISSOCK(path.stat().st_mode)

        # An app that exits at once (wayland-info) may end carrel, which removes its
        # socket, before we look: then the test judges carrel's exit status instead.
        if not is_socket() and not wait_until(lambda: not self.alive(), 2.0):
            raise HarnessError(f"ready line names {name!r} but {path} is not a socket\n"
                               f"{self.evidence()}")
        self.socket_name = name
        return name

    def wait_exit(self, timeout: float = EXIT_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"carrel (pid {self.pid}) did not exit within {timeout}s\n"
                               f"{self.evidence()}") from None

    def signal(self, sig: int) -> None:
        """Signals carrel's own pid (not its group: what it does with its app is under test)."""
        self.proc.send_signal(sig)

    def client_env(self, extra: Optional[Mapping[str, str]] = None) -> dict:
        name = self.wait_ready()
        env = clean_env({"XDG_RUNTIME_DIR": str(self.runtime_dir), "WAYLAND_DISPLAY": name})
        if extra:
            env.update(extra)
        return env

    def client(self, argv: Sequence[str], *, name: Optional[str] = None,
               env: Optional[Mapping[str, str]] = None) -> Client:
        """Starts a client on the public socket (role untrusted), tracked, logs to files."""
        self._clients += 1
        label = name or f"client{self._clients}-{Path(argv[0]).name}"
        out = self.logdir / f"{label}.stdout"
        err = self.logdir / f"{label}.stderr"
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = self.procs.spawn(label, argv, env=self.client_env(env), stdout=o, stderr=e)
        return Client(label, proc, out, err)

    def close_ready_fd(self) -> None:
        if self.ready_read_fd is not None:
            os.close(self.ready_read_fd)
            self.ready_read_fd = None


# The seat managers the input_readers precondition allows, by executable.
SEAT_MANAGERS = {"/usr/lib/systemd/systemd-logind", "/lib/systemd/systemd-logind", "/usr/bin/seatd", "/usr/sbin/seatd",
                 "/bin/seatd", "/sbin/seatd", "/usr/local/bin/seatd"}


def input_device_holders() -> Optional[dict[int, list[str]]]:
    """Processes holding an input device (a node under /dev/input, or a
    character device of major 13 in /dev) open, by pid, read here from
    /proc as the input_readers precondition documents it; None when not
    every process's descriptors can be read (not root, or root without a
    capability some process holds)."""
    found: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            names = os.listdir(entry / "fd")
        except FileNotFoundError:
            continue
        except PermissionError:
            return None
        for name in names:
            try:
                target = os.readlink(entry / "fd" / name)
            except FileNotFoundError:
                continue
            except PermissionError:
                # ptrace's check: a process with capabilities this one lacks (as Carrel says too).
                return None
            try:
                if target.startswith("/dev/input/") or (target.startswith("/dev/") and stat.S_ISCHR(os.stat(target).st_mode)
                                                         and os.major(os.stat(target).st_rdev) == 13):
                    found.setdefault(int(entry.name), []).append(target)
            except OSError:
                continue
    return found



# Preconditions a test machine cannot meet: Carrel runs headless or nested in
# Xvfb (where an X server listens), there is no logind seat, the policy
# files tests write belong to the test user, and the machine's own keyboard
# (SysRq, Ctrl+Alt+Del) and input devices are not an exam seat's (and the
# unprivileged leg cannot see other users' open devices). Waived for testing only; the preconditions tests check each of them unwaived.
TEST_WAIVERS = ("nested", "x_server", "seat", "policy_file", "kernel_keys", "virtual_input", "input_readers")


class CarrelFactory:
    """What the `carrel` fixture hands a test: starts carrel processes for it."""

    def __init__(self, procs: ProcessTracker, logdir: Path, logs: list) -> None:
        self.procs = procs
        self.logdir = logdir
        self.logs = logs  # (title, path) pairs shown when the test fails
        self.started: list[Carrel] = []
        self.runtime_dirs: list[Path] = []

    def start(self, app: Optional[Sequence[str]] = None, *, args: Sequence[str] = (),
              backend: str = "headless", env: Optional[Mapping[str, str]] = None,
              wait_ready: bool = True, ready_fd: bool = True,
              waive: Sequence[str] = TEST_WAIVERS, audit_log: Optional[Path] = None) -> Carrel:
        """Starts carrel. `waive`: the preconditions this test machine cannot
        meet (a headless or nested display, no logind seat, policy files the
        test user owns); test_preconditions passes fewer. `audit_log`: default
        a file in the test's log directory (shown with the logs)."""
        binary = carrel_bin()
        runtime = make_runtime_dir()
        self.runtime_dirs.append(runtime)
        index = len(self.started) + 1
        out = self.logdir / f"carrel{index}.stdout"
        err = self.logdir / f"carrel{index}.stderr"
        self.logs.append((f"carrel{index} stderr", err))
        self.logs.append((f"carrel{index} stdout (the app's stdout too)", out))
        full_env = clean_env({"XDG_RUNTIME_DIR": str(runtime), "WLR_BACKENDS": backend,
                              "WLR_RENDERER": "pixman"})
        if env:
            full_env.update(env)
        argv = [str(binary), "--log-level", log_level()]
        audit = audit_log or self.logdir / f"carrel{index}-audit.jsonl"
        argv += ["--audit-log", str(audit)]
        # Carrel's machine-readable trace: what tests assert on (Carrel.trace).
        # Beside the audit log, which the test made writable for the user
        # Carrel runs as (the privileged tests run it as another user).
        trace = audit.parent / f"carrel{index}-trace.jsonl"
        argv += ["--trace", str(trace)]
        for name in waive:
            argv += ["--waive-precondition", name]
        rfd = wfd = None
        if ready_fd:
            rfd, wfd = os.pipe()
            os.set_inheritable(wfd, True)
            argv += ["--ready-fd", str(wfd)]
        argv += list(args)
        if app is not None:
            argv += ["--", *map(str, app)]
        try:
            with open(out, "wb") as o, open(err, "wb") as e:
                proc = self.procs.spawn(f"carrel{index}", argv, env=full_env, stdout=o,
                                        stderr=e, pass_fds=(wfd,) if wfd is not None else ())
        finally:
            if wfd is not None:
                os.close(wfd)
        c = Carrel(self.procs, self.logdir, runtime, proc, out, err, argv, full_env, rfd)
        c.audit_log = audit
        c.trace_path = trace
        self.logs.append((f"carrel{index} trace", trace))
        self.started.append(c)
        if wait_ready:
            c.wait_ready()
        return c

    def sanitizer_reports(self) -> list[str]:
        """AddressSanitizer/LeakSanitizer/ThreadSanitizer reports in the carrels' stderr."""
        found = []
        for c in self.started:
            try:
                text = c.stderr_path.read_text(errors="replace")
            except OSError:
                continue
            start = text.find("==ERROR: ")
            if start < 0:
                start = text.find("WARNING: AddressSanitizer")
            if start < 0:
                start = text.find("WARNING: ThreadSanitizer")
            if start >= 0:
                found.append(f"{c.stderr_path}:\n{text[start:start + 6000]}")
        return found

    def cleanup(self) -> None:
        for c in self.started:
            c.close_ready_fd()
        for d in self.runtime_dirs:
            shutil.rmtree(d, ignore_errors=True)


def run_carrel_cli(args: Sequence[str], timeout: float = 10.0) -> subprocess.CompletedProcess:
    """Runs carrel for a CLI answer (no compositor expected); bounded."""
    try:
        return subprocess.run([str(carrel_bin()), *args], env=clean_env(),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise HarnessError(f"carrel {' '.join(args)} did not exit within {timeout}s "
                           f"(stderr so far: {e.stderr!r})") from None


# ---------------------------------------------------------------------------
# WAYLAND_DEBUG traces and wayland-info output

# libwayland 1.23 (the newer wlroots stack's) names the queue in braces and
# writes objects as interface#id; 1.21 (bookworm's) writes interface@id.
_Q = r"(?:\{[^}]*\} *)?"
_CONFIGURE_TOPLEVEL = re.compile(r"\] " + _Q + r"xdg_toplevel[@#](\d+)\.configure\((-?\d+), (-?\d+),")
_CONFIGURE_SURFACE = re.compile(r"\] " + _Q + r"xdg_surface[@#](\d+)\.configure\((\d+)\)")
_FRAME_REQUEST = re.compile(r"-> wl_surface[@#]\d+\.frame\(new id wl_callback[@#](\d+)\)")
_CALLBACK_DONE = re.compile(r"\] " + _Q + r"wl_callback[@#](\d+)\.done\(")
_ATTACH = re.compile(r"-> wl_surface[@#]\d+\.attach\(wl_buffer[@#]\d+,")
_DISPLAY_ERROR = re.compile(r"\] " + _Q + r"wl_display[@#]1\.error\(")


@dataclass
class TraceSummary:
    """What a client's WAYLAND_DEBUG=1 trace says happened, in order."""
    toplevel_configures: list  # (width, height)
    surface_configures: int
    frames_done: int  # wl_callback.done events answering wl_surface.frame
    frames_done_after_output_size: int  # ...after a configure to the expected size
    attached_after_configure: bool  # a buffer was attached after the first xdg_surface.configure
    protocol_errors: list

    def describe(self) -> str:
        return (f"toplevel configures {self.toplevel_configures[:8]}"
                f"{' ...' if len(self.toplevel_configures) > 8 else ''}, "
                f"surface configures {self.surface_configures}, frame callbacks done "
                f"{self.frames_done} ({self.frames_done_after_output_size} after the output-size "
                f"configure), buffer attached after configure: {self.attached_after_configure}, "
                f"protocol errors: {self.protocol_errors}")


def parse_trace(text: str, output_size: tuple = (1280, 720)) -> TraceSummary:
    configures, errors = [], []
    surface_configures = frames = frames_after = 0
    pending_frames: set = set()
    sized = attached = False
    for line in text.splitlines():
        m = _FRAME_REQUEST.search(line)
        if m:
            pending_frames.add(m.group(1))
            continue
        m = _CALLBACK_DONE.search(line)
        if m:
            if m.group(1) in pending_frames:  # not a wl_display.sync answer
                pending_frames.discard(m.group(1))
                frames += 1
                if sized:
                    frames_after += 1
            continue
        m = _CONFIGURE_TOPLEVEL.search(line)
        if m:
            size = (int(m.group(2)), int(m.group(3)))
            configures.append(size)
            if size == tuple(output_size):
                sized = True
            continue
        if _CONFIGURE_SURFACE.search(line):
            surface_configures += 1
            continue
        if surface_configures and _ATTACH.search(line):
            attached = True
            continue
        if _DISPLAY_ERROR.search(line):
            errors.append(line.strip())
    return TraceSummary(configures, surface_configures, frames, frames_after, attached, errors)


_WAYLAND_INFO_GLOBAL = re.compile(r"^interface: '([A-Za-z0-9_]+)',\s+version:\s*\d+,\s+name:\s*\d+",
                                  re.MULTILINE)


def wayland_info_interfaces(text: str) -> set:
    return set(_WAYLAND_INFO_GLOBAL.findall(text))


# ---------------------------------------------------------------------------
# Role table, as the contract states it

CORE_GLOBALS = {"wl_compositor", "xdg_wm_base", "wl_seat", "wl_shm", "wl_output"}

DESKTOP_GLOBALS = CORE_GLOBALS | {
    "wl_subcompositor", "wl_data_device_manager", "zwp_primary_selection_device_manager_v1",
    "zxdg_decoration_manager_v1", "zxdg_output_manager_v1", "wp_presentation",
    "wp_viewporter", "zwp_idle_inhibit_manager_v1",
}

# Desktop globals that exist only with a GPU renderer (absent with pixman).
RENDERER_GLOBALS = {"zwp_linux_dmabuf_v1", "wl_drm"}

ASSESSMENT_GLOBALS = {"carrel_assessment_manager_v1"}

FORBIDDEN_GLOBALS = {
    "zwlr_screencopy_manager_v1", "zwlr_export_dmabuf_manager_v1",
    "zwlr_data_control_manager_v1", "zwp_virtual_keyboard_manager_v1",
    "zwlr_virtual_pointer_manager_v1", "zwlr_layer_shell_v1",
    "zwlr_foreign_toplevel_manager_v1", "zwlr_gamma_control_manager_v1",
    "zwlr_output_manager_v1", "zwp_keyboard_shortcuts_inhibit_manager_v1",
    "zwlr_input_inhibit_manager_v1",
}
