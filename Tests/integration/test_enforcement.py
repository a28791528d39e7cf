"""While a session is active nothing but the exam can be seen, captured, typed
into or copied — proven by running the real attack tools against the real
binary, and the pixels checked from outside with the X server's screenshot.

The exam is assessment_client.py (pywayland), painting #3366cc over the whole
output; attackers are real programs on the public socket (untrusted role).
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

import carrel_harness as h
from assessment_protocol import ADMINISTRATIVE, INTEGRITY
from carrel_clients import EXAM, OUTPUT, begin_exam, end_exam
from x_display import CURTAIN, press_keys, screenshot, x_windows


def foreign_pixels(image, colour=EXAM, step=8):
    """Sampled output pixels that are not the exam's colour (±4), as (x, y, rgb)."""
    bad = []
    for y in range(0, OUTPUT[1], step):
        for x in range(0, OUTPUT[0], step):
            p = image.pixel(x, y)
            if any(abs(a - b) > 4 for a, b in zip(p, colour)):
                bad.append((x, y, p))
    return bad


def spawn_attacker(w, name, argv, env_extra=None):
    env = w.env("untrusted")
    if env_extra:
        env.update(env_extra)
    out = w.logdir / f"attacker-{name}.log"
    w.logs.append((f"attacker {name}", out))
    f = open(out, "wb")
    return w.procs.spawn(f"attacker-{name}", argv, env=env, stdout=f, stderr=subprocess.STDOUT), out


def test_capture_tools_fail_during_a_session_and_capture_is_not_offered_after(world):
    """grim and wf-recorder (untrusted) fail during the session; Carrel offers no
    capture global by default, so they fail after it too (capture outside sessions
    is a policy option, off by default)."""
    h.require_tool("grim")
    h.require_tool("wf-recorder")
    exam = begin_exam(world)
    shot = world.logdir / "grim.png"
    for phase in ("during", "after"):
        status, out, err = world.run_tool("grim", ["grim", str(shot)], role="untrusted")
        assert status not in (0, None), f"{phase} session: grim exited {status}: {err}"
        assert not shot.exists(), f"{phase} session: grim wrote a screenshot"
        assert "screencopy" in (out + err).lower(), f"grim failed for another reason: {err!r}"
        video = world.logdir / "rec.mp4"
        status, out, err = world.run_tool("wf-recorder", ["wf-recorder", "-f", str(video)],
                                          role="untrusted", timeout=5.0)
        assert status not in (0, None), f"{phase} session: wf-recorder exited {status}: {err}"
        assert not video.exists() or video.stat().st_size == 0, f"{phase}: wf-recorder recorded"
        if phase == "during":
            end_exam(exam)
    world.alive()


def test_wtype_cannot_type_into_the_exam(world):
    h.require_tool("wtype")
    exam = begin_exam(world)
    status, out, err = world.run_tool("wtype", ["wtype", "cheat"], role="untrusted")
    assert status not in (0, None), f"wtype exited {status}: {out} {err}"
    assert "virtual keyboard" in (out + err).lower(), f"wtype failed for another reason: {err!r}"
    end_exam(exam)
    world.alive()


def test_swaybg_cannot_draw_over_the_exam(world):
    h.require_tool("swaybg")
    exam = begin_exam(world)
    status, out, err = world.run_tool("swaybg", ["swaybg", "-c", "#ff0000"], role="untrusted")
    assert status not in (0, None), f"swaybg exited {status} (it should find no layer shell)"
    # swaybg 1.2 says only "Missing a required Wayland interface": the layer shell.
    assert "required wayland interface" in (out + err).lower(), f"swaybg failed otherwise: {err!r}"
    end_exam(exam)


