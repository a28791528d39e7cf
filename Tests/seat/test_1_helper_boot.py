"""Cold boot of the privileged-helper layout (carrel-kiosk.service with
carrel-privileged.service): the exam on the monitor, nothing else."""

import re

from conftest import BOOT_TO_EXAM_S, figure


def test_cold_boot_shows_the_exam_with_the_helper_layout(helper_seat):
    guest = helper_seat.boot()
    name, seconds, png = guest.wait_for_screen("start", BOOT_TO_EXAM_S, "cold-boot")
    figure(f"power on → exam on screen (helper layout, {guest.gpu}, {guest.accel}): {seconds:.1f} s")
    # Who runs as whom, as docs/DEPLOY.md's table says.
    users = helper_seat.sh("ps -o user=,comm= -C carrel,carrel-privileg,carrel-demo-exa")
    rows = {comm: user for user, comm in (line.split() for line in users.strip().splitlines())}
    assert rows.get("carrel") == "carrel", f"carrel should run as carrel:\n{users}"
    assert rows.get("carrel-privileg") == "root", f"carrel-privileged should run as root:\n{users}"
    assert rows.get("carrel-demo-exa") == "exam", f"the demo exam should run as exam:\n{users}"
    caps = helper_seat.sh("grep -E '^Cap(Eff|Prm|Amb)' /proc/$(pidof -s carrel)/status")
    assert all(line.split()[1] == "0000000000000000" for line in caps.strip().splitlines()), caps
    # The kiosk is on tty7, the VT in front.
    assert helper_seat.sh("cat /sys/class/tty/tty0/active").strip() == "tty7"
    # Where the boot's time went, by the guest's own clock (kernel, initrd,
    # userspace to graphical.target), and when the kiosk unit started.
    analyze = helper_seat.sh("systemd-analyze time 2>&1 | head -1; systemd-analyze blame 2>/dev/null | head -5",
                             check=False)
    figure("  guest's view: " + " | ".join(line.strip() for line in analyze.strip().splitlines()))
    state, output = helper_seat.status()
    assert state == "none", f"no session should be active after boot:\n{output}"
    # Carrel's share of the boot, by the guest's clock: the kiosk unit's
    # start (before its ExecStartPre) → Carrel's line for the app's first
    # window (the next frame shows it).
    unit_start_us = int(helper_seat.sh(
        "systemctl show -p InactiveExitTimestampMonotonic --value carrel-kiosk.service").strip())
    mapped = helper_seat.sh("journalctl -b -o short-monotonic --no-pager -u carrel-kiosk.service "
                            "| grep -m1 'is mapped; the next frame shows it'", check=False)
    match = re.match(r"\s*\[\s*(\d+\.\d+)\]", mapped)
    assert unit_start_us > 0 and match, f"the kiosk's start or Carrel's line for the app's window is missing:\n{mapped}"
    share = float(match.group(1)) - unit_start_us / 1e6
    assert 0 < share < seconds, f"Carrel's share {share:.2f} s is outside the boot's {seconds:.1f} s"
    figure(f"kiosk unit start → the app's first window (Carrel's share of the boot): {share:.2f} s")
    # The seat's memory with the exam on screen: the guest's whole use, and
    # each of the seat's own processes (proportional set size).
    total_kb, used_kb = (int(v) for v in helper_seat.sh("free -k | awk '/^Mem:/ {print $2, $3}'").split())
    pss = helper_seat.sh("for p in $(pidof carrel carrel-privileged carrel-demo-exam seatd dbus-daemon); do "
                         "printf '%s %s\\n' \"$(cat /proc/$p/comm)\" \"$(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup)\"; done")
    rows = [line.split() for line in pss.strip().splitlines() if len(line.split()) == 2]
    assert any(comm == "carrel" for comm, _ in rows), f"no Pss for carrel:\n{pss}"
    figure(f"the seat's memory at the exam: {used_kb / 1024:.0f} MB used of {total_kb / 1024:.0f} MB; Pss "
           + ", ".join(f"{comm} {int(kb) / 1024:.1f} MB" for comm, kb in rows))
