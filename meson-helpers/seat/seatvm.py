"""Drives test-seat's QEMU guest from outside: QMP (the monitor, the
student's keyboard, the power switch) and the serial console (the test's own
root shell, for inspection). Standard library only, so it runs with any
Debian python3.

Ground truth is outside the guest: what `screendump` returns is what the
monitor shows, `send-key` events are key presses on the PS/2 keyboard, and
killing QEMU is a power cut. The serial shell is only for asking the guest
questions (`carrelctl status`, `nft list tables`); nothing it says is taken as
proof of what the screen shows.

Every wait here is bounded; a timeout raises SeatError saying what was
awaited and where to look.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time


class SeatError(Exception):
    """Something the guest or QEMU did not do in time, with what to look at."""


# --- QMP ---------------------------------------------------------------------


class QMP:
    """A QMP client on QEMU's unix socket: one command at a time, events kept."""

    def __init__(self, path, timeout=30.0):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise SeatError(f"QEMU's QMP socket {path} did not appear within {timeout:.0f} s; "
                                    "see qemu.log in the artifacts for why QEMU did not start")
                time.sleep(0.05)
        self.file = self.sock.makefile("rwb", buffering=0)
        self.events = []
        greeting = self._read(timeout)
        if "QMP" not in greeting:
            raise SeatError(f"not a QMP greeting on {path}: {greeting!r}")
        self.execute("qmp_capabilities")

    def _read(self, timeout):
        self.sock.settimeout(timeout)
        try:
            line = self.file.readline()
        except socket.timeout:
            raise SeatError(f"QMP on {self.path} sent nothing for {timeout:.0f} s")
        if not line:
            raise SeatError(f"QMP on {self.path} closed its connection (QEMU exited?)")
        return json.loads(line)

    def execute(self, command, timeout=60.0, **arguments):
        message = {"execute": command}
        if arguments:
            message["arguments"] = arguments
        self.file.write(json.dumps(message).encode() + b"\n")
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SeatError(f"QMP command {command} got no answer within {timeout:.0f} s")
            reply = self._read(left)
            if "event" in reply:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise SeatError(f"QMP {command} {arguments}: {reply['error'].get('desc', reply['error'])}")
            return reply.get("return")

    def screendump(self, path):
        """The monitor's picture as a PPM file (QEMU's own format)."""
        self.execute("screendump", filename=path)

    def send_chord(self, keys, hold_ms=120):
        """Presses the keys in order and releases them in reverse, as a hand
        would: ["ctrl", "alt", "f2"], ["alt", "sysrq", "r"]. QEMU qcodes."""
        self.execute("send-key", keys=[{"type": "qcode", "data": k} for k in keys], **{"hold-time": hold_ms})

    def type_keys(self, keys, gap=0.25):
        """One key at a time (each a qcode, or a list for a chord)."""
        for key in keys:
            self.send_chord(key if isinstance(key, list) else [key])
            time.sleep(gap)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# --- serial console ----------------------------------------------------------


