"""carrel-probe, the red-team client, against the real binary outside a
session: what an untrusted client can do while an exam app holds the screen.

Verdicts are facts the probe reports; the expectations are here. The focus and
clipboard attacks run carrel on the x11 backend under Xvfb, because a headless
seat has no keyboard, and without one no client can ever get keyboard focus, so
"blocked" would prove nothing. A control test shows the probe does report
"succeeded" for focus and clipboard when nothing stands in its way.
"""

from __future__ import annotations

import json
import os

import pytest

import carrel_harness as h
from probe import ALL_ATTACKS, REGISTRY_ATTACKS, run_probe
from x_display import start_required_xvfb

SECRET = "carrel-probe-test-secret-7d1f"


def wait_for_app_frame(c: h.Carrel) -> None:
    """Waits until carrel-paint (the app) printed its first frame done: its window
    is mapped and shown, so carrel has given it keyboard focus."""
    def shown():
        return "milestone first_frame_done" in c.stdout_path.read_text(errors="replace")

    assert h.wait_until(shown, h.CLIENT_TIMEOUT), \
        f"the app's window was never shown\n{c.evidence()}"


def test_untrusted_probe_finds_no_privileged_global_headless(carrel, probe):
    c = carrel.start(app=["weston-simple-shm"])
    run = run_probe(c, probe, *[a for r in REGISTRY_ATTACKS for a in ("--attack", r)])
    for attack in REGISTRY_ATTACKS:
        run.expect(attack, "blocked")
    assert run.status == 0, f"every attack was blocked, so the exit status must be 0\n{run.evidence()}"
    assert run.summary["role"] == "untrusted" and run.summary["succeeded"] == [], run.evidence()
    # The assessment global exists for the app; the untrusted probe neither sees it
    # nor binds it by its number.
    assert "carrel_assessment_manager_v1" in run.detail("bind_hidden"), \
        f"the hidden assessment global was not among the names tried\n{run.evidence()}"
    assert c.alive(), f"carrel died under the probe\n{c.evidence()}"


def test_probe_as_a_child_of_the_app_finds_no_privileged_global(carrel, probe):
    """Through the app socket: what a child of the exam app could reach."""
    c = carrel.start(app=[str(probe), "--as", "app",
                          *[a for r in REGISTRY_ATTACKS for a in ("--attack", r)]])
    status = c.wait_exit()
    out = c.stdout_path.read_text(errors="replace")
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    verdicts = {r["attack"]: r for r in records if "attack" in r}
    assert set(verdicts) == set(REGISTRY_ATTACKS), f"probe output:\n{out}\n{c.evidence()}"
    assert all(r["verdict"] == "blocked" for r in verdicts.values()), f"probe output:\n{out}"
    assert status == 0, f"carrel (exiting with the probe's status) gave {status}\n{out}\n{c.evidence()}"
    assert records[-1].get("role") == "app", out


def test_untrusted_probe_cannot_take_focus_or_the_clipboard_from_the_app(carrel, probe, paint_bin,
                                                                        procs, logdir, logs):
    h.require_tool("wl-copy")
    display = start_required_xvfb(procs, logdir, logs)
    # The app copies a secret (wl-copy needs keyboard focus, which the app's own
    # window gets), then shows its window and keeps focus.
    app = ["sh", "-c", f'printf %s "{SECRET}" | wl-copy && exec "$0" --milestones --color 3366cc',
           str(paint_bin)]
    c = carrel.start(app=app, backend="x11", env={"DISPLAY": display})
    wait_for_app_frame(c)
    # A longer bound than the default second: a slow focus must not pass for a refused one.
    run = run_probe(c, probe, "--timeout", "1.5")
    assert set(run.verdicts) == set(ALL_ATTACKS), run.evidence()
    for attack in REGISTRY_ATTACKS:
        run.expect(attack, "blocked")
    # A seat with a keyboard, so "no keyboard focus" is a decision of carrel's.
    assert "seat has no keyboard" not in run.detail("steal_focus"), \
        f"the seat has no keyboard, so steal_focus proves nothing\n{run.evidence()}"
    run.expect("steal_focus", "blocked")
    run.expect("clipboard_read", "blocked")
    assert SECRET not in run.stdout, f"the app's clipboard reached the probe\n{run.evidence()}"
    assert c.alive(), f"carrel died under the probe\n{c.evidence()}"


def test_probe_reports_success_when_nothing_stops_it(carrel, probe, procs, logdir, logs, tmp_path):
    """Control: with no app window to hold focus (and no session), the probe's
    window gets keyboard focus and can read a selection, and the probe says so
    and exits 1. Without this, "blocked" above could come from a probe that
    never manages anything."""
    h.require_tool("wl-copy")
    display = start_required_xvfb(procs, logdir, logs)
    copied = tmp_path / "copied"
    app = ["sh", "-c", f'printf %s "{SECRET}" | wl-copy && : > "$0" && exec sleep 60', str(copied)]
    c = carrel.start(app=app, backend="x11", env={"DISPLAY": display})
    assert h.wait_until(copied.exists, h.CLIENT_TIMEOUT), f"wl-copy never finished\n{c.evidence()}"
    # Waits for success end as soon as it comes: a generous bound costs nothing.
    run = run_probe(c, probe, "--timeout", "5", "--attack", "steal_focus",
                    "--attack", "clipboard_read", "--attack", "capture")
    run.expect("steal_focus", "succeeded")
    run.expect("clipboard_read", "succeeded")
    assert SECRET in run.detail("clipboard_read"), run.evidence()
    run.expect("capture", "blocked")
    assert run.status == 1, f"an attack succeeded, so the exit status must be 1\n{run.evidence()}"
    assert run.summary["succeeded"] == ["steal_focus", "clipboard_read"], run.evidence()
