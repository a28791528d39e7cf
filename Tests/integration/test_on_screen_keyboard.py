"""The on-screen keyboard (Debian's wvkbd) as a session allows it: carrel
launches the policy's keyboard on a socket pair of its own (the
on_screen_keyboard role) only for a session whose configuration allows
`on_screen_keyboard`, puts its one layer surface at the bottom of the output,
gives the exam the space above it, and stops it at `end`. Checked from
outside with the X server's screenshots (carrel nested in Xvfb), taps with
xdotool's pointer, and a hostile keyboard (pywayland) run as the policy's
keyboard that tries every way out of its band."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_clients import EXAM, OUTPUT, World
from x_display import save, screenshot, start_xvfb

WVKBD = "/usr/bin/wvkbd-mobintl"



def require_wvkbd():
    """Fails (never skips) without wvkbd: the tests that run it prove the feature."""
    if not os.path.exists(WVKBD):
        pytest.fail(f"{WVKBD} is missing; install Debian's wvkbd (meson-helpers/packages.sh lists it)")


def stderr(c) -> str:
    return c.stderr_path.read_text(errors="replace")


def is_exam(pixel) -> bool:
    return all(abs(a - b) <= 4 for a, b in zip(pixel, EXAM))


def row_is_exam(image, y, step=8) -> bool:
    return all(is_exam(image.pixel(x, y)) for x in range(0, OUTPUT[0], step))


def exam_rows(image) -> int:
    """How many rows from the top of the output are the exam's colour throughout."""
    y = 0
    while y < OUTPUT[1] and row_is_exam(image, y):
        y += 1
    return y


def foreign_in_band(image, top, step=8) -> int:
    """Sampled pixels below `top` that are not the exam's colour."""
    return sum(1 for y in range(top, OUTPUT[1], step) for x in range(0, OUTPUT[0], step)
               if not is_exam(image.pixel(x, y)))


def keyboard_pid(c) -> int:
    found = re.findall(r"launched on-screen keyboard \S+ as pid (\d+)", stderr(c))
    assert found, f"carrel never launched the on-screen keyboard\n{c.evidence()}"
    return int(found[-1])


def gone(pid) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie not yet reaped still answers kill(0); its state says it ended.
    # Reaped between the two looks: the open fails (ENOENT) or, once open,
    # the read does (ESRCH).
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


FEATURE = {"spell_check": 0, "input_method": 3, "on_screen_keyboard": 4}


def begin_allowing(w, features):
    exam = w.client("exam")
    exam.map()
    exam.bind()
    exam.send("config c")
    for feature in features:
        exam.send(f"allow c {FEATURE[feature]}")
    exam.begin(config="c")
    exam.began()
    return exam


@pytest.fixture
def osk_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):  # noqa: F811
    """carrel on the x11 backend in Xvfb, the built-in policy (wvkbd as the keyboard)."""
    require_wvkbd()
    display = start_xvfb(procs, logdir, logs)
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              backend="x11", env={"DISPLAY": display})
    w.display = display
    return w


def test_allowed_keyboard_takes_the_bottom_band_and_goes_at_end(osk_world, artifacts_dir):
    """Allowed: wvkbd is launched, its pixels fill a band at the bottom of
    the output, the exam is resized to the space above it (its colour fills
    every row there, none below); after `end` the keyboard's process exits
    and the exam's colour fills the output again."""
    w = osk_world
    exam = begin_allowing(w, ["on_screen_keyboard"])
    pid = keyboard_pid(w.carrel)
    last = [None]

    def band_shown():
        last[0] = screenshot(w.display)
        top = exam_rows(last[0])
        return 0 < OUTPUT[1] - top <= OUTPUT[1] * 2 // 5 and foreign_in_band(last[0], top) > 1000

    shown = h.wait_until(band_shown, 15, interval=0.3)
    png = save(last[0], artifacts_dir, "on-screen-keyboard-allowed")
    top = exam_rows(last[0])
    assert shown, f"no keyboard band at the bottom (exam rows {top} of {OUTPUT[1]}); screenshot {png}\n{w.carrel.evidence()}"
    band = OUTPUT[1] - top
    print(f"keyboard band {band} px high; exam keeps {top} rows; screenshot {png}")
    # The exam was resized, not covered: no row of the band is the exam's colour.
    assert not any(row_is_exam(last[0], y) for y in range(top, OUTPUT[1], 4)), \
        f"the exam's colour shows inside the band: it was covered, not resized; screenshot {png}"
    assert f"band {OUTPUT[0]}x{band}+0+{top}" in stderr(w.carrel), w.carrel.evidence()

    exam.send("end s")
    exam.expect(r"session s ended", what="ended after end")
    assert h.wait_until(lambda: gone(pid), 10), f"wvkbd (pid {pid}) still runs after end\n{w.carrel.evidence()}"

    def exam_everywhere():
        last[0] = screenshot(w.display)
        return exam_rows(last[0]) == OUTPUT[1]

    back = h.wait_until(exam_everywhere, 10, interval=0.3)
    png = save(last[0], artifacts_dir, "on-screen-keyboard-after-end")
    assert back, f"after end the output is not all exam (rows {exam_rows(last[0])}); screenshot {png}"
    w.alive()


