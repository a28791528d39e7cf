"""Twenty exam clients race begin / end / update / destroy / disconnect /
kill -9 against one carrel (debug build: assertions and the per-frame scene
audit are on): sixteen pywayland clients driven by a seeded random script, and
four AssessmentKit clients (carrel-demo-exam --auto, relaunched whenever they
finish). Seeded: a failing seed is printed and replays the same pywayland
command sequence. Afterwards: every begin a surviving client sent was answered
exactly once, nothing followed a terminal event, every AssessmentKit run ended
with 0 (began and ended) or 1 (its begin failed, e.g. already_active), the lock
is free, and a new client can begin and end. Throughout the race `carrelctl
status --json` is polled over the admin control socket: Carrel answers every
poll, reports one session at a time owned by one of the racers, and session
ids only grow."""

from __future__ import annotations

import os
import random
import re
import signal
import time

import pytest

import carrel_harness as h
from assessment_protocol import INACTIVE
from carrel_clients import World
from race_script import Model, step, unanswered_begins

CLIENTS = 16
KIT_CLIENTS = 4
STEPS = int(os.environ.get("CARREL_RACE_STEPS", "600"))
POLL_EVERY = 12  # steps between two `carrelctl status --json`
SEEDS = [1, 2, int(os.environ.get("CARREL_RACE_SEED", str(int(time.time()) % 100000)))]


def start_client(w: World, name: str, wait_mapped: bool = True) -> Model:
    d = w.client(name)
    if wait_mapped:
        d.map()
    else:
        # While another racer's session is active this window is hidden and
        # gets no frame callbacks, so "mapped" may never come; its begins are
        # then answered with already_active or surface_not_ready.
        d.send("map w")
    d.bind()
    return Model(d)


class StatusWatch:
    """What `carrelctl status --json` said during the race."""

    STATES = {"none", "beginning", "active", "ending"}

    def __init__(self, ctl, seed: int) -> None:
        self.ctl, self.seed = ctl, seed
        self.polls = 0
        self.sessions: list[int] = []  # distinct ids in the order seen
        self.states: dict[str, int] = {}

    def poll(self, client_pids: set[int]) -> None:
        status = self.ctl.status()  # exit 0 and one JSON object, or the test fails
        self.polls += 1
        state = status["state"]
        assert state in self.STATES, f"seed {self.seed}: unknown state {state!r}: {status}"
        self.states[state] = self.states.get(state, 0) + 1
        session = status["session"]
        if state == "none":
            assert session is None, f"seed {self.seed}: state none with a session: {status}"
            return
        assert session is not None, f"seed {self.seed}: state {state} without a session: {status}"
        owner = session["app"]["pid"]
        assert owner in client_pids, \
            f"seed {self.seed}: the session belongs to pid {owner}, none of the racers {sorted(client_pids)}"
        sid = session["id"]
        if not self.sessions or self.sessions[-1] != sid:
            assert not self.sessions or sid > self.sessions[-1], \
                f"seed {self.seed}: session id {sid} after {self.sessions[-1]}: ids went back"
            self.sessions.append(sid)


class KitRacer:
    """carrel-demo-exam --auto (AssessmentKit) in a loop: relaunched each time it exits."""

    def __init__(self, w: World, index: int, demo) -> None:
        self.w, self.index, self.demo = w, index, demo
        self.runs: list[tuple[int, str]] = []  # (status, log tail)
        self.proc = None
        self.log = None
        self.start()

    def start(self) -> None:
        self.log = self.w.logdir / f"kit{self.index}-{len(self.runs)}.log"
        with open(self.log, "wb") as out:
            self.proc = self.w.procs.spawn(f"kit{self.index}", [str(self.demo), "--auto", "--hold", "0.2"],
                                           env=self.w.env("app"), stdout=out, stderr=out)

    def poll(self) -> None:
        status = self.proc.poll()
        if status is not None:
            self.runs.append((status, self.log.read_text(errors="replace")[-400:]))
            self.start()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)


