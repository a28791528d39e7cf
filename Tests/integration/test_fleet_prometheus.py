"""200 seats under a real Prometheus.

Carrel's own metrics writer, driven by `carrel metrics-rehearse` through a
seeded schedule of session transitions, keeps one carrel.prom per seat; each
seat's directory is served by its own prometheus-node-exporter (textfile
collector only) on a loopback port, scraped every second by a real
Prometheus with the room and seat as labels from its scrape configuration
and the shipped alert rules loaded (a copy with the staleness threshold and
`for:` shortened, so the test takes seconds, not minutes). Through
Prometheus' HTTP API: every seat is up, and every seat's state and counters
are what the schedule says (computed here from the schedule, not by Carrel);
a killed exporter and a file that stopped being renewed each raise
CarrelSeatMissing for that seat alone, within the scaled bound. The head
series count and Prometheus' CPU time and RSS are printed, not asserted.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import carrel_harness as h

SEATS = 200
ROOMS = 4
SEED = 20261124
STEPS_PER_SEAT = 12
KINDS = ["hidden_global", "capture", "virtual_input", "foreign_window", "focus_steal", "clipboard"]
CAUSES = ["other", "integrity", "administrative", "time_limit", "shutdown"]
# The test copy of the rules: stale after STALE s instead of 60, `for: FOR_S` instead of 1m.
STALE, FOR_S, RENEW_MS = 5, 3, 1000
ALERTS = Path(__file__).resolve().parents[2] / "dist" / "prometheus" / "carrel-alerts.yml"


def seat_name(i: int) -> str:
    return f"seat{i:03d}"


def room_of(i: int) -> str:
    return f"R{(i - 1) * ROOMS // SEATS + 1:02d}"


def schedule(rng: random.Random, seat: str) -> tuple[list[str], dict]:
    """A seat's script, and what the seat's metrics must then say (computed
    here, step by step, from what each step means in docs/FLEET.md)."""
    lines, state = [], "idle"
    blocked = {k: 0 for k in KINDS}
    interruptions = {c: 0 for c in CAUSES}
    sessions = {"ended": 0, "failed": 0, "destroyed": 0}
    limit = 0
    for _ in range(STEPS_PER_SEAT):
        if state == "idle":
            step = "begin"
        elif state == "pending":
            step = rng.choice(["began", "began", "began", "failed", "destroyed"])
        else:
            step = rng.choice(["blocked", "blocked", "interrupted", "ended", "destroyed"]
                              if state == "active" else ["blocked", "interrupted", "ended", "destroyed"])
        if step == "begin":
            lines.append(f"{seat} begin")
            state = "pending"
        elif step == "began":
            limit = rng.choice([0, 3600, 5400])
            lines.append(f"{seat} began {limit}")
            state = "active"
        elif step == "failed":
            lines.append(f"{seat} failed")
            sessions["failed"] += 1
            state, limit = "idle", 0
        elif step == "destroyed":
            lines.append(f"{seat} destroyed")
            sessions["destroyed"] += 1
            state, limit = "idle", 0
        elif step == "ended":
            lines.append(f"{seat} ended")
            sessions["ended"] += 1
            state, limit = "idle", 0
        elif step == "blocked":
            kind = rng.choice(KINDS)
            lines.append(f"{seat} blocked {kind}")
            blocked[kind] += 1
        elif step == "interrupted":
            cause = rng.choice(CAUSES)
            lines.append(f"{seat} interrupted {cause}")
            interruptions[cause] += 1
            # A time limit or Carrel stopping: the session is over ("ending"); anything else needs a person.
            state = "ending" if cause in ("time_limit", "shutdown") else "interrupted"
    return lines, {"state": state, "blocked": blocked, "interruptions": interruptions, "sessions": sessions,
                   "deadline_set": limit > 0 and state != "idle"}


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class PromAPI:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path: str, **params) -> dict:
        url = f"{self.base}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        with urllib.request.urlopen(url, timeout=5) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list:
        return self.get("/api/v1/query", query=expr)["result"]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/-/ready", timeout=1) as r:
                return r.status == 200
        except OSError:
            return False


def by_seat(result: list, label: str | None = None) -> dict:
    out = {}
    for sample in result:
        m = sample["metric"]
        key = (m["seat"], m[label]) if label else m["seat"]
        out[key] = float(sample["value"][1])
    return out


def test_200_seats_under_a_real_prometheus(procs, logdir, logs, tmp_path, carrel_bin):
    exporter = h.require_tool("prometheus-node-exporter")
    prometheus = h.require_tool("prometheus")
    # 200 exporters and a Prometheus: the default per-test budget is for one compositor.
    signal.alarm(150)

    rng = random.Random(SEED)
    scripts, expected = {}, {}
    for i in range(1, SEATS + 1):
        scripts[seat_name(i)], expected[seat_name(i)] = schedule(rng, seat_name(i))
    # Interleaved, as a room's seats move at once.
    lines = [line for step in range(STEPS_PER_SEAT) for s in scripts.values() for line in s[step:step + 1]]

    base = tmp_path / "room"
    base.mkdir()
    ports = free_ports(SEATS + 1)
    prom_port, seat_ports = ports[0], dict(zip(scripts, ports[1:]))

    # Carrel's writer, one directory per seat.
    rehearsal_out = logdir / "metrics-rehearse.stdout"
    rehearsal_err = logdir / "metrics-rehearse.stderr"
    logs.append(("metrics-rehearse stderr", rehearsal_err))
    with open(rehearsal_out, "wb") as out, open(rehearsal_err, "wb") as err:
        rehearsal = procs.spawn("metrics-rehearse", [carrel_bin, "metrics-rehearse", "--renew-milliseconds",
                                                     str(RENEW_MS), str(base)],
                                env=h.clean_env(), stdin=subprocess.PIPE, stdout=out, stderr=err)
    rehearsal.stdin.write(("\n".join(lines) + "\n").encode())
    rehearsal.stdin.flush()
    assert h.wait_until(lambda: f"applied {len(lines)}" in rehearsal_out.read_text(), 20), \
        f"the rehearsal did not apply the schedule\n{rehearsal_err.read_text()}"

    # One node-exporter per seat, textfile collector only.
    exporters = {}
    for seat, port in seat_ports.items():
        with open(logdir / f"node-exporter-{seat}.log", "wb") as log:
            exporters[seat] = procs.spawn(
                f"node-exporter-{seat}",
                [exporter, "--collector.disable-defaults", "--collector.textfile",
                 f"--collector.textfile.directory={base / seat}", f"--web.listen-address=127.0.0.1:{port}",
                 "--runtime.gomaxprocs=1"],
                env=h.clean_env(), stdout=log, stderr=subprocess.STDOUT)
    assert h.wait_until(lambda: all(listening(p) for p in seat_ports.values()), 30), "node-exporters did not start"

    # Prometheus, the shipped rules with shortened times, the room and seat labels from the scrape config.
    rules = ALERTS.read_text()
    assert "> 60" in rules and "for: 1m" in rules, "the test copy no longer matches the shipped rules"
    (base / "alerts.yml").write_text(rules.replace("> 60", f"> {STALE}").replace("for: 1m", f"for: {FOR_S}s"))
    targets = "\n".join(
        f'      - targets: ["127.0.0.1:{port}"]\n        labels: {{room: "{room_of(int(seat[4:]))}", seat: "{seat}"}}'
        for seat, port in seat_ports.items())
    (base / "prometheus.yml").write_text(f"""global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - {base / 'alerts.yml'}
