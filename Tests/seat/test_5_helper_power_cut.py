"""A power cut mid-session, then power on: the exam is back, nothing of the
session survives, the audit chain verifies."""

import time

from conftest import BOOT_TO_EXAM_S, figure


def test_power_cut_mid_session_then_boot(helper_seat):
    helper_seat.session_active()
    helper_seat.guest.power_cut()
    guest = helper_seat.boot(fresh_disk=False)
    name, seconds, png = guest.wait_for_screen("start", BOOT_TO_EXAM_S, "after-power-cut")
    figure(f"power cut mid-session → power on → exam on screen: {seconds:.1f} s")
    assert "carrel" not in helper_seat.sh("nft list tables")
    state, output = helper_seat.status()
    assert state == "none", output
    verify = helper_seat.sh("carrelctl audit verify /var/log/carrel/audit.jsonl", check=False)
    assert "chain intact" in verify, f"the audit chain after a power cut:\n{verify}"


def test_reboot_comes_back_to_the_exam(helper_seat):
    """An administrator's `systemctl reboot` (the same QEMU: the guest's own
    reset): the monitor leaves the exam and shows it again, and nothing of
    the last boot's session holds."""
    helper_seat.exam_on_screen()
    guest = helper_seat.guest
    asked = guest.elapsed()
    serial_mark = len(guest.serial.buffer)
    helper_seat.sh("systemctl reboot", check=False)
    # The serial shell goes with the old boot; the next command logs in again.
    guest.serial.shell_ready = False
    guest.wait_for_screen(("console", "other"), BOOT_TO_EXAM_S, "rebooting")
    # Where a reboot's time goes: the old boot's shutdown ends when the next
    # kernel prints its banner on the serial console (what follows is a boot
    # like a power-on's).
    guest.serial.wait_for(rb"Linux version", BOOT_TO_EXAM_S, serial_mark)
    next_kernel = guest.elapsed()
    name, seconds, png = guest.wait_for_screen("start", BOOT_TO_EXAM_S, "after-reboot")
    figure(f"reboot (systemctl reboot) → exam on screen: {seconds - asked:.1f} s "
           f"(shutdown to the next kernel {next_kernel - asked:.1f} s, then to the exam {seconds - next_kernel:.1f} s)")
    state, output = helper_seat.status()
    assert state == "none", output
    assert helper_seat.sh("cat /sys/class/tty/tty0/active").strip() == "tty7"
