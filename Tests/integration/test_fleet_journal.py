"""The journal path, against the real binary and real systemd receivers.

Every audit record also goes to the systemd journal as structured fields.
There is no systemd PID 1 here, so the receivers are started by hand:

- for each of two seats, `systemd-journal-remote` reading its Carrel's
  `--journal-export` FIFO (the journal export format): the records arrive
  with their fields, one MESSAGE_ID per event, and their audit sequence
  numbers and line hashes; when the receiver dies and a new one is started,
  the records made in between wait in Carrel and arrive, so each seat's two
  journal files together hold every sequence number of its audit log, once,
  in order, and a query across the room's files finds each seat's records.
- a journald of its own namespace (`systemd-journald NAME`, socket
  /run/systemd/journal.NAME/socket) taking `--journal-socket` datagrams: a
  flood of 10,000 refused clipboard requests arrives as the audit log's 5
  full records; twelve programs refused at once make more blocked records
  than the journal takes one by one, and the rest arrive as one
  `journal_coalesced` entry, so the journal accounts for every sequence
  number once, and journald suppresses nothing.

`dist/journal/carrel.catalog` is installed into a temporary root with
`journalctl --update-catalog`, and every MESSAGE_ID Carrel sent is in it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import carrel_harness as h
from audit_log import records
from carrel_clients import Ctl, WithControlSocket, World

REMOTE = "/lib/systemd/systemd-journal-remote"
JOURNALD = "/lib/systemd/systemd-journald"
CATALOG = h.REPO / "dist" / "journal" / "carrel.catalog"


def journal_entries(*files: Path, match: tuple = ()) -> list:
    argv = ["journalctl", "--no-pager", "-o", "json", "--output-fields=" + ",".join([
        "MESSAGE", "MESSAGE_ID", "PRIORITY", "CARREL_EVENT", "CARREL_SESSION", "CARREL_CAUSE", "CARREL_KIND",
        "CARREL_COUNT", "CARREL_ACTOR", "CARREL_AUDIT_SEQ", "CARREL_AUDIT_HASH", "CARREL_RUN"])]
    for f in files:
        argv.append(f"--file={f}")
    r = subprocess.run([*argv, *match], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0 or "No entries" in r.stderr or not r.stdout, r
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


class Receiver:
    """systemd-journal-remote reading the FIFO into `output`, as a shell redirect opens it."""

    def __init__(self, procs, fifo: Path, output: Path, logdir: Path, logs: list) -> None:
        self.output = output
        log = logdir / f"journal-remote-{output.stem}.log"
        logs.append((f"journal-remote {output.name}", log))
        with open(log, "wb") as out:
            # The shell's `<` blocks until Carrel opens the FIFO for writing, as the receiver would.
            self.proc = procs.spawn(f"journal-remote-{output.stem}",
                                    ["sh", "-c", f'exec {REMOTE} --output="$0" - < "$1"', str(output), str(fifo)],
                                    env=h.clean_env(), stdout=out, stderr=subprocess.STDOUT)
        self.log = log

    def holds(self, seq: int) -> bool:
        return self.output.exists() and any(int(e["CARREL_AUDIT_SEQ"]) == seq for e in journal_entries(self.output))

    def crash(self) -> None:
        """journal-remote blocks in read(2) on its input and sees SIGTERM only at the
        next entry or EOF; a receiver going away is SIGKILL, as a crash."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)


def line_hashes(log: Path) -> list:
    return [hashlib.sha256(line).hexdigest() for line in log.read_bytes().splitlines()]


class Seat:
    """One headless seat: its audit log, its control socket, its export FIFO and the receiver reading it."""

    def __init__(self, name: str, carrel, procs, logdir: Path, logs: list, base: Path, python, protocols,
                 control_dir: Path, carrelctl: Path) -> None:
        self.name, self.procs, self.logdir, self.logs, self.base = name, procs, logdir, logs, base
        base.mkdir()
        self.fifo = base / "journal.export"
        os.mkfifo(self.fifo)
        self.receivers = [Receiver(procs, self.fifo, base / f"{name}-first.journal", logdir, logs)]
        socket_path = control_dir / name / "control.sock"
        self.world = World(WithControlSocket(carrel, socket_path), procs, logdir, logs, base, python, protocols,
                           args=["--journal-export", str(self.fifo)])
        (logdir / name).mkdir()
        self.ctl = Ctl(carrelctl, socket_path, logdir / name, logs)
        self.log = self.world.carrel.audit_log

    def last_seq(self) -> int:
        return records(self.log)[-1]["seq"]

    def restart_receiver(self) -> Receiver:
        self.receivers.append(Receiver(self.procs, self.fifo, self.base / f"{self.name}-second.journal",
                                       self.logdir, self.logs))
        return self.receivers[-1]


