"""What the root-only tests of carrel-privileged set up on the machine: the
cgroup v2 hierarchy, the helper's capability bounding set as its unit file
names it, and the system users."""

from __future__ import annotations

import pwd

import carrel_harness as h
from netns import run

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
