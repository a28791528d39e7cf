"""Japanese, Korean and Chinese through the policy's input method: fcitx5 with
mozc, hangul and pinyin, launched by carrel on its own connection, composing
for foot (text-input-v3) nested in Xvfb, keys pressed with xdotool as a
person would. The app writes what it receives to a file: the UTF-8 there is
what was committed. The demo exam's own text-input-v3 field goes through the
same engines, its log holding the answer."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

import carrel_harness as h
from carrel_log import stderr
from input_method import report_restart, restarted_engine_composes_for_demo, start_demo, write_policy
from x_display import save, screenshot, start_xvfb

pytestmark = pytest.mark.skipif(
    not all(os.path.exists(p) for p in ("/usr/bin/fcitx5", "/usr/bin/foot", "/usr/bin/xdotool")),
    reason="needs fcitx5, foot and xdotool (meson-helpers/packages.sh installs them)")


GTK_ENTRY = Path(__file__).resolve().parent / "gtk_entry.py"


def gtk4_available() -> bool:
    found = subprocess.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('Gtk', '4.0')"],
                           capture_output=True, timeout=30)
    return found.returncode == 0


def typing_app(client, typed):
    """The app that composes: foot, whose shell copies what it receives to
    `typed`, or a GTK 4 entry, which appends each line entered to it."""
    if client == "foot":
        return ["foot", "sh", "-c", 'exec cat > "$0"', str(typed)]
    # GTK's own text-input-v3 module (not an IM module of the engine's), drawn
    # without GL, no accessibility bus.
    return ["env", "GDK_BACKEND=wayland", "GTK_IM_MODULE=wayland", "GSK_RENDERER=cairo", "GTK_A11Y=none",
            "/usr/bin/python3", str(GTK_ENTRY), str(typed)]


def start(carrel, procs, logdir, logs, tmp_path, engines=("mozc",), allow=("input_method",), client="foot"):
    """Xvfb, then carrel with a session begun on the app's behalf allowing
    `allow`; the app (`typing_app`) writes what it receives to a file.
    Returns (carrel, display, file)."""
    display = start_xvfb(procs, logdir, logs)
    policy = write_policy(tmp_path, engines)
    config = tmp_path / "exam.toml"
    config.write_text("allow = [%s]\n" % ", ".join(f'"{a}"' for a in allow))
    typed = tmp_path / "typed.txt"
    app = typing_app(client, typed)
    c = carrel.start(app=app, args=["--policy", str(policy), f"--assessment={config}"], backend="x11",
                     env={"DISPLAY": display, "LANG": "C.UTF-8"})
    line = re.compile(rf"session began \(on behalf of {re.escape(app[0])}\)$", re.M)
    assert h.wait_until(lambda: line.search(stderr(c)), 15), f"no session began\n{c.evidence()}"
    assert h.wait_until(typed.exists, 10), f"{client} never opened its file\n{c.evidence()}"
    return c, display, typed


def engine_ready(c, timeout=15.0):
    """The engine launched last (after a session's begin restarted it, or a
    kill relaunched it) bound the input method and grabbed the keyboard,
    and has had half a second since. Syllables composed the moment a
    relaunched engine grabs can be dropped by foot on a slow build (README,
    "Not done yet"; test_typing_through_begin_restart_and_kill_is_never_lost
    types through that); these tests are about what the engine composes."""
    def grabbed():
        log = stderr(c)
        return "input method: the engine grabbed the keyboard" in log[log.rfind("launched input method"):]
    assert h.wait_until(grabbed, timeout), f"the input method never grabbed the keyboard\n{c.evidence()}"
    time.sleep(0.5)


def xdo(display, *args):
    subprocess.run(["xdotool", *args], env=h.clean_env({"DISPLAY": display}), check=True,
                   timeout=15, stdin=subprocess.DEVNULL, capture_output=True)


def type_keys(display, text=None, keys=()):
    # The pointer over carrel's X window: without a window manager, X gives
    # the keyboard to the window under the pointer.
    xdo(display, "mousemove", "400", "300")
    if text:
        xdo(display, "type", "--delay", "60", text)
    for key in keys:
        time.sleep(0.4)
        xdo(display, "key", key)


def content(path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def wait_content(path, predicate, timeout=8.0):
    h.wait_until(lambda: predicate(content(path)), timeout)
    return content(path)


def light_pixels(image, box=(40, 18, 300, 200)) -> int:
    """Light pixels below the first text line, where the candidate popup
    opens under the text cursor; foot's own background there is dark."""
    x0, y0, x1, y1 = box
    return sum(1 for y in range(y0, y1, 2) for x in range(x0, x1, 2)
               if sum(image.pixel(x, y)) > 3 * 180)


POPUP_MINIMUM = 500  # of the 130x91 points sampled: a popup of a few lines is thousands


