"""Fixtures for Carrel's integration and visual tests (helpers: carrel_harness.py,
carrel_clients.py). A fixture more than one test file uses lives here, never
imported from another test file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import assessment_client
import carrel_harness as h
import skip_policy
from carrel_clients import Ctl, WithControlSocket, World, ctl_bin

# The helper modules hold code that several test files share; pytest rewrites
# their asserts as it does a test file's, so a failure in one explains itself
# the same way. (Registered before any test file imports them.)
pytest.register_assert_rewrite("assessment_protocol", "audit_log", "carrel_log", "input_method", "media_bus", "netns",
                               "privileged_setup", "probe", "x_display")

from media_bus import start_session_bus  # noqa: E402 (after the rewrite is registered)
from privileged_setup import Machine  # noqa: E402

# Backstop: no test may run longer than this, whatever a bounded wait missed.
TEST_BUDGET_SECONDS = int(os.environ.get("CARREL_TEST_BUDGET", "45"))


def pytest_configure(config):
    # Under CI a skip is a failure unless its reason is on the allow-list (skip_policy.py).
    if not config.pluginmanager.has_plugin("carrel-skip-policy"):
        config.pluginmanager.register(skip_policy, "carrel-skip-policy")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for title, path in getattr(item, "carrel_logs", []):
            if Path(path).exists():
                report.sections.append((f"{title} [{path}]", h.tail(Path(path))))


@pytest.fixture(autouse=True)
def _time_budget():
    def expire(signum, frame):
        raise TimeoutError(f"test exceeded its {TEST_BUDGET_SECONDS}s budget "
                           "(a wait in the test or harness was not bounded)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TEST_BUDGET_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _require_executable(path: Path, what: str, var: str) -> Path:
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{what} not found or not executable at {path} (set {var} or run "
                    "`swift build` first); as another user, every directory up to it must "
                    "be searchable by that user")
    return path


@pytest.fixture(scope="session")
def carrel_bin() -> Path:
    return _require_executable(h.carrel_bin(), "carrel binary", "CARREL_BIN")


@pytest.fixture(scope="session")
def paint_bin() -> Path:
    return _require_executable(h.paint_bin(), "carrel-paint binary", "CARREL_PAINT_BIN")


@pytest.fixture
def logs(request) -> list:
    """(title, path) pairs whose contents are attached to the report if the test fails."""
    request.node.carrel_logs = []
    return request.node.carrel_logs


@pytest.fixture
def procs(request):
    tracker = h.ProcessTracker()
    yield tracker
    notes = tracker.end_all()
    for note in notes:
        print(f"teardown: {note}")


@pytest.fixture
def logdir(tmp_path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    return d


@pytest.fixture
def carrel(carrel_bin, procs, logdir, logs):
    """Starts carrel processes: `carrel.start(app=[...], ...)` -> harness.Carrel."""
    factory = h.CarrelFactory(procs, logdir, logs)
    yield factory
    for note in procs.end_all():
        print(f"teardown: {note}")
    reports = factory.sanitizer_reports()
    factory.cleanup()
    # Under AddressSanitizer or ThreadSanitizer (test-all's sanitizer steps) a
    # memory error, leak or race report in any carrel's stderr fails the test,
    # whatever else it checked.
    assert not reports, "a sanitizer reported:\n" + "\n\n".join(reports)


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    wanted = Path(os.environ.get("CARREL_ARTIFACTS", "/tmp/carrel-artifacts"))
    for candidate in (wanted, Path(f"{wanted}-{os.geteuid()}")):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(candidate, os.W_OK | os.X_OK):
            return candidate
    pytest.fail(f"cannot write artifacts to {wanted} (set CARREL_ARTIFACTS)")


@pytest.fixture(scope="session")
def demo() -> Path:
    return _require_executable(h.demo_bin(), "carrel-demo-exam", "CARREL_DEMO_BIN")


@pytest.fixture(scope="session")
def probe() -> Path:
    return _require_executable(h.probe_bin(), "carrel-probe", "CARREL_PROBE_BIN")


@pytest.fixture(scope="session")
def carrelctl() -> Path:
    return _require_executable(ctl_bin(), "carrelctl", "CARREL_CTL_BIN")


# The pywayland client of carrel-assessment-v1 (assessment_client.py).

VENV_PYTHON = Path("/opt/carrel-test-venv/bin/python")


def _imports_pywayland(python: str) -> bool:
    try:
        r = subprocess.run([python, "-c", "import pywayland.scanner, pywayland.client"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


@pytest.fixture(scope="session")
def client_python() -> str:
    """A Python that has pywayland: CARREL_PYWAYLAND_PYTHON, this one, or the test venv."""
    candidates = [os.environ.get("CARREL_PYWAYLAND_PYTHON"), sys.executable, str(VENV_PYTHON)]
    for python in filter(None, candidates):
        if _imports_pywayland(python):
            return python
    pytest.fail("no Python with pywayland found (tried CARREL_PYWAYLAND_PYTHON, "
                f"{sys.executable}, {VENV_PYTHON}); install it: "
                f"python3 -m venv --system-site-packages {VENV_PYTHON.parent.parent} && "
                f"{VENV_PYTHON.parent}/pip install pywayland")


@pytest.fixture(scope="session")
def pywayland_protocols(client_python, tmp_path_factory) -> Path:
    """The XML turned into Python by pywayland's scanner, once per test session."""
    return assessment_client.generate_protocols(tmp_path_factory.mktemp("pywayland-protocols"),
                                                python=client_python)


@pytest.fixture
def world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    return World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols)


@pytest.fixture
def x11_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    """carrel on the x11 backend under Xvfb: a seat with a keyboard, for wl-clipboard."""
    h.require_tool("Xvfb")  # needed here, so missing it fails rather than skips
    display = h.start_xvfb(procs, logdir, logs)
    return World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                 backend="x11", env={"DISPLAY": display})


@pytest.fixture
def exam_python(tmp_path, client_python) -> Path:
    """A copy of the interpreter at a path of our own: an executable an allowlist can name."""
    path = (tmp_path / "bin" / "exam-python").resolve()
    path.parent.mkdir()
    shutil.copy2(Path(client_python).resolve(), path)
    return path


# carrelctl and the control socket.


@pytest.fixture
def control_dir():
    """A short private directory (sun_path is 108 bytes) for the control socket."""
    base = Path(tempfile.mkdtemp(prefix="carrel-ctl-", dir="/tmp"))
    os.chmod(base, 0o700)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def ctl_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              control_dir, carrelctl):
    """A World whose carrel serves the control socket, and a Ctl for that socket."""
    path = control_dir / "ctl" / "control.sock"
    world = World(WithControlSocket(carrel, path), procs, logdir, logs, tmp_path, client_python,
                  pywayland_protocols)
    return world, Ctl(carrelctl, path, logdir, logs)


@pytest.fixture
def session_bus(procs):
    """A private D-Bus session bus for the media provider's tests (media_bus.py)."""
    return start_session_bus(procs)


@pytest.fixture
def machine(tmp_path, procs, logdir, logs):
    """test_privileged.py's machine: a namespace, a delegated cgroup, the helper's place (privileged_setup.py)."""
    m = Machine(tmp_path, procs, logdir, logs)
    yield m
    procs.end_all()
    m.delete()
