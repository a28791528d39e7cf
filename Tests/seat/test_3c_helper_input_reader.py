"""A process reading the seat's keyboard besides Carrel (a keylogger, a
remote-help tool) sees every key the student types, whatever the compositor
shows: while one holds the keyboard's evdev device open, the demo exam's
begin fails with input_readers naming it and the device; once it stops, the
begin succeeds. The shipped layout: Carrel runs as its own user, so the
privileged helper reads /proc for it."""

import re
import time

from conftest import SCREEN_CHANGE_S, BOOT_TO_EXAM_S

# The guest's PS/2 keyboard, as the kernel names it.
KEYBOARD = "AT Translated Set 2 keyboard"


def test_a_process_reading_the_keyboard_fails_the_begin_until_it_stops(helper_seat):
    if helper_seat.exam_on_screen() != "start":
        helper_seat.boot()
        helper_seat.guest.wait_for_screen("start", BOOT_TO_EXAM_S, "boot")
    guest = helper_seat.guest
    device = helper_seat.sh(
        "for d in /sys/class/input/event*; do "
        f"if [ \"$(cat $d/device/name)\" = '{KEYBOARD}' ]; then echo /dev/input/${{d##*/}}; fi; done").strip()
    assert re.fullmatch(r"/dev/input/event\d+", device), f"no evdev device for the {KEYBOARD}: {device!r}"
    # Root reads it, as a keylogger would, in the background (a subshell: no
    # job control to print "[1] PID", and cat is the pid it prints).
    pid = int(helper_seat.sh(f"(cat {device} >/dev/null 2>&1 </dev/null & echo $!)").strip())
    assert helper_seat.sh(f"cat /proc/{pid}/comm").strip() == "cat"
    try:
        guest.qmp.send_chord(["b"])
        guest.wait_for_screen("error", SCREEN_CHANGE_S, "begin-while-read")
        state, output = helper_seat.status()
        assert state != "active", f"a session began while pid {pid} read {device}:\n{output}"
        deadline = time.monotonic() + 30
        while True:
            log = helper_seat.sh("journalctl -b --no-pager -o cat | grep 'carrel-demo-exam: event failed' | tail -1 || true")
            if log.strip() or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert "preconditions_unmet" in log and "input_readers: " in log, log
        assert f"pid {pid} (cat, /usr/bin/cat) has {device} open" in log, log
        # The audit record says the same (in the journal, with its fields).
        audit = helper_seat.sh("journalctl -b --no-pager -o verbose SYSLOG_IDENTIFIER=carrel CARREL_EVENT=preconditions")
        assert f"pid {pid} (cat, /usr/bin/cat)" in audit, audit
    finally:
        helper_seat.sh(f"kill {pid}; while kill -0 {pid} 2>/dev/null; do sleep 0.2; done", check=False)
    # It stopped: B on the error screen begins again, and now it begins.
    guest.qmp.send_chord(["b"])
    guest.wait_for_screen("question", SCREEN_CHANGE_S, "begin-after-reader")
    state, output = helper_seat.status()
    assert state == "active", f"after the reader stopped, B shows the question but carrelctl status says:\n{output}"
    guest.qmp.send_chord(["e"])
    guest.wait_for_screen("result", SCREEN_CHANGE_S, "ended-after-reader")