def test_untrusted_window_gets_no_frames_during_the_session_and_resumes_after(world):
    """weston-simple-shm started during the session is kept out of every frame
    (a hidden surface gets no frame callbacks); it draws again after `ended`."""
    h.require_tool("weston-simple-shm")
    exam = begin_exam(world)
    proc, log = spawn_attacker(world, "simple-shm", ["weston-simple-shm"],
                               {"WAYLAND_DEBUG": "1"})
    done = re.compile(r"wl_callback[@#]\d+\.done\(")

    def frames():
        return len(done.findall(log.read_text(errors="replace")))

    assert h.wait_until(lambda: "xdg_toplevel" in log.read_text(errors="replace"), 10)
    time.sleep(1.0)
    during = frames()
    # wl_display.sync callbacks also say done; a drawing client would show ~60 a second.
    assert during <= 3, f"a hidden window got {during} frame callbacks in 1 s during the session"
    end_exam(exam)
    assert h.wait_until(lambda: frames() >= during + 20, 10), \
        f"weston-simple-shm did not resume after ended ({frames()} callbacks)"
    assert proc.poll() is None, "weston-simple-shm died"
    world.alive()


def test_untrusted_clipboard_does_not_reach_the_exam(x11_world):
    w = x11_world
    exam = begin_exam(w)
    exam.send("watch_selection")
    exam.sync()
    h.require_tool("wl-copy")
    status, out, err = w.run_tool("wl-copy", ["wl-copy", "smuggled answer"], role="untrusted",
                                  timeout=3.0)
    exam.collect(1.0)
    offers = exam.matching(r"selection offer .*")
    assert not offers, f"the exam was offered a selection from an untrusted client: {offers}"
    status, out, err = w.paste(timeout=3.0)
    assert "smuggled answer" not in out, "an app-role wl-paste got the untrusted selection"
    end_exam(exam)
    w.alive()


ATTACKERS = [
    ("paint", ["{paint}", "--color", "ff00ff", "--animate"]),
    ("dialog", ["{paint}", "--color", "00ff00", "--parent", "--dialog-color", "ffff00"]),
    ("simple-shm", ["weston-simple-shm"]),
    ("foot", ["foot", "--override", "colors.background=ff8800", "sh", "-c", "sleep 60"]),
]


def test_no_attacker_pixel_reaches_the_screen_from_began_until_ended(x11_world, paint_bin,
                                                                     artifacts_dir):
    """Screenshots by the X server, repeatedly, while untrusted clients map,
    animate, open dialogs and a terminal: every sampled pixel is the exam's.
    After ended the exam unmaps its window and the attackers are seen — which
    shows the check can fail."""
    w = x11_world
    display = w.carrel.env["DISPLAY"]
    exam = begin_exam(w)
    first = screenshot(display)
    assert not foreign_pixels(first), "before any attacker, the exam does not fill the screen"
    procs = []
    for name, argv in ATTACKERS:
        if argv[0] != "{paint}" and not h.require_tool(argv[0]):
            continue
        argv = [str(paint_bin) if a == "{paint}" else a for a in argv]
        procs.append(spawn_attacker(w, name, argv))
    deadline = time.monotonic() + 4.0
    shots = 0
    while time.monotonic() < deadline:
        image = screenshot(display)
        shots += 1
        bad = foreign_pixels(image)
        if bad:
            (artifacts_dir / "enforcement-leak.png").write_bytes(image.to_png())
            pytest.fail(f"screenshot {shots} during the session shows {len(bad)} foreign pixels, "
                        f"e.g. {bad[:5]}\n{w.carrel.evidence()}")
    assert shots >= 5, f"only {shots} screenshots in 4 s"
    for proc, log in procs:
        assert proc.poll() is None, f"an attacker died during the session: {log.read_text()[-500:]}"
    end_exam(exam)
    exam.send("close_window w")
    exam.sync()

    def attackers_seen():
        image = screenshot(display)
        return image if len(foreign_pixels(image)) > 100 else None

    seen = h.wait_until(attackers_seen, 10, interval=0.3)
    if seen:
        (artifacts_dir / "enforcement-after-ended.png").write_bytes(seen.to_png())
    assert seen, "after ended and the exam unmapped, no attacker window became visible"
    w.alive()