def engine_pid(c) -> int:
    found = re.findall(r"launched input method \S+ as pid (\d+)", stderr(c))
    assert found, f"carrel never launched the input method\n{c.evidence()}"
    return int(found[-1])


def test_mozc_commits_japanese_when_allowed(carrel, procs, logdir, logs, tmp_path, artifacts_dir):
    c, display, typed = start(carrel, procs, logdir, logs, tmp_path)
    engine_ready(c)
    # While "nihongo" is composed mozc shows its candidates (suggestions)
    # in the popup under the text cursor.
    type_keys(display, "nihongo")
    last = [None]

    def popup_shown():
        last[0] = screenshot(display)
        return light_pixels(last[0]) >= POPUP_MINIMUM

    shown = h.wait_until(popup_shown, 8, interval=0.25)
    png = save(last[0], artifacts_dir, "input-method-mozc-composing")
    assert shown, f"no candidate popup under the text cursor ({light_pixels(last[0])} light points); screenshot {png}"
    type_keys(display, None, ["space", "Return", "Return"])
    text = wait_content(typed, lambda t: t.endswith("\n"))
    assert text == "日本語\n", f"foot received {text!r}, not 日本語 and a newline\n{c.evidence()}"
    assert c.alive(), c.evidence()


def test_denied_input_method_keys_arrive_plain(carrel, procs, logdir, logs, tmp_path, artifacts_dir):
    c, display, typed = start(carrel, procs, logdir, logs, tmp_path, allow=())
    # The engine runs (the policy names it) but composes for nobody.
    assert h.wait_until(lambda: "input method: the engine bound the input method" in stderr(c), 15), c.evidence()
    before = stderr(c).count("activating the engine")
    type_keys(display, "nihongo", ["space"])
    time.sleep(1.0)
    shot = screenshot(display)
    png = save(shot, artifacts_dir, "input-method-denied")
    assert light_pixels(shot) < POPUP_MINIMUM // 10, \
        f"something light under the text line with the input method denied ({light_pixels(shot)} points): {png}"
    type_keys(display, None, ["Return"])
    text = wait_content(typed, lambda t: t.endswith("\n"))
    assert text == "nihongo \n", f"foot received {text!r}, not the plain keys\n{c.evidence()}"
    assert stderr(c).count("activating the engine") == before, \
        f"the engine was activated for a window that may not compose\n{c.evidence()}"
    assert "input method: the engine grabbed the keyboard" not in stderr(c) or "composing for no window" in stderr(c)


@pytest.mark.parametrize("engine, keys, expected", [
    ("hangul", "gksrnrdj", "한국어"),
    ("pinyin", "zhongwen", "中文"),
])
def test_korean_and_chinese(carrel, procs, logdir, logs, tmp_path, engine, keys, expected):
    c, display, typed = start(carrel, procs, logdir, logs, tmp_path, engines=(engine,))
    engine_ready(c)
    type_keys(display, keys, ["space", "Return"])
    text = wait_content(typed, lambda t: t.endswith("\n"))
    assert text.startswith(expected), f"foot received {text!r}, not {expected}\n{c.evidence()}"
    assert c.alive(), c.evidence()


@pytest.mark.parametrize("engine, before, after, keys, expected", [
    # mozc shows にほｎ (the n still open: ん or な…) as its preedit; after the
    # kill what was shown is kept as shown, and the rest converts.
    ("mozc", "nihon", "nihongo", ["space", "Return", "Return"], "にほｎ日本語\n"),
    # hangul holds the syllable being typed (한) as its preedit until the next one starts.
    ("hangul", "gks", "rnrdj", ["space", "Return"], "한국어 \n"),
])
def test_engine_killed_mid_composition_keeps_what_it_showed(carrel, procs, logdir, logs, tmp_path,
                                                             engine, before, after, keys, expected):
    """The engine is killed with a composition on screen: what it showed
    the student is committed to foot (keys typed are data), the session goes
    on, and the relaunched engine composes what is typed next."""
    c, display, typed = start(carrel, procs, logdir, logs, tmp_path, engines=(engine,))
    engine_ready(c)
    first = engine_pid(c)
    type_keys(display, before)
    # Time for the engine to answer every key (keys it had not answered
    # would go to its successor instead, composing something else).
    time.sleep(1.5)
    os.kill(first, signal.SIGKILL)
    assert h.wait_until(lambda: engine_pid(c) != first, 10), f"the engine was not relaunched\n{c.evidence()}"
    engine_ready(c)
    assert "session interrupted" not in stderr(c) and "session ended" not in stderr(c), c.evidence()
    # Core decided it (the trace); the text foot receives below proves it.
    assert c.trace(effect="commitPreedit"), f"Core did not commit the dead engine's preedit\n{c.evidence()}"
    type_keys(display, after, keys)
    text = wait_content(typed, lambda t: t.endswith("\n"))
    assert text == expected, f"foot received {text!r}, not {expected!r}\n{c.evidence()}"
    assert c.alive(), c.evidence()


