#!/usr/bin/env python3
"""Soak: one headless Carrel under everything at once for MINUTES.

Alongside each other, against one Carrel:
  - the demo exam (`carrel-demo-exam --auto --hold 1`) as the app, again and
    again: each run begins a session, answers, ends, exits 0 (1 when its
    begin was refused because a racer held the lock);
  - the race test's client mix (Tests/integration/test_session_races.py):
    pywayland exam clients sending random begin/end/update/destroy, kill -9
    now and then, in rounds; after each round every begin must have been
    answered exactly once with nothing after a terminal event;
  - the wire fuzzer (Tests/fuzz/carrel_fuzz.py) in 60-second chunks, a new
    seed each, both roles.
Every 10 s it samples Carrel's VmRSS (/proc/PID/status) and CPU time
(utime+stime, /proc/PID/stat) into a CSV. At the end: duration, sessions
completed, crashes, RSS at start / after warm-up / at the end, CPU %, and
whether RSS is flat after warm-up (least-squares slope, projected over the
post-warm-up period, under 4 MiB or 5 %). Results: out/soak-TIMESTAMP.{csv,md}.
Exit status 0 when Carrel never crashed, the contract held and RSS is flat.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))
import assessment_client  # noqa: E402
import carrel_harness as h  # noqa: E402
from carrel_clients import Driver  # noqa: E402
from race_script import Model, step, unanswered_begins  # noqa: E402

SAMPLE_EVERY = 10.0
TICKS = os.sysconf("SC_CLK_TCK")


class Soak:
    def __init__(self, args) -> None:
        self.args = args
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.counts = {"demo_ok": 0, "demo_refused": 0, "demo_other": 0, "racer_began": 0,
                       "racer_ended": 0, "race_rounds": 0, "fuzz_chunks": 0, "fuzz_failures": 0}
        self.violations: list[str] = []
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        self.out = ROOT / "out"
        self.out.mkdir(exist_ok=True)
        self.csv_path = self.out / f"soak-{stamp}.csv"
        self.md_path = self.out / f"soak-{stamp}.md"
        self.work = Path(tempfile.mkdtemp(prefix="carrel-soak-"))
        self.runtime = self.work / "runtime"
        self.runtime.mkdir(mode=0o700)
        self.protocols = assessment_client.generate_protocols(self.work / "protocols",
                                                              python=sys.executable)

    def bump(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] += n

    def violation(self, what: str) -> None:
        with self.lock:
            self.violations.append(what)
        print(f"soak: VIOLATION {what}", flush=True)

    # -- carrel ---------------------------------------------------------------

    def start_carrel(self) -> None:
        record = self.work / "app-display"
        env = h.clean_env({"XDG_RUNTIME_DIR": str(self.runtime), "WLR_BACKENDS": "headless",
                           "WLR_RENDERER": "pixman"})
        self.carrel_log = open(self.work / "carrel.log", "wb")
        r, w = os.pipe()
        self.carrel = subprocess.Popen(
            [self.args.carrel, "--ready-fd", str(w), "--audit-log", str(self.work / "audit.jsonl"),
             # A test machine: headless, no logind seat (see docs/PRECONDITIONS.md).
             "--waive-precondition", "nested", "--waive-precondition", "x_server",
             "--waive-precondition", "seat", "--waive-precondition", "kernel_keys",
             "--waive-precondition", "virtual_input", "--waive-precondition", "input_readers",
             "--", "sh", "-c",
             'printf "%s\\n" "$WAYLAND_DISPLAY" > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 1000000',
             str(record)], env=env, pass_fds=(w,), stdout=self.carrel_log, stderr=self.carrel_log,
            start_new_session=True)
        os.close(w)
        data = b""
        deadline = time.monotonic() + 30
        while b"\n" not in data and time.monotonic() < deadline:
            chunk = os.read(r, 256)
            if not chunk:
                break
            data += chunk
        os.close(r)
        if b"\n" not in data or not h.wait_until(record.exists, 10):
            sys.exit(f"soak: carrel did not become ready; log {self.carrel_log.name}")
        self.public = data.decode().split("\n")[0].strip()
        self.app = record.read_text().strip()

    def client_env(self, role: str) -> dict:
        return h.clean_env({"XDG_RUNTIME_DIR": str(self.runtime),
                            "WAYLAND_DISPLAY": self.app if role == "app" else self.public,
                            "CARREL_PYWAYLAND_PROTOCOLS": str(self.protocols),
                            "PYTHONUNBUFFERED": "1"})

    # -- workers --------------------------------------------------------------

    def demo_loop(self) -> None:
        log = open(self.work / "demo.log", "ab")
        while not self.stop.is_set() and self.carrel.poll() is None:
            proc = subprocess.Popen([self.args.demo, "--auto", "--hold", "1"], env=self.client_env("app"),
                                    stdout=log, stderr=log, start_new_session=True)
            try:
                status = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                self.violation("a demo exam run did not finish within 60 s")
                continue
            self.bump({0: "demo_ok", 1: "demo_refused"}.get(status, "demo_other"))
            time.sleep(0.2 if status == 0 else 1.0)  # refused: a racer holds the lock for now

    def racer(self, name: str) -> Model:
        stderr = open(self.work / f"{name}.stderr", "wb")
        proc = subprocess.Popen([sys.executable, assessment_client.__file__], env=self.client_env("app"),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                start_new_session=True)
        d = Driver(name, proc, Path(stderr.name), self.work / f"{name}.transcript")
        d.expect("ready", timeout=20)
        d.send("map w")
        d.bind()
        return Model(d)

    def check(self, m: Model) -> None:
        d = m.driver
        deadline = time.monotonic() + 5
        while unanswered_begins(d) and time.monotonic() < deadline:
            d.collect(0.1)
        terminal: set[str] = set()
        answered: dict[str, int] = {}
        for line in d.lines:
            match = re.fullmatch(r"session (\S+) (began|failed|interrupted|ended|updated|update_failed)\b.*", line)
            if not match:
                continue
            s, event = match.groups()
            if s in terminal:
                self.violation(f"{d.name}: {event} after a terminal event on {s}")
            if event in ("began", "failed"):
                answered[s] = answered.get(s, 0) + 1
                if answered[s] > 1:
                    self.violation(f"{d.name}: {s} answered twice")
            if event in ("failed", "ended"):
                terminal.add(s)
            if event == "began":
                self.bump("racer_began")
            if event == "ended":
                self.bump("racer_ended")
        if unanswered_begins(d):
            self.violation(f"{d.name}: begins never answered: {unanswered_begins(d)}")

    def race_loop(self) -> None:
        rng = random.Random(self.args.seed)
        round_no = 0
        while not self.stop.is_set() and self.carrel.poll() is None:
            round_no += 1
            models = [self.racer(f"r{round_no}-{i}") for i in range(3)]
            for _ in range(150):
                if self.stop.is_set():
                    break
                i = rng.randrange(len(models))
                m = models[i]
                if m.driver.proc.poll() is not None or rng.random() < 0.015:
                    if m.driver.proc.poll() is None:
                        os.kill(m.driver.pid, signal.SIGKILL)
                        m.driver.proc.wait(timeout=5)
                    self.check_dead(m)
                    models[i] = self.racer(f"r{round_no}-{i}-{rng.randrange(10**6)}")
                    continue
                try:
                    m.driver.send(step(rng, m))
                except h.HarnessError:
                    continue
                m.driver.collect(0.02)
                time.sleep(0.02)
            for m in models:
                if m.driver.proc.poll() is None:
                    try:
                        m.driver.sync()
                        self.check(m)
                    except h.HarnessError:
                        pass  # a protocol error it provoked: Carrel rightly dropped it
                    m.driver.send("exit") if m.driver.proc.poll() is None else None
                    try:
                        m.driver.proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        m.driver.proc.kill()
                        m.driver.proc.wait()
            self.bump("race_rounds")

    def check_dead(self, m: Model) -> None:
        """A killed racer: count its events; nothing to check about answers."""
        m.driver.collect(0.05)
        for line in m.driver.lines:
            if re.fullmatch(r"session \S+ began", line):
                self.bump("racer_began")
            elif re.fullmatch(r"session \S+ ended", line):
                self.bump("racer_ended")

    def fuzz_loop(self) -> None:
        log = open(self.work / "fuzz.log", "ab")
        seed = self.args.seed
        while not self.stop.is_set() and self.carrel.poll() is None:
            seed += 1
            left = self.deadline - time.monotonic()
            chunk = min(60.0, left - 5)
            if chunk < 5:
                break
            proc = subprocess.Popen(
                [sys.executable, str(ROOT / "Tests" / "fuzz" / "carrel_fuzz.py"), "--seed", str(seed),
                 "--duration", f"{chunk:.0f}", "--public", self.public, "--app", self.app,
                 "--carrel-pid", str(self.carrel.pid), "--max-rss-growth-mb", "256"],
                env=h.clean_env({"XDG_RUNTIME_DIR": str(self.runtime)}), stdout=log, stderr=log,
                start_new_session=True)
            status = proc.wait()
            self.bump("fuzz_chunks")
            if status != 0:
                self.bump("fuzz_failures")
                self.violation(f"fuzzer seed {seed} exited {status} (see {log.name})")

    def guarded(self, target):
        def run():
            try:
                target()
            except Exception as e:  # noqa: BLE001 — a worker's failure is a finding, reported
                if not self.stop.is_set():
                    self.violation(f"worker {target.__name__} failed: {e!r}"[:2000])
        return threading.Thread(target=run, daemon=True, name=target.__name__)

    # -- sampling -------------------------------------------------------------

    def sample(self) -> tuple[int, int]:
        with open(f"/proc/{self.carrel.pid}/status") as f:
            rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        with open(f"/proc/{self.carrel.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return rss, int(fields[11]) + int(fields[12])

    def run(self) -> int:
        self.start_carrel()
        started = time.monotonic()
        self.deadline = started + self.args.minutes * 60
        print(f"soak: carrel pid {self.carrel.pid}, {self.args.minutes} min, seed {self.args.seed}, "
              f"work dir {self.work}", flush=True)
        workers = [self.guarded(t) for t in (self.demo_loop, self.race_loop, self.fuzz_loop)]
        for t in workers:
            t.start()
        rows = []
        crashed = None
        with open(self.csv_path, "w") as csv:
            csv.write("elapsed_s,rss_kib,cpu_ticks,cpu_percent,demo_sessions,racer_sessions_ended\n")
            prev = None
            while True:
                now = time.monotonic()
                if self.carrel.poll() is not None:
                    crashed = self.carrel.returncode
                    break
                rss, ticks = self.sample()
                pct = 0.0 if prev is None else 100.0 * (ticks - prev[1]) / TICKS / (now - prev[0])
                prev = (now, ticks)
                row = (now - started, rss, ticks, pct)
                rows.append(row)
                with self.lock:
                    demo, ended = self.counts["demo_ok"], self.counts["racer_ended"]
                csv.write(f"{row[0]:.1f},{rss},{ticks},{pct:.1f},{demo},{ended}\n")
                csv.flush()
                print(f"soak: t={row[0]:6.0f}s rss={rss} KiB cpu={pct:5.1f}% demo={demo} racer_ended={ended}",
                      flush=True)
                if now >= self.deadline:
                    break
                until = min(now + SAMPLE_EVERY, self.deadline)
                while time.monotonic() < until and self.carrel.poll() is None:
                    time.sleep(min(1.0, max(0.0, until - time.monotonic())))
        self.stop.set()
        for t in workers:
            t.join(timeout=90)
        exit_status = crashed
        if crashed is None:
            self.carrel.send_signal(signal.SIGTERM)
            try:
                exit_status = self.carrel.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.carrel.pid, signal.SIGKILL)
                exit_status = "hung on SIGTERM"
        return self.report(rows, started, crashed, exit_status)

    # -- report ---------------------------------------------------------------

    def report(self, rows, started, crashed, exit_status) -> int:
        duration = time.monotonic() - started
        warm = min(300.0, 0.2 * self.args.minutes * 60)
        after = [r for r in rows if r[0] >= warm] or rows[-1:]
        if len(after) >= 2:
            xs, ys = [r[0] for r in after], [r[1] for r in after]
            mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
            slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys))
                     / max(1e-9, sum((x - mx) ** 2 for x in xs)))  # KiB per second
        else:
            slope = 0.0
        span = (after[-1][0] - after[0][0]) if after else 0.0
        growth = slope * span
        flat = growth < max(4096.0, 0.05 * after[0][1]) if after else False
        cpu = (100.0 * (rows[-1][2] - rows[0][2]) / TICKS / max(1e-9, rows[-1][0] - rows[0][0])
               if len(rows) >= 2 else 0.0)
        c = self.counts
        crashes = 0 if crashed is None and exit_status == 0 else 1
        ok = crashes == 0 and not self.violations and flat
        lines = [
            f"# Carrel soak {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            "",
            f"- binary: `{self.args.carrel}`; seed {self.args.seed}",
            f"- duration: {duration / 60:.1f} min ({len(rows)} samples every {SAMPLE_EVERY:.0f} s)",
            f"- sessions completed: {c['demo_ok'] + c['racer_ended']} "
            f"(demo exam runs ended normally {c['demo_ok']}, refused while a racer held the lock "
            f"{c['demo_refused']}, other exits {c['demo_other']}; racer sessions began {c['racer_began']}, "
            f"ended {c['racer_ended']}, race rounds {c['race_rounds']})",
            f"- fuzzer: {c['fuzz_chunks']} chunks, {c['fuzz_failures']} failing",
            f"- crashes: {crashes} (carrel {'died with status ' + str(crashed) if crashed is not None else 'alive throughout'}; "
            f"exit on SIGTERM: {exit_status})",
            f"- RSS: start {rows[0][1] if rows else '?'} KiB, after warm-up ({warm:.0f} s) "
            f"{after[0][1] if after else '?'} KiB, end {rows[-1][1] if rows else '?'} KiB",
            f"- RSS slope after warm-up: {slope * 60:.1f} KiB/min ({growth:.0f} KiB over {span:.0f} s) -> "
            f"{'flat' if flat else 'NOT flat'}",
            f"- CPU: {cpu:.1f} % of one core on average",
            f"- contract violations: {len(self.violations)}",
            *[f"  - {v}" for v in self.violations[:20]],
            "",
            f"Samples: `{self.csv_path.relative_to(ROOT)}`; logs: `{self.work}`.",
            f"Verdict: {'PASS' if ok else 'FAIL'}",
        ]
        text = "\n".join(lines) + "\n"
        self.md_path.write_text(text)
        print(text, flush=True)
        return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("minutes", type=float, nargs="?", default=30.0)
    p.add_argument("--carrel", required=True)
    p.add_argument("--demo", required=True)
    p.add_argument("--seed", type=int, default=int(time.time()))
    args = p.parse_args()
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    return Soak(args).run()


if __name__ == "__main__":
    sys.exit(main())
