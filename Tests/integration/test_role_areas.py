"""A role's pixels stay in its area: a hostile exam and a hostile participant
(hostile_window.py), each trying every way the protocols give a window to draw
beyond the area Carrel gave it — a window geometry far inside a buffer 2000
pixels larger, subsurfaces outside the window given buffers early
(synchronised) and late (desynchronised, by their own commit), popups placed
outside with and without adjustment and a popup of a popup, a viewport
stretched over the screen, a scaled oversize buffer, fullscreen and maximise
requests — under Carrel in Xvfb. The X server's screenshot is the judge: no
pixel of the participant's colour left of its column, none of the exam's in it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from test_assessment import World

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
    from test_visual import start_xvfb
    tracker = h.ProcessTracker()
    display = start_xvfb(tracker, tmp_path_factory.mktemp("xvfb"), [])
    yield display
    tracker.end_all()


def reported(path: Path, line: str) -> bool:
    return path.exists() and line in path.read_text().splitlines()


def test_neither_a_hostile_exam_nor_a_hostile_participant_draws_outside_its_area(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,  # noqa: F811
        hostile_protocols, xvfb, artifacts_dir):
    from test_visual import save, screenshot
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
