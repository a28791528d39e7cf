"""Cold boot of the privileged-helper layout (carrel-kiosk.service with
carrel-privileged.service): the exam on the monitor, nothing else."""

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
