"""carrelctl against the real binary: the admin control socket.

Each test starts carrel with `--control-socket` in a fresh private directory
(carrel creates the `ctl/` directory under it itself) and runs the real
carrelctl (CARREL_CTL_BIN, default .build/debug/carrelctl). Sessions are begun
by the pywayland client of test_assessment.py, on carrel's app socket.

The permission test needs root: carrel runs as root and carrelctl as nobody
(setpriv from util-linux), first against the socket as carrel lays it out (the
file system refuses), then with the directory and socket opened up by chmod
(the peer-credential check refuses).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import ADMINISTRATIVE
from carrel_clients import (CTL_TIMEOUT, EXIT_PERMISSION, EXIT_REFUSED, EXIT_UNAVAILABLE, EXIT_USAGE, Ctl,
                            begin_session)


# ---------------------------------------------------------------------------


def test_socket_is_laid_out_as_documented(ctl_world):
    world, ctl = ctl_world
    sock, directory = ctl.socket_path, ctl.socket_path.parent
    st = os.lstat(sock)
    assert stat.S_ISSOCK(st.st_mode), f"{sock} is not a socket"
    # As root: root-only (no group in the built-in policy); unprivileged: Carrel's user.
    assert st.st_uid == os.geteuid(), f"socket owned by uid {st.st_uid}, not {os.geteuid()}"
    assert stat.S_IMODE(st.st_mode) == 0o600, f"socket mode {oct(stat.S_IMODE(st.st_mode))}"
    dst = os.lstat(directory)
    assert dst.st_uid == os.geteuid() and stat.S_IMODE(dst.st_mode) == 0o700, \
        f"directory {directory}: uid {dst.st_uid} mode {oct(stat.S_IMODE(dst.st_mode))}"
    world.alive()


def test_without_a_session_status_is_none_and_end_and_extend_are_refused(ctl_world):
    world, ctl = ctl_world
    status = ctl.status()
    assert status["mode"] == "standard" and status["state"] == "none", status
    assert status["session"] is None and status["restrictions"] is None, status
    assert set(status["clients"]) == {"app", "input_method", "on_screen_keyboard", "participant", "untrusted"}, status

    r = ctl.run("end", "--reason", "proctor")
    assert r.returncode == EXIT_REFUSED, f"end without a session exited {r.returncode}: {r.stderr!r}"
    assert "no session" in r.stderr, r.stderr
    assert ctl.json("end", "--reason", "proctor", expect=EXIT_REFUSED)["error"]["code"] == "no_session"
    r = ctl.run("extend", "5")
    assert r.returncode == EXIT_REFUSED and "no session" in r.stderr, (r.returncode, r.stderr)
    assert ctl.json("extend", "5", expect=EXIT_REFUSED)["error"]["code"] == "no_session"

    r = ctl.run("status")
    assert r.returncode == 0 and "session: none" in r.stdout, (r.returncode, r.stdout, r.stderr)
    world.alive()


def test_status_extend_and_end_act_on_the_active_session(ctl_world):
    world, ctl = ctl_world
    untrusted = world.client("bystander", role="untrusted")
    a = begin_session(world, limit=600)

    status = ctl.status()
    assert status["state"] == "active", status
    session = status["session"]
    assert session["app"]["pid"] == a.pid, f"app pid {session['app']['pid']}, client is {a.pid}"
    assert session["app"]["role"] == "app", session
    assert session["participants"] == [], session
    assert session["time_limit_seconds"] == 600 and session["added_seconds"] == 0, session
    assert 590 <= session["time_left_seconds"] <= 600, session
    restrictions = status["restrictions"]
    assert restrictions and restrictions["hide_untrusted_windows"] and restrictions["refuse_capture"] \
        and restrictions["isolate_clipboard"] and restrictions["input_only_to_session"], restrictions
    assert status["clients"]["app"] >= 1 and status["clients"]["untrusted"] >= 1, status
    human = ctl.run("status")
    assert human.returncode == 0, human.stderr
    assert "session: active" in human.stdout and f"pid {a.pid}" in human.stdout, human.stdout

    before = session["time_left_seconds"]
    outcome = ctl.json("extend", "5")["outcome"]
    assert outcome["added_seconds"] == 300 and outcome["time_limit_seconds"] == 900, outcome
    after = ctl.status()["session"]
    assert after["time_limit_seconds"] == 900 and after["added_seconds"] == 300, after
    assert after["time_left_seconds"] >= before + 295, f"time left {before} → {after['time_left_seconds']}"
    r = ctl.run("extend", "10")
    assert r.returncode == 0 and "extended by 600 s" in r.stdout, (r.returncode, r.stdout, r.stderr)

    # Above the built-in maximum of 8 h: refused, and nothing changes.
    refused = ctl.json("extend", "600", expect=EXIT_REFUSED)
    assert refused["error"]["code"] == "above_maximum" and "28800" in refused["error"]["message"], refused
    assert ctl.status()["session"]["time_limit_seconds"] == 1500

    # Nothing reached the app so far.
    a.sync()
    assert not a.matching("session s interrupted.*"), a.lines

    r = ctl.run("end", "--reason", "proctor")
    assert r.returncode == 0, f"end exited {r.returncode}: {r.stderr!r}"
    assert "interrupted (administrative): proctor" in r.stdout, r.stdout
    m = a.expect(r"session s interrupted (\d+) (.*)", what="interrupted(administrative) after carrelctl end")
    assert int(m.group(1)) == ADMINISTRATIVE and m.group(2) == "proctor", m.group(0)

    status = ctl.status()
    assert status["state"] == "ending" and status["restrictions"] is not None, \
        f"interrupted is not terminal: the restrictions stay until the app ends\n{status}"
    assert ctl.json("extend", "5", expect=EXIT_REFUSED)["error"]["code"] == "wrong_state"
    second = ctl.json("end", "--reason", "again")
    assert second["outcome"]["message"] == "again", second
    a.expect(rf"session s interrupted {ADMINISTRATIVE} again")

    a.send("end s")
    a.expect("session s ended")
    status = ctl.status()
    assert status["state"] == "none" and status["restrictions"] is None, status
    untrusted.sync()
    world.alive()


@pytest.mark.parametrize("args, mention", [
    (["reboot"], "reboot"),
    (["extend", "abc"], "not a whole number"),
    (["extend", "0"], "1 to 600"),
    (["extend", "601"], "1 to 600"),
    (["extend", "-5"], ""),
    (["end"], "--reason"),
    (["end", "--reason", "  "], "empty"),
    (["status", "--no-such-flag"], "no-such-flag"),
])
def test_bad_usage_exits_64_with_a_message(ctl_world, args, mention):
    world, ctl = ctl_world
    r = ctl.run(*args)
    assert r.returncode == EXIT_USAGE, f"carrelctl {args} exited {r.returncode}: {r.stderr!r}"
    assert r.stderr.strip() and mention in r.stderr, f"carrelctl {args}: stderr {r.stderr!r}"
    assert ctl.status()["state"] == "none"
    world.alive()


def test_unreachable_socket_exits_69(carrelctl, control_dir, logdir, logs):
    ctl = Ctl(carrelctl, control_dir / "absent.sock", logdir, logs)
    r = ctl.run("status")
    assert r.returncode == EXIT_UNAVAILABLE, (r.returncode, r.stderr)
    assert "cannot connect" in r.stderr and "absent.sock" in r.stderr, r.stderr
    assert ctl.json("status", expect=EXIT_UNAVAILABLE)["error"]["code"] == "unavailable"


def test_environment_variable_names_the_socket(ctl_world):
    world, ctl = ctl_world
    r = subprocess.run([str(ctl.binary), "status", "--json"], capture_output=True, text=True,
                       env=h.clean_env({"CARREL_CONTROL_SOCKET": str(ctl.socket_path)}),
                       stdin=subprocess.DEVNULL, timeout=CTL_TIMEOUT)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"]["state"] == "none"


def test_slow_and_hostile_control_clients_do_not_block_carrel(ctl_world):
    """A client that never finishes its line, one that floods, and one that
    sends garbage: the compositor and other control clients carry on."""
    world, ctl = ctl_world
    a = begin_session(world)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(str(ctl.socket_path))
    silent.sendall(b'{"command":"sta')  # and never the rest
    flood = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    flood.connect(str(ctl.socket_path))
    flood.settimeout(10)
    try:
        flood.sendall(b"x" * 20000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    answer = b""
    while not answer.endswith(b"\n"):
        try:
            chunk = flood.recv(4096)
        except ConnectionResetError:
            break
        if not chunk:
            break
        answer += chunk
    assert answer, "a line over the limit got no answer"
    reply = json.loads(answer.splitlines()[0])
    assert reply["ok"] is False and reply["error"]["code"] == "bad_request", reply
    try:
        rest = flood.recv(4096)
    except ConnectionResetError:  # closed with the flood unread
        rest = b""
    assert rest == b"", "the flooding connection was not closed"
    flood.close()

    garbage = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    garbage.connect(str(ctl.socket_path))
    garbage.settimeout(10)
    garbage.sendall(b'not json\n{"command":"status"}\n')
    data = b""
    while data.count(b"\n") < 2:
        chunk = garbage.recv(65536)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    first, second = (json.loads(line) for line in data.splitlines()[:2])
    assert first["error"]["code"] == "bad_request" and second["status"]["state"] == "active", data
    garbage.close()

    started = time.monotonic()
    assert ctl.status()["state"] == "active"
    a.sync()  # the Wayland side answers too
    assert time.monotonic() - started < 5, "carrel answered slowly with a half-sent request pending"
    silent.close()
    world.alive()


def test_permission_denied_for_another_user(carrel, control_dir, carrelctl, logdir, logs):
    if os.geteuid() != 0:
        pytest.skip("needs root: carrel runs as root and carrelctl as nobody "
                    "(meson-helpers/test-all runs the suite as root)")
    h.require_tool("setpriv")
    nobody = pwd.getpwnam("nobody").pw_uid
    path = control_dir / "ctl" / "control.sock"
    c = carrel.start(app=["sleep", "300"], args=["--control-socket", str(path)])
    # nobody must be able to run the binary: a copy in a directory it can search.
    os.chmod(control_dir, 0o755)
    binary = control_dir / "carrelctl"
    shutil.copy2(carrelctl, binary)
    os.chmod(binary, 0o755)
    ctl = Ctl(binary, path, logdir, logs)

    st, dst = os.lstat(path), os.lstat(path.parent)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, 0, 0o600), \
        f"socket uid {st.st_uid} gid {st.st_gid} mode {oct(stat.S_IMODE(st.st_mode))}"
    assert (dst.st_uid, stat.S_IMODE(dst.st_mode)) == (0, 0o700), \
        f"directory uid {dst.st_uid} mode {oct(stat.S_IMODE(dst.st_mode))}"
    assert ctl.status()["state"] == "none", "root itself was refused"

    # Layer 1, the file system: nobody cannot even reach the socket.
    r = ctl.run("status", user="nobody")
    assert r.returncode == EXIT_PERMISSION, f"nobody: exit {r.returncode}, stderr {r.stderr!r}"
    assert "permission denied" in r.stderr, r.stderr
    assert ctl.json("end", "--reason", "x", user="nobody", expect=EXIT_PERMISSION)["error"]["code"] \
        == "permission_denied"

    # Layer 2, the peer-credential check: with the directory and socket opened
    # up by mistake, nobody connects and Carrel still refuses, and logs it.
    os.chmod(path.parent, 0o755)
    os.chmod(path, 0o666)
    for args in (["status"], ["end", "--reason", "x"], ["extend", "5"]):
        r = ctl.run(*args, user="nobody")
        assert r.returncode == EXIT_PERMISSION, f"nobody {args}: exit {r.returncode}, {r.stderr!r}"
        assert "permission denied" in r.stderr and f"uid {nobody}" in r.stderr, \
            f"the refusal is not Carrel's peer check: {r.stderr!r}"
    refusal = ctl.json("status", user="nobody", expect=EXIT_PERMISSION)
    assert refusal["error"]["code"] == "permission_denied" and f"uid {nobody}" in refusal["error"]["message"]
    assert h.wait_until(lambda: "control: refused a connection" in c.stderr_path.read_text(errors="replace"), 5), \
        f"no log line for the refusal\n{c.evidence()}"
    assert ctl.status()["state"] == "none", "root was refused after the refusals"
    assert c.alive(), c.evidence()


def _start_failing(carrel, path: Path):
    c = carrel.start(app=["sleep", "300"], args=["--control-socket", str(path)], wait_ready=False)
    status = c.wait_exit()
    return status, c.stderr_path.read_text(errors="replace")


def test_an_unsafe_socket_directory_or_a_live_socket_stops_carrel(carrel, control_dir, carrelctl,
                                                                  logdir, logs):
    # A directory anyone may write to: someone could replace the socket.
    shared = control_dir / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    status, err = _start_failing(carrel, shared / "control.sock")
    assert status == 1, f"carrel exited {status} with a world-writable socket directory\n{err[-2000:]}"
    assert "writable by group or others" in err, err[-2000:]

    # A socket a running carrel serves is not taken over; the first one keeps it.
    path = control_dir / "ctl" / "control.sock"
    first = carrel.start(app=["sleep", "300"], args=["--control-socket", str(path)])
    status, err = _start_failing(carrel, path)
    assert status == 1 and "already serves" in err, f"second carrel: {status}\n{err[-2000:]}"
    assert Ctl(carrelctl, path, logdir, logs).status()["state"] == "none"
    assert first.alive(), first.evidence()

    # A stale socket (its carrel was killed) is replaced.
    first.proc.kill()
    first.wait_exit()
    assert path.exists(), "a killed carrel cannot have removed its socket"
    second = carrel.start(app=["sleep", "300"], args=["--control-socket", str(path)])
    assert Ctl(carrelctl, path, logdir, logs).status()["state"] == "none"
    assert second.alive(), second.evidence()


def test_relative_control_socket_path_is_refused(carrel_bin):
    r = h.run_carrel_cli(["--control-socket", "control.sock"])
    assert r.returncode == 64 and "not an absolute path" in r.stderr, (r.returncode, r.stderr)


def test_connections_are_capped_and_a_freed_slot_is_reused(ctl_world):
    world, ctl = ctl_world
    held = []
    for _ in range(8):  # ControlSocket.maximumConnections
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(str(ctl.socket_path))
        s.sendall(b'{"command":"status"}\n')
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            assert chunk, "a held connection was closed"
            data += chunk
        assert json.loads(data)["ok"] is True
        held.append(s)
    r = ctl.run("status")
    assert r.returncode == EXIT_UNAVAILABLE and "already open" in r.stderr, (r.returncode, r.stderr)
    held.pop().close()
    assert h.wait_until(lambda: ctl.run("status").returncode == 0, 5), "the freed slot was not reused"
    for s in held:
        s.close()
    world.alive()