def test_an_exam_window_declared_opaque_but_transparent_shows_nothing_hidden_through_it(
        x11_world, paint_bin, artifacts_dir):
    """The exam's buffer is fully transparent while its surface declares
    itself opaque. A frame that left the declared region out of its clear
    and then blended the buffer over it (as Carrel's own pixman frame on
    wlroots 0.15 would if it took the declaration) would keep the pixels of
    the frame before, an untrusted window the session hides, on screen
    through it. Carrel trusts only a buffer's format: from began on, the
    screen there is black. Before the session the untrusted window is seen
    through the exam's, which shows the check can fail."""
    w = x11_world
    display = w.carrel.env["DISPLAY"]
    attacker_colour = (0xFF, 0x88, 0x00)
    attacker, log = spawn_attacker(w, "paint-orange", [str(paint_bin), "--color", "ff8800"])
    exam = w.client("exam")
    exam.send("map_transparent_claiming_opaque w")
    exam.expect("mapped w", what="a frame callback after the first buffer")

    def orange(image):
        """Sampled output pixels of the untrusted window's colour (±4)."""
        return sum(1 for y in range(0, OUTPUT[1], 8) for x in range(0, OUTPUT[0], 8)
                   if all(abs(a - b) <= 4 for a, b in zip(image.pixel(x, y), attacker_colour)))

    def attacker_seen():
        image = screenshot(display)
        return image if orange(image) > 100 else None

    before = h.wait_until(attacker_seen, 10, interval=0.2)
    assert before, f"the untrusted window never showed before the session\n{log.read_text()[-500:]}"
    exam.bind()
    exam.begin()
    exam.began()
    for shot in range(6):
        image = screenshot(display)
        if orange(image):
            (artifacts_dir / "enforcement-declared-opaque.png").write_bytes(image.to_png())
            pytest.fail(f"screenshot {shot} during the session shows {orange(image)} pixels of the hidden "
                        f"window through the exam's transparent one\n{w.carrel.evidence()}")
        time.sleep(0.2)
    assert attacker.poll() is None, f"the untrusted client died: {log.read_text()[-500:]}"
    end_exam(exam)
    w.alive()


def test_probe_reports_every_attack_blocked_during_a_session(x11_world, artifacts_dir):
    """carrel-probe, untrusted, tries everything while the exam is locked: all
    blocked. After ended, its window is shown again (frame callbacks answered),
    so the verdicts during the session are not blindness of the probe."""
    from carrel_harness import probe_bin
    from probe import ALL_ATTACKS, PROBE_TIMEOUT, ProbeRun

    def probe_run(name, *args):
        client = w.carrel.client([str(probe), *args], name=name)
        return ProbeRun(client, client.wait_exit(PROBE_TIMEOUT))

    w = x11_world
    probe = probe_bin()
    assert probe.is_file(), f"carrel-probe not built at {probe}"
    exam = begin_exam(w)
    exam.send("watch_selection")
    exam.sync()
    during = probe_run("probe-during", "--timeout", "1.5")
    assert set(during.verdicts) == set(ALL_ATTACKS), during.evidence()
    for attack in ALL_ATTACKS:
        during.expect(attack, "blocked")
    assert during.status == 0, during.evidence()
    exam.collect(0.5)
    assert not exam.matching(r"selection offer .*"), "the probe's selection reached the exam"
    end_exam(exam)
    after = probe_run("probe-after", "--attack", "map_toplevel", "--timeout", "1.5")
    after.expect("map_toplevel", "succeeded")
    w.alive()


def test_output_plugged_in_during_a_session_interrupts_it(carrel, procs, logdir, logs, tmp_path,
                                                          client_python, pywayland_protocols):
    """A display connected mid-session is a change nobody vetted: the session
    hears interrupted(integrity) and stays locked until the app ends it. With two
    outputs a new session begins (its began waits for a frame on both)."""
    import signal as sig

    from carrel_clients import World

    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              env={"CARREL_TEST_OUTPUT_HOTPLUG": "1"})
    exam = begin_exam(w)
    w.carrel.signal(sig.SIGUSR1)
    assert h.wait_until(lambda: "output HEADLESS-2" in w.carrel.stderr_path.read_text(), 10), \
        f"the test hook did not plug an output\n{w.carrel.evidence()}"
    exam.sync()
    exam.expect(rf"session s interrupted {INTEGRITY} .*", what="interrupted(integrity) after an output was plugged")
    exam.collect(0.5)
    assert not exam.matching(r"session s ended"), "the session ended by itself; the app must end it"
    end_exam(exam)
    # Two outputs now; outside a session plugging is harmless, and a new session
    # begins once a frame showing only the exam was presented on both.
    exam.send("begin s2 m w null")
    exam.expect(r"session s2 began", what="began with two outputs")
    exam.send("end s2")
    exam.expect(r"session s2 ended")
    w.carrel.signal(sig.SIGUSR2)  # unplug it again outside a session: nothing to say
    exam.sync()
    assert not exam.matching(r"session s2 interrupted .*"), "unplugging after ended interrupted"
    w.alive()
    assert "output HEADLESS-2" in w.carrel.stderr_path.read_text(), w.carrel.evidence()


