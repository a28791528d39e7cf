"""Fixtures for Carrel's integration and visual tests (helpers: carrel_harness.py)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import carrel_harness as h
import skip_policy

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
