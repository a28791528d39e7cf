"""kill -9 mid-session, of Carrel and of the privileged helper: the kiosk comes back, the restrictions are reverted, and losing
the helper is an interruption, not a restart of the kiosk."""

import re
import time

from conftest import SCREEN_CHANGE_S, figure


def test_kill_9_of_carrel_brings_the_exam_back_with_the_table_gone(helper_seat):
    helper_seat.session_active()
    seat = helper_seat
    tables = seat.sh("nft list tables")
    assert "carrel" in tables, f"during a session the network provider's table should be loaded:\n{tables}"
    pid = seat.sh("pidof -s carrel").strip()
    started = time.monotonic()
    seat.sh(f"kill -9 {pid}")
    name, _, png = seat.guest.wait_for_screen("start", SCREEN_CHANGE_S, "after-kill-carrel")
    figure(f"kill -9 carrel mid-session → exam start screen again: {time.monotonic() - started:.1f} s")
    new_pid = seat.sh("pidof -s carrel || true").strip()
    assert new_pid and new_pid != pid, f"Carrel should be a new process (was {pid}, now {new_pid or 'none'})"
    tables = seat.sh("nft list tables")
    assert "carrel" not in tables, f"the nftables table outlived Carrel:\n{tables}"
    state, output = seat.status()
    assert state == "none", f"after the restart carrelctl status says:\n{output}"
    verify = seat.sh("carrelctl audit verify /var/log/carrel/audit.jsonl", check=False)
    assert "chain intact" in verify, f"the audit chain after kill -9:\n{verify}"


def test_kill_9_of_the_helper_pauses_the_exam_and_keeps_the_kiosk(helper_seat):
    helper_seat.session_active()
    seat = helper_seat
    main_pid = seat.main_pid()
    restarts = seat.sh(f"systemctl show -p NRestarts --value {seat.unit}").strip()
    helper = seat.sh("pidof -s carrel-privileged").strip()
    started = time.monotonic()
    seat.sh(f"kill -9 {helper}")
    seat.guest.wait_for_screen("paused", SCREEN_CHANGE_S, "after-kill-helper")
    figure(f"kill -9 carrel-privileged mid-session → paused screen: {time.monotonic() - started:.1f} s")
    log = seat.sh("journalctl -b --no-pager -o cat | grep 'carrel-demo-exam: event' || true")
    assert re.search(r"event interrupted", log), f"the demo heard no interruption:\n{log}"
    assert seat.main_pid() == main_pid, f"{seat.unit} was restarted (MainPID {main_pid} before)"
    assert seat.sh(f"systemctl show -p NRestarts --value {seat.unit}").strip() == restarts, \
        f"{seat.unit} was restarted"
    # The helper comes back (Restart=always) and the kiosk reconnects.
    deadline = time.monotonic() + 60
    while "active" != seat.sh("systemctl is-active carrel-privileged.service", check=False).strip():
        assert time.monotonic() < deadline, "carrel-privileged.service did not come back within 60 s"
        time.sleep(2)
    state, output = seat.status()
    # carrelctl calls an interrupted session "ending": its restrictions hold
    # until the app ends it (fail closed).
    assert state == "ending" and "interrupted(integrity)" in output, \
        f"the session should stay interrupted until the app ends it:\n{output}"
    assert "restrictions: hide-untrusted" in output, f"the restrictions should still hold:\n{output}"
    # Leaving the paused exam (E ends the session) must lift the restrictions.
    seat.guest.qmp.send_chord(["e"])
    seat.guest.wait_for_screen("result", SCREEN_CHANGE_S, "after-e")
    deadline = time.monotonic() + 30
    while "carrel" in seat.sh("nft list tables"):
        assert time.monotonic() < deadline, "the table stayed after the interrupted session ended"
        time.sleep(2)