def test_second_output_shows_only_the_curtain_during_a_session(carrel, procs, logdir, logs,
                                                               tmp_path, client_python,
                                                               pywayland_protocols, paint_bin,
                                                               artifacts_dir):
    """Two outputs (two X windows under Xvfb, moved side by side): during a session the
    primary shows the exam and the other one only the curtain colour, while an untrusted
    client paints; before began and after ended the second output is not curtained."""
    from carrel_clients import World
    from x_display import start_xvfb

    h.require_tool("xdotool")
    display = start_xvfb(procs, logdir, logs, screen=(2600, 760))
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              backend="x11", env={"DISPLAY": display, "WLR_X11_OUTPUTS": "2"})
    assert h.wait_until(lambda: len(x_windows(display)) == 2, 10), \
        f"expected two X windows (one per output): {x_windows(display)}\n{w.carrel.evidence()}"
    # Without a window manager both open at the corner; the second output's is on top.
    second = x_windows(display)[0]
    subprocess.run(["xdotool", "windowmove", second, "1300", "0"], env=h.clean_env(
        {"DISPLAY": display}), check=True, timeout=10)
    right = (1300, 0)

    def second_output(image, colour):
        """Sampled pixels of the second output's window that are not colour (±4)."""
        pixels = (image.pixel(right[0] + x, y) for y in range(0, OUTPUT[1], 16)
                  for x in range(0, OUTPUT[0], 16))
        return [p for p in pixels if any(abs(a - b) > 4 for a, b in zip(p, colour))]

    before = screenshot(display)
    assert second_output(before, CURTAIN), "the second output is curtained before any session"
    attacker = spawn_attacker(w, "paint", [str(paint_bin), "--color", "ff00ff", "--animate"])
    exam = begin_exam(w)
    for shot in range(6):
        image = screenshot(display)
        if shot == 0:
            (artifacts_dir / "curtain-during.png").write_bytes(image.to_png())
        off = second_output(image, CURTAIN)
        assert not off, f"second output during the session: {len(off)} pixels not the curtain, " \
                        f"e.g. {off[:5]}\n{w.carrel.evidence()}"
        leak = foreign_pixels(image)
        assert not leak, f"primary output during the session: not the exam at {leak[:5]}"
        time.sleep(0.3)
    end_exam(exam)

    def uncurtained():
        image = screenshot(display)
        return image if second_output(image, CURTAIN) else None

    after = h.wait_until(uncurtained, 5, interval=0.2)
    assert after, "the curtain stayed up on the second output after ended"
    (artifacts_dir / "curtain-after.png").write_bytes(after.to_png())
    assert attacker[0].poll() is None, "the attacker died"
    w.alive()


