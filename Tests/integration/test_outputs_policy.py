"""The policy's `[outputs]` against the real binary.

allow_hotplug_during_session: a display plugged in during a session (the test
hook: CARREL_TEST_OUTPUT_HOTPLUG=1, SIGUSR1 plugs a headless output)
interrupts the session with `integrity` unless the policy tolerates it; then
the session goes on and the new output shows only the curtain.

curtain_colour: two x11-backend outputs nested in Xvfb (WLR_X11_OUTPUTS=2),
moved side by side; during a session the second one shows the configured
colour in the X server's own screenshot (`xwd -root`), not the built-in grey.
"""

from __future__ import annotations

import re
import signal
import subprocess

import pytest

import carrel_harness as h
from carrel_clients import OUTPUT, World, begin_exam, end_exam
from x_display import CURTAIN, screenshot, start_xvfb, x_windows

HOTPLUG = {"CARREL_TEST_OUTPUT_HOTPLUG": "1"}
INTEGRITY = 1
# Not the exam's 0x3366CC, not the built-in curtain grey, not carrel-paint's colours.
CURTAIN_COLOUR = (0x2E, 0x8B, 0x57)


def policy_file(tmp_path, text: str):
    path = tmp_path / "policy.toml"
    path.write_text(text)
    return path


def plug(w) -> None:
    """Plugs (SIGUSR1) a second output and waits until carrel has it."""
    w.carrel.signal(signal.SIGUSR1)
    assert h.wait_until(lambda: "output HEADLESS-2" in w.carrel.stderr_path.read_text(), 10), \
        f"the test hook did not plug an output\n{w.carrel.evidence()}"


@pytest.mark.parametrize("allowed", [True, False])
def test_output_plugged_in_during_a_session_follows_the_policy(allowed, carrel, procs, logdir, logs,
                                                               tmp_path, client_python,
                                                               pywayland_protocols):
    """allow_hotplug_during_session = true: the session stays began (no
    interrupted) and ends when the app ends it; false: interrupted(integrity)."""
    policy = policy_file(tmp_path, f"[outputs]\nallow_hotplug_during_session = {str(allowed).lower()}\n")
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              env=HOTPLUG, args=["--policy", str(policy)])
    exam = begin_exam(w)
    plug(w)
    exam.sync()
    if allowed:
        exam.collect(1.0)
        interrupted = exam.matching(r"session s interrupted .*")
        assert not interrupted, f"a tolerated output interrupted the session: {interrupted}\n{w.carrel.evidence()}"
        assert "output HEADLESS-2 was connected during the session; tolerated" in \
            w.carrel.stderr_path.read_text(), w.carrel.evidence()
    else:
        m = exam.expect(r"session s interrupted (\d+) (.*)", what="interrupted(integrity) after an output was plugged")
        assert int(m.group(1)) == INTEGRITY and "HEADLESS-2" in m.group(2), m.group(0)
    end_exam(exam)
    terminal = [line for line in exam.lines if re.fullmatch(r"session s (ended|failed .*)", line)]
    assert terminal == ["session s ended"], exam.lines
    w.alive()


def test_second_output_shows_the_policy_curtain_colour(carrel, procs, logdir, logs, tmp_path,
                                                       client_python, pywayland_protocols,
                                                       artifacts_dir):
    """curtain_colour = "#2E8B57": during a session the second output shows that
    colour, everywhere sampled; not before the session, not after it."""
    h.require_tool("xdotool")
    policy = policy_file(tmp_path, '[outputs]\ncurtain_colour = "#%02X%02X%02X"\n' % CURTAIN_COLOUR)
    display = start_xvfb(procs, logdir, logs, screen=(2600, 760))
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              backend="x11", env={"DISPLAY": display, "WLR_X11_OUTPUTS": "2"},
              args=["--policy", str(policy)])
    assert h.wait_until(lambda: len(x_windows(display)) == 2, 10), \
        f"expected two X windows (one per output): {x_windows(display)}\n{w.carrel.evidence()}"
    # Without a window manager both open at the corner; the second output's is on top.
    second = x_windows(display)[0]
    subprocess.run(["xdotool", "windowmove", second, "1300", "0"],
                   env=h.clean_env({"DISPLAY": display}), check=True, timeout=10)

    def off(image, colour):
        """Sampled pixels of the second output's window that are not colour (±4)."""
        pixels = (image.pixel(1300 + x, y) for y in range(0, OUTPUT[1], 16) for x in range(0, OUTPUT[0], 16))
        return [p for p in pixels if any(abs(a - b) > 4 for a, b in zip(p, colour))]

    sampled = len(range(0, OUTPUT[1], 16)) * len(range(0, OUTPUT[0], 16))
    before = screenshot(display)
    assert len(off(before, CURTAIN_COLOUR)) == sampled, "the second output shows the curtain colour before any session"
    exam = begin_exam(w)
    last = [before]

    def curtained():
        last[0] = screenshot(display)
        return not off(last[0], CURTAIN_COLOUR)

    shown = h.wait_until(curtained, 5, interval=0.2)
    (artifacts_dir / "policy-curtain-during.png").write_bytes(last[0].to_png())
    bad = off(last[0], CURTAIN_COLOUR)
    assert shown, (f"second output during the session: {len(bad)} of {sampled} sampled pixels are not "
                   f"#{'%02X%02X%02X' % CURTAIN_COLOUR}, e.g. {bad[:5]}\n{w.carrel.evidence()}")
    assert len(off(last[0], CURTAIN)) == sampled, "the built-in grey shows although the policy names a colour"
    end_exam(exam)
    assert h.wait_until(lambda: len(off(screenshot(display), CURTAIN_COLOUR)) == sampled, 5, interval=0.2), \
        "the curtain stayed up on the second output after ended"
    w.alive()
