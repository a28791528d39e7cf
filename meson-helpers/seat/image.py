"""Per-run guest disk for test-seat (the fast part; the package rootfs is
build-base's, cached): extract the base, install Carrel with its own
installer, run docs/DEPLOY.md's once-per-machine setup *as written* in a
chroot, add the test's own inspection access, and pack the tree into a raw
ext4 image with `mkfs.ext4 -d` (no loop mounts, no privileges beyond
owning the files).

The setup commands are the document's: the fenced ```sh block after the line
`<!-- test-seat: setup -->` (the privileged-helper layout,
carrel-kiosk.service) or `<!-- test-seat: setup-root -->` (the root layout,
carrel-kiosk-root.service). If the document changes, the guest changes with
it; a missing marker is an error, never a silent default.
"""

import os
import re
import shutil
import subprocess
import sys
import time

LAYOUTS = {
    "helper": {"marker": "<!-- test-seat: setup -->", "unit": "carrel-kiosk.service"},
    "root": {"marker": "<!-- test-seat: setup-root -->", "unit": "carrel-kiosk-root.service"},
}


class ImageError(Exception):
    pass


def log(message):
    print(f"test-seat: {message}", file=sys.stderr, flush=True)


def setup_block(deploy_md, layout):
    """The ```sh block following the layout's marker in DEPLOY.md."""
    marker = LAYOUTS[layout]["marker"]
    with open(deploy_md, encoding="utf-8") as f:
        text = f.read()
    position = text.find(marker)
    if position < 0:
        raise ImageError(f"{deploy_md} has no line `{marker}`: test-seat runs the fenced ```sh block after it as the "
                         f"{layout} layout's setup. Add the marker line just before that block")
    match = re.compile(r"```sh[ \t]*\n(.*?)\n```", re.S).search(text, position + len(marker))
    if not match:
        raise ImageError(f"{deploy_md}: no ```sh block follows `{marker}`")
    between = text[position + len(marker):match.start()]
    if "```" in between:
        raise ImageError(f"{deploy_md}: another fenced block comes between `{marker}` and its ```sh block")
    return match.group(1)


def run(argv, **kwargs):
    result = subprocess.run(argv, **kwargs)
    if result.returncode != 0:
        raise ImageError(f"`{' '.join(argv)}` exited {result.returncode}")
    return result


def write(root, relative, text, mode=0o644):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


