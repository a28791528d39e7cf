"""What the root-only tests of carrel-privileged set up on the machine: the
cgroup v2 hierarchy, the helper's capability bounding set as its unit file
names it, the system users, and the machine of test_privileged.py (a
namespace, a delegated cgroup, the helper, carrel as `carrel`) with its
world (test_privileged.py, test_loop_never_waits.py)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_clients import World
from netns import NETPROBE, SYSTEM_PYTHON, Namespace, app_connect, run

MOUNT = '[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || mount -t cgroup2 none /sys/fs/cgroup || exit 97; '


def unit_bounding_set() -> str:
    """dist/carrel-privileged.service's CapabilityBoundingSet, as setpriv's list (+net_admin,…)."""
    unit = h.REPO / "dist" / "carrel-privileged.service"
    for line in unit.read_text().splitlines():
        if line.startswith("CapabilityBoundingSet="):
            caps = line.split("=", 1)[1].split()
            assert caps and all(c.startswith("CAP_") for c in caps), line
            return ",".join("+" + c[len("CAP_"):].lower() for c in caps)
    raise AssertionError(f"{unit} has no CapabilityBoundingSet= line")


def account(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name])
        return pwd.getpwnam(name)


def privileged_bin() -> Path:
    path = Path(os.environ.get("CARREL_PRIVILEGED_BIN") or h.carrel_bin().parent / "carrel-privileged")
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"carrel-privileged not found at {path} (set CARREL_PRIVILEGED_BIN or run `swift build`)")
    return path


class Machine:
    """The namespace, the delegated cgroup, the helper and a carrel wrapper."""

    def __init__(self, tmp_path: Path, procs, logdir: Path, logs: list) -> None:
        self.carrel_user, self.exam = account("carrel"), account("exam")
        self.procs, self.logdir, self.logs = procs, logdir, logs
        self.ns = Namespace(tmp_path)
        self.subtree = f"carrel-priv-{os.getpid()}-{tmp_path.name[-8:]}"
        # Shared with carrel (its socket, audit log) and the app (its files).
        self.shared = Path(tempfile.mkdtemp(prefix="carrel-priv-", dir="/tmp"))
        os.chmod(self.shared, 0o755)
        self.socket = self.shared / "privileged.sock"
        self.carrel_dir = self.shared / "carrel"
        self.carrel_dir.mkdir()
        os.chown(self.carrel_dir, self.carrel_user.pw_uid, self.carrel_user.pw_gid)
        self.app_dir = self.shared / "app"
        self.app_dir.mkdir()
        os.chown(self.app_dir, self.exam.pw_uid, self.exam.pw_gid)
        cg = f"/sys/fs/cgroup/{self.subtree}"
        owner = f"{self.carrel_user.pw_uid}:{self.carrel_user.pw_gid}"
        self.cgroup_sh(f"mkdir {cg} && chown {owner} {cg} {cg}/cgroup.procs {cg}/cgroup.threads {cg}/cgroup.subtree_control")
        self.helpers = 0
        self.wrapper = tmp_path / "carrel-as-carrel"
        self.wrapper.write_text(
            "#!/bin/sh\n"
            f"exec {self.ns.ip} netns exec {self.ns.name} unshare -m sh -c '{MOUNT}"
            f"echo $$ > {cg}/cgroup.procs && chown {owner} \"$XDG_RUNTIME_DIR\" && "
            f"exec setpriv --reuid={self.carrel_user.pw_uid} --regid={self.carrel_user.pw_gid} --init-groups "
            f"--inh-caps=-all --bounding-set=-all \"$0\" \"$@\"' {h.carrel_bin()} \"$@\"\n")
        self.wrapper.chmod(0o755)

    def cgroup_sh(self, script: str, check: bool = True) -> subprocess.CompletedProcess:
        """`script` with the cgroup v2 hierarchy on /sys/fs/cgroup."""
        return run(["unshare", "-m", "sh", "-c", MOUNT + script], check=check)

    def session_cgroups(self) -> list[str]:
        out = self.cgroup_sh(f"ls /sys/fs/cgroup/{self.subtree}").stdout.split()
        return [name for name in out if name.startswith("carrel-")]

    def start_helper(self, *extra: str, path: str | None = None) -> subprocess.Popen:
        """`path`: the helper's PATH (where it finds nft), instead of the test's."""
        self.helpers += 1
        err = self.logdir / f"helper{self.helpers}.stderr"
        self.logs.append((f"carrel-privileged {self.helpers} stderr", err))
        # With the unit's capability bounding set, as systemd starts it: a step
        # that needs a capability the unit does not grant fails here too.
        argv = [self.ns.ip, "netns", "exec", self.ns.name, "unshare", "-m", "sh", "-c", MOUNT + 'exec "$0" "$@"',
                "setpriv", f"--bounding-set=-all,{unit_bounding_set()}", "--inh-caps=-all",
                str(privileged_bin()), "--socket", str(self.socket), "--cgroup-subtree", self.subtree, *extra]
        with open(err, "wb") as e:
            env = h.clean_env() if path is None else {**h.clean_env(), "PATH": path}
            proc = self.procs.spawn(f"helper{self.helpers}", argv, env=env, stdout=e, stderr=e)
        assert h.wait_until(lambda: "listening on" in err.read_text(), 10), err.read_text()
        self.helper_log = err
        return proc

    def recover(self) -> subprocess.CompletedProcess:
        """The helper unit's ExecStopPost line, as systemd runs it (root, in the namespace here)."""
        return self.ns.exec(["unshare", "-m", "sh", "-c", MOUNT + 'exec "$0" "$@"', privileged_bin(),
                             "--recover", "--cgroup-subtree", self.subtree])

    def delete(self) -> None:
        cg = f"/sys/fs/cgroup/{self.subtree}"
        self.cgroup_sh(f"for d in {cg}/carrel-*; do [ -d \"$d\" ] && echo 1 > \"$d/cgroup.kill\"; done; sleep 0.2; "
                       f"rmdir {cg}/carrel-* 2>/dev/null; rmdir {cg}", check=False)
        self.ns.delete()
        shutil.rmtree(self.shared, ignore_errors=True)


