"""The seeded random command script the session race drives its pywayland
clients with, and the check that every begin was answered: shared by
test_session_races.py and the soak (Tests/soak/carrel_soak.py)."""

from __future__ import annotations

import random
import re


class Model:
    """What one client has created, so every command names a live object."""

    def __init__(self, driver):
        self.driver = driver
        self.configs: list[str] = []
        self.sessions: list[str] = []  # not destroyed
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"


def step(rng: random.Random, m: Model) -> str:
    choices = ["config", "begin", "begin", "begin"]
    if m.configs:
        choices += ["allow", "time_limit", "participant", "destroy_config"]
    if m.sessions:
        choices += ["end", "end", "update", "destroy", "destroy"]
    op = rng.choice(choices)
    if op == "config":
        c = m.fresh("c")
        m.configs.append(c)
        return f"config {c}"
    if op == "allow":
        return f"allow {rng.choice(m.configs)} {rng.randrange(0, 8)}"
    if op == "time_limit":
        return f"time_limit {rng.choice(m.configs)} {rng.choice([1, 2, 3600, 99999])}"
    if op == "participant":
        return f"participant {rng.choice(m.configs)} {rng.choice(['calculator', 'browser'])}"
    if op == "destroy_config":
        c = rng.choice(m.configs)
        m.configs.remove(c)
        return f"destroy_config {c}"
    if op == "begin":
        s = m.fresh("s")
        m.sessions.append(s)
        config = rng.choice(m.configs + ["null"]) if m.configs else "null"
        return f"begin {s} m w {config}"
    s = rng.choice(m.sessions)
    if op == "destroy":
        m.sessions.remove(s)
        return f"destroy {s}"
    if op == "update":
        return f"update {s} {rng.choice(m.configs)}" if m.configs else f"end {s}"
    return f"end {s}"


def unanswered_begins(d) -> list[str]:
    transcript = d.transcript_path.read_text(errors="replace")
    sent = re.findall(r"^> begin (\S+) ", transcript, re.M)
    # A session destroyed before its answer hears nothing more: that is the rule.
    destroyed = set(re.findall(r"^> destroy (\S+)$", transcript, re.M))
    answered = {m.group(1) for line in d.lines
                if (m := re.fullmatch(r"session (\S+) (?:began|failed)\b.*", line))}
    return [s for s in sent if s not in answered and s not in destroyed]
