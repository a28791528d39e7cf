"""The shipped policy with the fleet: during a
session with the network cut on, ssh from the host and a Prometheus scrape
still reach the seat through the test's isolated network, while a process
outside the session and the exempt units loses the network. The session's
own process resolves names through the seat's resolver (unbound, an exempt
unit, asking the test's DNS server) while a process outside cannot, and
systemd-journal-upload (exempt) carries an entry logged during the session
to the test's receiver. And carrelctl from an invigilator's account (a
member of carrel-admin), not the student's."""

import os
import subprocess
import time
import urllib.request
import uuid

from conftest import SCREEN_CHANGE_S, figure, run_dir

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


def read(path):
    with open(path, "rb") as f:
        return f.read()


def in_the_apps_cgroup(seat, command, timeout=60):
    """Runs `command` as the exam app's own process would: a shell that
    steps into the app's cgroup (where Carrel started the demo, the one the
    network cut lets through) and then becomes the app's user. The demo
    itself resolves no names, so this is how the test asks as the session.
    Returns (exit status, output)."""
    pid = seat.sh("pidof -s carrel-demo-exam").strip()
    cgroup = seat.sh(f"sed -n 's/^0:://p' /proc/{pid}/cgroup").strip()
    user = seat.sh(f"ps -o user= -p {pid}").strip()
    assert cgroup.startswith("/") and user, (cgroup, user)
    return seat.guest.serial.run(
        f"sh -c 'echo $$ > /sys/fs/cgroup{cgroup}/cgroup.procs && "
        f"exec setpriv --reuid={user} --regid={user} --init-groups {command}'", timeout=timeout)


def test_the_session_resolves_names_through_the_exempt_resolver(helper_seat):
    no_session(helper_seat)
    queries = helper_seat.guest.fleet_files["dns"]
    # Started here, not at boot (meson-helpers/seat/image.py says why).
    helper_seat.sh("systemctl start unbound.service", timeout=120)
    assert helper_seat.sh("systemctl is-active unbound.service").strip() == "active"
    # Before the session any process resolves: the guest's resolver asks
    # the test's DNS server (the control for what follows).
    output = helper_seat.sh("timeout 30 getent ahostsv4 before.carrel.test", check=False)
    assert "10.0.2.100" in output, f"before any session the resolver should answer:\n{output}"
    assert b"before.carrel.test 1" in read(queries), read(queries)

    helper_seat.session_active()
    # As the session's process: a name the resolver has not seen, so its
    # answer comes from upstream during the cut, and the address it names
    # answers the session.
    status, output = in_the_apps_cgroup(helper_seat, "getent ahostsv4 during.carrel.test")
    assert status == 0 and "10.0.2.100" in output, \
        f"the session's process could not resolve through the exempt resolver:\n{output}"
    assert b"during.carrel.test 1" in read(queries), \
        f"the resolver did not ask upstream during the session:\n{read(queries).decode()}"
    status, output = in_the_apps_cgroup(
        helper_seat, "timeout 10 bash -c \"exec 3<>/dev/tcp/during.carrel.test/8080 && cat <&3\"")
    assert "pong" in output, f"the session's process reached no address by name:\n{output}"
    # Outside the session and the exempt units: no answer, and nothing asked.
    status, output = helper_seat.guest.serial.run("timeout 30 getent ahostsv4 outside.carrel.test", timeout=60)
    assert status != 0 and "10.0.2.100" not in output, \
        f"during the session a process outside it resolved a name:\n{output}"
    assert b"outside.carrel.test" not in read(queries), read(queries)
    assert helper_seat.status()[0] == "active"


def test_journal_upload_carries_an_entry_logged_during_the_session(helper_seat):
    helper_seat.session_active()
    received = helper_seat.guest.fleet_files["journal"]
    assert helper_seat.sh("systemctl is-active systemd-journal-upload.service").strip() == "active"
    assert "carrel" in helper_seat.sh("nft list tables")
    marker = f"carrel-seat-upload-{uuid.uuid4().hex[:12]}"
    helper_seat.sh(f"logger -t carrel-seat-test {marker}")
    logged = time.monotonic()
    deadline = logged + 120
    while marker.encode() not in read(received) and time.monotonic() < deadline:
        time.sleep(1)
    arrived = time.monotonic() - logged
    assert marker.encode() in read(received), \
        (f"an entry logged during the session did not reach the test's receiver in 120 s "
         f"({len(read(received))} bytes received):\n"
         + helper_seat.sh("systemctl --no-pager status systemd-journal-upload.service 2>&1 | tail -20", check=False))
    figure(f"journal upload during the network cut: an entry on the host {arrived:.1f} s after it was logged")
    assert b"SYSLOG_IDENTIFIER=carrel-seat-test" in read(received)
    state, output = helper_seat.status()
    assert state == "active", f"the session should still be running:\n{output}"