def test_records_reach_systemd_journal_remote_with_every_sequence_number_per_seat_across_a_receiver_restart(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir, carrelctl):
    if not os.access(REMOTE, os.X_OK):
        pytest.fail(f"{REMOTE} is missing; install systemd-journal-remote (meson-helpers/packages.sh)")
    h.require_tool("journalctl")
    seats = [Seat(name, carrel, procs, logdir, logs, tmp_path / name, client_python, pywayland_protocols,
                  control_dir, carrelctl) for name in ("seat01", "seat02")]
    apps = []
    for seat in seats:
        app = seat.world.client(f"exam-{seat.name}")
        app.map()
        app.bind()
        app.send("config c ; time_limit c 600")
        app.begin(config="c")
        app.began()
        apps.append(app)
        intruder = seat.world.client(f"intruder-{seat.name}", role="untrusted")
        intruder.send("flood_selection 3")
        intruder.expect("flooded 3")
        intruder.sync()
    before = {}
    for seat in seats:
        before[seat.name] = seat.last_seq()
        first = seat.receivers[0]
        assert h.wait_until(lambda: first.holds(before[seat.name]), 10), \
            f"{seat.name}'s first receiver never got seq {before[seat.name]}"
        first.crash()

    # While no receiver reads: an administrator extends, the apps end their sessions.
    for seat, app in zip(seats, apps):
        seat.ctl.json("extend", "5")
        app.send("end s")
        app.expect("session s ended")
        app.sync()
    for seat in seats:
        during = seat.last_seq()
        assert during > before[seat.name]
        second = seat.restart_receiver()
        assert h.wait_until(lambda: second.holds(during), 10), f"{seat.name}'s second receiver never got seq {during}"
    for seat in seats:
        seat.world.carrel.signal(signal.SIGTERM)
        seat.world.carrel.wait_exit()
        # Carrel closed the FIFO: the receiver writes what it has and exits.
        assert seat.receivers[1].proc.wait(timeout=10) == 0, seat.receivers[1].log.read_text()

    runs = set()
    every_file = [r.output for seat in seats for r in seat.receivers]
    for seat in seats:
        audit = records(seat.log)
        hashes = line_hashes(seat.log)
        first, second = (r.output for r in seat.receivers)
        entries = journal_entries(first, second)
        seqs = [int(e["CARREL_AUDIT_SEQ"]) for e in entries]
        assert seqs == [r["seq"] for r in audit], f"{seat.name}: journal seqs {seqs}\naudit seqs {[r['seq'] for r in audit]}"
        assert audit[-1]["event"] == "stopped"
        for entry, record, digest in zip(entries, audit, hashes):
            assert entry["CARREL_EVENT"] == record["event"], (entry, record)
            assert entry["CARREL_AUDIT_HASH"] == digest, (entry, record)
            assert entry["CARREL_RUN"] == record["run"]
            assert entry.get("CARREL_SESSION") == (str(record["session"]) if "session" in record else None), (entry, record)
            assert entry.get("CARREL_CAUSE") == record.get("reason"), (entry, record)
            assert entry.get("CARREL_KIND") == record.get("kind"), (entry, record)
        # The restart split them: the records made while no receiver read are in the second file.
        assert [int(e["CARREL_AUDIT_SEQ"]) for e in journal_entries(second)][0] == before[seat.name] + 1
        runs.add(audit[0]["run"])

    # Across the room's files, a query finds each seat's records by their fields.
    blocked = journal_entries(*every_file, match=("CARREL_EVENT=blocked",))
    assert len(blocked) == 6 and {e["CARREL_KIND"] for e in blocked} == {"clipboard"}, blocked
    assert {e["MESSAGE_ID"] for e in blocked} == {"12f4b95372cb4d0781bb05c4c11aadeb"}
    admin = journal_entries(*every_file, match=("CARREL_EVENT=admin",))
    assert len(admin) == 2 and {e["CARREL_RUN"] for e in admin} == runs, admin
    assert all(e["CARREL_CAUSE"] == "done" and e["CARREL_SESSION"] == "1" for e in admin), admin

    # journalctl --update-catalog takes the catalog, and it explains every MESSAGE_ID Carrel sent.
    root = tmp_path / "root"
    (root / "usr/lib/systemd/catalog").mkdir(parents=True)
    shutil.copy(CATALOG, root / "usr/lib/systemd/catalog/carrel.catalog")
    r = subprocess.run(["journalctl", f"--root={root}", "--update-catalog"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r
    r = subprocess.run(["journalctl", f"--root={root}", "--list-catalog"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r
    listed = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    sent = {e["MESSAGE_ID"] for e in journal_entries(*every_file)}
    assert sent <= listed, sent - listed
    assert len(sent) >= 8, sent


@pytest.fixture
def journald_namespace(procs, logdir, logs):
    """A journald of its own namespace, started by hand (no systemd here); its files removed after."""
    if not os.access(JOURNALD, os.X_OK):
        pytest.fail(f"{JOURNALD} is missing (Debian's systemd package)")
    if os.geteuid() != 0:
        pytest.skip("journald runs as root")
    name = f"carrel-test-{secrets.token_hex(4)}"
    log = logdir / "journald.log"
    logs.append(("journald", log))
    with open(log, "wb") as out:
        proc = procs.spawn("journald", [JOURNALD, name], env=h.clean_env(), stdout=out, stderr=subprocess.STDOUT)
    socket_path = Path(f"/run/systemd/journal.{name}/socket")
    try:
        assert h.wait_until(socket_path.exists, 10), f"journald did not start\n{log.read_text()}"
        yield name, socket_path, proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        machine = Path("/etc/machine-id").read_text().strip()
        for d in (Path(f"/run/systemd/journal.{name}"), Path(f"/var/log/journal/{machine}.{name}"),
                  Path(f"/run/log/journal/{machine}.{name}")):
            shutil.rmtree(d, ignore_errors=True)


def test_a_flood_reaches_journald_paced_accounting_for_every_record(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, journald_namespace):
    name, socket_path, journald = journald_namespace
    world = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                  args=["--journal-socket", str(socket_path)])
    app = world.client("exam")
    app.map()
    app.bind()
    app.begin()
    app.began()
    intruder = world.client("intruder", role="untrusted")
    intruder.send("flood_selection 10000")
    intruder.expect("flooded 10000", timeout=60)
    intruder.sync()

    def journal(*match: str) -> list:
        r = subprocess.run(["journalctl", f"--namespace={name}", "--no-pager", "-o", "json", *match],
                           capture_output=True, text=True, timeout=20)
        return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    # The audit log's throttle made the flood 5 records (the summary comes when the session changes).
    last = records(world.carrel.audit_log)[-1]["seq"]
    assert h.wait_until(lambda: any(int(e["CARREL_AUDIT_SEQ"]) == last for e in journal("SYSLOG_IDENTIFIER=carrel")), 10)
    full = journal("CARREL_EVENT=blocked")
    assert len(full) == 5 and {e["CARREL_KIND"] for e in full} == {"clipboard"}, full
    assert all(e["_PID"] == str(world.carrel.pid) and e["_TRANSPORT"] == "journal" for e in full)

    # Many programs at once: 12 clients, 6 refused requests each, are more blocked
    # records than the journal takes one by one in 10 s (50); the rest arrive as one
    # journal_coalesced entry naming their sequence numbers.
    crowd = [world.client(f"crowd{i}", role="untrusted") for i in range(12)]
    for c in crowd:
        c.send("flood_selection 6")
    for c in crowd:
        c.expect("flooded 6")
        c.sync()
    app.send("end s")
    app.expect("session s ended")
    audit = records(world.carrel.audit_log)

    def accounted() -> list:
        seqs = []
        for e in journal("SYSLOG_IDENTIFIER=carrel"):
            if e["CARREL_EVENT"] == "journal_coalesced":
                for part in e["CARREL_AUDIT_SEQ_RANGES"].split(","):
                    first, _, last = part.partition("-")
                    seqs += range(int(first), int(last or first) + 1)
            else:
                seqs.append(int(e["CARREL_AUDIT_SEQ"]))
        return seqs
    want = [r["seq"] for r in audit]
    # The coalesced entry comes when its 10 s window closes.
    assert h.wait_until(lambda: sorted(accounted()) == want, 20), \
        f"journal accounts for {sorted(accounted())}, the audit log has {want}"
    assert len(accounted()) == len(want), "a record was sent twice"
    coalesced = journal("CARREL_EVENT=journal_coalesced")
    assert coalesced and all(e["MESSAGE_ID"] == "67087e59323e4605b64c62387ea10554" for e in coalesced), coalesced
    held = sum(int(e["CARREL_COUNT"]) for e in coalesced)
    one_by_one = journal("CARREL_EVENT=blocked")
    floodable = [r for r in audit if r["event"] == "blocked"]
    assert held + len(one_by_one) == len(floodable), (held, len(one_by_one), len(floodable))
    assert len(one_by_one) <= 50 * 2, "more than the pace lets through in the run's windows"
    # Transitions and the audit log's own summaries (they carry counts) are never held.
    assert len(journal("CARREL_EVENT=blocked_summary")) == len([r for r in audit if r["event"] == "blocked_summary"])
    for event in ("began", "ended", "restrictions_reverted"):
        assert len(journal(f"CARREL_EVENT={event}")) == 1, event
    summary = [e for e in journal("CARREL_EVENT=blocked_summary") if e["CARREL_COUNT"] == "9995"]
    ten_thousand = [r for r in audit if r["event"] == "blocked_summary" and r.get("count") == 9995]
    assert len(ten_thousand) == 1, "the audit log did not count the flood into one summary"
    assert len(summary) == 1, summary
    assert int(summary[0]["PRIORITY"]) == 4 and summary[0]["MESSAGE_ID"] == "f795c585acab4137b445d0cc7a8209cc"
    # A sanity check, not a proof of the pace (the run sends far fewer entries than
    # journald's limit): journald logged no suppression of Carrel's messages.
    suppressed = journal("MESSAGE_ID=a596d6fe7bfa4994828e72309e95d61e")
    assert not suppressed, suppressed
    world.alive()
