"""libcarrel-assessment (clients/c) and its Python binding against the real binary.

The library is used as a vendor would use it: installed (test-all installs it
into a prefix with meson-helpers/build-client-library; CARREL_CLIENT_PREFIX
names it), the C and C++ examples built from the installed pkg-config files
alone, the Python examples importing the installed carrel_assessment. Each
exam is Carrel's app, on its own toolkit's connection: GTK 4 from C and from
Python, Qt 6 from C++ and PyQt6, each locking its own window headless,
reacting to events, and ending; a second exam refused while one is locked; an
administrator's interruption hiding the content and ending the session; each
exam seen through Xvfb's screenshots as the only window while its session
holds; misuse refused by the library without closing the connection.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from audit_log import audit_story
from carrel_clients import Ctl, lines

EXAMPLES = h.REPO / "examples"
MISUSE_CLIENT = Path(__file__).resolve().parent / "toolkit_misuse_client.py"
BUILD_TIMEOUT = 120.0


class Installed:
    """Where meson-helpers/build-client-library installed the library."""

    def __init__(self, prefix: Path) -> None:
        self.prefix = prefix
        libraries = sorted(prefix.glob("lib*/**/libcarrel-assessment.so.1")) + \
            sorted(prefix.glob("lib*/libcarrel-assessment.so.1"))
        pcs = sorted(prefix.glob("**/pkgconfig/carrel-assessment-client.pc"))
        modules = sorted(prefix.glob("**/carrel_assessment/__init__.py"))
        missing = [what for what, found in (("libcarrel-assessment.so.1", libraries),
                                            ("carrel-assessment-client.pc", pcs),
                                            ("carrel_assessment/__init__.py", modules)) if not found]
        if missing:
            pytest.fail(f"{', '.join(missing)} not installed under {prefix}; run "
                        f"meson-helpers/build-client-library {prefix} (test-all does)")
        self.libdir = libraries[0].parent
        self.pkgconfig_dir = pcs[0].parent
        self.python_dir = modules[0].parent.parent

    def env(self) -> list[str]:
        """`env` arguments an exam needs to find the installed library and module."""
        return [f"LD_LIBRARY_PATH={self.libdir}", f"PYTHONPATH={self.python_dir}"]


@pytest.fixture(scope="session")
def installed() -> Installed:
    default = h.REPO / ".build-client" / "prefix"
    return Installed(Path(os.environ.get("CARREL_CLIENT_PREFIX", default)))


def pkg_config_flags(installed: Installed, env: dict, toolkit: str) -> list[str]:
    """The installed library's flags and `toolkit`'s, from pkg-config: the
    library's prefix as found (the suite may run from a copy of the installed
    tree, as nobody), the toolkit's as Debian installed it."""
    pkg_config = h.require_tool("pkg-config")
    flags = []
    for package, arguments in (("carrel-assessment-client",
                                [f"--define-variable=prefix={installed.prefix}", "--cflags", "--libs"]),
                               (toolkit, ["--cflags", "--libs"])):
        found = subprocess.run([pkg_config, *arguments, package], env=env,
                               capture_output=True, text=True, timeout=30)
        assert found.returncode == 0, f"pkg-config could not resolve {package} (its -dev package installed? " \
                                      f"see meson-helpers/packages.sh): {found.stderr}"
        flags += found.stdout.split()
    return flags


