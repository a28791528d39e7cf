"""The shipped policy with the fleet: during a
session with the network cut on, ssh from the host and a Prometheus scrape
still reach the seat through the test's isolated network, while a process
outside the session and the exempt units loses the network. And carrelctl
from an invigilator's account (a member of carrel-admin), not the student's."""

import os
import subprocess
import time
import urllib.request

from conftest import SCREEN_CHANGE_S, run_dir

# From the guest's root shell (the serial getty's cgroup: neither the
# session's nor an exempt unit's): the one address the test's network
# answers on.
PROBE = "timeout 10 bash -c 'exec 3<>/dev/tcp/10.0.2.100/8080 && cat <&3'"


def ssh(seat, command, timeout=60):
    port = seat.guest.ports["ssh"]
    return subprocess.run(
        ["ssh", "-i", os.path.join(run_dir(), "ssh-key"), "-p", str(port), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=30",
         "-o", "LogLevel=ERROR", "root@127.0.0.1", command],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)


def scrape(seat):
    port = seat.guest.ports["node_exporter"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        return response.status, response.read().decode(errors="replace")


def no_session(seat):
    """The start screen with no session: ends a running one with E and
    leaves the result with Q (Single App Mode starts the demo again)."""
    if seat.exam_on_screen() == "question":
        seat.guest.qmp.send_chord(["e"])
        seat.guest.wait_for_screen("result", SCREEN_CHANGE_S, "end")
        seat.exam_on_screen()
    assert seat.status()[0] == "none"


def test_the_network_cut_spares_the_fleet_and_stops_the_rest(helper_seat):
    no_session(helper_seat)
    # Before the session, every path works: the controls for what follows.
    probe = helper_seat.sh(PROBE, check=False)
    assert "pong" in probe, f"before any session the guest's probe should reach 10.0.2.100:8080:\n{probe}"
    deadline = time.monotonic() + 90
    while True:  # sshd may still be starting under TCG
        result = ssh(helper_seat, "true")
        if result.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert result.returncode == 0, f"ssh from the host failed before any session:\n{result.stdout}"
    code, metrics = scrape(helper_seat)
    assert code == 200 and "node_" in metrics

    helper_seat.session_active()
    tables = helper_seat.sh("nft list tables")
    assert "carrel" in tables, tables
    probe = helper_seat.sh(PROBE, check=False)
    assert "pong" not in probe, f"during the session a process outside it still reached the network:\n{probe}"
    result = ssh(helper_seat, "carrelctl status")
    assert result.returncode == 0 and "session: active" in result.stdout, \
        f"ssh from the host during the session (ssh.service is exempt):\n{result.stdout}"
    code, metrics = scrape(helper_seat)
    assert code == 200 and "node_" in metrics, "Prometheus' scrape failed during the session"


def test_carrelctl_from_an_invigilators_account_not_the_students(helper_seat):
    helper_seat.session_active()
    helper_seat.sh("id invigilator >/dev/null 2>&1 || useradd -m -G carrel-admin invigilator")
    output = helper_seat.sh("runuser -u invigilator -- carrelctl status")
    assert "session: active" in output, output
    status, output = helper_seat.guest.serial.run("runuser -u exam -- carrelctl status", timeout=60)
    assert status != 0 and "session: active" not in output, \
        f"the exam user (the student) must not reach carrelctl:\n{output}"