def test_denied_keyboard_is_never_launched(osk_world, artifacts_dir):
    """Denied (allowing other features): no keyboard process, nothing at the
    bottom: the exam's colour fills the whole output."""
    w = osk_world
    exam = begin_allowing(w, ["input_method", "spell_check"])
    time.sleep(1.5)
    image = screenshot(w.display)
    png = save(image, artifacts_dir, "on-screen-keyboard-denied")
    assert exam_rows(image) == OUTPUT[1], f"something covers the exam (rows {exam_rows(image)}); screenshot {png}"
    assert "launched on-screen keyboard" not in stderr(w.carrel), w.carrel.evidence()
    exam.send("end s")
    exam.expect(r"session s ended", what="ended after end")
    assert "launched on-screen keyboard" not in stderr(w.carrel), w.carrel.evidence()
    w.alive()


def xdo(display, *args):
    subprocess.run(["xdotool", *args], env=h.clean_env({"DISPLAY": display}), check=True,
                   timeout=15, stdin=subprocess.DEVNULL, capture_output=True)


def band_of(c):
    """The band carrel placed, from its log: (width, height, top)."""
    found = re.findall(r"on-screen keyboard: band (\d+)x(\d+)\+0\+(\d+)", stderr(c))
    assert found, f"the keyboard's band was never placed\n{c.evidence()}"
    return tuple(map(int, found[-1]))


# wvkbd-mobintl's landscape layout: six rows of keys; the third holds
# q w e r t y u i o p (starting half a key in), the last ends with Enter.
def key_point(band, key):
    width, height, top = band
    row = height / 6
    letters = "qwertyuiop"
    if key == "Enter":
        return int(width * 0.9), int(top + 5.5 * row)
    index = letters.index(key)
    return int(width * (0.0953 + 0.0953 * index)), int(top + 2.5 * row)


def test_taps_on_the_keyboard_type_into_the_exam(carrel, procs, logdir, logs, tmp_path, artifacts_dir):
    """Real pointer taps (xdotool under Xvfb) on wvkbd's keys type into the
    exam (foot, whose shell copies what it receives to a file): q, w, e, t
    and Enter arrive as "qwet" and a newline."""
    h.require_tool("xdotool")
    h.require_tool("foot")
    require_wvkbd()
    display = start_xvfb(procs, logdir, logs)
    config = tmp_path / "exam.toml"
    config.write_text('allow = ["on_screen_keyboard"]\n')
    typed = tmp_path / "typed.txt"
    c = carrel.start(app=["foot", "sh", "-c", 'exec cat > "$0"', str(typed)],
                     args=[f"--assessment={config}"], backend="x11",
                     env={"DISPLAY": display, "LANG": "C.UTF-8"})
    assert h.wait_until(lambda: "session began (on behalf of foot)" in stderr(c), 15), c.evidence()
    assert h.wait_until(typed.exists, 10), f"foot's shell never ran\n{c.evidence()}"
    assert h.wait_until(lambda: "on-screen keyboard: band" in stderr(c), 15), c.evidence()
    band = band_of(c)
    time.sleep(1.0)  # wvkbd draws its keys after the configure
    save(screenshot(display), artifacts_dir, "on-screen-keyboard-foot")
    for key in ["q", "w", "e", "t", "Enter"]:
        x, y = key_point(band, key)
        xdo(display, "mousemove", str(x), str(y))
        time.sleep(0.2)
        # wvkbd picks the key from the last motion, not from where the
        # pointer entered its surface: one more pixel, as a finger would.
        xdo(display, "mousemove", str(x + 1), str(y))
        time.sleep(0.2)
        xdo(display, "click", "1")
        time.sleep(0.3)
    h.wait_until(lambda: typed.read_bytes().endswith(b"\n"), 8)
    text = typed.read_bytes().decode(errors="replace")
    assert text == "qwet\n", f"foot received {text!r} from the taps, not 'qwet' and a newline\n{c.evidence()}"
    assert c.alive(), c.evidence()