class PrivilegedWorld(World):
    """carrel as `carrel` through the wrapper, netprobe.py as the app (as `exam`)."""

    def __init__(self, carrel_factory, procs, logdir, logs, python, protocols, m: Machine, args=()) -> None:
        self.procs, self.logdir, self.logs = procs, logdir, logs
        self.python, self.protocols = python, protocols
        self.m = m
        self.record = m.app_dir / "record"
        self.fifo = m.app_dir / "requests"
        self.results = m.app_dir / "results"
        os.mkfifo(self.fifo, 0o600)
        os.chown(self.fifo, m.exam.pw_uid, m.exam.pw_gid)
        self.requests = 0
        self.count = 0
        self.audit_log = m.carrel_dir / "audit.jsonl"
        with h.carrel_bin_replaced(m.wrapper):
            self.carrel = carrel_factory.start(
                app=[SYSTEM_PYTHON, NETPROBE, "app", self.record, self.fifo, self.results],
                args=["--provider", "network", "--privileged-helper", str(m.socket), *args], audit_log=self.audit_log)
        assert h.wait_until(self.record.exists, 10), f"carrel's app never ran\n{self.carrel.evidence()}"
        self.app_pid = int((m.app_dir / "record.pid").read_text())
        # The app has no path to carrel (WAYLAND_SOCKET): the test's client
        # takes the app socket from carrel's log.
        line = next(l for l in self.log().splitlines() if "(public) and " in l)
        self.app_display = line.split("(public) and ", 1)[1].split(" (app)")[0]

    def log(self) -> str:
        return self.carrel.stderr_path.read_text(errors="replace")

    def app_connect(self) -> str:
        return app_connect(self)
