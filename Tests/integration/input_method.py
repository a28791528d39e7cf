"""The policy's input method (fcitx5) under carrel nested in Xvfb, and the demo
exam's free-text field composed through it: what test_input_method.py and the
magnifier's test share."""

import os
import re

import pytest

import carrel_harness as h
from carrel_log import stderr
from x_display import screenshot, start_xvfb


def write_policy(tmp_path, engines):
    policy = tmp_path / "policy.toml"
    names = ", ".join(f'"{e}"' for e in engines)
    policy.write_text(f'[input_method]\ncommand = ["/usr/bin/fcitx5"]\nengines = [{names}]\n\n'
                      f'[control]\nsocket = "{tmp_path}/control.sock"\n')
    return policy


def report_restart(c):
    """The restart went the asynchronous way: the old engine was sent SIGTERM
    and its successor launched only once SIGCHLD reaped it (the event loop
    never waited on it). Prints where the session's start fell in that."""
    log = stderr(c)
    stopping = re.search(r"input method: stopping pid (\d+); the new engine starts when it has ended", log)
    assert stopping, f"the engine was not stopped asynchronously\n{c.evidence()}"
    replaced = log.find(f"input method: pid {stopping.group(1)} ended; launching its replacement")
    assert replaced > stopping.end(), f"the old engine was never reaped before its replacement\n{c.evidence()}"
    began = max(log.find("session began"), log.find("(began)"))
    relaunched = log.find("launched input method", replaced)
    print(f"restart: stop at {stopping.start()}, reaped at {replaced}, relaunched at {relaunched}, "
          f"session began at {began} (log offsets)")


# The demo exam's free-text question (the fifth) through the input method:
# the script answers the four others and waits; the keys are real.
DEMO_SCRIPT = """\
begin
wait-began
answer 2
answer 3
answer 4
answer 1
wait-ended 60
"""


def start_demo(carrel, procs, logdir, logs, tmp_path, allow_input_method, engines=("mozc",), also_allow=()):
    """The demo exam under carrel nested in Xvfb, the policy naming `engines`, on
    its free-text question, its session allowing `input_method` (when asked) and
    the features in `also_allow`. Returns (carrel, display, stdout reader, field
    box, empty screenshot)."""
    from carrel_harness import demo_bin
    from x_display import field_box, x_windows
    demo = demo_bin()
    if not (demo.is_file() and os.access(demo, os.X_OK)):
        pytest.fail(f"carrel-demo-exam not found at {demo} (set CARREL_DEMO_BIN or run swift build)")
    display = start_xvfb(procs, logdir, logs)
    policy = write_policy(tmp_path, engines)
    script = tmp_path / "free-text.script"
    script.write_text(DEMO_SCRIPT)
    allowed = (["input_method"] if allow_input_method else []) + list(also_allow)
    app = [str(demo), "--script", str(script)] + [arg for feature in allowed for arg in ("--allow", feature)]
    c = carrel.start(app=app, args=["--policy", str(policy)], backend="x11",
                     env={"DISPLAY": display, "LANG": "C.UTF-8"}, wait_ready=False)
    out = lambda: c.stdout_path.read_text(errors="replace")  # noqa: E731
    assert h.wait_until(lambda: "carrel-demo-exam: answer 4 1" in out(), 30), \
        f"the script did not reach the free-text question\n{c.evidence()}"
    assert h.wait_until(lambda: x_windows(display), 10), "carrel has no X window"
    shot = [None]

    def field_shown():
        shot[0] = screenshot(display)
        return field_box(shot[0]) is not None

    assert h.wait_until(field_shown, 15, interval=0.25), f"no answer field on screen\n{c.evidence()}"
    return c, display, out, field_box(shot[0]), shot[0]


def restarted_engine_composes_for_demo(c):
    """The session (no predictive_text) restarted the engine with its
    prediction off; the new one grabbed the keyboard and was activated for
    the demo's field."""
    restart = "restarting the engine with its own prediction off"
    grabbed = "input method: the engine grabbed the keyboard"
    assert h.wait_until(lambda: restart in stderr(c), 15), c.evidence()
    assert h.wait_until(lambda: grabbed in stderr(c)[stderr(c).index(restart):], 15), \
        f"the restarted engine never grabbed the keyboard\n{c.evidence()}"
    report_restart(c)
    assert h.wait_until(lambda: "activating the engine" in stderr(c)[stderr(c).index(restart):], 10), \
        f"the engine was never activated for the demo's field\n{c.evidence()}"
