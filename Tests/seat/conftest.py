"""The exam seat, booted under QEMU and judged from outside.

Run by meson-helpers/test-seat, which builds the per-run images and passes
them in the environment:
  CARREL_SEAT_RUN_DIR   holds helper.raw / root.raw and their kernels
                        (image.py's output), read-only here: each boot gets
                        a qcow2 overlay of its own
  CARREL_SEAT_GPU       virtio (default) or bochs
  CARREL_ARTIFACTS      screendumps (PNG), serial and QEMU logs go to
                        $CARREL_ARTIFACTS/seat/

Guests are shared where the order of the scenarios allows (TCG is slow):
one guest per layout, kept for the next test as long as it still shows the
exam; a test that leaves it broken (the bug it found) costs the next test a
fresh boot, never its verdict.
"""

import os
import re
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "meson-helpers", "seat"))

from seatvm import Guest, SeatError, make_overlay, require_tools  # noqa: E402

# The integration suite's skip policy: under CI a skip fails unless allow-listed.
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import skip_policy  # noqa: E402


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("carrel-skip-policy"):
        config.pluginmanager.register(skip_policy, "carrel-skip-policy")

# Bounds, generous for TCG on two cores (about a minute from power-on to
# the exam here; a loaded CI host is slower).
BOOT_TO_EXAM_S = float(os.environ.get("CARREL_SEAT_BOOT_TIMEOUT", "300"))
SCREEN_CHANGE_S = 60.0
KIOSK_UNITS = {"helper": "carrel-kiosk.service", "root": "carrel-kiosk-root.service"}

FIGURES = []


def figure(text):
    """A measured figure, printed at the end of the run and kept in
    $CARREL_ARTIFACTS/seat/figures.txt."""
    FIGURES.append(text)
    with open(os.path.join(artifacts_dir(), "figures.txt"), "a", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"\n  {text}")


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.section("seat figures")
        for line in FIGURES:
            terminalreporter.write_line(line)


def artifacts_dir():
    path = os.path.join(os.environ.get("CARREL_ARTIFACTS", os.path.join(HERE, "..", "..", "out", "test-artifacts")),
                        "seat")
    os.makedirs(path, exist_ok=True)
    return path


def run_dir():
    path = os.environ.get("CARREL_SEAT_RUN_DIR")
    if not path or not os.path.isdir(path):
        pytest.fail("CARREL_SEAT_RUN_DIR is not set to test-seat's image directory; run the scenarios through "
                    "meson-helpers/test-seat, which builds the images first", pytrace=False)
    return path


