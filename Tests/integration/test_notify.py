"""Carrel tells a service manager it is ready (sd_notify), as systemd's Type=notify expects."""

import socket

import carrel_harness as h


def test_ready_is_sent_to_notify_socket(carrel, tmp_path):
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(path))
        listener.settimeout(h.READY_TIMEOUT)
        c = carrel.start(app=["sleep", "30"], env={"NOTIFY_SOCKET": str(path)}, ready_fd=False,
                         wait_ready=False)
        try:
            message = listener.recv(4096).decode()
        except socket.timeout:
            raise AssertionError(f"no sd_notify message within {h.READY_TIMEOUT}s\n{c.evidence()}")
    assert "READY=1" in message.split("\n"), f"notify message {message!r} lacks READY=1"
    # Ready means ready: the public socket it names exists.
    status = [line for line in message.split("\n") if line.startswith("STATUS=")]
    assert status and "wayland-" in status[0], f"no STATUS naming the socket in {message!r}"
    assert c.alive(), c.evidence()


def test_app_does_not_inherit_notify_socket(carrel, tmp_path):
    """Only Carrel reports readiness; an app must not impersonate it."""
    path = tmp_path / "notify.sock"
    out = tmp_path / "env.txt"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(path))
        c = carrel.start(app=["sh", "-c", f'env > "{out}"'], env={"NOTIFY_SOCKET": str(path)},
                         ready_fd=False, wait_ready=False)
        assert c.wait_exit() == 0, c.evidence()
    assert "NOTIFY_SOCKET=" not in out.read_text()