class Serial:
    """The guest's ttyS0 (root, autologin: the test image's addition), on
    QEMU's serial unix socket. A reader thread keeps everything that comes,
    which is also written to a log for a person to read."""

    _marker = 0

    def __init__(self, path, log_path, timeout=30.0):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise SeatError(f"QEMU's serial socket {path} did not appear within {timeout:.0f} s")
                time.sleep(0.05)
        self.buffer = bytearray()
        self.lock = threading.Condition()
        self.log = open(log_path, "ab")
        self.closed = False
        self.thread = threading.Thread(target=self._reader, daemon=True)
        self.thread.start()
        self.shell_ready = False

    def _reader(self):
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                data = b""
            with self.lock:
                if not data:
                    self.closed = True
                    self.lock.notify_all()
                    return
                self.buffer += data
                self.log.write(data)
                self.log.flush()
                self.lock.notify_all()

    def write(self, text):
        self.sock.sendall(text.encode())

    def wait_for(self, pattern, timeout, start=0):
        """Waits until the regex (bytes) matches what came after `start`;
        returns the match."""
        regex = re.compile(pattern, re.S)
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                match = regex.search(self.buffer, start)
                if match:
                    return match
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    tail = bytes(self.buffer[-600:]).decode(errors="replace")
                    raise SeatError(f"the serial console did not show {pattern!r} within {timeout:.0f} s "
                                    f"(closed={self.closed}); its last output:\n{tail}")
                self.lock.wait(min(left, 1.0))

    def login(self, timeout=240.0):
        """Waits for the autologin root shell and makes it quiet: no echo,
        no colours, kernel messages off this console (they would split
        command output)."""
        deadline = time.monotonic() + timeout
        while True:
            start = len(self.buffer)
            # A bare newline makes a waiting getty or shell print its prompt.
            self.write("\n")
            try:
                self.wait_for(rb"(#|\$) $", min(5.0, max(0.5, deadline - time.monotonic())), start)
                break
            except SeatError:
                if time.monotonic() > deadline:
                    raise SeatError(f"no root shell on the guest's serial console within {timeout:.0f} s: "
                                    "see serial.log in the artifacts (did the guest boot? is the autologin drop-in there?)")
        # stty acts on the terminal, so not through run()'s </dev/null.
        self.write("stty -echo -onlcr cols 500\n")
        time.sleep(1.0)
        self.shell_ready = True
        self.run("export TERM=dumb PAGER=cat SYSTEMD_PAGER=cat SYSTEMD_COLORS=0; dmesg -n 1", timeout=30)

    def run(self, command, timeout=60.0, check=False):
        """Runs a shell command as root in the guest; returns (status, output).
        The markers are printed with printf so that the echoed command line
        (before echo is off) cannot be mistaken for them."""
        Serial._marker += 1
        tag = f"{os.getpid()}x{Serial._marker}"
        start = len(self.buffer)
        self.write(f"printf '\\n@@%s-B\\n' {tag}; {{ {command} ; }} </dev/null 2>&1; "
                   f"printf '\\n@@%s-E %s\\n' {tag} $?\n")
        match = self.wait_for(rb"\n@@" + tag.encode() + rb"-B\r?\n(.*?)\r?\n@@" + tag.encode() + rb"-E (\d+)",
                              timeout, start)
        output = match.group(1).decode(errors="replace").replace("\r\n", "\n").replace("\r", "")
        status = int(match.group(2))
        if check and status != 0:
            raise SeatError(f"in the guest, `{command}` exited {status}:\n{output}")
        return status, output

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
        self.log.close()


# --- screens -----------------------------------------------------------------

# The demo exam's flat full-screen backgrounds (ExamRenderer.swift), as
# 8-bit RGB: cairo's 0.16 → 40.8, so a tolerance covers rounding either way.
SCREENS = {
    "start": (41, 51, 71),
    "question": (245, 245, 237),
    "paused": (140, 92, 13),
    "result": (26, 97, 56),
    "error": (140, 26, 26),
}
TOLERANCE = 6
# A screen "is" one of the above when most of it is that colour (text and
# buttons cover the rest).
DOMINANT_SHARE = 0.5


def read_ppm(path):
    """(width, height, bytes RGB) of a binary PPM (P6, maxval 255), which is
    what QEMU's screendump writes."""
    with open(path, "rb") as f:
        data = f.read()
    fields = []
    position = 0
    while len(fields) < 4:
        while data[position:position + 1].isspace():
            position += 1
        if data[position:position + 1] == b"#":
            position = data.index(b"\n", position) + 1
            continue
        end = position
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[position:end])
        position = end
    position += 1  # the one whitespace byte after maxval
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise SeatError(f"{path} is not an 8-bit binary PPM (got {fields[0]!r}, maxval {fields[3]!r})")
    width, height = int(fields[1]), int(fields[2])
    return width, height, data[position:position + width * height * 3]


def colour_shares(pixels, step=7):
    """Shares of the sampled pixels (every `step`th) by exact colour."""
    counts = {}
    total = 0
    for offset in range(0, len(pixels) - 2, 3 * step):
        key = (pixels[offset], pixels[offset + 1], pixels[offset + 2])
        counts[key] = counts.get(key, 0) + 1
        total += 1
    return {colour: count / total for colour, count in counts.items()} if total else {}


def classify(path):
    """What the monitor shows: one of SCREENS' names, "console" (mostly
    black: a getty, a kernel console, an empty framebuffer), or "other";
    with the dominant colour and its share, for messages."""
    _, _, pixels = read_ppm(path)
    shares = colour_shares(pixels)
    if not shares:
        return "other", None, 0.0
    for name, reference in SCREENS.items():
        share = sum(s for c, s in shares.items() if all(abs(a - b) <= TOLERANCE for a, b in zip(c, reference)))
        if share >= DOMINANT_SHARE:
            return name, reference, share
    dark = sum(s for c, s in shares.items() if max(c) <= 40)
    dominant = max(shares.items(), key=lambda item: item[1])
    if dark >= 0.8:
        return "console", dominant[0], dark
    return "other", dominant[0], dominant[1]


# --- the machine -------------------------------------------------------------


