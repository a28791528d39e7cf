"""Running carrel-probe, the red-team client, and reading its verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import carrel_harness as h

PROBE_TIMEOUT = 30.0  # the whole probe run: about four of its bounded waits run out when all is blocked
REGISTRY_ATTACKS = ["bind_privileged", "bind_hidden", "capture", "inject_keys", "layer_surface"]
ALL_ATTACKS = REGISTRY_ATTACKS + ["map_toplevel", "map_popup", "steal_focus", "raise_activate",
                                  "clipboard_read", "clipboard_write"]


class ProbeRun:
    """One finished carrel-probe run: its verdicts by attack, summary and status."""

    def __init__(self, client: h.Client, status: int) -> None:
        self.status = status
        self.stdout = client.stdout()
        self.stderr = client.stderr()
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        try:
            records = [json.loads(line) for line in lines]
        except json.JSONDecodeError as e:
            raise AssertionError(f"carrel-probe printed a line that is not JSON ({e}):\n{self.stdout}")
        assert records and "summary" in records[-1], f"no summary line last:\n{self.evidence()}"
        self.summary = records[-1]
        self.verdicts = {}
        for r in records[:-1]:
            assert set(r) == {"attack", "verdict", "detail"}, f"malformed verdict line {r}"
            assert r["verdict"] in ("blocked", "succeeded"), f"unknown verdict in {r}"
            self.verdicts[r["attack"]] = r

    def evidence(self) -> str:
        return f"status {self.status}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr[-3000:]}"

    def verdict(self, attack: str) -> str:
        assert attack in self.verdicts, f"no verdict for {attack}\n{self.evidence()}"
        return self.verdicts[attack]["verdict"]

    def detail(self, attack: str) -> str:
        self.verdict(attack)
        return self.verdicts[attack]["detail"]

    def expect(self, attack: str, verdict: str) -> None:
        assert self.verdict(attack) == verdict, \
            f"{attack}: expected {verdict}, got {self.verdicts[attack]}\n{self.evidence()}"


def run_probe(c: h.Carrel, probe: Path, *args: str, name: str = "probe") -> ProbeRun:
    client = c.client([str(probe), *args], name=name)
    status = client.wait_exit(PROBE_TIMEOUT)
    return ProbeRun(client, status)
