"""No way out for the student during a session: each
key sequence a student could try, sent as real key presses, and after each
the monitor still shows the exam, the VT in front is still tty7, the same
Carrel still runs, the machine did not reboot, and carrelctl still says
the session is active. They failed on the bugs a first install showed
(SysRq+R then Ctrl+Alt+F2 reached a console; SysRq+K killed Carrel); they do not skip."""

import time

import pytest

from seatvm import SeatError

# How long a key's effect may take to show under TCG before we judge.
SETTLE_S = 6.0


def snapshot(seat):
    return {
        "boot_id": seat.sh("cat /proc/sys/kernel/random/boot_id").strip(),
        "carrel": seat.sh("pidof -s carrel || true").strip(),
        "vt": seat.sh("cat /sys/class/tty/tty0/active").strip(),
        # Interrupts of the PS/2 keyboard (IRQ 1): proof that the keys
        # reached the guest at all, so a test cannot pass on keys lost on
        # the way.
        "kbd_irqs": sum(int(n) for n in seat.sh("awk '$1 == \"1:\" {print $2 + $3}' /proc/interrupts").split()),
    }


def assert_still_in_the_exam(seat, label, before, screen="question", session="active"):
    guest = seat.guest
    name, png, colour, share = guest.screendump(label)
    problems = []
    if name != screen:
        problems.append(f"the monitor shows {name} (dominant {colour}, {share:.0%}), not the exam's {screen} screen: {png}")
    try:
        after = snapshot(seat)
        state, output = seat.status()
    except SeatError as error:
        pytest.fail(f"after {label} the guest's serial shell is gone (rebooted or hung?): {error}; screen: {png}",
                    pytrace=False)
    if after["kbd_irqs"] <= before["kbd_irqs"]:
        problems.append("the guest's keyboard saw no interrupt: the keys never arrived, so nothing was proven")
    if after["boot_id"] != before["boot_id"]:
        problems.append("the machine rebooted")
    if after["vt"] != "tty7":
        problems.append(f"the VT in front is {after['vt']}, not tty7")
    if after["carrel"] != before["carrel"]:
        problems.append(f"Carrel is not the same process (pid {before['carrel']} before, {after['carrel'] or 'none'} after)")
    if state != session:
        problems.append(f"carrelctl status says session {state}, not {session}:\n{output}")
    assert not problems, f"after {label} ({'during a session' if session == 'active' else 'outside a session'}): " + \
        "; ".join(problems)


def recover_or_taint(seat, label):
    """After an escape got through: a VT switch alone is undone with
    chvt 7 (cheaper than a boot under TCG); a SysRq that got through may
    have left the keyboard in XLATE mode (R) or killed what ran on tty7
    (K), so the next test gets a fresh boot instead."""
    if "sysrq" not in label and "del" not in label:
        try:
            seat.sh("chvt 7", check=False)
            time.sleep(3)
            if seat.guest.screendump(f"{label}-chvt7")[0] in ("start", "question"):
                return
        except SeatError:
            pass
    seat.tainted = True


ESCAPES = [
    ("ctrl-alt-f2", [["ctrl", "alt", "f2"]]),
    ("ctrl-alt-f1", [["ctrl", "alt", "f1"]]),
    ("ctrl-alt-del", [["ctrl", "alt", "delete"]]),
    ("alt-sysrq-k", [["alt", "sysrq", "k"]]),
    ("alt-sysrq-r-then-ctrl-alt-f2", [["alt", "sysrq", "r"], ["ctrl", "alt", "f2"]]),
]


@pytest.mark.parametrize("label,chords", ESCAPES)
def test_no_console_outside_a_session_in_single_app_mode(helper_seat, label, chords):
    """Single App Mode under the shipped policy: no console is reachable
    from the kiosk's start screen either."""
    if helper_seat.exam_on_screen() != "start":
        helper_seat.boot()
        helper_seat.guest.wait_for_screen("start", 300, "boot")
    before = snapshot(helper_seat)
    for chord in chords:
        helper_seat.guest.qmp.send_chord(chord)
        time.sleep(1.0)
    time.sleep(SETTLE_S)
    try:
        assert_still_in_the_exam(helper_seat, f"{label}-outside", before, screen="start", session="none")
    except BaseException:
        recover_or_taint(helper_seat, label)
        raise


@pytest.mark.parametrize("label,chords", ESCAPES)
def test_a_student_cannot_leave_a_session(helper_seat, label, chords):
    helper_seat.session_active()
    before = snapshot(helper_seat)
    assert before["vt"] == "tty7", f"before {label} the VT in front is {before['vt']}, not tty7"
    for chord in chords:
        helper_seat.guest.qmp.send_chord(chord)
        time.sleep(1.0)
    time.sleep(SETTLE_S)
    try:
        assert_still_in_the_exam(helper_seat, label, before)
    except BaseException:
        recover_or_taint(helper_seat, label)
        raise

