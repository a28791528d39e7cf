"""Reading Carrel's audit log: `carrelctl audit`, its JSON lines, and one
session's story."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import carrel_harness as h


def audit(carrelctl: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(carrelctl), "audit", *args], capture_output=True, text=True, timeout=30,
                          env=h.clean_env())


def records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()]


def audit_story(c: h.Carrel) -> list[str]:
    """The session events of the audit log, in order (what Carrel itself
    recorded), of the first session that began (1 when none did): a Qt exam
    may retry a begin that came before its first frame was committed."""
    records = [json.loads(line) for line in c.audit_log.read_text().splitlines()]
    session = next((r.get("session") for r in records if r["event"] == "began"), 1)
    events = []
    for record in records:
        if record.get("session") == session and record["event"] in ("begin", "began", "interrupted", "ended",
                                                                    "failed"):
            events.append(record["event"] + (f" {record['reason']}" if record["event"] == "interrupted" else ""))
    return events
