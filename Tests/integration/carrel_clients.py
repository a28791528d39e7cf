"""Drivers of the clients the integration tests start: the pywayland client of
carrel-assessment-v1 (assessment_client.py: Driver, and World, a running carrel
with its app socket and the clients a test starts) and carrelctl (Ctl), and the
small helpers several test files share to begin sessions with them. The
fixtures that hand these to tests live in conftest.py."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import assessment_client
import carrel_harness as h

CLIENT = Path(assessment_client.__file__).resolve()
EVENT_TIMEOUT = 10.0  # began waits for a presented frame; the policy's own bound is 3 s
CTL_TIMEOUT = 15.0
EXIT_REFUSED, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_PERMISSION = 1, 64, 69, 77


def ctl_bin() -> Path:
    return Path(os.environ.get("CARREL_CTL_BIN", h.REPO / ".build" / "debug" / "carrelctl"))


class Driver:
    """One running assessment_client.py: commands in on stdin, event lines out."""

    def __init__(self, name: str, proc: subprocess.Popen, stderr_path: Path,
                 transcript_path: Path) -> None:
        self.name = name
        self.proc = proc
        self.stderr_path = stderr_path
        self.transcript_path = transcript_path
        self.lines: list[str] = []
        self.consumed: set[int] = set()  # indices of lines expect() returned
        self._partial = b""
        self._eof = False
        self._syncs = 0
        self._log = open(transcript_path, "w", buffering=1)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def evidence(self) -> str:
        return (f"--- {self.name} transcript ---\n{h.tail(self.transcript_path, 6000)}"
                f"--- {self.name} stderr ---\n{h.tail(self.stderr_path, 3000)}")

    def send(self, line: str) -> None:
        self._log.write(f"> {line}\n")
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise h.HarnessError(f"{self.name} is gone (status {self.proc.poll()}); "
                                 f"could not send {line!r}\n{self.evidence()}") from None

    def _pump(self, timeout: float) -> bool:
        """Reads what the client printed within timeout; False at EOF."""
        if self._eof:
            return False
        fd = self.proc.stdout.fileno()
        readable, _, _ = select.select([fd], [], [], max(0.0, timeout))
        if not readable:
            return True
        chunk = os.read(fd, 65536)
        if not chunk:
            self._eof = True
            return False
        self._partial += chunk
        *complete, self._partial = self._partial.split(b"\n")
        for raw in complete:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            self._log.write(f"< {line}\n")
        return True

    def expect(self, pattern: str, timeout: float = EVENT_TIMEOUT, what: str = "") -> re.Match:
        """The first line matching pattern (a regex, whole line) that no earlier
        expect() returned, waiting up to timeout for it. Lines it skips stay
        available, so independent streams (manager, session) can be awaited in
        any order."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            for i in range(len(self.lines)):
                if i in self.consumed:
                    continue
                m = regex.fullmatch(self.lines[i])
                if m:
                    self.consumed.add(i)
                    return m
            left = deadline - time.monotonic()
            if self._eof or left <= 0:
                break
            self._pump(min(left, 0.2))
        state = f"closed its output (status {self.proc.poll()})" if self._eof else "still running"
        raise h.HarnessError(f"{self.name}: no line matching {pattern!r}"
                             f"{' (' + what + ')' if what else ''} within {timeout}s; "
                             f"client {state}\n{self.evidence()}")

    def collect(self, duration: float) -> None:
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline and self._pump(deadline - time.monotonic()):
            pass

    def sync(self) -> None:
        """Every event the compositor sent before it handled this has been printed."""
        self._syncs += 1
        self.send(f"sync {self._syncs}")
        self.expect(f"synced {self._syncs}")

    def matching(self, pattern: str) -> list[str]:
        regex = re.compile(pattern)
        return [line for line in self.lines if regex.fullmatch(line)]

    def wait_exit(self, timeout: float = h.CLIENT_TIMEOUT) -> int:
        try:
            status = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise h.HarnessError(f"{self.name} did not exit within {timeout}s\n"
                                 f"{self.evidence()}") from None
        self.collect(0.2)
        return status

    # Conveniences for the usual steps.

    def map(self, window: str = "w") -> None:
        self.send(f"map {window}")
        self.expect(f"mapped {window}", what="a frame callback after the first buffer")

    def bind(self, manager: str = "m", version: int = 1) -> list[str]:
        """Binds a manager at `version`; returns the events up to its first done."""
        start = len(self.lines)
        self.send(f"bind_manager {manager} v{version}")
        self.expect(f"manager {manager} done", what="the events sent on bind")
        return [line for line in self.lines[start:] if line.startswith(f"manager {manager} ")]

    def begin(self, session: str = "s", config: str = "null", window: str = "w",
              manager: str = "m") -> None:
        self.send(f"begin {session} {manager} {window} {config}")

    def began(self, session: str = "s") -> None:
        m = self.expect(f"session {session} (began|failed .*)", what="the answer to begin")
        assert m.group(1) == "began", f"{self.name}: begin was answered with {m.group(0)!r}\n" \
                                      f"{self.evidence()}"

    def protocol_error(self) -> tuple[str, int]:
        m = self.expect(r"error (\S+) (\d+) (\d+)", what="a protocol error")
        status = self.wait_exit()
        assert status == assessment_client.EXIT_PROTOCOL_ERROR, \
            f"{self.name} exited {status} after a protocol error\n{self.evidence()}"
        return m.group(1), int(m.group(2))