def build_example(compiler: str, source: str, flags: list[str], env: dict, out: Path) -> Path:
    build = subprocess.run([compiler, "-Wall", "-Wextra", "-Werror", "-o", str(out), str(EXAMPLES / source), *flags],
                           env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert build.returncode == 0, f"{source} did not build against the installed library:\n{build.stderr}"
    out.parent.chmod(0o755)  # the suite also runs as nobody
    return out


@pytest.fixture(scope="session")
def gtk4_exam(installed, tmp_path_factory) -> Path:
    """examples/gtk4-exam.c built from the installed pkg-config files alone."""
    cc = h.require_tool("cc")
    env = h.clean_env({"PKG_CONFIG_PATH": str(installed.pkgconfig_dir)})
    flags = ["-std=c11", *pkg_config_flags(installed, env, "gtk4")]
    return build_example(cc, "gtk4-exam.c", flags, env, tmp_path_factory.mktemp("gtk4-exam") / "gtk4-exam")


@pytest.fixture(scope="session")
def qt6_exam(installed, tmp_path_factory) -> Path:
    """examples/qt6-exam.cpp built as its comment says: the installed
    pkg-config files, Qt6Widgets', and Qt's platform headers
    (qt6-base-private-dev) beside Qt6Gui's include directory."""
    cxx, pkg_config = h.require_tool("c++"), h.require_tool("pkg-config")
    env = h.clean_env({"PKG_CONFIG_PATH": str(installed.pkgconfig_dir)})
    flags = ["-std=c++17", "-fPIC", *pkg_config_flags(installed, env, "Qt6Widgets")]
    where = {}
    for variable in ("--variable=includedir", "--modversion"):
        found = subprocess.run([pkg_config, variable, "Qt6Gui"], env=env, capture_output=True, text=True, timeout=30)
        assert found.returncode == 0, f"pkg-config {variable} Qt6Gui: {found.stderr} (qt6-base-dev installed?)"
        where[variable] = found.stdout.strip()
    private = Path(where["--variable=includedir"]) / "QtGui" / where["--modversion"] / "QtGui"
    assert (private / "qpa" / "qplatformnativeinterface.h").exists(), \
        f"Qt's platform headers are not under {private}; install qt6-base-private-dev"
    flags.append(f"-I{private}")
    return build_example(cxx, "qt6-exam.cpp", flags, env, tmp_path_factory.mktemp("qt6-exam") / "qt6-exam")


def run_exam(carrel, app: list, name: str) -> tuple[h.Carrel, list[str]]:
    c = carrel.start(app=app, wait_ready=False)
    status = c.wait_exit()
    got = lines(c.stdout_path, name)
    assert status == 0, f"{name} exited {status}; its lines {got}\n{c.evidence()}"
    return c, got


def test_c_gtk4_exam_locks_its_window_and_ends(carrel, installed, gtk4_exam):
    c, got = run_exam(carrel, ["env", "GDK_BACKEND=wayland", *installed.env(), str(gtk4_exam), "--hold", "1"],
                     "gtk4-exam")
    assert got == ["locking", "event began", "event ended"], f"events {got}\n{c.evidence()}"
    assert audit_story(c) == ["begin", "began", "ended"], f"audit {audit_story(c)}\n{c.evidence()}"


def test_the_c_exams_configuration_reaches_carrel_and_its_time_limit_interrupts_it(carrel, installed, gtk4_exam):
    c, got = run_exam(carrel, ["env", "GDK_BACKEND=wayland", *installed.env(), str(gtk4_exam), "--time-limit", "1",
                               "--allow", "spell_check", "--allow", "input_method"], "gtk4-exam")
    assert len(got) == 5 and got[:2] == ["locking", "event began"] \
        and got[2].startswith("event interrupted time_limit") and got[3:] == ["content hidden", "event ended"], \
        f"events {got}\n{c.evidence()}"
    begin = [json.loads(line) for line in c.audit_log.read_text().splitlines() if '"event":"begin"' in line]
    assert begin and "allow=[spell_check,input_method]" in begin[0]["detail"] \
        and "time_limit=1" in begin[0]["detail"], f"what Carrel recorded of the configuration: {begin}"
    assert audit_story(c) == ["begin", "began", "interrupted time_limit", "ended"], f"audit {audit_story(c)}"


def test_a_second_exam_is_refused_and_an_interrupted_one_hides_its_content_and_ends(
        carrel, installed, gtk4_exam, carrelctl, control_dir, logdir, logs):
    """Two C exams under one carrel: the second gets failed(already_active),
    then an administrator interrupts the first, which hides and ends."""
    first, second, second_status = logdir / "first.out", logdir / "second.out", logdir / "second.status"
    # The first holds until interrupted; the second starts once the first began (bounded).
    script = ('"$0" --hold 0 > "$1" 2>&1 & first=$!; i=0; '
              'until grep -q "event began" "$1"; do i=$((i+1)); [ $i -gt 150 ] && break; sleep 0.1; done; '
              '"$0" > "$2" 2>&1; echo $? > "$3"; wait $first')
    socket = control_dir / "control.sock"
    c = carrel.start(app=["env", "GDK_BACKEND=wayland", *installed.env(), "sh", "-c", script, str(gtk4_exam),
                          str(first), str(second), str(second_status)],
                     args=["--control-socket", str(socket)], wait_ready=False)
    assert h.wait_until(second_status.exists, h.CLIENT_TIMEOUT), \
        f"the second exam never finished; first: {lines(first, 'gtk4-exam')}\n{c.evidence()}"
    assert second_status.read_text().strip() == "2", second.read_text()
    assert lines(second, "gtk4-exam")[-1].startswith("event failed already_active"), second.read_text()
    assert "event began" in lines(first, "gtk4-exam"), first.read_text()
    ctl = Ctl(carrelctl, socket, logdir, logs)
    r = ctl.run("end", "--reason", "fire alarm")
    assert r.returncode == 0, f"carrelctl end: {r.stderr}"
    assert c.wait_exit() == 0, c.evidence()
    assert lines(first, "gtk4-exam") == ["locking", "event began", "event interrupted administrative fire alarm",
                                         "content hidden", "event ended"], first.read_text()
    assert audit_story(c)[:2] == ["begin", "began"] and "interrupted administrative" in audit_story(c) \
        and audit_story(c)[-1] == "ended", f"audit {audit_story(c)}"


ORANGE = (0xff, 0x88, 0x00)


def orange_pixels(image, enough: int = 0) -> int:
    """Pixels of exactly ORANGE (carrel-paint's fill, unblended); stops at `enough`."""
    needle, count = bytes(ORANGE), 0
    for row in image.rgb_rows():
        at = row.find(needle)
        while at >= 0:
            count += at % 3 == 0  # a whole pixel, not bytes across two
            if enough and count >= enough:
                return count
            at = row.find(needle, at + 1)
    return count


# Each example exam: the name its lines begin with, and its command (after
# `env` and the installed library's variables) from the built examples.
EXAMS = {
    "c-gtk4": ("gtk4-exam", lambda request: ["GDK_BACKEND=wayland", str(request.getfixturevalue("gtk4_exam"))]),
    "cpp-qt6": ("qt6-exam", lambda request: ["QT_QPA_PLATFORM=wayland", str(request.getfixturevalue("qt6_exam"))]),
    "python-gtk4": ("gtk4_exam.py", lambda request: ["GDK_BACKEND=wayland", sys.executable,
                                                     str(EXAMPLES / "gtk4_exam.py")]),
    "pyqt6": ("qt6_exam.py", lambda request: ["QT_QPA_PLATFORM=wayland", sys.executable,
                                              str(EXAMPLES / "qt6_exam.py")]),
}


@pytest.mark.parametrize("exam", sorted(EXAMS))
def test_as_the_x_server_shows_it_only_the_exam_is_seen_while_its_session_holds(
        exam, request, carrel, installed, paint_bin, carrelctl, control_dir, procs, logdir, logs, artifacts_dir):
    """Carrel nested in Xvfb: an untrusted orange window is seen before the
    session, never while the exam's session holds (the exam's own window is
    what shows), and the exam hides its content and ends when an
    administrator interrupts it; the audit log records that story."""
    from x_display import save, screenshot, start_xvfb

    h.require_tool("Xvfb")  # start_xvfb alone would skip; this suite's tools are required
    name, command = EXAMS[exam]
    argv = ["env", *installed.env(), *command(request)]
    display = start_xvfb(procs, logdir, logs)
    go, out = logdir / "go", logdir / "exam.out"
    socket = control_dir / "control.sock"
    # The exam starts once the test has seen the untrusted window (bounded).
    script = ('go="$0"; out="$1"; shift; i=0; until [ -e "$go" ]; do i=$((i+1)); [ $i -gt 200 ] && exit 3; '
              'sleep 0.05; done; exec "$@" --hold 0 > "$out" 2>&1')
    c = carrel.start(app=["sh", "-c", script, str(go), str(out), *argv],
                     backend="x11", env={"DISPLAY": display}, args=["--control-socket", str(socket)])
    c.client([str(paint_bin), "--color", "%02x%02x%02x" % ORANGE], name="untrusted-orange")
    seen = h.wait_until(lambda: orange_pixels(screenshot(display), enough=1000) >= 1000, h.CLIENT_TIMEOUT,
                        interval=0.25)
    assert seen, f"the untrusted orange window never showed before the session\n{c.evidence()}"
    go.touch()
    assert h.wait_until(lambda: "event began" in lines(out, name), h.CLIENT_TIMEOUT), \
        f"{name} never began: {lines(out, name)}\n{out.read_text() if out.exists() else ''}\n{c.evidence()}"
    for shot in range(6):
        image = screenshot(display)
        leaked = orange_pixels(image)
        centre = image.pixel(image.width // 3, image.height // 3)
        if leaked or sum(centre) < 3 * 160:
            png = save(image, artifacts_dir, f"{exam}-exam-session")
            pytest.fail(f"screenshot {shot} while {name}'s session holds: {leaked} orange pixels, the exam's "
                        f"window at the centre shows {centre} (expected the toolkit's light background); {png}")
        time.sleep(0.2)
    r = Ctl(carrelctl, socket, logdir, logs).run("end", "--reason", "fire alarm")
    assert r.returncode == 0, f"carrelctl end: {r.stderr}"
    assert c.wait_exit() == 0, c.evidence()
    assert lines(out, name)[-3:] == ["event interrupted administrative fire alarm", "content hidden",
                                     "event ended"], out.read_text()
    assert audit_story(c) == ["begin", "began", "interrupted administrative", "ended"], \
        f"audit {audit_story(c)}\n{c.evidence()}"


def test_python_gtk4_exam_locks_its_window_and_ends(carrel, installed):
    c, got = run_exam(carrel, ["env", "GDK_BACKEND=wayland", *installed.env(), sys.executable,
                               str(EXAMPLES / "gtk4_exam.py"), "--hold", "1"], "gtk4_exam.py")
    assert got == ["locking", "event began", "event ended"], f"events {got}\n{c.evidence()}"
    assert audit_story(c) == ["begin", "began", "ended"], f"audit {audit_story(c)}\n{c.evidence()}"


@pytest.mark.parametrize("exam", ["cpp-qt6", "pyqt6"])
def test_qt6_exam_locks_its_window_hides_when_interrupted_and_ends(
        exam, request, carrel, installed, carrelctl, control_dir, logdir, logs):
    name, command = EXAMS[exam]
    socket = control_dir / "control.sock"
    c = carrel.start(app=["env", *installed.env(), *command(request), "--hold", "0"],
                     args=["--control-socket", str(socket)], wait_ready=False)
    assert h.wait_until(lambda: "event began" in lines(c.stdout_path, name), h.CLIENT_TIMEOUT), \
        f"the Qt exam never began: {lines(c.stdout_path, name)}\n{c.evidence()}"
    r = Ctl(carrelctl, socket, logdir, logs).run("end", "--reason", "fire alarm")
    assert r.returncode == 0, f"carrelctl end: {r.stderr}"
    assert c.wait_exit() == 0, c.evidence()
    got = lines(c.stdout_path, name)
    assert got == ["locking", "event began", "event interrupted administrative fire alarm", "content hidden",
                   "event ended"], f"events {got}\n{c.evidence()}"


def test_misuse_is_refused_by_the_library_and_the_connection_still_locks(carrel, installed):
    c, _ = run_exam(carrel, ["env", "GDK_BACKEND=wayland", *installed.env(), sys.executable, str(MISUSE_CLIENT)],
                    "unused")
    out = c.stdout_path.read_text(errors="replace")
    checks = [line for line in out.splitlines() if line.startswith("check ")]
    assert checks and all(line.endswith(" ok") for line in checks), out
    assert len(checks) == 9, f"expected 9 checks, got {checks}"
    assert "third ended ok" in out and "done" in out, out
    assert "protocol error" not in c.stderr_path.read_text(errors="replace").lower(), c.evidence()
