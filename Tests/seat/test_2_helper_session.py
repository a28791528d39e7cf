"""A session begun and answered with real key presses (QMP key events on
the guest's PS/2 keyboard), judged by the monitor and by carrelctl."""

import re
import time

from conftest import SCREEN_CHANGE_S


def test_b_begins_a_session_and_real_keys_answer_it(helper_seat):
    helper_seat.exam_on_screen()
    guest = helper_seat.guest
    if guest.screendump("before-b")[0] != "start":
        helper_seat.boot()
        guest = helper_seat.guest
        guest.wait_for_screen("start", 300, "boot")
    guest.qmp.send_chord(["b"])
    guest.wait_for_screen("question", SCREEN_CHANGE_S, "after-b")
    state, output = helper_seat.status()
    assert state == "active", f"the question is on screen but carrelctl status says:\n{output}"
    # 7 × 8 = 56 (choice 2), Mercury (3), Na (4), hexagon 6 (1); then the
    # free-text question, typed; Enter on the last question ends the session.
    for choice in ("2", "3", "4", "1"):
        guest.qmp.send_chord([choice])
        time.sleep(0.5)
        guest.qmp.send_chord(["n"])
        time.sleep(0.5)
    guest.wait_for_screen("question", SCREEN_CHANGE_S, "free-text")
    guest.qmp.type_keys(["e", "x", "a", "m"])
    guest.qmp.send_chord(["ret"])
    guest.wait_for_screen("result", SCREEN_CHANGE_S, "after-enter")
    # The demo prints every answer (stdout to the journal of whichever unit
    # started it).
    deadline = time.monotonic() + 30
    while True:
        log = helper_seat.sh("journalctl -b --no-pager -o cat | grep 'carrel-demo-exam: ' || true")
        answers = re.findall(r"carrel-demo-exam: answer (\d+):? (.*)", log)
        if len(answers) >= 5 or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert ("1", "2") in answers and ("2", "3") in answers and ("3", "4") in answers and ("4", "1") in answers, log
    assert ("5", "exam") in answers, f"the typed free-text answer is not in the demo's log:\n{log}"
    assert "event ended" in log, log
    state, output = helper_seat.status()
    assert state in ("none", "ended"), f"after the exam ended carrelctl status says:\n{output}"