class World:
    """A running carrel with its app socket, and the clients a test starts."""

    def __init__(self, carrel_factory, procs, logdir, logs, tmp_path, python, protocols,
                 backend="headless", env=None, args=()) -> None:
        self.procs, self.logdir, self.logs = procs, logdir, logs
        self.python, self.protocols = python, protocols
        record = tmp_path / "app-display"
        self.carrel = carrel_factory.start(
            app=["sh", "-c", 'printf "%s\\n" "$WAYLAND_DISPLAY" > "$0.tmp" && mv "$0.tmp" "$0" '
                             '&& exec sleep 300', str(record)],
            backend=backend, env=env, args=args)
        assert h.wait_until(record.exists, 10), f"carrel's app never ran\n{self.carrel.evidence()}"
        self.app_display = record.read_text().strip()
        assert self.app_display.startswith("/"), self.app_display
        self.count = 0

    def env(self, role: str) -> dict:
        display = self.app_display if role == "app" else self.carrel.socket_name
        return h.clean_env({"XDG_RUNTIME_DIR": str(self.carrel.runtime_dir),
                            "WAYLAND_DISPLAY": display,
                            "CARREL_PYWAYLAND_PROTOCOLS": str(self.protocols),
                            "PYTHONUNBUFFERED": "1"})

    def client(self, name: str, role: str = "app") -> Driver:
        self.count += 1
        label = f"{self.count}-{name}-{role}"
        stderr_path = self.logdir / f"{label}.stderr"
        transcript = self.logdir / f"{label}.transcript"
        self.logs.append((f"client {label} transcript", transcript))
        self.logs.append((f"client {label} stderr", stderr_path))
        with open(stderr_path, "wb") as err:
            proc = self.procs.spawn(label, [self.python, str(CLIENT)], env=self.env(role),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        driver = Driver(label, proc, stderr_path, transcript)
        driver.expect("ready", what="connected and globals listed")
        return driver

    def alive(self) -> None:
        assert self.carrel.alive(), f"carrel died\n{self.carrel.evidence()}"

    def run_tool(self, name: str, argv: list, role: str = "app", timeout: float = 5.0):
        """Runs a tool as a tracked client; returns (status or None if it timed out, out, err)."""
        self.count += 1
        out = self.logdir / f"{self.count}-{name}.stdout"
        err = self.logdir / f"{self.count}-{name}.stderr"
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = self.procs.spawn(name, argv, env=self.env(role), stdout=o, stderr=e)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
            status = None
        return status, out.read_text(errors="replace"), err.read_text(errors="replace")

    def paste(self, timeout: float = 5.0):
        h.require_tool("wl-paste")
        return self.run_tool("wl-paste", ["wl-paste", "--no-newline"], timeout=timeout)

    def copy(self, text: str) -> subprocess.Popen:
        """wl-copy in the foreground (one pid to track); returns once wl-paste sees text."""
        h.require_tool("wl-copy")
        self.count += 1
        err = self.logdir / f"{self.count}-wl-copy.stderr"
        self.logs.append(("wl-copy stderr", err))
        with open(err, "wb") as e:
            proc = self.procs.spawn("wl-copy", ["wl-copy", "--foreground", "--", text],
                                    env=self.env("app"), stderr=e)
        last = [None]

        def pasted():
            last[0] = self.paste()
            return last[0][0] == 0 and last[0][1] == text

        assert h.wait_until(pasted, 10, interval=0.2), \
            f"wl-copy {text!r} never reached wl-paste (last: {last[0]})\n{self.carrel.evidence()}"
        return proc

    def assert_clipboard_empty(self, text: str, when: str, may_wait: bool = False) -> None:
        """wl-paste (an app-role client) gets nothing: it fails or prints nothing.
        may_wait: during a session wl-paste's own window is hidden, so it may never
        get the keyboard focus it waits for; running out of time is nothing pasted."""
        status, out, err = self.paste(timeout=3.0 if may_wait else 5.0)
        assert text not in out, f"{when}: wl-paste still pasted {out!r}"
        if status is None:
            assert may_wait, f"{when}: wl-paste hung (no focus?) with no session active; " \
                             f"stderr {err!r}\n{self.carrel.evidence()}"
            return
        assert status != 0 and out == "", \
            f"{when}: wl-paste exited {status} with {out!r} (stderr {err!r}); expected " \
            f"'No selection' and a non-zero status"


class WithControlSocket:
    """Hands World a factory whose carrels serve the control socket at `path`."""

    def __init__(self, factory, path: Path) -> None:
        self.factory, self.path = factory, path

    def start(self, args=(), **kwargs):
        return self.factory.start(args=["--control-socket", str(self.path), *args], **kwargs)


class WithAuditLog:
    """Hands World a factory whose carrels append to the audit log at `path`."""

    def __init__(self, factory, path: Path) -> None:
        self.factory, self.path = factory, path

    def start(self, **kwargs):
        return self.factory.start(audit_log=self.path, **kwargs)


class Ctl:
    """Runs carrelctl against one socket; every run is bounded."""

    def __init__(self, binary: Path, socket_path: Path, logdir: Path, logs: list) -> None:
        self.binary, self.socket_path, self.logdir, self.logs = binary, socket_path, logdir, logs
        self.count = 0

    def run(self, *args: str, user: str | None = None, socket_path: Path | None = None,
            binary: Path | None = None) -> subprocess.CompletedProcess:
        argv = [str(binary or self.binary), *args]
        if "--socket" not in args:
            argv += ["--socket", str(socket_path or self.socket_path)]
        if user is not None:
            argv = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups", *argv]
        try:
            r = subprocess.run(argv, env=h.clean_env(), stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=CTL_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise h.HarnessError(f"{argv} did not exit within {CTL_TIMEOUT}s") from None
        self.count += 1
        log = self.logdir / f"carrelctl-{self.count}.txt"
        log.write_text(f"argv: {argv}\nexit: {r.returncode}\n--- stdout ---\n{r.stdout}"
                       f"--- stderr ---\n{r.stderr}")
        self.logs.append((f"carrelctl run {self.count}", log))
        return r

    def json(self, *args: str, expect: int = 0, **kwargs) -> dict:
        """Runs with --json; the exit status must be `expect` and stdout one JSON object."""
        r = self.run(*args, "--json", **kwargs)
        assert r.returncode == expect, \
            f"carrelctl {' '.join(args)} --json exited {r.returncode}, not {expect}\n" \
            f"stdout {r.stdout!r}\nstderr {r.stderr!r}"
        lines = r.stdout.strip().splitlines()
        assert len(lines) == 1, f"--json printed {len(lines)} lines: {r.stdout!r}"
        value = json.loads(lines[0])
        assert isinstance(value, dict) and value["ok"] == (expect == 0), value
        if expect != 0:
            assert value["error"]["code"] and value["error"]["message"], value
            assert value["error"]["message"] in r.stderr or "permission denied" in r.stderr, \
                f"the error is not on stderr too: {r.stderr!r}"
        return value

    def status(self) -> dict:
        return self.json("status")["status"]


def begin_session(world: World, limit: int = 600):
    a = world.client("exam")
    a.map()
    a.bind()
    a.send(f"config c ; time_limit c {limit}")
    a.begin(config="c")
    a.began()
    return a


class Factory:
    def __init__(self, factory, args) -> None:
        self.factory, self.args = factory, args

    def start(self, args=(), **kwargs):
        return self.factory.start(args=[*self.args, *args], **kwargs)


def guided_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                 control_dir, carrelctl, policy_text: str):
    path = control_dir / "ctl" / "control.sock"
    policy = tmp_path / "policy.toml"
    policy.write_text(policy_text)
    world = World(Factory(carrel, ["--control-socket", str(path), "--policy", str(policy)]), procs, logdir,
                  logs, tmp_path, client_python, pywayland_protocols)
    return world, Ctl(carrelctl, path, logdir, logs)


EXAM = (0x33, 0x66, 0xCC)  # what assessment_client.py paints over the whole output
OUTPUT = (1280, 720)


def begin_exam(w):
    """An app-role exam client with a mapped fullscreen window and an active session."""
    exam = w.client("exam")
    exam.map()
    exam.bind()
    exam.begin()
    exam.began()
    return exam


def end_exam(exam):
    exam.send("end s")
    exam.expect(r"session s ended", what="ended after end")


def lines(path: Path, prefix: str) -> list[str]:
    """The example's event lines, without its name."""
    text = path.read_text(errors="replace") if path.exists() else ""
    return [line[len(prefix) + 2:] for line in text.splitlines() if line.startswith(prefix + ": ")]


def guessed_bind(socket_path: str, interface: str) -> tuple:
    """A raw client binds global name 1 as `interface` (a global it was never
    shown: pywayland cannot even name such an interface); returns the
    protocol error Carrel sent, or None."""
    import struct
    import sys
    sys.path.insert(0, str(h.REPO / "Tests" / "fuzz"))
    from carrel_fuzz import Conn, message, wl_string

    conn = Conn(socket_path)
    conn.registry = 2
    conn.send(message(1, 1, struct.pack("<I", 2)))  # wl_display.get_registry
    conn.roundtrip(3, 5.0)
    body = struct.pack("<I", 1) + wl_string(interface.encode()) + struct.pack("<II", 1, 4)
    conn.send(message(2, 0, body))  # wl_registry.bind(1, interface, 1, new id 4)
    deadline = time.monotonic() + 5
    while conn.error is None and not conn.closed and time.monotonic() < deadline:
        conn.pump(0.1)
    conn.close()
    return conn.error