def prepare(*, checkout, base_tar, bindir, layout, root):
    """The seat as DEPLOY.md makes it, in the directory `root`: the base
    extracted, Carrel installed by its installer, the layout's setup run.
    Nothing of the test's own; shared by test-seat and build-image. Returns
    the steps' timings."""
    if os.geteuid() != 0:
        raise ImageError("building the guest image needs root (chroot, files owned by the guest's users); run as root")
    timings = {}
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)

    t = time.monotonic()
    run(["tar", "-C", root, "--numeric-owner", "--xattrs", "--xattrs-include=*", "-xf", base_tar])
    timings["extract base"] = time.monotonic() - t

    # Carrel, by its own installer, exactly as an administrator runs it
    # (with a DESTDIR: the binaries are the host's release build).
    t = time.monotonic()
    run([os.path.join(checkout, "meson-helpers/install"), "--destdir", root, "--prefix", "/usr",
         "--bindir-from", bindir], stdout=subprocess.DEVNULL)
    timings["install Carrel"] = time.monotonic() - t

    # DEPLOY.md's setup, as written, inside the guest's tree. systemctl in a
    # chroot works offline (enable/disable edit symlinks; daemon-reload is
    # skipped with a note).
    t = time.monotonic()
    deploy_md = os.path.join(checkout, "docs/DEPLOY.md")
    block = setup_block(deploy_md, layout)
    source = f"docs/DEPLOY.md ({LAYOUTS[layout]['marker']})"
    log(f"{layout}: running the setup from {source} in the guest's tree:\n" +
        "\n".join("    " + line for line in block.splitlines()))
    # systemctl knows it is in a chroot (and then skips daemon-reload
    # instead of failing) only by comparing / with /proc/1/root. The host's
    # pid 1 may not be readable (seen: a sandboxed CI host), so the setup
    # runs in a pid namespace whose pid 1 is our own shell, outside the
    # chroot, with its /proc mounted in a mount namespace that ends with it.
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LC_ALL": "C.UTF-8"}
    enter = 'mount -t proc proc "$1/proc" && chroot "$1" /bin/sh -e -c "$2"'
    result = subprocess.run(["unshare", "--pid", "--fork", "--mount", "--propagation", "private",
                             "/bin/sh", "-c", enter, "sh", root, block], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.stdout.strip():
        log("setup said:\n" + "\n".join("    " + line for line in result.stdout.strip().splitlines()))
    if result.returncode != 0:
        raise ImageError(f"the {layout} setup from {source} failed in the guest (exit {result.returncode}); its output is above")
    timings["DEPLOY.md setup"] = time.monotonic() - t

    return timings


def build(*, checkout, base_tar, bindir, layout, out_dir, ssh_key=None):
    """Makes out_dir/{layout}.raw, plus the kernel and initrd for direct
    boot; returns a dict of their paths and the steps' timings."""
    root = os.path.join(out_dir, f"rootfs-{layout}")
    timings = prepare(checkout=checkout, base_tar=base_tar, bindir=bindir, layout=layout, root=root)

    # The test's own additions, never in a shipped image: a root shell on
    # the serial console for inspection, a name for the logs.
    write(root, "etc/hostname", "carrel-seat\n")
    write(root, "etc/systemd/system/serial-getty@ttyS0.service.d/test-seat-autologin.conf",
          "# test-seat only: a root shell on the serial console, for inspection\n"
          "[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200 %I dumb\n")
    # Serial gettys are started from the kernel's console= by a generator;
    # enabling it too makes it independent of the command line.
    os.makedirs(os.path.join(root, "etc/systemd/system/getty.target.wants"), exist_ok=True)
    link = os.path.join(root, "etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service")
    if not os.path.lexists(link):
        os.symlink("/lib/systemd/system/serial-getty@.service", link)
    write(root, "etc/fstab", "/dev/vda / ext4 rw,errors=remount-ro 0 1\n")
    # The test's isolated network (QEMU's user-mode network with restrict=on:
    # the guest reaches nothing but what the test forwards): a fixed address
    # by systemd-networkd, and the host's key for root over ssh, the fleet's
    # way in that the network cut must leave open.
    write(root, "etc/systemd/network/10-test-seat.network",
          "# test-seat only: QEMU's user-mode network\n[Match]\nName=en*\n\n"
          "[Network]\nAddress=10.0.2.15/24\nGateway=10.0.2.2\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n")
    for target, unit in (("multi-user.target.wants", "systemd-networkd.service"),
                         ("sockets.target.wants", "systemd-networkd.socket")):
        os.makedirs(os.path.join(root, "etc/systemd/system", target), exist_ok=True)
        link = os.path.join(root, "etc/systemd/system", target, unit)
        if not os.path.lexists(link):
            os.symlink(f"/lib/systemd/system/{unit}", link)
    # The fleet's other services on that network, which the network cut must
    # spare: a local resolver (unbound, asking the test's DNS server at
    # 10.0.2.100 over TCP, the one protocol QEMU forwards there; no DNSSEC:
    # the test's names are unsigned; test. is one of the special-use names
    # unbound answers itself unless told not to) that every program asks,
    # and systemd-journal-upload sending the journal to the test's receiver.
    for name in ("etc/unbound/unbound.conf.d/root-auto-trust-anchor-file.conf", "etc/resolv.conf"):
        if os.path.lexists(os.path.join(root, name)):
            os.unlink(os.path.join(root, name))
    write(root, "etc/unbound/unbound.conf.d/test-seat.conf",
          "# test-seat only: the isolated network's DNS server, over TCP\n"
          "server:\n    interface: 127.0.0.1\n    do-ip6: no\n    tcp-upstream: yes\n"
          "    module-config: \"iterator\"\n    qname-minimisation: no\n    local-zone: \"test.\" nodefault\n"
          "forward-zone:\n    name: \".\"\n    forward-addr: 10.0.2.100@53\n")
    write(root, "etc/resolv.conf", "# test-seat only: the local resolver\nnameserver 127.0.0.1\n")
    write(root, "etc/systemd/journal-upload.conf.d/test-seat.conf",
          "# test-seat only: the test's receiver\n[Upload]\nURL=http://10.0.2.100:19532\n")
    # The uploader runs from boot. The resolver is started by the test that
    # asks it: its start (the trust anchor's update, which finds no network)
    # would otherwise lengthen every boot the other tests time.
    link = os.path.join(root, "etc/systemd/system/multi-user.target.wants", "systemd-journal-upload.service")
    if not os.path.lexists(link):
        os.symlink("/lib/systemd/system/systemd-journal-upload.service", link)
    unbound_wants = os.path.join(root, "etc/systemd/system/multi-user.target.wants", "unbound.service")
    if os.path.lexists(unbound_wants):
        os.unlink(unbound_wants)
    if ssh_key:
        with open(ssh_key, encoding="utf-8") as f:
            write(root, "root/.ssh/authorized_keys", f.read(), mode=0o600)
        os.chmod(os.path.join(root, "root/.ssh"), 0o700)

    # Direct kernel boot: the kernel and initrd the guest's packages installed.
    boot = os.path.join(root, "boot")
    kernels = sorted(n for n in os.listdir(boot) if n.startswith("vmlinuz-"))
    initrds = sorted(n for n in os.listdir(boot) if n.startswith("initrd.img-"))
    if not kernels or not initrds:
        raise ImageError(f"the base rootfs has no kernel or initrd in /boot ({os.listdir(boot)}); rebuild it "
                         "(rm the base tar under the cache) and check linux-image-amd64 and initramfs-tools installed")
    kernel = os.path.join(out_dir, f"{layout}-vmlinuz")
    initrd = os.path.join(out_dir, f"{layout}-initrd.img")
    shutil.copyfile(os.path.join(boot, kernels[-1]), kernel)
    shutil.copyfile(os.path.join(boot, initrds[-1]), initrd)

    # The tree into an ext4 image with room to run (journal, logs).
    t = time.monotonic()
    used = int(subprocess.run(["du", "-sb", root], stdout=subprocess.PIPE, text=True, check=True).stdout.split()[0])
    size_mb = used * 13 // 10 // (1 << 20) + 512
    raw = os.path.join(out_dir, f"{layout}.raw")
    if os.path.exists(raw):
        os.unlink(raw)
    run(["mkfs.ext4", "-q", "-F", "-L", "carrel-seat", "-d", root, raw, f"{size_mb}M"])
    timings["mkfs.ext4 -d"] = time.monotonic() - t
    shutil.rmtree(root)
    return {"raw": raw, "kernel": kernel, "initrd": initrd, "timings": timings, "size_mb": size_mb}


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="Builds test-seat's per-run guest disk (see the module's docstring).")
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--bindir", required=True)
    parser.add_argument("--layout", choices=sorted(LAYOUTS), required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ssh-key", help="a public key root accepts over ssh (the test's own)")
    a = parser.parse_args()
    try:
        made = build(checkout=a.checkout, base_tar=a.base, bindir=a.bindir, layout=a.layout, out_dir=a.out,
                     ssh_key=a.ssh_key)
    except ImageError as error:
        print(f"test-seat: {error}", file=sys.stderr)
        sys.exit(1)
    for step, seconds in made["timings"].items():
        log(f"{a.layout}: {step}: {seconds:.1f} s")
    print(made["raw"])