scrape_configs:
  - job_name: carrel-seats
    static_configs:
{targets}
""")
    check = subprocess.run([h.require_tool("promtool"), "check", "config", str(base / "prometheus.yml")],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check
    prom_log = logdir / "prometheus.log"
    logs.append(("prometheus", prom_log))
    with open(prom_log, "wb") as log:
        prom = procs.spawn("prometheus", [prometheus, f"--config.file={base / 'prometheus.yml'}",
                                          f"--storage.tsdb.path={base / 'data'}",
                                          f"--web.listen-address=127.0.0.1:{prom_port}"],
                           env=h.clean_env(), stdout=log, stderr=subprocess.STDOUT)
    api = PromAPI(prom_port)
    assert h.wait_until(api.ready, 30), f"prometheus not ready\n{h.tail(prom_log)}"

    # Every seat up, and every seat's numbers as the schedule says.
    up = 'up{job="carrel-seats"} == 1'
    assert h.wait_until(lambda: len(api.query(up)) == SEATS, 30), f"not every seat is up: {len(api.query(up))}"
    labels = {(s["metric"]["seat"], s["metric"]["room"]) for s in api.query('up{job="carrel-seats"}')}
    assert labels == {(seat, room_of(int(seat[4:]))) for seat in scripts}

    def mismatches() -> list:
        wrong = []
        states = {seat: state for (seat, state), v in by_seat(api.query("carrel_session_state == 1"), "state").items()}
        blocked = by_seat(api.query("carrel_blocked_attempts_total"), "kind")
        interruptions = by_seat(api.query("carrel_interruptions_total"), "cause")
        sessions = by_seat(api.query("carrel_sessions_total"), "outcome")
        deadlines = by_seat(api.query("carrel_session_deadline_seconds"))
        for seat, want in expected.items():
            if states.get(seat) != want["state"]:
                wrong.append((seat, "state", states.get(seat), want["state"]))
            for kind, n in want["blocked"].items():
                if blocked.get((seat, kind)) != n:
                    wrong.append((seat, kind, blocked.get((seat, kind)), n))
            for cause, n in want["interruptions"].items():
                if interruptions.get((seat, cause)) != n:
                    wrong.append((seat, cause, interruptions.get((seat, cause)), n))
            for outcome, n in want["sessions"].items():
                if sessions.get((seat, outcome)) != n:
                    wrong.append((seat, outcome, sessions.get((seat, outcome)), n))
            if (deadlines.get(seat, 0) > 0) != want["deadline_set"]:
                wrong.append((seat, "deadline", deadlines.get(seat), want["deadline_set"]))
        return wrong

    last = [None]
    assert h.wait_until(lambda: not (last.__setitem__(0, mismatches()) or last[0]), 20), last[0][:20]
    states = sorted({want["state"] for want in expected.values()})
    assert len(states) >= 4, f"the schedule should reach most states: {states}"
    # Firing, not pending: on a busy machine one scrape of a live seat can time
    # out (up == 0 for that one evaluation); the alert's `for` is what tells a
    # seat that is gone from one that was late once.
    firing_missing = 'ALERTS{alertname="CarrelSeatMissing",alertstate="firing"}'
    assert not api.query(firing_missing), "a seat is missing before any was stopped"

    # A seat whose exporter dies, and one whose Carrel stops (its file goes stale).
    killed, frozen = "seat013", "seat007"
    start = time.monotonic()
    exporters[killed].send_signal(signal.SIGTERM)
    rehearsal.stdin.write(f"{frozen} stop\n".encode())
    rehearsal.stdin.flush()
    fired = {}

    def firing() -> bool:
        for alert in api.get("/api/v1/alerts")["alerts"]:
            if alert["labels"]["alertname"] == "CarrelSeatMissing" and alert["state"] == "firing":
                fired.setdefault(alert["labels"]["seat"], time.monotonic() - start)
        return killed in fired and frozen in fired
    # Scaled bounds (docs/FLEET.md): down → scrape + for + evaluation; stale → threshold + for + scrape + evaluation.
    assert h.wait_until(firing, STALE + FOR_S + 15, interval=0.25), f"fired so far: {fired}"
    assert fired[killed] <= FOR_S + 1 + 1 + 4, fired
    assert fired[frozen] <= STALE + FOR_S + 1 + 1 + 4, fired
    missing = {a["metric"]["seat"] for a in api.query(firing_missing)}
    assert missing == {killed, frozen}, missing

    # Report, not assert: what 200 seats cost Prometheus.
    head = api.get("/api/v1/status/tsdb")["headStats"]
    with open(f"/proc/{prom.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{prom.pid}/status").read_text()).group(1)) // 1024
    print(f"\n200 seats: head series {head['numSeries']}, Prometheus CPU {cpu:.1f} s, RSS {rss} MiB; "
          f"CarrelSeatMissing fired {fired[killed]:.1f} s after the exporter died, "
          f"{fired[frozen]:.1f} s after the file stopped being renewed")
    assert rehearsal.poll() is None, rehearsal_err.read_text()
