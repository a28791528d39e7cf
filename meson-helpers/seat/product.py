"""What turns a seat's tree into the image a school flashes: the exam app
chosen at build time, nobody able to log in at the machine (no getty, no
root password), an administrator's SSH key if one is given, and a root file
system that is read-only, so that every boot starts from the same state and
no student leaves anything for the next. What must be written while it runs
lives in memory (tmpfs) and is gone at the next boot: the exam user's home,
logs (the audit log included: ship it with the journal or the fleet's
tools), Carrel's state, the temporary directories.
"""

import os
import shlex

# Read-only root; what runs writes only here, in memory.
VOLATILE = [
    ("/tmp", "mode=1777"),
    ("/var/tmp", "mode=1777"),
    ("/var/log", "mode=0755"),
    ("/var/lib/carrel", "mode=0700"),
    ("/var/lib/systemd", "mode=0755"),
    ("/var/cache", "mode=0755"),
    ("/home", "mode=0755"),
]

# Units that would give someone at the machine a login prompt.
GETTYS = ["getty@.service", "serial-getty@.service", "autovt@.service", "console-getty.service",
          "container-getty@.service", "debug-shell.service"]


def write(root, relative, text, mode=0o644):
    path = os.path.join(root, relative.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


def mask(root, unit):
    link = os.path.join(root, "etc/systemd/system", unit)
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink("/dev/null", link)


def app_drop_in(unit_text, app_argv):
    """A drop-in for the kiosk unit that runs `app_argv` instead of the demo
    (what `systemctl edit` would write, as docs/DEPLOY.md says)."""
    lines = [line for line in unit_text.splitlines() if line.startswith("ExecStart=")]
    if len(lines) != 1 or "/usr/bin/carrel-demo-exam" not in lines[0]:
        raise ValueError("the kiosk unit's ExecStart does not end in /usr/bin/carrel-demo-exam; cannot swap the app")
    start = lines[0].replace("/usr/bin/carrel-demo-exam", shlex.join(app_argv))
    return ("# Written by meson-helpers/build-image: the exam app chosen at build time.\n"
            "[Service]\nExecStart=\n" + start + "\n")


def finish(root, *, uuid, unit, app_argv=None, ssh_key=None, test_console=False):
    """Makes the tree at `root` (Carrel installed and set up by DEPLOY.md) the
    flashable seat. `unit`: the kiosk unit the setup enabled. Returns the
    kernel command line."""
    if app_argv:
        with open(os.path.join(root, "usr/lib/systemd/system", unit)) as f:
            write(root, f"etc/systemd/system/{unit}.d/exam-app.conf", app_drop_in(f.read(), app_argv))

    # The root file system read-only; what must change lives in memory.
    for path, _ in VOLATILE:
        # Mount points must be there already: nothing can make them on a read-only root.
        os.makedirs(os.path.join(root, path.lstrip("/")), exist_ok=True)
    fstab = [f"UUID={uuid} / ext4 ro,noatime 0 1"]
    fstab += [f"tmpfs {path} tmpfs {options},nosuid,nodev 0 0" for path, options in VOLATILE]
    write(root, "etc/fstab", "# Written by meson-helpers/build-image: read-only root, the rest in memory.\n"
          + "\n".join(fstab) + "\n")
    # The exam user's home, made anew at every boot on the tmpfs /home.
    write(root, "etc/tmpfiles.d/carrel-seat.conf",
          "# Written by meson-helpers/build-image: the exam user's home, empty at every boot.\n"
          "d /home/exam 0700 exam exam -\n")

    # Nobody logs in at the machine: no getty, root locked.
    for getty in GETTYS:
        mask(root, getty)
    shadow = os.path.join(root, "etc/shadow")
    with open(shadow) as f:
        entries = f.read().splitlines()
    locked = []
    for entry in entries:
        fields = entry.split(":")
        if fields[0] == "root":
            fields[1] = "!*"
        locked.append(":".join(fields))
    with open(shadow, "w") as f:
        f.write("\n".join(locked) + "\n")

    # SSH: each image would otherwise carry the host keys made when the
    # package was installed, the same on every seat. They are made at each
    # boot instead, in memory; without an administrator's key sshd is off.
    for name in os.listdir(os.path.join(root, "etc/ssh")) if os.path.isdir(os.path.join(root, "etc/ssh")) else []:
        if name.startswith("ssh_host_"):
            os.unlink(os.path.join(root, "etc/ssh", name))
    if ssh_key:
        write(root, "root/.ssh/authorized_keys", ssh_key.strip() + "\n", 0o600)
        os.chmod(os.path.join(root, "root/.ssh"), 0o700)
        write(root, "etc/ssh/sshd_config.d/carrel-seat.conf",
              "# Written by meson-helpers/build-image: keys only, the host key made at boot.\n"
              "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
              "HostKey /run/carrel-ssh/ssh_host_ed25519_key\n")
        write(root, "etc/systemd/system/carrel-ssh-host-key.service",
              "# Written by meson-helpers/build-image: a host key per boot (the root is read-only).\n"
              "[Unit]\nDescription=SSH host key for this boot\nBefore=ssh.service\n\n"
              "[Service]\nType=oneshot\nRemainAfterExit=yes\n"
              "ExecStart=/bin/sh -c 'install -d -m 0700 /run/carrel-ssh && "
              "ssh-keygen -q -t ed25519 -N \"\" -f /run/carrel-ssh/ssh_host_ed25519_key'\n\n"
              "[Install]\nWantedBy=ssh.service\n")
        wants = os.path.join(root, "etc/systemd/system/ssh.service.wants")
        os.makedirs(wants, exist_ok=True)
        link = os.path.join(wants, "carrel-ssh-host-key.service")
        if not os.path.lexists(link):
            os.symlink("/etc/systemd/system/carrel-ssh-host-key.service", link)
    elif os.path.exists(os.path.join(root, "lib/systemd/system/ssh.service")):
        mask(root, "ssh.service")
        mask(root, "ssh.socket")

    cmdline = "ro quiet"
    if test_console:
        # test-seat only, never in an image built for a school: a root shell
        # on the serial console, to look inside from the test.
        os.unlink(os.path.join(root, "etc/systemd/system/serial-getty@.service"))  # masked above
        write(root, "etc/systemd/system/serial-getty@ttyS0.service.d/test-seat-autologin.conf",
              "# test-seat only: a root shell on the serial console, for inspection\n"
              "[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200 %I dumb\n")
        cmdline = "ro console=tty0 console=ttyS0,115200"
    return cmdline