def test_untrusted_client_cannot_bind_text_input_or_input_method(carrel, tmp_path):
    """With an input method running, the public socket's clients see none of
    its globals, and binding their names by guesswork ends the connection."""
    from carrel_harness import probe_bin
    from probe import PROBE_TIMEOUT, ProbeRun
    h.require_tool("wayland-info")
    c = carrel.start(app=None, args=["--policy", str(write_policy(tmp_path, ["mozc"]))])
    assert h.wait_until(lambda: "input method: the engine bound the input method" in stderr(c), 15), c.evidence()
    info = c.client(["wayland-info"])
    assert info.wait_exit() == 0, info.stderr()[-3000:]
    seen = h.wayland_info_interfaces(info.stdout())
    hidden = {"zwp_text_input_manager_v3", "zwp_input_method_manager_v2", "zwp_virtual_keyboard_manager_v1"}
    assert "wl_compositor" in seen, info.stdout()[-3000:]
    assert not seen & hidden, f"an untrusted client saw {sorted(seen & hidden)}"
    client = c.client([str(probe_bin()), "--attack", "bind_privileged", "--attack", "bind_hidden",
                       "--timeout", "1.5"], name="probe")
    run = ProbeRun(client, client.wait_exit(PROBE_TIMEOUT))
    assert run.verdict("bind_privileged") == "blocked", run.evidence()
    assert run.verdict("bind_hidden") == "blocked", run.evidence()
    detail = run.verdicts["bind_hidden"]["detail"]
    for name in hidden:
        assert f"{name} exists but is hidden" in detail, \
            f"the probe did not find and try {name} (it exists while the engine runs):\n{run.evidence()}"
    assert c.alive(), c.evidence()


