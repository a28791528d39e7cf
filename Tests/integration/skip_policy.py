"""The suite's skip policy, a pytest plugin (conftest.py registers it).

A test that skips has proved nothing. Under CI (CI=true in the environment;
.ci/run sets it) a skip is a failure, unless its reason matches an entry of
ALLOWLIST below: conditions that are legitimate and intended (the suite's
unprivileged leg, a wlroots version whose behaviour differs, a fact about the
machine the project cannot change). A tool or package the project installs
(meson-helpers/packages.sh) being missing is never on the list: under CI such
a skip fails, saying what was missing. Outside CI skips stay skips.

Every skip, allowed or not, is appended as one line to $CARREL_SKIP_LOG when
that is set (meson-helpers/test-all sets it per leg and prints them all at the
end):  VERDICT<TAB>NODEID<TAB>REASON  where VERDICT is `allowed: WHY`,
`skipped` (outside CI) or `FAILED under CI`.

The list is reviewed: an entry is added with its reason, in docs/TESTING.md too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Optional

import pytest


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _unprivileged() -> bool:
    return os.geteuid() != 0


def _not_bookworm_wlroots() -> bool:
    return (os.environ.get("CARREL_WLROOTS") or "0.15") != "0.15"


@dataclass(frozen=True)
class Allowed:
    pattern: str  # a regex, searched in the skip's reason
    why: str  # why this skip is legitimate under CI
    # The entry applies only while this holds (a skip for want of root is
    # allowed as nobody, never as root).
    when: Callable[[], bool] = lambda: True

    def matches(self, reason: str) -> bool:
        return re.search(self.pattern, reason) is not None and self.when()


ALLOWLIST = (
    Allowed(r"need(s)? root|runs as root|must be root|^as root; unprivileged",
            "the suite's second leg runs unprivileged (as nobody) on purpose; the root leg runs these",
            when=_unprivileged),
    Allowed(r"^wlroots \d+\.\d+ ",
            "behaviour of bookworm's wlroots 0.15 only (a guard for its bug); the newer-wlroots leg "
            "cannot reach it, and the 0.15 legs run it",
            when=_not_bookworm_wlroots),
    Allowed(r"^this machine runs logind: the seat check can be met here$",
            "whether the machine runs logind is the machine's, not the project's; without logind the "
            "seat precondition is checked unmet, with it test_preconditions checks it met"),
    Allowed(r"exists on this machine; the built-in policy is not in force$",
            "a policy file installed on the machine (an exam machine's own) is not the project's to remove"),
    Allowed(r"^/sys/fs/cgroup/\S+ is in use on this machine$",
            "the unit's cgroup is in use by a Carrel really running on this machine; the test must not "
            "disturb it"),
)


def allowed(reason: str) -> Optional[Allowed]:
    for entry in ALLOWLIST:
        if entry.matches(reason):
            return entry
    return None


def _reason(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


def _record(nodeid: str, verdict: str, reason: str) -> None:
    path = os.environ.get("CARREL_SKIP_LOG")
    if not path:
        return
    flat = " ".join(reason.split())
    try:
        with open(path, "a") as f:
            f.write(f"{verdict}\t{nodeid}\t{flat}\n")
    except OSError as e:
        print(f"skip_policy: cannot record a skip in {path}: {e.strerror}")


def _judge(report) -> None:
    """Records a skip; under CI, turns one whose reason is not allowed into a failure."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _reason(report.longrepr)
    entry = allowed(reason)
    if entry is not None:
        _record(report.nodeid, f"allowed: {entry.why}", reason)
    elif under_ci():
        _record(report.nodeid, "FAILED under CI", reason)
        report.outcome = "failed"
        report.longrepr = (f"skipped under CI, and this reason is not on the allow-list "
                           f"(Tests/integration/skip_policy.py): {reason}\n"
                           "A tool or package the project installs (meson-helpers/packages.sh) "
                           "must be there under CI; a test that skips proves nothing.")
    else:
        _record(report.nodeid, "skipped", reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _judge(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _judge(outcome.get_result())
