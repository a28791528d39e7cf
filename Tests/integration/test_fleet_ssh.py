"""A room of seats acted on over SSH, for real: three headless Carrel seats,
each with its own control socket and audit log, each behind its own OpenSSH
`sshd` on a loopback port (the seat's sshd is the administrator's, one per
machine as in a room; Carrel itself listens on nothing). The invigilators'
keys are forced to `carrelctl ssh-command --actor NAME`; `clush` (ClusterShell)
extends every seat's session in one command through an ssh_config naming the
seats. A stale session id and a session that ended are refused, garbage is
refused before Carrel is asked, and every action Carrel was asked for is in
each seat's audit chain with the key's name as its actor, and the chain
verifies.

sshd runs as root with a private configuration: host key, authorized_keys
and ssh_config in the test's directory, `UsePAM no`, `StrictModes no` (the
files live under /tmp, which is world-writable), root allowed only with a
forced command (`PermitRootLogin forced-commands-only`).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

import carrel_harness as h
from audit_log import audit, records
from carrel_clients import Ctl, WithAuditLog, WithControlSocket, World

ADMINISTRATIVE = 2
SSHD = "/usr/sbin/sshd"
SEATS = ("seat01", "seat02", "seat03")
RUN = 20  # seconds any one ssh or clush run may take


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path, comment: str) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, capture_output=True, timeout=RUN)
    return Path(f"{path}.pub").read_text().strip()


class Room:
    """The seats, their sshd, the invigilators' keys and the room's ssh_config."""

    def __init__(self, base: Path, procs, logdir: Path, logs: list) -> None:
        self.base, self.procs, self.logdir, self.logs = base, procs, logdir, logs
        self.count = 0
        self.keys = {name: base / f"key-{name}" for name in ("alice", "bob")}
        self.public = {name: keygen(path, f"{name}@room-b12") for name, path in self.keys.items()}
        self.ssh_config = base / "ssh_config"
        self.known_hosts = base / "known_hosts"

    def start_sshd(self, seat: str, ctl: Path, control_socket: Path) -> None:
        """The seat's own sshd on a loopback port, each key forced to ssh-command under its name."""
        d = self.base / seat
        d.mkdir()
        host_key = d / "host_ed25519"
        host_public = keygen(host_key, f"root@{seat}")
        authorized = d / "authorized_keys"
        authorized.write_text("".join(
            f'command="{ctl} ssh-command --actor {name}@room-b12 --socket {control_socket}",restrict '
            f"{self.public[name]}\n" for name in self.keys))
        port = free_port()
        config = d / "sshd_config"
        config.write_text(f"""Port {port}
ListenAddress 127.0.0.1
HostKey {host_key}
AuthorizedKeysFile {authorized}
PidFile none
UsePAM no
StrictModes no
PermitRootLogin forced-commands-only
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowUsers root
LogLevel VERBOSE
""")
        # The privilege-separation directory sshd requires (systemd's tmpfiles makes it on a booted system).
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        log = self.logdir / f"sshd-{seat}.log"
        self.logs.append((f"sshd {seat}", log))
        with open(log, "wb") as out:
            self.procs.spawn(f"sshd-{seat}", [SSHD, "-D", "-e", "-f", str(config)], env=h.clean_env(),
                             stdout=out, stderr=subprocess.STDOUT)
        assert h.wait_until(lambda: "Server listening on 127.0.0.1" in log.read_text(errors="replace"), 10), \
            f"sshd for {seat} did not start\n{log.read_text(errors='replace')}"
        with open(self.known_hosts, "a") as known:
            known.write(f"{seat} {' '.join(host_public.split()[:2])}\n")
        with open(self.ssh_config, "a") as cfg:
            cfg.write(f"Host {seat}\n  HostName 127.0.0.1\n  Port {port}\n  HostKeyAlias {seat}\n")

    def finish_config(self) -> None:
        with open(self.ssh_config, "a") as cfg:
            cfg.write(f"""Host seat*
  User root
  IdentitiesOnly yes
  UserKnownHostsFile {self.known_hosts}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
""")
        clush = self.base / "clush"
        clush.mkdir()
        (clush / "clush.conf").write_text(f"""[Main]
fanout: 16
connect_timeout: 10
command_timeout: {RUN}
color: never
ssh_path: /usr/bin/ssh
scp_path: /usr/bin/scp
""")

    def env(self) -> dict:
        return h.clean_env({"CLUSTERSHELL_CFGDIR": str(self.base / "clush"), "HOME": str(self.base)})

    def _run(self, title: str, argv: list) -> subprocess.CompletedProcess:
        r = subprocess.run(argv, env=self.env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=RUN)
        self.count += 1
        log = self.logdir / f"room-{self.count}.txt"
        log.write_text(f"argv: {argv}\nexit: {r.returncode}\n--- stdout ---\n{r.stdout}--- stderr ---\n{r.stderr}")
        self.logs.append((f"{title} {self.count}", log))
        return r

    def ssh(self, seat: str, key: str, *command: str) -> subprocess.CompletedProcess:
        return self._run("ssh", ["ssh", "-F", str(self.ssh_config), "-i", str(self.keys[key]), "-T", seat, *command])

    def clush(self, key: str, command: str) -> subprocess.CompletedProcess:
        """One command on every seat as `key`; exit status: the largest of the seats' (-S).
        (-o gives ssh its options: the room's ssh_config and the key.)"""
        return self._run("clush", ["clush", "-S", "--nostdin", "-w", "seat[01-03]",
                                   "-o", f"-F {self.ssh_config} -i {self.keys[key]}", command])