def check_answers(model: Model, seed: int) -> None:
    """Exactly one answer per begin, and nothing after failed/ended."""
    d = model.driver
    # An accepted begin is answered only after a frame was presented (or the
    # bounded wait of 3 s ran out), which may be after the sync.
    deadline = time.monotonic() + 5
    while unanswered_begins(d) and time.monotonic() < deadline:
        d.collect(0.1)
    terminal: set[str] = set()
    answered: dict[str, int] = {}
    for line in d.lines:
        m = re.fullmatch(r"session (\S+) (began|failed|interrupted|ended|updated|update_failed)\b.*", line)
        if not m:
            continue
        s, event = m.groups()
        assert s not in terminal, f"seed {seed}: {d.name}: {event} after a terminal event on {s}"
        if event in ("began", "failed"):
            answered[s] = answered.get(s, 0) + 1
            assert answered[s] == 1, f"seed {seed}: {d.name}: {s} answered twice"
        if event in ("failed", "ended"):
            terminal.add(s)
    unanswered = unanswered_begins(d)
    assert not unanswered, f"seed {seed}: {d.name}: begins never answered: {unanswered}\n{d.evidence()}"


@pytest.mark.parametrize("seed", SEEDS)
def test_racing_clients_never_break_the_one_session_rule(ctl_world, seed):
    print(f"race seed {seed} (replay: CARREL_RACE_SEED={seed})")
    from carrel_harness import demo_bin

    # The conftest backstop (45 s) is for ordinary tests; twenty clients for STEPS steps
    # on a loaded machine or under a sanitizer need more. Every wait inside is bounded.
    signal.alarm(180 + STEPS // 5)

    rng = random.Random(seed)
    w, ctl = ctl_world
    watch = StatusWatch(ctl, seed)
    models = [start_client(w, f"racer{i}") for i in range(CLIENTS)]
    kits = [KitRacer(w, i, demo_bin()) for i in range(KIT_CLIENTS)]
    pids: set[int] = set()
    for n in range(STEPS):
        for kit in kits:
            kit.poll()
            pids.add(kit.proc.pid)
        if n % POLL_EVERY == 0:
            pids.update(m.driver.pid for m in models)
            watch.poll(pids)
        i = rng.randrange(CLIENTS)
        model = models[i]
        if model.driver.proc.poll() is not None or rng.random() < 0.015:
            # A client that died of a protocol error, or a kill -9 mid-run:
            # either way a new one takes its place.
            if model.driver.proc.poll() is None:
                os.kill(model.driver.pid, signal.SIGKILL)
                model.driver.proc.wait(timeout=5)
            models[i] = start_client(w, f"racer{i}-{rng.randrange(10**6)}", wait_mapped=False)
            pids.add(models[i].driver.pid)
            continue
        try:
            model.driver.send(step(rng, model))
        except h.HarnessError:
            continue  # it died between the poll and the send; replaced next time
        if rng.random() < 0.1:
            model.driver.collect(0.01)
        w.alive()
    # Let every surviving client hear everything the compositor sent it.
    for model in models:
        if model.driver.proc.poll() is None:
            try:
                model.driver.sync()
            except h.HarnessError:
                # A protocol error it provoked in its last steps (status 3) is
                # a client bug Carrel rightly disconnected; anything else fails.
                if model.driver.wait_exit() == 3:
                    continue
                raise
            check_answers(model, seed)
    for model in models:
        if model.driver.proc.poll() is None:
            model.driver.send("exit")
    for kit in kits:
        kit.stop()
        bad = [(status, tail) for status, tail in kit.runs if status not in (0, 1)]
        assert not bad, f"seed {seed}: an AssessmentKit client ended badly: {bad[:2]}"
    runs = [status for kit in kits for status, _ in kit.runs]
    print(f"seed {seed}: {STEPS} pywayland steps; AssessmentKit runs: {len(runs)} "
          f"({runs.count(0)} began and ended, {runs.count(1)} refused); carrelctl status polled "
          f"{watch.polls}x, states {watch.states}, {len(watch.sessions)} sessions seen")
    assert watch.polls >= STEPS // POLL_EVERY, watch.polls
    assert runs, f"seed {seed}: no AssessmentKit run finished"
    w.alive()
    # The lock is free once they are gone: a new exam begins and ends.
    last = w.client("after")
    last.map()
    events = last.bind()
    last.begin("final")
    last.began("final")
    last.send("end final")
    last.expect("session final ended")
    assert any(e.endswith(f"lock_state {INACTIVE}") for e in events), \
        f"seed {seed}: the lock was still held after every racer left: {events}"
