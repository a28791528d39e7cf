"""A session begun and answered with real key presses (QMP key events on
the guest's PS/2 keyboard), judged by the monitor and by carrelctl."""

import json
import re
import time

from conftest import SCREEN_CHANGE_S, figure


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


# The policy's shortest time limit (docs/POLICY.md: 1 to 1440 minutes), for
# the sessions that name none (the demo asks for none unless given
# --time-limit): a session begun with B runs out of time on the monitor.
TIME_LIMIT_S = 60
POLICY = "/etc/carrel/policy.toml"


def test_the_time_limit_interrupts_the_session_on_the_monitor(helper_seat):
    if helper_seat.exam_on_screen() == "question":
        helper_seat.guest.qmp.send_chord(["e"])
        helper_seat.guest.wait_for_screen("result", SCREEN_CHANGE_S, "end-before-limit")
        helper_seat.exam_on_screen()
    guest = helper_seat.guest
    # The seat's own policy file with a one-minute default time limit,
    # applied by `carrelctl reload` from the next session (CARRELCTL.md).
    helper_seat.sh(f"cp -p {POLICY} /root/policy.toml.before-time-limit && "
                   f"if grep -q '^\\[assessment\\]' {POLICY}; then "
                   f"sed -i '/^\\[assessment\\]/a default_time_limit_minutes = {TIME_LIMIT_S // 60}' {POLICY}; "
                   f"else printf '\\n[assessment]\\ndefault_time_limit_minutes = {TIME_LIMIT_S // 60}\\n' >> {POLICY}; fi")
    try:
        output = helper_seat.sh("carrelctl reload")
        assert "assessment" in output or "next session" in output, output
        guest.qmp.send_chord(["b"])
        guest.wait_for_screen("question", SCREEN_CHANGE_S, "time-limit-began")
        began = time.monotonic()
        status = json.loads(helper_seat.sh("carrelctl --json status"))["status"]
        assert status["state"] == "active", status
        assert status["session"]["time_limit_seconds"] == TIME_LIMIT_S, status
        session = status["session"]["id"]
        # The demo's paused screen ("Time is up.", the questions hidden) when
        # Carrel interrupts the session at its limit.
        guest.wait_for_screen("paused", TIME_LIMIT_S + SCREEN_CHANGE_S, "time-limit-up")
        seen_after = time.monotonic() - began
        figure(f"time limit {TIME_LIMIT_S} s: the paused screen {seen_after:.1f} s after the question showed")
        # The question showed after `began`, so the limit runs out at most
        # TIME_LIMIT_S after it, and not much before (a screendump a second).
        assert seen_after >= TIME_LIMIT_S - 10, f"interrupted {seen_after:.1f} s into a {TIME_LIMIT_S} s limit"
        # Interrupted by the time limit, the session is over but still holds
        # its restrictions until the app ends it: `ending`.
        state, output = helper_seat.status()
        assert state == "ending", f"after the time limit carrelctl status says:\n{output}"
        log = helper_seat.sh("journalctl -b --no-pager -o cat | grep 'carrel-demo-exam: event' | tail -5")
        assert re.search(r"event interrupted time_limit", log), log
        # Carrel's audit record of it, in the journal with its fields.
        audit = helper_seat.sh("journalctl -b --no-pager -o verbose SYSLOG_IDENTIFIER=carrel CARREL_EVENT=interrupted")
        entries = re.split(r"\n(?=\S)", audit)  # verbose: each entry's fields are indented
        assert any(re.search(rf"^\s+CARREL_SESSION={session}$", e, re.M) and
                   re.search(r"^\s+CARREL_CAUSE=time_limit$", e, re.M) for e in entries), audit
        # E ends it (the app's end), and the result follows.
        guest.qmp.send_chord(["e"])
        guest.wait_for_screen("result", SCREEN_CHANGE_S, "time-limit-ended")
        state, output = helper_seat.status()
        assert state in ("none", "ended"), f"after E carrelctl status says:\n{output}"
    finally:
        helper_seat.sh(f"mv /root/policy.toml.before-time-limit {POLICY} && carrelctl reload", check=False)
