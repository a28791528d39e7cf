"""A role's pixels stay in its area: a hostile exam and a hostile participant
(hostile_window.py), each trying every way the protocols give a window to draw
beyond the area Carrel gave it — a window geometry far inside a buffer 2000
pixels larger, subsurfaces outside the window given buffers early
(synchronised) and late (desynchronised, by their own commit), popups placed
outside with and without adjustment and a popup of a popup, a viewport
stretched over the screen, a scaled oversize buffer, fullscreen and maximise
requests — under Carrel in Xvfb. The X server's screenshot is the judge: no
pixel of the participant's colour left of its column, none of the exam's in it.

And the keyboard stays where the student put it: a participant's popup grab
(grabbing_window.py) neither keeps the keyboard after the switch back to the
exam nor, taken without focus, swallows the exam's clicks and keys.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_clients import World

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAM_COLOUR, PARTICIPANT_COLOUR = (0x33, 0x66, 0xcc), (0x33, 0xcc, 0x66)
TOLERANCE = 4
# Carrel's X window: 1280x720 at the screen's corner; with one participant
# the exam keeps the left 854 pixels, the participant the right 426.
WIDTH, HEIGHT, COLUMN_X = 1280, 720, 854


def near(rgb, colour) -> bool:
    return all(abs(a - b) <= TOLERANCE for a, b in zip(rgb, colour))


def hex_colour(colour) -> str:
    return "%02x%02x%02x" % colour


@pytest.fixture(scope="module")
def hostile_protocols(client_python, tmp_path_factory) -> Path:  # noqa: F811
    """pywayland's scanner on wayland.xml, xdg-shell, viewporter and ours."""
    outdir = tmp_path_factory.mktemp("hostile-protocols")
    package = outdir / "carrel_hostile"
    package.mkdir()
    xmls = ["/usr/share/wayland/wayland.xml", "/usr/share/wayland-protocols/stable/xdg-shell/xdg-shell.xml",
            "/usr/share/wayland-protocols/stable/viewporter/viewporter.xml",
            str(REPO / "protocols" / "carrel-assessment-v1.xml")]
    r = subprocess.run([client_python, "-m", "pywayland.scanner", "-o", str(package), "-i", *xmls],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"pywayland.scanner failed: {r.stderr}"
    (package / "__init__.py").write_text("")
    return outdir


@pytest.fixture(scope="module")
def xvfb(tmp_path_factory):
    from x_display import start_xvfb
    tracker = h.ProcessTracker()
    display = start_xvfb(tracker, tmp_path_factory.mktemp("xvfb"), [])
    yield display
    tracker.end_all()


def reported(path: Path, line: str) -> bool:
    return path.exists() and line in path.read_text().splitlines()


def test_neither_a_hostile_exam_nor_a_hostile_participant_draws_outside_its_area(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,  # noqa: F811
        hostile_protocols, xvfb, artifacts_dir):
    from x_display import save, screenshot
    script = HERE / "hostile_window.py"
    participant_report, exam_report = tmp_path / "participant.report", tmp_path / "exam.report"
    command = ", ".join(f'"{a}"' for a in [client_python, script, hostile_protocols,
                                            hex_colour(PARTICIPANT_COLOUR), participant_report])
    policy = tmp_path / "policy.toml"
    policy.write_text(f"[participants.hostile]\ncommand = [{command}]\n")
    world = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                  backend="x11", env={"DISPLAY": xvfb}, args=["--policy", str(policy)])
    logs.append(("participant report", participant_report))
    logs.append(("exam report", exam_report))
    with open(logdir / "hostile-exam.stderr", "wb") as err:
        procs.spawn("hostile-exam", [client_python, script, hostile_protocols, hex_colour(EXAM_COLOUR),
                                     exam_report, "--exam", "hostile"],
                    env=world.env("app"), stderr=err)
    logs.append(("hostile exam stderr", logdir / "hostile-exam.stderr"))

    done = h.wait_until(lambda: reported(exam_report, "began") and reported(exam_report, "attacked")
                        and reported(participant_report, "attacked"), 20, interval=0.1)
    assert done, (f"the hostile exam and participant did not both attack during a session: "
                  f"exam {exam_report.read_text() if exam_report.exists() else '(no report)'!r}, "
                  f"participant {participant_report.read_text() if participant_report.exists() else '(no report)'!r}"
                  f"\n{world.carrel.evidence()}")
    exam_points, participant_points = [(100, 100), (500, 360), (840, 700)], [(870, 100), (1100, 360), (1270, 700)]
    last = [None]

    def laid_out():
        last[0] = screenshot(xvfb)
        return all(near(last[0].pixel(x, y), EXAM_COLOUR) for x, y in exam_points) and \
            all(near(last[0].pixel(x, y), PARTICIPANT_COLOUR) for x, y in participant_points)

    ok = h.wait_until(laid_out, 10, interval=0.2)
    png = save(last[0], artifacts_dir, "role-areas")
    assert ok, (f"exam {EXAM_COLOUR} at {exam_points} and participant {PARTICIPANT_COLOUR} at "
                f"{participant_points} expected; got {[last[0].pixel(x, y) for x, y in exam_points + participant_points]};"
                f" screenshot {png}\n{world.carrel.evidence()}")
    # Late buffers keep arriving for a moment after `attacked`: look several times.
    for shot in range(5):
        image = screenshot(xvfb)
        intruders = [(x, y) for y in range(0, HEIGHT, 4) for x in range(0, WIDTH, 4)
                     if (x < COLUMN_X and near(image.pixel(x, y), PARTICIPANT_COLOUR))
                     or (x >= COLUMN_X and near(image.pixel(x, y), EXAM_COLOUR))]
        if intruders:
            png = save(image, artifacts_dir, f"role-areas-intruders-{shot}")
            pytest.fail(f"{len(intruders)} sampled pixels drawn outside their role's area, e.g. {intruders[:6]}; "
                        f"screenshot {png}\n{world.carrel.evidence()}")
        time.sleep(0.2)
    world.alive()