class Guest:
    """One QEMU guest booting test-seat's image: direct kernel boot, a real
    DRM device (virtio-vga by default, bochs with gpu="bochs"), a PS/2
    keyboard, a USB tablet, no network, QMP and the serial console on unix
    sockets in `workdir`."""

    def __init__(self, *, name, disk, kernel=None, initrd=None, workdir, artifacts, gpu="virtio",
                 memory_mb=2048, cpus=2, accel=None, append_extra="", net=True, firmware=None):
        # firmware "bios" or "uefi": boot the disk through its own bootloader
        # (build-image's image) instead of the kernel and initrd given here.
        self.firmware = firmware
        self.name = name
        self.disk = disk
        self.kernel = kernel
        self.initrd = initrd
        self.workdir = workdir
        self.artifacts = artifacts
        self.gpu = gpu
        self.memory_mb = memory_mb
        self.cpus = cpus
        # TCG by default: these hosts' /dev/kvm is a nested hypervisor under
        # which a stock Debian kernel hangs. CARREL_SEAT_ACCEL=kvm
        # where KVM works.
        self.accel = accel or os.environ.get("CARREL_SEAT_ACCEL", "tcg")
        self.append_extra = append_extra
        self.net = net
        self.ports = {}
        self.fleet_files = {}
        self.process = None
        self.qmp = None
        self.serial = None
        self.started_at = None
        self.shots = 0
        os.makedirs(workdir, exist_ok=True)
        os.makedirs(artifacts, exist_ok=True)

    def command(self):
        if self.gpu == "virtio":
            display = ["-vga", "none", "-device", "virtio-vga"]
        elif self.gpu == "bochs":
            # -vga std is QEMU's stdvga, driven by the kernel's bochs DRM driver.
            display = ["-vga", "std"]
        else:
            raise SeatError(f"unknown GPU variant {self.gpu!r}; expected virtio or bochs")
        if self.accel == "kvm":
            accel = ["-accel", "kvm", "-cpu", "host"]
        else:
            accel = ["-accel", "tcg,thread=multi", "-cpu", "max"]
        append = ("root=/dev/vda rw console=tty0 console=ttyS0,115200 "
                  "systemd.show_status=auto " + self.append_extra).strip()
        if self.firmware is None:
            boot = ["-kernel", self.kernel, "-initrd", self.initrd, "-append", append]
        elif self.firmware == "bios":
            boot = []  # QEMU's SeaBIOS, then GRUB from the disk's MBR
        elif self.firmware == "uefi":
            # OVMF (Debian's ovmf), with a private copy of its variable store.
            variables = os.path.join(self.workdir, f"{self.name}-OVMF_VARS.fd")
            shutil.copyfile("/usr/share/OVMF/OVMF_VARS_4M.fd", variables)
            boot = ["-drive", "if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd",
                    "-drive", f"if=pflash,format=raw,file={variables}"]
        else:
            raise SeatError(f"unknown firmware {self.firmware!r}; expected bios or uefi")
        return ["qemu-system-x86_64", "-nodefaults", "-no-user-config", "-machine", "q35", *accel,
                "-smp", str(self.cpus), "-m", str(self.memory_mb),
                *boot,
                "-drive", f"file={self.disk},if=virtio,format=qcow2,cache=unsafe",
                *display,
                # The PS/2 keyboard comes with the q35's i8042; the tablet
                # gives absolute pointer positions.
                "-device", "qemu-xhci", "-device", "usb-tablet",
                *self.network(),
                "-display", "none",
                "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
                "-chardev", f"socket,id=serial0,path={self.serial_path},server=on,wait=off",
                "-serial", "chardev:serial0"]

    def network(self):
        """The test's isolated network: QEMU's user-mode network with
        restrict=on, so the guest reaches nothing outside; in, the host
        reaches the guest's sshd and node-exporter through forwarded ports
        on 127.0.0.1; out, one address (10.0.2.100:8080) answers "pong",
        for a process inside the guest to prove it has the network or not;
        on port 53 a DNS server over TCP (the guest's unbound asks it, the one
        protocol this network forwards), every name under carrel.test being
        10.0.2.100, each query logged to fleet_files["dns"]; on port 19532
        what systemd-journal-upload sends to, the bodies of its POSTs
        appended to fleet_files["journal"] (fleetnet.py, run by QEMU for
        each connection)."""
        if not self.net:
            return ["-nic", "none"]
        self.ports = {"ssh": free_port(), "node_exporter": free_port()}
        self.fleet_files = {"dns": os.path.join(self.workdir, f"{self.name}-dns-queries.log"),
                            "journal": os.path.join(self.workdir, f"{self.name}-journal-upload.export")}
        for path in self.fleet_files.values():
            open(path, "wb").close()
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fleetnet.py")
        for path in (sys.executable, script, *self.fleet_files.values()):
            if any(c in path for c in ", \t'\"\\"):
                raise SeatError(f"{path!r}: a path on QEMU's -nic line may hold no comma, blank, quote or backslash")
        fleetnet = f"{sys.executable} {script}"
        return ["-nic", "user,model=virtio-net-pci,restrict=on,net=10.0.2.0/24,host=10.0.2.2"
                f",hostfwd=tcp:127.0.0.1:{self.ports['ssh']}-10.0.2.15:22"
                f",hostfwd=tcp:127.0.0.1:{self.ports['node_exporter']}-10.0.2.15:9100"
                ",guestfwd=tcp:10.0.2.100:8080-cmd:/bin/echo pong"
                f",guestfwd=tcp:10.0.2.100:53-cmd:{fleetnet} dns {self.fleet_files['dns']}"
                f",guestfwd=tcp:10.0.2.100:19532-cmd:{fleetnet} journal {self.fleet_files['journal']}"]

    @property
    def qmp_path(self):
        return os.path.join(self.workdir, f"{self.name}.qmp")

    @property
    def serial_path(self):
        return os.path.join(self.workdir, f"{self.name}.serial")

    def start(self):
        for path in (self.qmp_path, self.serial_path):
            if os.path.exists(path):
                os.unlink(path)
        log = open(os.path.join(self.artifacts, f"{self.name}-qemu.log"), "ab")
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        try:
            self.qmp = QMP(self.qmp_path)
            self.serial = Serial(self.serial_path, os.path.join(self.artifacts, f"{self.name}-serial.log"))
        except Exception:
            self.power_cut()
            raise
        return self

    def elapsed(self):
        return time.monotonic() - self.started_at

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def screendump(self, label):
        """Takes what the monitor shows now: (classification, png path).
        Every screendump is kept as a PNG for a person to look at."""
        if not self.alive():
            raise SeatError(f"QEMU for {self.name} is not running (exit {self.process.returncode}); "
                            f"see {self.name}-qemu.log")
        self.shots += 1
        ppm = os.path.join(self.workdir, f"{self.name}-shot.ppm")
        self.qmp.screendump(ppm)
        name, colour, share = classify(ppm)
        png = os.path.join(self.artifacts, f"{self.name}-{self.shots:03d}-{label}-{name}.png")
        subprocess.run(["convert", ppm, png], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return name, png, colour, share

    def wait_for_screen(self, wanted, timeout, label, interval=1.0):
        """Takes screendumps until one is classified as one of `wanted`;
        returns (name, seconds since QEMU started, png). Only the last
        screendump of a kind is kept while waiting, to keep the artifacts
        readable."""
        wanted = (wanted,) if isinstance(wanted, str) else tuple(wanted)
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                name, png, colour, share = self.screendump(label)
            except SeatError as error:
                # Before the guest sets a mode QEMU may have no surface yet.
                if not self.alive():
                    raise
                name, png, colour, share = f"none ({error})", None, None, 0.0
            if name in wanted:
                return name, self.elapsed(), png
            if last and last[1] and last[1] != png and os.path.exists(last[1]) and last[0] == name:
                os.unlink(last[1])
            last = (name, png, colour, share)
            if time.monotonic() > deadline:
                raise SeatError(f"{self.name}: the monitor did not show {'/'.join(wanted)} within {timeout:.0f} s; "
                                f"it shows {name} (dominant colour {colour}, {share:.0%}); last screendump: {png}")
            time.sleep(interval)

    def power_cut(self):
        """Kills QEMU: the guest loses power mid-whatever."""
        if self.qmp:
            self.qmp.close()
            self.qmp = None
        if self.serial:
            self.serial.close()
            self.serial = None
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                raise SeatError(f"QEMU (pid {self.process.pid}) did not die of SIGKILL within 30 s")


def make_overlay(base_raw, overlay):
    """A qcow2 overlay on the per-run raw image: every boot starts from the
    same disk, and a power cut's aftermath stays in its own overlay."""
    if os.path.exists(overlay):
        os.unlink(overlay)
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", os.path.abspath(base_raw), overlay],
                   check=True)
    return overlay


def free_port():
    """A TCP port on 127.0.0.1 nobody listens on now (QEMU binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def require_tools():
    for tool in ("qemu-system-x86_64", "qemu-img", "convert"):
        if not shutil.which(tool):
            raise SeatError(f"{tool} is missing; apt-get install qemu-system-x86 qemu-utils imagemagick")
