"""A private D-Bus session bus and fake MPRIS players on it (fake_mpris_player.py,
Debian's python3-dbus), and carrel with the media provider: what the media
provider's tests share (test_providers.py, test_loop_never_waits.py)."""

from __future__ import annotations

import select
import subprocess
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_clients import World
from netns import SYSTEM_PYTHON, tool

HERE = Path(__file__).resolve().parent
PLAYER = HERE / "fake_mpris_player.py"


def start_session_bus(procs) -> "SessionBus":
    """A private session bus (dbus-daemon --session) for the test; skips without python3-dbus and python3-gi."""
    daemon = tool("dbus-daemon")
    if subprocess.run([SYSTEM_PYTHON, "-c", "import dbus, gi"], capture_output=True).returncode != 0:
        pytest.skip("python3-dbus and python3-gi are not installed (meson-helpers/packages.sh installs them)")
    proc = procs.spawn("dbus-daemon", [daemon, "--session", "--print-address", "--nofork"],
                       env=h.clean_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    ready, _, _ = select.select([proc.stdout], [], [], 10)
    assert ready, "dbus-daemon printed no address"
    address = proc.stdout.readline().decode().strip()
    assert address, "dbus-daemon printed no address"
    return SessionBus(address, proc)


class SessionBus:
    def __init__(self, address: str, proc: subprocess.Popen) -> None:
        self.address, self.proc = address, proc


class Player:
    def __init__(self, procs, logdir, address: str, name: str) -> None:
        self.out = logdir / f"player-{name}.stdout"
        env = h.clean_env({"DBUS_SESSION_BUS_ADDRESS": address})
        with open(self.out, "wb") as o:
            self.proc = procs.spawn(f"player-{name}", [SYSTEM_PYTHON, PLAYER, name], env=env,
                                    stdin=subprocess.PIPE, stdout=o, stderr=subprocess.STDOUT)
        assert h.wait_until(lambda: "ready" in self.lines(), 10), self.out.read_text()

    def lines(self) -> list[str]:
        return self.out.read_text().splitlines()

    def count(self, line: str) -> int:
        return self.lines().count(line)

    def play(self, quietly: bool = False) -> None:
        self.proc.stdin.write(b"play quietly\n" if quietly else b"play\n")
        self.proc.stdin.flush()

    def stall(self, seconds: float) -> None:
        """Its PlaybackStatus reads answer only after `seconds` from now on."""
        self.proc.stdin.write(f"stall {seconds}\n".encode())
        self.proc.stdin.flush()


    def stall_pause(self, seconds: float) -> None:
        """Its Pause answers only after `seconds` from now on."""
        self.proc.stdin.write(f"stall_pause {seconds}\n".encode())
        self.proc.stdin.flush()


def media_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, bus,
                verify_ms: int) -> World:
    return World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                 env={"DBUS_SESSION_BUS_ADDRESS": bus},
                 args=("--provider", "media", "--provider-state-dir", str(tmp_path / "state"),
                       "--provider-verify-interval", str(verify_ms)))
