"""The demo exam, an AssessmentKit app, against the real binary: the Swift
client library's happy path, an interruption, a second app refused, and the
free-text question typed with real key presses under Xvfb."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

import carrel_harness as h
from x_display import field_box, ink_in


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


# The free-text question (the fifth) under Xvfb, typed with real key presses.
FREE_TEXT_SCRIPT = """\
begin
wait-began
answer 2
answer 3
answer 4
answer 1
wait-ended 60
"""


def test_free_text_question_takes_typed_keys_renders_and_logs_them(carrel, demo, procs, logdir, logs,
                                                                     tmp_path, artifacts_dir):
    """Real key presses (XTEST, through xdotool) into carrel's window on Xvfb, no input method:
    letters that are shortcuts elsewhere (e, x, a, m) and Backspace edit the field, the text
    shows in the X server's own screenshot, and Enter hands in with the answer in the log."""
    from x_display import save, screenshot, start_xvfb, x_windows

    h.require_tool("xdotool")
    display = start_xvfb(procs, logdir, logs)
    script = tmp_path / "free-text.script"
    script.write_text(FREE_TEXT_SCRIPT)
    c = carrel.start(app=[str(demo), "--script", str(script)], backend="x11",
                     env={"DISPLAY": display}, wait_ready=False)
    out = lambda: c.stdout_path.read_text(errors="replace")  # noqa: E731
    assert h.wait_until(lambda: "carrel-demo-exam: answer 4 1" in out(), 30), \
        f"the script did not reach the free-text question\n{c.evidence()}"
    assert h.wait_until(lambda: x_windows(display), 10), "carrel has no X window"

    def field_shown():
        shot[0] = screenshot(display)
        return field_box(shot[0]) is not None

    shot = [None]
    assert h.wait_until(field_shown, 15, interval=0.25), \
        f"no answer field on screen: {save(shot[0], artifacts_dir, 'demo-free-text-missing')}\n{c.evidence()}"
    box = field_box(shot[0])
    empty_ink = ink_in(shot[0], box)

    env = h.clean_env({"DISPLAY": display})
    subprocess.run(["xdotool", "windowfocus", "--sync", x_windows(display)[0]], env=env, check=True, timeout=10)
    keys = ["h", "e", "l", "l", "o", "space", "e", "x", "a", "m", "s", "BackSpace"]
    subprocess.run(["xdotool", "key", "--delay", "40", *keys], env=env, check=True, timeout=20)

    def text_drawn():
        shot[0] = screenshot(display)
        return ink_in(shot[0], box) > empty_ink + 800

    typed = h.wait_until(text_drawn, 15, interval=0.25)
    png = save(shot[0], artifacts_dir, "demo-free-text-typed")
    assert typed, (f"the field {box} did not fill with text: {ink_in(shot[0], box)} dark pixels, "
                   f"{empty_ink} when empty; screenshot {png}\n{c.evidence()}")
    assert "answer 5:" not in out(), "the answer is logged when the question is left, not before"

    subprocess.run(["xdotool", "key", "Return"], env=env, check=True, timeout=10)
    status = c.wait_exit()
    assert status == 0, f"carrel exited {status}\n{c.evidence()}"
    lines = out().splitlines()
    assert "carrel-demo-exam: answer 5: hello exam" in lines, f"{lines}\n{c.evidence()}"
    assert events(c) == ["began", "ended"], f"events {events(c)}\n{c.evidence()}"
    assert "carrel-demo-exam: score 4/4" in lines, c.evidence()


def galculators_of(c) -> list[int]:
    """Live (not zombie) children of carrel named galculator."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if stat[stat.index("(") + 1:stat.rindex(")")] == "galculator" and int(fields[1]) == c.pid \
                and fields[0] != "Z":
            found.append(int(entry))
    return found


def test_demo_exam_calculator_question_shows_galculator_beside_it_only_while_the_session_runs(
        carrel, demo, procs, logdir, logs, artifacts_dir):
    """Under the policy run-demo uses (examples/demo-policy.toml), `--calculator
    calculator` makes the demo's session name the policy's calculator: Carrel
    launches galculator, `began` waits for its window, it shows in the column
    right of the exam (as the X server's own screenshot shows), and it is gone
    once the session has ended."""
    from x_display import save, screenshot, start_xvfb
    if not Path("/usr/bin/galculator").exists():
        pytest.fail("/usr/bin/galculator is missing; install it (Debian package galculator; "
                    "meson-helpers/packages.sh lists it)")
    display = start_xvfb(procs, logdir, logs)
    c = carrel.start(app=[str(demo), "--auto", "--hold", "6", "--calculator", "calculator"],
                     args=["--policy", str(h.REPO / "examples" / "demo-policy.toml")],
                     backend="x11", env={"DISPLAY": display}, wait_ready=False)
    assert h.wait_until(lambda: "began" in events(c), 20), f"events {events(c)}\n{c.evidence()}"
    # AssessmentSession.supportsMultipleParticipants, asked of the live compositor.
    assert "carrel-demo-exam: note participants supported by the compositor" in c.stdout_path.read_text(), \
        c.evidence()
    running = galculators_of(c)
    assert len(running) == 1, f"expected one galculator launched by carrel while the session runs: {running}\n{c.evidence()}"
    last = [None]

    def calculator_drawn():
        # The column right of the exam shows the calculator: buttons, a
        # display and labels, not one flat colour.
        image = last[0] = screenshot(display)
        column = {image.pixel(x, y) for x in range(880, 1270, 10) for y in range(10, 710, 10)}
        return len(column) > 3
    ok = h.wait_until(calculator_drawn, 6, interval=0.3)
    png = save(last[0], artifacts_dir, "demo-exam-calculator")
    assert ok, f"galculator did not show right of the exam; screenshot {png}\n{c.evidence()}"
    assert "ended" not in events(c), "test premise: the screenshot was taken while the session ran"

    # Carrel reaps its participants before it sends ended.
    assert h.wait_until(lambda: "ended" in events(c), 20), f"events {events(c)}\n{c.evidence()}"
    assert not Path(f"/proc/{running[0]}").exists(), f"galculator (pid {running[0]}) outlived the session"
    status = c.wait_exit()
    assert status == 0, f"demo exam exited {status}\n{c.evidence()}"
    assert events(c) == ["began", "ended"], f"events {events(c)}\n{c.evidence()}"
    assert "carrel-demo-exam: score 4/4" in c.stdout_path.read_text(), c.evidence()
