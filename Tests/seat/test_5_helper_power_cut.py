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
