"""Control for test_3's SysRq cases, run last on the helper guest because
it changes the guest: with SysRq allowed on purpose, the same QMP chord
reaches the kernel's SysRq handler, so those tests passing means SysRq is
refused, not that the keys never arrived."""

import time


def test_the_harness_delivers_sysrq_to_the_kernel(helper_seat):
    helper_seat.exam_on_screen()
    helper_seat.tainted = True
    helper_seat.sh("sysctl -q kernel.sysrq=1 && dmesg -C")
    helper_seat.guest.qmp.send_chord(["alt", "sysrq", "h"])
    time.sleep(3)
    log = helper_seat.sh("dmesg")
    assert "sysrq: HELP" in log, f"Alt+SysRq+H with kernel.sysrq=1 printed no SysRq help; the kernel log:\n{log}"
