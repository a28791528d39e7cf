"""The root layout (carrel-kiosk-root.service: Carrel as root, the app as
exam through --app-user): cold boot to the exam on tty7, and a session."""

from conftest import BOOT_TO_EXAM_S, SCREEN_CHANGE_S, figure


def test_cold_boot_shows_the_exam_with_the_root_layout(seats, root_seat):
    # One guest at a time: two cores.
    if "helper" in seats:
        seats["helper"].shutdown()
    guest = root_seat.boot()
    name, seconds, png = guest.wait_for_screen("start", BOOT_TO_EXAM_S, "cold-boot")
    figure(f"power on → exam on screen (root layout, {guest.gpu}, {guest.accel}): {seconds:.1f} s")
    assert root_seat.sh("cat /sys/class/tty/tty0/active").strip() == "tty7"
    users = root_seat.sh("ps -o user=,comm= -C carrel,carrel-demo-exa")
    rows = {comm: user for user, comm in (line.split() for line in users.strip().splitlines())}
    assert rows.get("carrel") == "root" and rows.get("carrel-demo-exa") == "exam", users


def test_root_layout_session_begins_with_b(root_seat):
    root_seat.session_active()
    tables = root_seat.sh("nft list tables")
    assert "carrel" in tables, f"the network provider's table is not loaded during the session:\n{tables}"