def test_capture_enabled_by_policy_works_outside_sessions_and_fails_during(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    """An administrator enables capture outside sessions for the app role: grim (app role)
    captures before and after a session, not during it (the global is hidden, so new
    captures fail), an untrusted grim never; wf-recorder, bound before the session, has
    its frames fail from begin on ("Failed to copy frame") and carrel logs them."""
    from carrel_clients import World

    h.require_tool("grim")
    h.require_tool("wf-recorder")
    policy = tmp_path / "policy.toml"
    policy.write_text('[capture]\nenabled_outside_sessions = true\nroles = ["app"]\n')
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              args=["--policy", str(policy)])

    def grim(role, name):
        shot = tmp_path / f"{name}.png"
        status, _, err = w.run_tool("grim", ["grim", str(shot)], role=role)
        return status, shot.exists(), err

    assert grim("app", "before")[:2] == (0, True), grim("app", "before-again")
    status, wrote, err = grim("untrusted", "untrusted")
    assert status not in (0, None) and not wrote, f"untrusted grim captured: {err}"
    rec_log = tmp_path / "wf-recorder.log"
    logs.append(("wf-recorder", rec_log))
    with open(rec_log, "wb") as out:
        recorder = procs.spawn("wf-recorder", ["wf-recorder", "-c", "rawvideo", "-m", "nut", "-f",
                                               str(tmp_path / "rec.nut")],
                               env=w.env("app"), stdout=out, stderr=subprocess.STDOUT)
    assert h.wait_until(lambda: (tmp_path / "rec.nut").exists(), 10), rec_log.read_text()
    exam = begin_exam(w)
    assert h.wait_until(lambda: "Failed to copy frame" in rec_log.read_text(errors="replace"), 10), \
        f"wf-recorder's frames did not fail during the session:\n{rec_log.read_text()[-1000:]}"
    status, wrote, err = grim("app", "during")
    assert status not in (0, None) and not wrote, f"grim captured during the session: {err}"
    assert "capture frame" in w.carrel.stderr_path.read_text(), "carrel did not log failed frames"

    # The audit log records each failed frame with its client: wf-recorder's.
    def tried():
        audited = [json.loads(line) for line in w.carrel.audit_log.read_text().splitlines()]
        return [r for r in audited if r["event"] == "blocked" and r.get("pid") == recorder.pid]
    assert h.wait_until(tried, 10), f"no capture attempt of wf-recorder in the audit log:\n{rec_log.read_text()[-1000:]}"
    assert all(r["kind"] == "capture" and r["session"] == 1 and "frame" in r["detail"] for r in tried()), tried()
    end_exam(exam)
    assert grim("app", "after")[:2] == (0, True), "capture did not come back after ended"
    assert recorder.poll() is None, "wf-recorder died"
    w.alive()


@pytest.mark.parametrize("defined", [True, False], ids=["policy-binding", "no-binding"])
def test_emergency_binding_interrupts_a_session_only_when_the_policy_defines_one(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, defined):
    """Real key presses under Xvfb. With `[emergency] binding = "Ctrl+Alt+Shift+E"`: the
    combination does nothing outside a session, nothing with a modifier missing, and during a
    session interrupts it (administrative); restrictions stay until the app ends. Without the
    key in the policy (the built-in default) the same keys interrupt nothing."""
    from carrel_clients import World
    from x_display import start_required_xvfb

    display = start_required_xvfb(procs, logdir, logs)
    policy = tmp_path / "policy.toml"
    policy.write_text('[emergency]\nbinding = "Ctrl+Alt+Shift+E"\n' if defined else "")
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              backend="x11", env={"DISPLAY": display}, args=["--policy", str(policy)])
    assert h.wait_until(lambda: len(x_windows(display)) >= 1, 10), w.carrel.evidence()
    exam = w.client("exam")
    exam.map()
    exam.bind()
    press_keys(display, "ctrl+alt+shift+e")  # no session: nothing to interrupt
    exam.begin()
    exam.began()
    press_keys(display, "ctrl+shift+e")  # Alt missing: not the binding
    exam.collect(1.0)
    assert not exam.matching(r"session s interrupted .*"), "interrupted by a partial combination"
    press_keys(display, "ctrl+alt+shift+e")
    if defined:
        m = exam.expect(r"session s interrupted (\d+) (.*)", timeout=5,
                        what="interrupted(administrative) after the emergency binding")
        assert int(m.group(1)) == ADMINISTRATIVE, m.group(0)
        assert "emergency" in w.carrel.stderr_path.read_text().lower(), "carrel did not log it"
    else:
        exam.collect(1.5)
        assert not exam.matching(r"session s interrupted .*"), \
            "interrupted by keys the policy does not name"
    end_exam(exam)
    w.alive()