@pytest.fixture
def hostile_dir():
    """A directory the hostile engine can read and write: carrel runs its
    input method as `nobody` when it runs as root, and pytest's own
    temporary directories are private to root."""
    import shutil
    import tempfile
    from pathlib import Path
    d = Path(tempfile.mkdtemp(prefix="carrel-hostile-im-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def generate_input_method_bindings(outdir):
    """pywayland's scanner on wayland.xml, text-input-v3 and the input-method-v2 XML under protocols/."""
    import sys
    package = outdir / "carrel_im"
    package.mkdir(parents=True)
    xmls = ["/usr/share/wayland/wayland.xml",
            "/usr/share/wayland-protocols/unstable/text-input/text-input-unstable-v3.xml",
            str(h.REPO / "protocols" / "input-method-unstable-v2.xml")]
    r = subprocess.run([sys.executable, "-m", "pywayland.scanner", "-o", str(package), "-i", *xmls],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"pywayland.scanner failed: {r.stderr}"
    (package / "__init__.py").write_text("")
    return outdir


def start_hostile_engine(carrel, procs, logdir, logs, tmp_path, hostile_dir, allow, engine="hostile_input_method.py"):
    """Carrel nested in Xvfb with foot (its shell copies what it receives to
    a file) under `--assessment` allowing `allow`, and a scripted input
    method (`engine`, by default the hostile `hostile_input_method.py`, which
    writes what it did to a report) as the policy's engine. Returns carrel,
    the report, the file and the X display once the session has begun."""
    import sys
    generated = generate_input_method_bindings(hostile_dir / "gen")
    report = hostile_dir / "hostile-report"
    report.write_text("")
    os.chmod(report, 0o666)
    display = start_xvfb(procs, logdir, logs)
    policy = tmp_path / "policy.toml"
    script = h.REPO / "Tests" / "integration" / engine
    policy.write_text(f'[input_method]\ncommand = ["{sys.executable}", "{script}", "{generated}", "{report}"]\n\n'
                      f'[control]\nsocket = "{tmp_path}/control.sock"\n')
    config = tmp_path / "exam.toml"
    config.write_text(f"allow = {allow}\n")
    typed = tmp_path / "typed.txt"
    c = carrel.start(app=["foot", "sh", "-c", 'exec cat > "$0"', str(typed)],
                     args=["--policy", str(policy), f"--assessment={config}"], backend="x11",
                     env={"DISPLAY": display, "LANG": "C.UTF-8"})
    assert h.wait_until(lambda: "session began (on behalf of foot)" in stderr(c), 15), c.evidence()
    return c, report, typed, display


def test_hostile_input_method_reaches_nothing_when_denied(carrel, procs, logdir, logs, tmp_path, hostile_dir):
    """The policy's input method is hostile: it binds twice, grabs twice,
    asks for a popup with no text input and commits oversized, malformed text
    without end. In a session that denies the input method none of it reaches
    the app; plain keys do; a second input method object is told it is
    unavailable; carrel keeps running."""
    c, report, typed, display = start_hostile_engine(carrel, procs, logdir, logs, tmp_path, hostile_dir,
                                                     allow="[]")
    assert h.wait_until(lambda: report.read_text().count("committed") >= 3, 15), \
        f"the hostile input method never got going: {report.read_text()!r}\n{c.evidence()}"
    lines = report.read_text().split()
    assert "second-unavailable" in lines, f"the second input method was not told unavailable: {lines}"
    assert "the engine bound a second input method object" in stderr(c), c.evidence()
    assert "first-unavailable" not in lines and "activate" not in lines, \
        f"the hostile engine was activated for a window that may not compose: {lines}"
    type_keys(display, "abc", ["Return"])
    text = wait_content(typed, lambda t: t.endswith("\n"))
    assert text == "abc\n", f"foot received {text[:200]!r}: not exactly the plain keys\n{c.evidence()}"
    assert c.alive(), c.evidence()


def test_hostile_input_method_is_bounded_when_allowed(carrel, procs, logdir, logs, tmp_path, hostile_dir):
    """The same hostile engine in a session that allows the input method: its
    commits reach the app (it is the policy's engine), each cut to at most
    4000 bytes, malformed preedit cursors and deletions are clamped, and
    carrel keeps running."""
    c, report, typed, display = start_hostile_engine(carrel, procs, logdir, logs, tmp_path, hostile_dir,
                                                     allow='["input_method"]')
    assert h.wait_until(lambda: "activate" in report.read_text().split(), 15), \
        f"the engine was never activated: {report.read_text()!r}\n{c.evidence()}"
    assert h.wait_until(lambda: report.read_text().count("committed") >= 5, 15), c.evidence()
    # Each commit ends with a newline, so the app's `cat` writes it at once.
    text = wait_content(typed, lambda t: "HOSTILE" in t and t.endswith("\n"))
    assert "HOSTILE" in text, f"the allowed engine's commits never arrived: {text[:200]!r}\n{c.evidence()}"
    for piece in text.split("HOSTILE")[1:]:
        assert len(("HOSTILE" + piece).encode()) <= 4000 + 1, "a commit longer than 4000 bytes was relayed"
    assert c.alive(), c.evidence()


def grabs_told_no_repeat(lines):
    """For each keyboard grab in a `repeat_info_input_method.py` report (a
    `grab N` line starts one; a relaunched engine starts again at 1), the
    repeat info it was told last, and whether every key it received came
    after a rate of 0. Returns [(grab, last "RATE DELAY" or None, keys
    received, keys received while the last rate was not 0)]."""
    grabs = []
    for line in lines:
        words = line.split()
        if words[0] == "grab":
            grabs.append([words[1], None, 0, 0])
        elif words[0] == "repeat" and grabs:
            grabs[-1][1] = f"{words[2]} {words[3]}"
        elif words[0] == "key" and grabs:
            grabs[-1][2] += 1
            if grabs[-1][1] is None or grabs[-1][1].split()[0] != "0":
                grabs[-1][3] += 1
    return [tuple(g) for g in grabs]


def test_engine_keyboard_grab_is_told_keys_do_not_repeat(carrel, procs, logdir, logs, tmp_path, hostile_dir):
    """The engine's keyboard grab is told `repeat_info(0, 0)`: no key repeat
    (an engine repeating keys itself, as fcitx5 does, types a key again when
    a loaded machine has it read the release late). wlroots sends the
    keyboard's own rate and delay (25, 600) when a grab is given the
    keyboard; carrel's rate 0 follows before any key. So for the first grab,
    a second grab after the first is released, keys sent to it, and the
    grabs of an engine relaunched after a kill -9: the last repeat info each
    was told is 0 0, and every key came after it."""
    c, report, typed, display = start_hostile_engine(carrel, procs, logdir, logs, tmp_path, hostile_dir,
                                                     allow='["input_method"]',
                                                     engine="repeat_info_input_method.py")
    lines = lambda: report.read_text().splitlines()  # noqa: E731
    assert h.wait_until(lambda: "settled 2" in lines(), 20), \
        f"the engine never settled its second grab: {lines()}\n{c.evidence()}"
    # Keys while the second grab holds the keyboard (the engine does not
    # answer them; carrel passes them on to foot in time).
    type_keys(display, "ab")
    assert h.wait_until(lambda: sum(1 for line in lines() if line.startswith("key ")) >= 4, 10), \
        f"the grab received no keys: {lines()}\n{c.evidence()}"
    first = engine_pid(c)
    os.kill(first, signal.SIGKILL)
    assert h.wait_until(lambda: lines().count("settled 2") >= 2, 30), \
        f"the relaunched engine never settled its second grab: {lines()}\n{c.evidence()}"
    grabs = grabs_told_no_repeat(lines())
    print(f"grabs (number, last repeat info, keys, keys before rate 0): {grabs}; report: {lines()}")
    assert len(grabs) >= 4, f"expected four grabs over two engines: {lines()}"
    for number, last, keys, early in grabs:
        assert last == "0 0", f"grab {number} was last told repeat info {last!r}, not 0 0: {lines()}"
        assert early == 0, f"grab {number} received {early} keys before it was told rate 0: {lines()}"
    assert any(keys for _, _, keys, _ in grabs), f"no grab received a key: {lines()}"
    assert c.alive(), c.evidence()


def test_key_held_through_the_engine_repeats_in_the_app(carrel, procs, logdir, logs, tmp_path, hostile_dir):
    """With the engine's grab told no key repeat, a key held while the
    engine composes is pressed in the engine once: fcitx5 (its protocol
    trace) passes a digit it does not compose under hangul on with one
    press and one release on its virtual keyboard, where, told carrel's
    keyboard's rate, it sent a press and release of its own 25 times a
    second after 600 ms. The app repeats the key from its own wl_keyboard's
    repeat info (rate 25, delay 600): held 1.6 s, foot gets the digit many
    times, and nothing else."""
    trace = hostile_dir / "fcitx5-trace"
    trace.write_text("")
    os.chmod(trace, 0o666)  # the engine runs as nobody when carrel runs as root
    display = start_xvfb(procs, logdir, logs)
    policy = tmp_path / "policy.toml"
    policy.write_text('[input_method]\ncommand = ["/bin/sh", "-c", '
                      f'"WAYLAND_DEBUG=1 exec /usr/bin/fcitx5 \\"$@\\" 2>> {trace}", "sh"]\n'
                      'engines = ["hangul"]\n\n'
                      f'[control]\nsocket = "{tmp_path}/control.sock"\n')
    config = tmp_path / "exam.toml"
    config.write_text('allow = ["input_method"]\n')
    typed = tmp_path / "typed.txt"
    c = carrel.start(app=["foot", "sh", "-c", 'exec cat > "$0"', str(typed)],
                     args=["--policy", str(policy), f"--assessment={config}"], backend="x11",
                     env={"DISPLAY": display, "LANG": "C.UTF-8"})
    assert h.wait_until(lambda: "session began (on behalf of foot)" in stderr(c), 15), c.evidence()
    assert h.wait_until(typed.exists, 10), f"foot never opened its file\n{c.evidence()}"
    # The begin restarts the engine (prediction off); the trace is of that one.
    assert h.wait_until(lambda: "prediction off" in stderr(c), 15), f"the engine was never restarted\n{c.evidence()}"
    engine_ready(c)
    start = trace.stat().st_size
    xdo(display, "mousemove", "400", "300")
    xdo(display, "keydown", "1")
    time.sleep(1.6)
    xdo(display, "keyup", "1")
    type_keys(display, keys=["Return"])
    text = wait_content(typed, lambda t: t.endswith("\n"), timeout=10)
    wire = trace.read_bytes()[start:].decode(errors="replace")
    # Evdev code 2 is the digit 1; the last argument is the key's state
    # (libwayland 1.23+, the newer wlroots' stack, writes `interface#id`).
    to_engine = re.findall(r"zwp_input_method_keyboard_grab_v2[@#]\d+\.key\(\d+, \d+, 2, (\d)\)", wire)
    passed_on = re.findall(r"zwp_virtual_keyboard_v1[@#]\d+\.key\(\d+, 2, (\d)\)", wire)
    print(f"a digit held 1.6 s: to the engine {to_engine}, passed on {passed_on}, reached foot {len(text) - 1} times")
    assert to_engine == ["1", "0"], f"the grab did not get one press and one release: {to_engine}\n{c.evidence()}"
    assert passed_on == ["1", "0"], \
        f"fcitx5 passed the held digit on as {len(passed_on) // 2} presses (its own repeat): {passed_on}\n{c.evidence()}"
    assert text.endswith("\n") and set(text[:-1]) == {"1"}, f"foot received {text!r}\n{c.evidence()}"
    assert len(text) - 1 >= 4, f"the held digit was not repeated by the app: {text!r}\n{c.evidence()}"
    assert c.alive(), c.evidence()


@pytest.mark.parametrize("prediction", [True, False])
def test_pinyin_prediction_follows_predictive_text(carrel, procs, logdir, logs, tmp_path, artifacts_dir, prediction):
    """Pinyin shows words predicted after a commit only when the session
    allows predictive_text: denied, carrel restarts the engine with its
    prediction off when the session begins."""
    allow = ("input_method", "predictive_text") if prediction else ("input_method",)
    c, display, typed = start(carrel, procs, logdir, logs, tmp_path, engines=("pinyin",), allow=allow)
    if not prediction:
        restart = "restarting the engine with its own prediction off"
        grabbed = "input method: the engine grabbed the keyboard"
        assert h.wait_until(lambda: restart in stderr(c), 15), c.evidence()
        assert h.wait_until(lambda: grabbed in stderr(c)[stderr(c).index(restart):], 15), \
            f"the restarted engine never grabbed the keyboard\n{c.evidence()}"
        report_restart(c)
    else:
        engine_ready(c)
        assert "restarting the engine" not in stderr(c), c.evidence()
    type_keys(display, "zhongwen", ["space"])
    # The candidates for "zhongwen" close when Space commits 中文; what shows
    # after that is the prediction (or nothing).
    time.sleep(1.5)
    last = [None]

    def popup_shown():
        last[0] = screenshot(display)
        return light_pixels(last[0]) >= POPUP_MINIMUM

    # Allowed, the prediction is waited for as long as a loaded machine may
    # take to draw it; denied, 2 s more of nothing is the answer.
    shown = bool(h.wait_until(popup_shown, 10 if prediction else 2, interval=0.25))
    png = save(last[0], artifacts_dir, f"input-method-pinyin-prediction-{'on' if prediction else 'off'}")
    assert shown == prediction, \
        f"prediction {'allowed' if prediction else 'denied'}: popup after the commit {'missing' if prediction else 'shown'} " \
        f"({light_pixels(last[0])} light points); screenshot {png}\n{c.evidence()}"
    type_keys(display, None, ["Escape", "Return"])
    text = wait_content(typed, lambda t: t.endswith("\n"))
    assert text.startswith("中文"), f"foot received {text!r}\n{c.evidence()}"


def changed_outside(before, after, box) -> int:
    """Points (every second one) that differ between two screenshots outside
    `box`: on the demo's question screen only a candidate popup changes there."""
    x0, y0, x1, y1 = box
    count = 0
    for y, (a, b) in enumerate(zip(before.rgb_rows(), after.rgb_rows())):
        if y % 2 or a == b:
            continue
        for x in range(0, len(a) // 3, 2):
            if (x0 <= x <= x1 and y0 <= y <= y1) or a[3 * x:3 * x + 3] == b[3 * x:3 * x + 3]:
                continue
            count += 1
    return count


def test_demo_exam_free_text_through_mozc(carrel, procs, logdir, logs, tmp_path, artifacts_dir):
    """The demo exam's own text-input-v3 field, the session allowing the
    input method: romaji typed with real keys become 日本語 through mozc, the
    candidates show while composing, the kanji are drawn in the field, and
    the answer is logged when Enter hands in."""
    from x_display import ink_in
    c, display, out, box, empty = start_demo(carrel, procs, logdir, logs, tmp_path, True)
    restarted_engine_composes_for_demo(c)
    empty_ink = ink_in(empty, box)
    type_keys(display, "nihongo")
    last = [None]

    def popup_shown():
        last[0] = screenshot(display)
        return changed_outside(empty, last[0], box) >= 1500

    shown = h.wait_until(popup_shown, 8, interval=0.25)
    png = save(last[0], artifacts_dir, "demo-mozc-composing")
    assert shown, f"no candidate popup while composing ({changed_outside(empty, last[0], box)} points changed " \
                  f"outside the field); screenshot {png}\n{c.evidence()}"
    type_keys(display, None, ["space", "Return"])

    def kanji_drawn():
        last[0] = screenshot(display)
        return ink_in(last[0], box) > empty_ink + 300 and changed_outside(empty, last[0], box) < 1500

    drawn = h.wait_until(kanji_drawn, 8, interval=0.25)
    png = save(last[0], artifacts_dir, "demo-mozc-committed")
    print(f"field ink {empty_ink} empty, {ink_in(last[0], box)} after the commit; "
          f"{changed_outside(empty, last[0], box)} points changed outside it")
    assert drawn, f"the field {box} did not show the committed text with the popup gone: screenshot {png}\n{c.evidence()}"
    assert "answer 5:" not in out(), "the answer is logged when the question is left, not before"
    type_keys(display, None, ["Return"])
    status = c.wait_exit()
    lines = out().splitlines()
    assert "carrel-demo-exam: answer 5: 日本語" in lines, f"{lines}\n{c.evidence()}"
    assert status == 0, f"carrel exited {status}\n{c.evidence()}"


@pytest.mark.parametrize("engine, keys, expected", [
    ("hangul", "gksrnrdj", "한국어"),
    ("pinyin", "zhongwen", "中文"),
])
def test_demo_exam_free_text_korean_and_chinese(carrel, procs, logdir, logs, tmp_path, engine, keys, expected):
    """Hangul and pinyin through the demo's field: Space ends the
    composition, Enter hands in, the log holds the answer."""
    c, display, out, box, empty = start_demo(carrel, procs, logdir, logs, tmp_path, True, engines=(engine,))
    restarted_engine_composes_for_demo(c)
    type_keys(display, keys, ["space", "Return"])
    status = c.wait_exit()
    answers = [line for line in out().splitlines() if line.startswith("carrel-demo-exam: answer 5: ")]
    assert answers and answers[0].startswith(f"carrel-demo-exam: answer 5: {expected}"), \
        f"{answers}, not {expected}\n{c.evidence()}"
    assert status == 0, f"carrel exited {status}\n{c.evidence()}"


def test_demo_exam_free_text_denied_input_method_gets_romaji(carrel, procs, logdir, logs, tmp_path, artifacts_dir):
    """The same keys with the session denying input_method: the field gets
    the plain letters, no popup opens, the engine composes for nobody."""
    c, display, out, box, empty = start_demo(carrel, procs, logdir, logs, tmp_path, False)
    assert h.wait_until(lambda: "input method: the engine bound the input method" in stderr(c), 15), c.evidence()
    before = stderr(c).count("activating the engine")
    type_keys(display, "nihongo", ["space"])
    time.sleep(1.0)
    shot = screenshot(display)
    png = save(shot, artifacts_dir, "demo-input-method-denied")
    assert changed_outside(empty, shot, box) < 300, \
        f"something changed outside the field with the input method denied " \
        f"({changed_outside(empty, shot, box)} points): {png}"
    assert stderr(c).count("activating the engine") == before, \
        f"the engine was activated for a window that may not compose\n{c.evidence()}"
    type_keys(display, None, ["Return"])
    status = c.wait_exit()
    lines = out().splitlines()
    assert "carrel-demo-exam: answer 5: nihongo " in lines, f"{lines}\n{c.evidence()}"
    assert status == 0, f"carrel exited {status}\n{c.evidence()}"


def test_engine_ignoring_sigterm_is_killed_without_stalling_the_session(carrel, procs, logdir, logs, tmp_path):
    """The session's begin restarts the engine (its prediction setting
    changes); this engine ignores SIGTERM. Carrel does not wait on it: the
    session begins, clients are answered, and a second later its process
    group is killed, reaped through SIGCHLD and the replacement launched."""
    display = start_xvfb(procs, logdir, logs)
    policy = tmp_path / "policy.toml"
    policy.write_text('[input_method]\ncommand = ["/bin/sh", "-c", "trap \'\' TERM; while :; do sleep 1; done"]\n'
                      'engines = ["mozc"]\n\n'
                      f'[control]\nsocket = "{tmp_path}/control.sock"\n')
    config = tmp_path / "exam.toml"
    config.write_text('allow = ["input_method"]\n')
    typed = tmp_path / "typed.txt"
    c = carrel.start(app=["foot", "sh", "-c", 'exec cat > "$0"', str(typed)],
                     args=["--policy", str(policy), f"--assessment={config}"], backend="x11",
                     env={"DISPLAY": display, "LANG": "C.UTF-8"})
    stopping = re.compile(r"input method: stopping pid (\d+); the new engine starts when it has ended")
    assert h.wait_until(lambda: stopping.search(stderr(c)), 15), f"the engine was never restarted\n{c.evidence()}"
    old = int(stopping.search(stderr(c)).group(1))
    # A client's roundtrip while the old engine still runs, SIGTERM ignored
    # (wayland-info: required, not optional; packages.sh installs wayland-utils).
    info = c.client([h.require_tool("wayland-info")])
    assert info.wait_exit() == 0, info.stderr()[-3000:]
    answered_early = "killing it" not in stderr(c)
    killed = re.compile(rf"input method: pid {old} did not end within \S+ of SIGTERM; killing it")
    assert h.wait_until(lambda: killed.search(stderr(c)), 10), \
        f"the engine ignoring SIGTERM was never killed\n{c.evidence()}"
    replaced = f"input method: pid {old} ended; launching its replacement"
    assert h.wait_until(lambda: replaced in stderr(c), 10), f"the killed engine was never reaped\n{c.evidence()}"
    assert h.wait_until(lambda: engine_pid(c) != old, 5), f"no replacement was launched\n{c.evidence()}"
    log = stderr(c)
    assert killed.search(log).start() < log.index(replaced) < log.rindex("launched input method"), c.evidence()
    assert h.wait_until(lambda: "session began (on behalf of foot)" in stderr(c), 15), c.evidence()
    log = stderr(c)
    print(f"session began {'before' if log.index('session began') < killed.search(log).start() else 'after'} "
          f"the stubborn engine was killed; a client was answered before the kill: {answered_early}")
    assert "session interrupted" not in log and "session ended" not in log, c.evidence()
    assert c.alive(), c.evidence()


DIGITS = "0123456789" * 9  # no key of these composes, so through the engine or plain each types itself


def busy_cores(procs, count=2):
    """Another process keeping the machine busy: a shell spinning on each core."""
    for index in range(count):
        procs.spawn(f"busy-{index}", ["sh", "-c", "while :; do :; done"], env=h.clean_env())


@pytest.mark.parametrize("client", ["foot", "gtk4"])
def test_typing_through_begin_restart_and_kill_is_never_lost(carrel, procs, logdir, logs, tmp_path, client):
    """Typing without pause, on a machine kept busy by two spinning shells:
    from the moment the session began (which restarts hangul's engine to
    switch its prediction off) through a kill -9 of the engine and its
    relaunch. Keys typed while no engine holds the grab are held by carrel
    and replayed to the engine when it is back (or given to the app plain
    after 2 s): the app receives every key exactly once, in order.
    Afterwards the relaunched engine composes Korean again.

    Twice: into foot, and into a GTK 4 entry. The relaunched engine works
    through its backlog and the first syllables at once, so its commits
    reach the app while the app commits state of its own (foot a new cursor
    rectangle for the preedit it just drew, GTK its surrounding text after
    each change): the `done` carrying a syllable then has a serial behind
    the app's commits. The protocol says to apply it all the same; GTK
    does, foot 1.13 drops it, syllable included (README, "Not done yet",
    from a protocol trace), which a slow build (AddressSanitizer) makes
    likely: there only the GTK run is made."""
    if client == "gtk4" and not gtk4_available():
        pytest.skip("needs /usr/bin/python3 with python3-gi and gir1.2-gtk-4.0 (meson-helpers/packages.sh installs them)")
    busy_cores(procs)
    c, display, typed = start(carrel, procs, logdir, logs, tmp_path, engines=("hangul",), client=client)
    xdo(display, "mousemove", "400", "300")
    typing = procs.spawn("xdotool-type", ["xdotool", "type", "--delay", "40", DIGITS],
                         env=h.clean_env({"DISPLAY": display}))
    # A third of the way through, the engine dies without a word.
    time.sleep(1.2)
    assert h.wait_until(lambda: "input method: the engine grabbed the keyboard" in
                        stderr(c)[stderr(c).find("restarting the engine"):], 15), \
        f"the restarted engine never grabbed the keyboard\n{c.evidence()}"
    killed = engine_pid(c)
    os.kill(killed, signal.SIGKILL)
    typing.wait(timeout=30)
    # The relaunched engine composes; Return hands the line to foot's shell
    # (its terminal passes whole lines), or has the entry write it.
    assert h.wait_until(lambda: "input method: the engine grabbed the keyboard" in
                        stderr(c)[stderr(c).rfind("launched input method"):], 15), c.evidence()
    type_keys(display, "gksrnrdj", ["space", "Return"])
    text = wait_content(typed, lambda t: t.endswith("\n"), timeout=10)
    log = stderr(c)
    held = log.count("input method: the engine is away; holding keys")
    to_engine = len(re.findall(r"input method: the engine took the keyboard; \d+ held keys go to the input method", log))
    plain = len(re.findall(r"held keys go to #\d+ as plain keys", log))
    unanswered = len(re.findall(r"input method: \d+ keys the engine had not answered", log))
    print(f"holds: {held}; let go to the engine {to_engine} times, to the app plain {plain} times; "
          f"keys a dead engine had not answered passed on {unanswered} times")
    if client == "foot":
        assert text == DIGITS + "한국어 \n", \
            f"foot received {len(text)} characters, not the {len(DIGITS)} digits and 한국어 typed: {text!r}\n{c.evidence()}"
    else:
        # GTK applies a text input's done as it reads it but queues keys for
        # its main loop, so a syllable committed right behind digits the
        # engine passed on can land before them in the entry (seen in a
        # protocol trace: the keys were read first). Each kind comes once, in
        # order, and the space and Return, keys too, after every digit.
        syllables = "".join(ch for ch in text if "\uac00" <= ch <= "\ud7a3")
        keys = "".join(ch for ch in text if not "\uac00" <= ch <= "\ud7a3")
        assert syllables == "한국어" and keys == DIGITS + " \n", \
            f"the entry received {len(text)} characters, not the {len(DIGITS)} digits and 한국어 typed: {text!r}\n{c.evidence()}"
    assert engine_pid(c) != killed, f"the killed engine was not relaunched\n{c.evidence()}"
    assert held >= 1, f"no key was ever held while the engine was away\n{c.evidence()}"
    assert "session interrupted" not in stderr(c) and "session ended" not in stderr(c), c.evidence()
    assert c.alive(), c.evidence()