def generate_layer_shell_bindings(outdir):
    """pywayland's scanner on wayland.xml, xdg-shell and the layer shell XML under protocols/."""
    package = outdir / "carrel_osk"
    package.mkdir(parents=True)
    xmls = ["/usr/share/wayland/wayland.xml", str(h.REPO / "protocols" / "xdg-shell.xml"),
            str(h.REPO / "protocols" / "wlr-layer-shell-unstable-v1.xml")]
    r = subprocess.run([sys.executable, "-m", "pywayland.scanner", "-o", str(package), "-i", *xmls],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"pywayland.scanner failed: {r.stderr}"
    (package / "__init__.py").write_text("")
    return outdir


def is_red(pixel) -> bool:
    r, g, b = pixel
    return r > 200 and g < 60 and b < 60


def test_hostile_keyboard_gets_one_band_and_cannot_cover_the_exam(carrel, procs, logdir, logs, tmp_path,
                                                                  client_python, pywayland_protocols,  # noqa: F811
                                                                  artifacts_dir):
    """The policy's keyboard is hostile (hostile_on_screen_keyboard.py): its
    overlay-layer surface is closed, its band's red buffer three times the
    band's height is never drawn (no red anywhere; the exam keeps the space
    above the band), a second band is closed, and asking for keyboard focus
    closes its band, giving the exam the whole output back. It sees the
    layer shell and the virtual keyboard, nothing privileged beyond them."""
    generated = generate_layer_shell_bindings(tmp_path / "gen")
    report = tmp_path / "hostile-report"
    report.write_text("")
    script = h.REPO / "Tests" / "integration" / "hostile_on_screen_keyboard.py"
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[on_screen_keyboard]\ncommand = ["{sys.executable}", "{script}", "{generated}", "{report}"]\n')
    display = start_xvfb(procs, logdir, logs)
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              backend="x11", env={"DISPLAY": display}, args=["--policy", str(policy)])
    exam = begin_allowing(w, ["on_screen_keyboard"])
    lines = lambda: report.read_text().splitlines()  # noqa: E731
    assert h.wait_until(lambda: "holding" in lines(), 15), f"the hostile keyboard never got going: {lines()}\n{w.carrel.evidence()}"
    seen = set(lines()[0].split()[1:])
    assert {"zwlr_layer_shell_v1", "zwp_virtual_keyboard_manager_v1"} <= seen, lines()
    assert not seen & (h.FORBIDDEN_GLOBALS - {"zwlr_layer_shell_v1", "zwp_virtual_keyboard_manager_v1"}), seen
    assert "carrel_assessment_manager_v1" not in seen and "zwp_input_method_manager_v2" not in seen, seen
    assert "overlay closed" in lines(), f"the overlay surface was not closed: {lines()}"
    assert "second closed" in lines(), f"the second band was not closed: {lines()}"
    assert "band closed" not in lines(), f"the first band was closed before it asked for focus: {lines()}"
    configured = [l for l in lines() if l.startswith("band configured")]
    assert configured, lines()
    width, height = map(int, configured[-1].split()[2:])
    assert (width, height) == (OUTPUT[0], 250), f"band configured {width}x{height}"
    shot = [None]

    def exam_above_band():
        shot[0] = screenshot(display)
        return exam_rows(shot[0]) == OUTPUT[1] - 250

    resized = h.wait_until(exam_above_band, 10, interval=0.3)
    image = shot[0]
    png = save(image, artifacts_dir, "on-screen-keyboard-hostile-oversize")
    red = sum(1 for y in range(0, OUTPUT[1], 4) for x in range(0, OUTPUT[0], 8) if is_red(image.pixel(x, y)))
    assert red == 0, f"{red} red points: the oversize band was drawn; screenshot {png}"
    assert resized, f"the exam keeps {exam_rows(image)} rows, not the {OUTPUT[1] - 250} above the band; screenshot {png}"
    audit = w.carrel.audit_log.read_text(errors="replace")
    assert "beyond its 1280x250 band; not shown until it fits" in audit, f"the oversize band was not recorded:\n{audit[-3000:]}"
    Path(str(report) + ".go").touch()  # now the band fits, and a late subsurface reaches above it
    assert h.wait_until(lambda: "subsurface attacked" in lines(), 10), f"{lines()}\n{w.carrel.evidence()}"

    def band_shown():
        shot[0] = screenshot(display)
        return shot[0].pixel(OUTPUT[0] // 2, OUTPUT[1] - 100) == (0x40, 0x40, 0x40)

    shown = h.wait_until(band_shown, 10, interval=0.2)
    for index in range(3):
        image = screenshot(display) if index else shot[0]
        png = save(image, artifacts_dir, f"on-screen-keyboard-hostile-subsurface-{index}")
        assert shown, f"the fitting band was not shown; screenshot {png}\n{w.carrel.evidence()}"
        red = sum(1 for y in range(0, OUTPUT[1], 4) for x in range(0, OUTPUT[0], 8) if is_red(image.pixel(x, y)))
        assert red == 0, f"{red} red points: the late subsurface above the band was drawn; screenshot {png}"
        assert exam_rows(image) == OUTPUT[1] - 250, f"the exam lost rows above the band; screenshot {png}"
        time.sleep(0.2)
    Path(str(report) + ".go2").touch()  # now the hostile keyboard asks for keyboard focus
    assert h.wait_until(lambda: "band closed" in lines(), 10), \
        f"asking for keyboard focus did not close the band: {lines()}\n{w.carrel.evidence()}"
    last = [None]

    def exam_everywhere():
        last[0] = screenshot(display)
        return exam_rows(last[0]) == OUTPUT[1]

    assert h.wait_until(exam_everywhere, 10, interval=0.3), \
        f"the exam did not get the output back; screenshot {save(last[0], artifacts_dir, 'on-screen-keyboard-hostile-closed')}"
    exam.send("end s")
    exam.expect(r"session s ended", what="ended after end")
    w.alive()


def test_update_brings_the_keyboard_and_takes_it_away(osk_world, artifacts_dir):
    """A session begun without the keyboard gets it from an `update` that
    allows it (band at the bottom, exam above it) and loses it again from an
    update that denies it: its process ends and the exam fills the output."""
    w = osk_world
    exam = begin_allowing(w, [])
    assert "launched on-screen keyboard" not in stderr(w.carrel), w.carrel.evidence()
    exam.send("config c2")
    exam.send(f"allow c2 {FEATURE['on_screen_keyboard']}")
    exam.send("update s c2")
    exam.expect(r"session s updated", what="updated after allowing the keyboard")
    pid = keyboard_pid(w.carrel)
    last = [None]

    def rows(wanted):
        def check():
            last[0] = screenshot(w.display)
            return wanted(exam_rows(last[0]))
        return check

    assert h.wait_until(rows(lambda r: 0 < OUTPUT[1] - r <= OUTPUT[1] * 2 // 5), 15, interval=0.3), \
        f"no band after the update; screenshot {save(last[0], artifacts_dir, 'on-screen-keyboard-update-allowed')}"
    exam.send("config c3")
    exam.send(f"allow c3 {FEATURE['spell_check']}")
    exam.send("update s c3")
    exam.expect(r"session s updated", what="updated after denying the keyboard")
    assert h.wait_until(lambda: gone(pid), 10), f"wvkbd (pid {pid}) still runs after the update denied it"
    assert h.wait_until(rows(lambda r: r == OUTPUT[1]), 10, interval=0.3), \
        f"the exam did not get the output back; screenshot {save(last[0], artifacts_dir, 'on-screen-keyboard-update-denied')}"
    exam.send("end s")
    exam.expect(r"session s ended", what="ended after end")
    w.alive()


def test_probe_as_the_keyboard_gets_nothing_beyond_its_band_and_keys(carrel, procs, logdir, logs, tmp_path,
                                                                     client_python, pywayland_protocols):  # noqa: F811
    """carrel-probe run as the policy's keyboard (the on_screen_keyboard role)
    during a session allowing it: the layer shell and the virtual keyboard are
    advertised to it (its own), every other attack is blocked: no other
    privileged or hidden global, no capture, no window shown or focused, no
    clipboard."""
    from carrel_harness import probe_bin
    probe = probe_bin()
    if not (probe.is_file() and os.access(probe, os.X_OK)):
        pytest.fail(f"carrel-probe not found at {probe} (set CARREL_PROBE_BIN or run swift build)")
    policy = tmp_path / "policy.toml"
    policy.write_text(f'[on_screen_keyboard]\ncommand = ["{probe}", "--as", "on_screen_keyboard", "--timeout", "1"]\n')
    display = start_xvfb(procs, logdir, logs)
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              backend="x11", env={"DISPLAY": display}, args=["--policy", str(policy)])
    exam = begin_allowing(w, ["on_screen_keyboard"])
    out = lambda: w.carrel.stdout_path.read_text(errors="replace")  # noqa: E731
    assert h.wait_until(lambda: '"summary"' in out(), 60), f"the probe never finished\n{w.carrel.evidence()}"
    records = [json.loads(line) for line in out().splitlines() if line.startswith("{")]
    verdicts = {r["attack"]: r for r in records if "attack" in r}
    own = {"inject_keys", "layer_surface"}
    for attack, record in verdicts.items():
        expected = "succeeded" if attack in own else "blocked"
        assert record["verdict"] == expected, f"{attack}: expected {expected}, got {record}\n{out()}"
    assert own <= set(verdicts) and len(verdicts) > len(own), f"missing verdicts: {sorted(verdicts)}"
    exam.send("end s")
    exam.expect(r"session s ended", what="ended after end")
    w.alive()
