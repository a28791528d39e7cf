"""The demo exam, an AssessmentKit app, against the real binary: the Swift
client library's happy path, an interruption, and a second app refused."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

import carrel_harness as h


def demo_bin() -> Path:
    return Path(os.environ.get("CARREL_DEMO_BIN", h.carrel_bin().parent / "carrel-demo-exam"))


@pytest.fixture
def demo() -> Path:
    path = demo_bin()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"carrel-demo-exam not found at {path} (set CARREL_DEMO_BIN or run swift build)")
    return path


def events(c: h.Carrel) -> list[str]:
    out = c.stdout_path.read_text(errors="replace")
    return [line.split(" ", 2)[2] for line in out.splitlines()
            if line.startswith("carrel-demo-exam: event ")]


def test_demo_exam_locks_answers_and_unlocks(carrel, demo):
    c = carrel.start(app=[str(demo), "--auto"], wait_ready=False)
    status = c.wait_exit()
    assert status == 0, f"demo exam exited {status}\n{c.evidence()}"
    assert events(c) == ["began", "ended"], f"events {events(c)}\n{c.evidence()}"
    assert "carrel-demo-exam: score 4/4" in c.stdout_path.read_text(), c.evidence()


def test_demo_exam_hides_content_on_time_limit_then_ends(carrel, demo):
    c = carrel.start(app=[str(demo), "--auto", "--time-limit", "1", "--hold", "10"],
                     wait_ready=False)
    status = c.wait_exit()
    got = events(c)
    assert status == 0, f"demo exam exited {status}, events {got}\n{c.evidence()}"
    assert len(got) == 3 and got[0] == "began" and got[1].startswith("interrupted time_limit") \
        and got[2] == "ended", f"events {got}\n{c.evidence()}"


def test_second_demo_exam_is_refused_while_the_first_is_locked(carrel, demo):
    """Two AssessmentKit apps under one carrel: the second gets failed(already_active)
    and the first still ends normally."""
    script = (f'"$0" --auto --hold 4 > "$1" & first=$!; sleep 1.5; '
              f'"$0" --auto > "$2"; second=$?; wait $first; first_status=$?; '
              f'echo "$first_status $second" > "$3"')
    tmp = Path(tempfile.mkdtemp(prefix="carrel-demo-"))
    first, second, statuses = tmp / "first.out", tmp / "second.out", tmp / "status"
    c = carrel.start(app=["sh", "-c", script, str(demo), str(first), str(second), str(statuses)],
                     wait_ready=False)
    assert c.wait_exit() == 0, c.evidence()
    first_status, second_status = statuses.read_text().split()
    assert first_status == "0", f"first demo exited {first_status}: {first.read_text()}"
    assert second_status == "1", f"second demo exited {second_status}: {second.read_text()}"
    assert "event failed already_active" in second.read_text(), second.read_text()
    lines = first.read_text()
    assert "event began" in lines and "event ended" in lines, lines
