"""Carrel lives exactly as long as its app, and passes on how the app ended."""

import os
import signal

import pytest

import carrel_harness as h


def read_pid(path, what, c) -> int:
    """Waits (bounded) for a shell to have written its pid to path."""
    def ready():
        try:
            text = path.read_text()
        except OSError:
            return None
        return int(text) if text.endswith("\n") and text.strip().isdigit() else None

    pid = h.wait_until(ready, 10)
    assert pid, f"{what} never wrote its pid to {path}\n{c.evidence()}"
    return pid


# Writes the shell's pid to $0 atomically ($0 is the file), then becomes CMD.
RECORD_PID_THEN = 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec '


@pytest.mark.parametrize("code", [7, 0, 1])
def test_carrel_exits_with_the_app_exit_status(carrel, code):
    c = carrel.start(app=["sh", "-c", f"exit {code}"], wait_ready=False)
    status = c.wait_exit()
    assert status == code, f"app exited {code}, carrel exited {status}\n{c.evidence()}"


def test_app_killed_by_sigkill_gives_137(carrel):
    c = carrel.start(app=["sh", "-c", "kill -9 $$"], wait_ready=False)
    status = c.wait_exit()
    assert status == 128 + signal.SIGKILL, \
        f"app died of SIGKILL, carrel exited {status} (want 137)\n{c.evidence()}"


def test_app_killed_by_sigterm_gives_143(carrel):
    c = carrel.start(app=["sh", "-c", "kill -15 $$"], wait_ready=False)
    status = c.wait_exit()
    assert status == 128 + signal.SIGTERM, \
        f"app died of SIGTERM, carrel exited {status} (want 143)\n{c.evidence()}"


def test_detached_grandchild_does_not_keep_carrel_alive(carrel, procs, tmp_path):
    """The app leaves a grandchild in a session of its own, holding carrel's
    stdout/stderr; carrel must still exit when the app (by its pid) exits."""
    pidfile = tmp_path / "grandchild.pid"
    inner = RECORD_PID_THEN + "sleep 300"
    # The app exits only once the grandchild runs (wrote its pid): exiting at
    # once, on a loaded machine Carrel could end the grandchild, an orphan of
    # what it launched, before it ever ran, and there was nothing to test.
    script = f"setsid sh -c '{inner}' '{pidfile}' & while [ ! -e '{pidfile}' ]; do sleep 0.05; done; exit 0"
    c = carrel.start(app=["sh", "-c", script], wait_ready=False)
    grandchild = read_pid(pidfile, "the grandchild", c)
    procs.adopt("grandchild", grandchild)
    status = c.wait_exit()
    assert status == 0, f"app exited 0 leaving a grandchild; carrel exited {status}\n{c.evidence()}"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_to_carrel_ends_app_and_exits_zero(carrel, procs, tmp_path, sig):
    pidfile = tmp_path / "app.pid"
    c = carrel.start(app=["sh", "-c", RECORD_PID_THEN + "sleep 300", str(pidfile)])
    app = read_pid(pidfile, "the app", c)
    procs.adopt("app", app)
    assert h.wait_until(lambda: h.pid_running(app), 5), "the app is not running"
    assert c.alive(), f"carrel ended before it was signalled\n{c.evidence()}"
    c.signal(sig)
    status = c.wait_exit()
    assert status == 0, f"{sig.name} to carrel: exit status {status}, want 0\n{c.evidence()}"
    ended = h.wait_until(lambda: not h.pid_running(app), 5)
    assert ended, f"the app (pid {app}) still runs after carrel exited on {sig.name}\n{c.evidence()}"


def test_without_an_app_carrel_runs_until_sigterm(carrel):
    c = carrel.start(app=None)
    # Still there a moment after it said it was ready.
    assert not h.wait_until(lambda: not c.alive(), 1.5), \
        f"carrel without an app exited on its own with {c.proc.returncode}\n{c.evidence()}"
    c.signal(signal.SIGTERM)
    status = c.wait_exit()
    assert status == 0, f"SIGTERM to carrel without an app: exit status {status}\n{c.evidence()}"


def test_ready_fd_is_not_leaked_to_the_app(carrel, tmp_path):
    """The ready fd is carrel's alone: the app must not inherit it (else a reader
    waiting for EOF waits for the app)."""
    record = tmp_path / "fds"
    c = carrel.start(app=["sh", "-c", 'ls -l /proc/$$/fd > "$0.tmp"; mv "$0.tmp" "$0"; '
                                      'exec sleep 300', str(record)], ready_fd=True)
    pipe = f"pipe:[{os.fstat(c.ready_read_fd).st_ino}]"
    assert h.wait_until(record.exists, 10), f"the app never ran\n{c.evidence()}"
    listing = record.read_text()
    assert pipe not in listing, f"the app inherited the ready pipe {pipe}:\n{listing}"