def report_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def grabbing_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,  # noqa: F811
                   hostile_protocols, xvfb, participant_mode: str):
    """Carrel in Xvfb with grabbing_window.py as the exam (grabbing nothing)
    and as the participant (grabbing in `participant_mode`), the session
    begun; returns the world and the two reports."""
    script = HERE / "grabbing_window.py"
    participant_report, exam_report = tmp_path / "participant.report", tmp_path / "exam.report"
    command = ", ".join(f'"{a}"' for a in [client_python, script, hostile_protocols, participant_report,
                                            participant_mode])
    policy = tmp_path / "policy.toml"
    policy.write_text(f"[participants.grabber]\ncommand = [{command}]\n")
    world = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                  backend="x11", env={"DISPLAY": xvfb}, args=["--policy", str(policy)])
    logs.append(("participant report", participant_report))
    logs.append(("exam report", exam_report))
    with open(logdir / "grabbing-exam.stderr", "wb") as err:
        procs.spawn("grabbing-exam", [client_python, script, hostile_protocols, exam_report, "none",
                                      "--exam", "grabber"],
                    env=world.env("app"), stderr=err)
    logs.append(("exam stderr", logdir / "grabbing-exam.stderr"))
    began = h.wait_until(lambda: "began" in report_lines(exam_report)
                         and "mapped" in report_lines(participant_report), 20, interval=0.1)
    assert began, f"no session with the grabbing participant\n{world.carrel.evidence()}"
    # xdotool's keys go to the focused X window: Carrel's.
    h.require_tool("xdotool")
    from x_display import x_windows
    subprocess.run(["xdotool", "windowfocus", "--sync", x_windows(xvfb)[0]], env=h.clean_env({"DISPLAY": xvfb}),
                   check=True, timeout=10)
    return world, exam_report, participant_report


def xdotool(xvfb, *args: str) -> None:
    subprocess.run(["xdotool", *args], env=h.clean_env({"DISPLAY": xvfb}), check=True, timeout=10)


# evdev codes, as wl_keyboard and wl_pointer carry them.
KEY_A, KEY_B, BTN_LEFT = 30, 48, 272


