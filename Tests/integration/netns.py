"""A network namespace with carrel wrapped to run in it, a TCP server on its
loopback and netprobe.py's connection attempts: what the restriction-provider
tests (test_providers.py) and the privilege-separation tests share. Everything
here needs root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_clients import Driver, World, begin_exam

HERE = Path(__file__).resolve().parent
NETPROBE = HERE / "netprobe.py"
SYSTEM_PYTHON = "/usr/bin/python3"
PORT = 7411

MOUNT_CGROUP2 = ('[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || '
                 'mount -t cgroup2 none /sys/fs/cgroup || exit 97; ')


def tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if not path:
        pytest.skip(f"{name} is not installed (meson-helpers/packages.sh installs it)")
    return path


def run(argv, timeout=10.0, check=True) -> subprocess.CompletedProcess:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise AssertionError(f"{argv} exited {r.returncode}: {r.stderr}")
    return r


class Namespace:
    """A network namespace with loopback up, and carrel wrapped to run in it."""

    def __init__(self, tmp_path: Path, mount_cgroup2: bool = True, carrel_prefix: str = "") -> None:
        self.ip, self.nft = tool("ip"), tool("nft")
        tool("unshare")
        self.name = f"carrel-test-{os.getpid()}-{tmp_path.name[-12:]}"
        run([self.ip, "netns", "add", self.name])
        run([self.ip, "netns", "exec", self.name, self.ip, "link", "set", "lo", "up"])
        # `ip netns exec` mounts a fresh /sys, on which /sys/fs/cgroup is an
        # empty directory: mount the cgroup v2 hierarchy there (unless the test
        # wants carrel without one).
        mount = MOUNT_CGROUP2 if mount_cgroup2 else ""
        self.wrapper = tmp_path / "carrel-in-netns"
        self.wrapper.write_text(
            "#!/bin/sh\n"
            f"exec {self.ip} netns exec {self.name} unshare -m sh -c "
            f"'{mount}exec {carrel_prefix}\"$0\" \"$@\"' {h.carrel_bin()} \"$@\"\n")
        self.wrapper.chmod(0o755)

    def exec(self, argv, timeout=10.0, check=True) -> subprocess.CompletedProcess:
        return run([self.ip, "netns", "exec", self.name, *map(str, argv)], timeout=timeout, check=check)

    def table_exists(self) -> bool:
        return self.exec([self.nft, "list", "table", "inet", "carrel"], check=False).returncode == 0

    def outside_connect(self) -> str:
        """A connection attempt by a process outside the session's cgroup."""
        return self.exec([sys.executable, NETPROBE, "connect", PORT],
                         check=False).stdout.strip()

    def delete(self) -> None:
        subprocess.run([self.ip, "netns", "del", self.name], capture_output=True, timeout=10)


def start_server(ns: Namespace, procs, logdir) -> None:
    out = logdir / "server.stdout"
    with open(out, "wb") as o:
        procs.spawn("tcp-server", [ns.ip, "netns", "exec", ns.name, sys.executable, NETPROBE, "serve", PORT],
                    env=h.clean_env(), stdout=o, stderr=subprocess.STDOUT)
    assert h.wait_until(lambda: "listening" in out.read_text(), 10), out.read_text()


def begin_session(world) -> Driver:
    """The exam client's session, begun and active (carrel_clients.begin_exam)."""
    return begin_exam(world)


def app_connect(world) -> str:
    """A connection attempt by a world's app, which reads `connect PORT TAG` lines
    from `world.fifo` and writes `TAG ok|fail WHY` lines to `world.results`."""
    world.requests += 1
    tag = f"r{world.requests}"
    with open(world.fifo, "w") as f:
        f.write(f"connect {PORT} {tag}\n")

    def answered():
        if not world.results.exists():
            return None
        for line in world.results.read_text().splitlines():
            if line.startswith(tag + " "):
                return line[len(tag) + 1:]
        return None
    outcome = h.wait_until(answered, 10)
    assert outcome, f"the app did not answer request {tag}\n{world.carrel.evidence()}"
    return outcome


class NetWorld(World):
    """carrel in the namespace, with netprobe.py as its app."""

    def __init__(self, carrel_factory, procs, logdir, logs, tmp_path, python, protocols, ns: Namespace,
                 args=("--provider", "network")) -> None:
        self.procs, self.logdir, self.logs = procs, logdir, logs
        self.python, self.protocols = python, protocols
        self.ns = ns
        self.state_dir = tmp_path / "provider-state"
        record = tmp_path / "app-display"
        self.fifo = tmp_path / "requests"
        self.results = tmp_path / "results"
        if not self.fifo.exists():
            os.mkfifo(self.fifo)
        self.requests = 0
        self.record = record
        self.start_carrel(carrel_factory, args, python)
        self.count = 0

    def start_carrel(self, carrel_factory, args, python):
        if self.record.exists():
            self.record.unlink()
        with h.carrel_bin_replaced(self.ns.wrapper):
            self.carrel = carrel_factory.start(
                app=[python, NETPROBE, "app", self.record, self.fifo, self.results],
                args=[*args, "--provider-state-dir", str(self.state_dir)])
        assert h.wait_until(self.record.exists, 10), f"carrel's app never ran\n{self.carrel.evidence()}"
        self.app_display = self.record.read_text().strip()

    def app_connect(self) -> str:
        """A connection attempt by carrel's app (inside the session's cgroup)."""
        return app_connect(self)


def log_text(world) -> str:
    return world.carrel.stderr_path.read_text(errors="replace")


class FakeUnit:
    """A cgroup `system.slice/NAME` standing in for one of the seat's own
    services (sshd, node-exporter, …), made in the cgroup v2 hierarchy, as
    systemd makes one per running unit; `connect` runs netprobe inside it."""

    def __init__(self, ns: Namespace, name: str) -> None:
        self.ns, self.path = ns, f"/sys/fs/cgroup/system.slice/{name}"
        self.made_slice = False
        r = self.sh(f"[ -d /sys/fs/cgroup/system.slice ] && echo there || mkdir /sys/fs/cgroup/system.slice")
        self.made_slice = r.stdout.strip() != "there"
        self.sh(f"mkdir {self.path}")

    def sh(self, script: str) -> subprocess.CompletedProcess:
        return self.ns.exec(["unshare", "-m", "sh", "-c", MOUNT_CGROUP2 + script])

    def connect(self) -> str:
        r = self.ns.exec(["unshare", "-m", "sh", "-c",
                          MOUNT_CGROUP2 + f'echo $$ > {self.path}/cgroup.procs && exec "$0" "$@"',
                          sys.executable, NETPROBE, "connect", PORT], check=False)
        return r.stdout.strip()

    def remove(self) -> None:
        self.ns.exec(["unshare", "-m", "sh", "-c", MOUNT_CGROUP2 + f"rmdir {self.path}"
                      + (" && rmdir /sys/fs/cgroup/system.slice" if self.made_slice else "")], check=False)