def per_seat(output: str) -> dict:
    """clush's 'seat01: line' output, by seat."""
    lines: dict = {}
    for line in output.splitlines():
        m = re.match(r"^(seat\d+): (.*)$", line)
        if m:
            lines.setdefault(m.group(1), []).append(m.group(2))
    return lines


def listening_inet_pids() -> set:
    """The pids owning a listening TCP or UDP socket (ss, all namespaces' processes as root)."""
    r = subprocess.run(["ss", "-H", "-l", "-t", "-u", "-n", "-p"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r
    return {int(p) for p in re.findall(r"pid=(\d+)", r.stdout)}


def test_a_room_is_extended_by_clush_through_each_seats_sshd_with_the_keys_name_in_the_audit_chain(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir, carrelctl):
    for tool in ("ssh", "ssh-keygen", "clush", "ss"):
        h.require_tool(tool)
    if not os.access(SSHD, os.X_OK):
        pytest.fail(f"{SSHD} is missing; install openssh-server (meson-helpers/packages.sh)")
    if os.geteuid() != 0:
        pytest.skip("runs sshd, which must be root to log a key in")
    (tmp_path / "room").mkdir()
    room = Room(tmp_path / "room", procs, logdir, logs)

    seats = {}
    for seat in SEATS:
        control = control_dir / seat / "control.sock"
        log = tmp_path / f"{seat}-audit.jsonl"
        (tmp_path / seat).mkdir()
        world = World(WithControlSocket(WithAuditLog(carrel, log), control), procs, logdir, logs,
                      tmp_path / seat, client_python, pywayland_protocols)
        a = world.client(f"exam-{seat}")
        a.map()
        a.bind()
        a.send("config c ; time_limit c 600")
        a.begin(config="c")
        a.began()
        (logdir / seat).mkdir()
        ctl = Ctl(carrelctl, control, logdir / seat, logs)
        seats[seat] = (world, a, ctl, log)
        room.start_sshd(seat, carrelctl, control)
    room.finish_config()
    ids = {seat: ctl.status()["session"]["id"] for seat, (_, _, ctl, _) in seats.items()}
    assert len(set(ids.values())) == 1, f"each seat's first session should have the same number: {ids}"
    session = ids["seat01"]

    # Carrel listens on nothing: no carrel process owns a listening inet socket.
    carrel_pids = {w.carrel.pid for w, _, _, _ in seats.values()}
    assert not carrel_pids & listening_inet_pids(), "a carrel process listens on the network"

    # One command extends the whole room.
    r = room.clush("alice", f"extend {session} 10")
    assert r.returncode == 0, r
    said = per_seat(r.stdout)
    for seat in SEATS:
        assert len(said.get(seat, [])) == 1 and said[seat][0].startswith(f"session {session} extended by 600 s:"), \
            (seat, r.stdout)
        assert seats[seat][2].status()["session"]["time_limit_seconds"] == 1200, seat

    # Bob ends seat02's and seat03's sessions; seat02's app begins a new one, seat03's stays over.
    for seat in ("seat02", "seat03"):
        r = room.ssh(seat, "bob", "end", str(session), "fire alarm")
        assert r.returncode == 0, r
        _, a, _, _ = seats[seat]
        a.expect(rf"session s interrupted {ADMINISTRATIVE} fire alarm")
        a.send("end s")
        a.expect(r"session s ended")
    a2 = seats["seat02"][1]
    a2.send("config c2 ; time_limit c2 600")
    a2.begin(session="s2", config="c2")
    a2.began(session="s2")
    renewed = seats["seat02"][2].status()["session"]["id"]
    assert renewed != session

    # The same command again: seat01 acts, seat02 (a stale session id) and seat03 (over) refuse.
    r = room.clush("alice", f"extend {session} 5")
    assert r.returncode == 1, r
    said, complained = per_seat(r.stdout), per_seat(r.stderr)
    assert len(said.get("seat01", [])) == 1 and said["seat01"][0].startswith(f"session {session} extended by 300 s:"), \
        r.stdout
    assert any(f"{renewed} is live now" in line and "nothing was done" in line
               for line in complained.get("seat02", [])), r.stderr
    assert any("no session is live now" in line and "nothing was done" in line
               for line in complained.get("seat03", [])), r.stderr
    assert seats["seat01"][2].status()["session"]["time_limit_seconds"] == 1500
    assert seats["seat02"][2].status()["session"]["time_limit_seconds"] == 600
    assert seats["seat03"][2].status()["state"] == "none"

    # Garbage is refused on every seat before Carrel is asked, saying what is allowed.
    for command, says in [(f"extend {session} lots", "not a whole number of minutes"),
                          ("rm -rf /", "\"rm\" is not allowed"),
                          (f"end {session}", "session and a reason")]:
        r = room.clush("alice", command)
        assert r.returncode == 64, (command, r)
        complained = per_seat(r.stderr)
        for seat in SEATS:
            assert any(says in line for line in complained.get(seat, [])), (command, seat, r.stderr)
    r = room.ssh("seat01", "bob")
    assert r.returncode == 64 and "interactive login" in r.stderr, r
    # A forced command whose --actor is not a name is refused before Carrel is asked.
    env = h.clean_env({"SSH_ORIGINAL_COMMAND": f"extend {session} 5"})
    r = subprocess.run([str(carrelctl), "ssh-command", "--actor", "alice bob", "--socket", str(seats["seat01"][2].socket_path)],
                       env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN)
    assert r.returncode == 64 and "a character other than letters" in r.stderr, r
    assert seats["seat01"][2].status()["session"]["time_limit_seconds"] == 1500

    # Each seat's audit chain verifies and holds every action Carrel was asked for, by key.
    expected = {
        "seat01": [("alice@room-b12", "done", "extend"), ("alice@room-b12", "done", "extend")],
        "seat02": [("alice@room-b12", "done", "extend"), ("bob@room-b12", "done", "end"),
                   ("alice@room-b12", "refused", "extend")],
        "seat03": [("alice@room-b12", "done", "extend"), ("bob@room-b12", "done", "end"),
                   ("alice@room-b12", "refused", "extend")],
    }
    for seat, (world, _, _, log) in seats.items():
        world.alive()
        r = audit(carrelctl, "verify", str(log))
        assert r.returncode == 0, (seat, r)
        found = [(rec.get("actor"), rec["reason"], rec["detail"].split()[1]) for rec in records(log)
                 if rec["event"] == "admin"]
        assert found == expected[seat], (seat, found)