def test_the_exam_gets_the_keyboard_back_from_a_participant_whose_menu_grabbed_it(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,  # noqa: F811
        hostile_protocols, xvfb):
    """The student switches to the participant, which opens a menu grabbing
    the seat (xdg_popup.grab with its keyboard enter's serial), and switches
    back with Ctrl+Alt+Tab: the exam gets the keyboard enter and every key,
    the participant's menu is dismissed and it gets none."""
    world, exam_report, participant_report = grabbing_world(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, hostile_protocols, xvfb,
        "on-focus")
    xdotool(xvfb, "key", "ctrl+alt+Tab")
    assert h.wait_until(lambda: "grabbed" in report_lines(participant_report), 10, interval=0.1), \
        f"the participant was switched to but never grabbed\n{world.carrel.evidence()}"
    exam_enters = report_lines(exam_report).count("enter")
    xdotool(xvfb, "key", "ctrl+alt+Tab")
    back = h.wait_until(lambda: report_lines(exam_report).count("enter") > exam_enters
                        and "popup-done" in report_lines(participant_report), 10, interval=0.1)
    assert back, (f"after switching back the exam got no keyboard enter, or the participant's menu stayed: exam "
                  f"{report_lines(exam_report)}, participant {report_lines(participant_report)}"
                  f"\n{world.carrel.evidence()}")
    participant_seen = len(report_lines(participant_report))
    xdotool(xvfb, "key", "a", "b")
    typed = h.wait_until(lambda: f"key {KEY_B} released" in report_lines(exam_report), 10, interval=0.1)
    assert typed, f"the exam did not get the keys typed after the switch: {report_lines(exam_report)}"
    exam_keys = [line for line in report_lines(exam_report) if line.startswith("key ")]
    assert exam_keys[-4:] == [f"key {KEY_A} pressed", f"key {KEY_A} released",
                              f"key {KEY_B} pressed", f"key {KEY_B} released"], exam_keys
    stolen = [line for line in report_lines(participant_report)[participant_seen:] if line.startswith("key ")]
    assert not stolen, f"the participant still got keys after the switch back: {stolen}"
    assert world.carrel.trace(event="popup_grab_ended"), "Carrel's trace shows no popup grab ended"
    world.alive()


def test_a_participant_grabbing_the_seat_without_focus_steals_no_click_and_no_key(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,  # noqa: F811
        hostile_protocols, xvfb):
    """A participant the student never switched to opens a popup with a grab
    as soon as it maps (a made-up serial; wlroots does not check it) and
    again each time one is dismissed: every click and key the student gives
    the exam still reaches the exam, and the participant never gets the
    keyboard."""
    world, exam_report, participant_report = grabbing_world(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, hostile_protocols, xvfb,
        "at-once")
    assert h.wait_until(lambda: "grabbed" in report_lines(participant_report), 10, interval=0.1), \
        f"the participant never grabbed\n{world.carrel.evidence()}"
    for round_ in range(3):
        # Let the participant grab again before each click and key.
        grabs = report_lines(participant_report).count("grabbed")
        h.wait_until(lambda: report_lines(participant_report).count("grabbed") > grabs, 2, interval=0.05)
        clicks = report_lines(exam_report).count(f"button {BTN_LEFT}")
        xdotool(xvfb, "mousemove", "--sync", str(200 + 40 * round_), "300", "click", "1")
        assert h.wait_until(lambda: report_lines(exam_report).count(f"button {BTN_LEFT}") > clicks, 5, interval=0.05), \
            (f"click {round_ + 1} on the exam did not reach it while the participant grabbed: exam "
             f"{report_lines(exam_report)}, participant {report_lines(participant_report)}\n{world.carrel.evidence()}")
        presses = report_lines(exam_report).count(f"key {KEY_A} pressed")
        xdotool(xvfb, "key", "a")
        assert h.wait_until(lambda: report_lines(exam_report).count(f"key {KEY_A} pressed") > presses, 5,
                            interval=0.05), f"key {round_ + 1} did not reach the exam: {report_lines(exam_report)}"
    participant = report_lines(participant_report)
    assert "enter" not in participant and not any(line.startswith(("key ", "button ")) for line in participant), \
        f"the participant got input it was never given: {participant}"
    assert "popup-done" in participant, "the participant's grab was never ended"
    world.alive()