class Seat:
    """One layout's guest, booted on demand and rebooted when a test left it
    unusable."""

    def __init__(self, layout):
        self.layout = layout
        self.unit = KIOSK_UNITS[layout]
        self.guest = None
        self.boots = 0
        self.overlay = None
        # Set by a test that changed the guest in a way the next test must
        # not inherit (the keyboard's mode after SysRq+R): it boots afresh.
        self.tainted = False

    def image(self):
        directory = run_dir()
        paths = {k: os.path.join(directory, f"{self.layout}{suffix}")
                 for k, suffix in (("raw", ".raw"), ("kernel", "-vmlinuz"), ("initrd", "-initrd.img"))}
        missing = [p for p in paths.values() if not os.path.exists(p)]
        if missing:
            pytest.fail(f"test-seat did not build the {self.layout} layout's image ({', '.join(missing)} missing); "
                        f"run meson-helpers/test-seat with that layout", pytrace=False)
        return paths

    def boot(self, fresh_disk=True):
        """Powers the machine on (a fresh overlay of the per-run image unless
        fresh_disk is False: then the disk as the last power-off left it)."""
        self.shutdown()
        self.tainted = False
        require_tools()
        paths = self.image()
        self.boots += 1
        work = os.path.join(run_dir(), "work")
        if fresh_disk or self.overlay is None:
            self.overlay = make_overlay(paths["raw"], os.path.join(work, f"{self.layout}-boot{self.boots}.qcow2"))
        self.guest = Guest(name=f"{self.layout}-boot{self.boots}", disk=self.overlay, kernel=paths["kernel"],
                           initrd=paths["initrd"], workdir=work, artifacts=artifacts_dir(),
                           gpu=os.environ.get("CARREL_SEAT_GPU", "virtio")).start()
        return self.guest

    def shutdown(self):
        if self.guest is not None:
            self.guest.power_cut()
            self.guest = None

    # What the guest says, through the serial root shell.

    def sh(self, command, timeout=60.0, check=True):
        serial = self.guest.serial
        if not serial.shell_ready:
            serial.login()
        status, output = serial.run(command, timeout=timeout)
        if check and status != 0:
            pytest.fail(f"in the {self.layout} guest, `{command}` exited {status}:\n{output}", pytrace=False)
        return output

    def status(self):
        """`carrelctl status` as root: (session state word, whole output)."""
        output = self.sh("carrelctl status", check=False)
        match = re.search(r"^session: (\S+)", output, re.M)
        return (match.group(1) if match else "unknown"), output

    def main_pid(self, unit=None):
        return int(self.sh(f"systemctl show -p MainPID --value {unit or self.unit}").strip() or 0)

    def diagnostics(self, label):
        """What the units and the journal say, into the artifacts, for a failure."""
        if self.guest is None or not self.guest.alive():
            return
        try:
            out = self.sh("systemctl --no-pager status carrel-kiosk.service carrel-kiosk-root.service "
                          "carrel-privileged.service seatd.service 2>&1 | head -80; "
                          "journalctl -b --no-pager -n 300 -u carrel-kiosk.service -u carrel-kiosk-root.service "
                          "-u carrel-privileged.service -u seatd.service -u systemd-logind.service; "
                          "cat /sys/class/tty/tty0/active", timeout=60, check=False)
            with open(os.path.join(artifacts_dir(), f"{self.guest.name}-{label}-diagnostics.txt"), "w") as f:
                f.write(out)
        except SeatError:
            pass

    # Reaching the states the scenarios start from.

    def exam_on_screen(self, timeout=SCREEN_CHANGE_S):
        """The running guest shows the exam's start or question screen, or
        is booted afresh until it does. Returns the screen's name."""
        if self.guest is not None and self.guest.alive() and not self.tainted:
            name, _, _, _ = self.guest.screendump("check")
            if name in ("start", "question"):
                return name
            if name == "result":
                # Q leaves the demo; Single App Mode starts it again.
                self.guest.qmp.send_chord(["q"])
                try:
                    return self.guest.wait_for_screen("start", timeout, "after-q")[0]
                except SeatError:
                    pass
        self.boot()
        name, _, _ = self.guest.wait_for_screen("start", BOOT_TO_EXAM_S, "boot")
        return name

    def session_active(self):
        """A session is active and its question on screen: begins one by
        pressing B on the start screen, booting afresh first if needed."""
        screen = self.exam_on_screen()
        if screen == "question" and self.status()[0] == "active":
            return
        if screen != "start":
            self.boot()
            self.guest.wait_for_screen("start", BOOT_TO_EXAM_S, "boot")
        self.guest.qmp.send_chord(["b"])
        self.guest.wait_for_screen("question", SCREEN_CHANGE_S, "begin")
        state, output = self.status()
        if state != "active":
            pytest.fail(f"after B the question is on screen but carrelctl status says:\n{output}", pytrace=False)


SEATS = {}


@pytest.fixture(scope="session")
def seats():
    yield SEATS
    for seat in SEATS.values():
        seat.shutdown()


@pytest.fixture
def helper_seat(seats, request):
    seat = seats.setdefault("helper", Seat("helper"))
    yield seat
    if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
        seat.diagnostics(request.node.name)


@pytest.fixture
def root_seat(seats, request):
    seat = seats.setdefault("root", Seat("root"))
    yield seat
    if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
        seat.diagnostics(request.node.name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)
