"""The control socket's idle timeout against the real binary: a connection
that sends no complete request for 10 s (ControlSocketConnection.idleTimeout)
is closed by carrel, whether it sent nothing or half a line; one that keeps
sending requests is not. The other limits are in test_carrelctl.py."""

from __future__ import annotations

import json
import socket
import time

import carrel_harness as h  # noqa: F401

IDLE = 10.0


def connect(ctl) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(ctl.socket_path))
    return s


def closed_after(s: socket.socket, limit: float) -> float | None:
    """Seconds until carrel closed `s` (EOF), or None if it stayed open `limit` s."""
    started = time.monotonic()
    s.settimeout(limit)
    try:
        data = s.recv(4096)
    except socket.timeout:
        return None
    except ConnectionResetError:
        data = b""
    assert data == b"", f"unexpected data on an idle connection: {data!r}"
    return time.monotonic() - started


def status(s: socket.socket) -> dict:
    s.settimeout(5)
    s.sendall(b'{"command":"status"}\n')
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        assert chunk, "the connection was closed while it was in use"
        data += chunk
    return json.loads(data)


def test_idle_control_connections_are_closed_and_busy_ones_are_not(ctl_world):
    world, ctl = ctl_world
    silent, partial, busy = connect(ctl), connect(ctl), connect(ctl)
    partial.sendall(b'{"command":')
    assert status(busy)["ok"] is True
    started = time.monotonic()
    # The busy connection sends a request every 2 s: each answered one re-arms its timer.
    while time.monotonic() - started < IDLE + 2:
        time.sleep(2)
        assert status(busy)["ok"] is True, "a connection in use was closed"
    for name, s in (("silent", silent), ("half a line", partial)):
        waited = closed_after(s, 5)
        assert waited is not None, f"the {name} connection was still open {IDLE + 7:.0f} s after it last sent"
        s.close()
    assert status(busy)["ok"] is True
    busy.close()
    world.alive()
