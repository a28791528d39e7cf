"""The skip policy (skip_policy.py): under CI a skip whose reason is not on the
allow-list fails, outside CI it stays a skip, and every skip is recorded for
test-all's summary. Runs pytest on small test files of its own (pytester), and
a small script on meson-helpers/legs.sh, test-all's legs."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

import carrel_harness as h
import skip_policy

pytest_plugins = ("pytester",)

TESTS = '''
import pytest

def test_missing_tool():
    pytest.skip("frobnicate is not installed (meson-helpers/packages.sh installs it)")

@pytest.mark.skipif(True, reason="needs frobnicate (meson-helpers/packages.sh installs it)")
def test_missing_package_mark():
    pass

def test_allowed():
    pytest.skip("this machine runs logind: the seat check can be met here")

@pytest.mark.xfail(reason="an expected failure is not a skip")
def test_xfail():
    assert False

def test_passes():
    pass
'''

MODULE_SKIP = '''
import pytest
pytest.skip("frobnicate is not installed", allow_module_level=True)

def test_never_collected():
    pass
'''


def run(pytester, monkeypatch, tmp_path, ci: str | None):
    log = tmp_path / "skips.tsv"
    monkeypatch.setenv("CARREL_SKIP_LOG", str(log))
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makepyfile(test_things=TESTS)
    result = pytester.runpytest("-p", "skip_policy", "-p", "no:cacheprovider", "-rA")
    records = [line.split("\t") for line in log.read_text().splitlines()] if log.exists() else []
    return result, {nodeid.split("::")[-1]: verdict for verdict, nodeid, _ in records}


def test_under_ci_a_missing_tool_fails_and_an_allowed_reason_skips(pytester, monkeypatch, tmp_path):
    result, verdicts = run(pytester, monkeypatch, tmp_path, "true")
    # The call-phase skip fails; the skipif mark is judged at setup, an error.
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(["*skipped under CI, and this reason is not on the allow-list*frobnicate*"])
    assert result.ret != 0
    assert verdicts["test_missing_tool"] == "FAILED under CI"
    assert verdicts["test_missing_package_mark"] == "FAILED under CI"
    assert verdicts["test_allowed"].startswith("allowed: ")
    assert "test_xfail" not in verdicts and "test_passes" not in verdicts


def test_outside_ci_skips_stay_skips_and_are_recorded(pytester, monkeypatch, tmp_path):
    result, verdicts = run(pytester, monkeypatch, tmp_path, None)
    result.assert_outcomes(passed=1, skipped=3, xfailed=1)
    assert result.ret == 0
    assert verdicts == {"test_missing_tool": "skipped", "test_missing_package_mark": "skipped",
                        "test_allowed": verdicts["test_allowed"]}
    assert verdicts["test_allowed"].startswith("allowed: ")


def test_ci_false_is_not_ci(pytester, monkeypatch, tmp_path):
    result, _ = run(pytester, monkeypatch, tmp_path, "false")
    result.assert_outcomes(passed=1, skipped=3, xfailed=1)


def test_under_ci_a_skipped_module_is_an_error(pytester, monkeypatch, tmp_path):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("CARREL_SKIP_LOG", str(tmp_path / "skips.tsv"))
    pytester.makepyfile(test_module_skip=MODULE_SKIP)
    result = pytester.runpytest("-p", "skip_policy", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    monkeypatch.delenv("CI")
    result = pytester.runpytest("-p", "skip_policy", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


@pytest.mark.parametrize("reason, euid, wlroots, expected", [
    ("needs root: mount and network namespaces", 65534, None, True),
    ("needs root: mount and network namespaces", 0, None, False),  # as root, no reason to skip
    ("wlroots 0.18 destroys a subsurface with its parent", 0, "0.18", True),
    ("wlroots 0.15 destroys a subsurface with its parent", 0, None, False),
    ("Xvfb is not installed (Debian package xvfb)", 65534, "0.18", False),
    ("python3-dbus and python3-gi are not installed (meson-helpers/packages.sh installs them)", 0, None, False),
])
def test_allow_list_entries_hold_only_where_they_are_legitimate(monkeypatch, reason, euid, wlroots, expected):
    monkeypatch.setattr(skip_policy.os, "geteuid", lambda: euid)
    if wlroots is None:
        monkeypatch.delenv("CARREL_WLROOTS", raising=False)
    else:
        monkeypatch.setenv("CARREL_WLROOTS", wlroots)
    assert (skip_policy.allowed(reason) is not None) == expected


# The legs of test-all and test-newer-wlroots (meson-helpers/legs.sh): a leg that
# skips fails under CI unless allow-listed, and the summary of legs and skips is
# printed at exit, also after a failure.

LEGS_SCRIPT = '''
set -euo pipefail
source "$LEGS_SH"
carrel_legs_init "$ARTIFACTS/legs"
step "builds"
sleep 0.3
printf 'skipped\\tTests/integration/test_x.py::test_y\\tfrobnicate is not installed\\n' >>"$CARREL_SKIP_LOG"
step "under ThreadSanitizer"
carrel_leg_skip tsan-runtime-absent "no libclang_rt.tsan here"
step "the benchmarks"
carrel_leg_skip needs-root "bench/run needs root"
step "after"
[ -z "${FAIL_LAST:-}" ] || false
'''


def run_legs(tmp_path, ci: str | None, fail_last: bool = False):
    script = tmp_path / "legs-test"
    script.write_text(LEGS_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CARREL_LEGS_DIR", "CARREL_SKIP_LOG")}
    env.update(LEGS_SH=str(h.REPO / "meson-helpers" / "legs.sh"), ARTIFACTS=str(tmp_path / "artifacts"))
    if ci is not None:
        env["CI"] = ci
    if fail_last:
        env["FAIL_LAST"] = "1"
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=30)


LEG_ROW = re.compile(r"(?P<secs>\S+)s\s+(?:cpu\s+(?P<cpu>\S+)%\s+)?(?P<name>.*)")


def legs_rows(out: str) -> list[dict]:
    """The summary's table of legs: status, secs, cpu (how busy the cores
    were meanwhile) and name of each row; the total's name is "(all legs)"."""
    table = out.split("==> legs (wall time", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines():
        row = LEG_ROW.fullmatch(line[21:].strip()).groupdict()
        row["status"] = line[:21].strip()
        if row["name"].startswith("(all legs"):
            row["name"] = "(all legs)"
        rows.append(row)
    return rows


def legs_table(out: str) -> dict:
    return {row["name"]: row["status"] for row in legs_rows(out)}


def test_outside_ci_a_leg_may_skip_and_the_summary_lists_legs_and_skips(tmp_path):
    r = run_legs(tmp_path, None)
    assert r.returncode == 0, r.stdout + r.stderr
    assert legs_table(r.stdout) == {"builds": "ok", "under ThreadSanitizer": "skipped (allowed)",
                                    "the benchmarks": "skipped", "after": "ok", "(all legs)": ""}
    skips = r.stdout.split("==> skips (with their reasons)\n", 1)[1]
    assert "test_x.py::test_y" in skips and "frobnicate is not installed" in skips
    assert "no libclang_rt.tsan here" in skips and "[allowed: the Swift toolchain ships without" in skips
    assert "bench/run needs root" in skips and "[skipped]" in skips
    assert "no step failed" in r.stdout and "(3 skips, listed above)" in r.stdout
    # Each leg says how busy the machine's cores were while it ran (0-100 %;
    # "?" for one too short for the kernel's tick to count).
    rows = {row["name"]: row for row in legs_rows(r.stdout)}
    assert 0 <= int(rows["builds"]["cpu"]) <= 100, rows
    for name, row in rows.items():
        if name != "(all legs)":
            assert row["cpu"] == "?" or 0 <= int(row["cpu"]) <= 100, row


def test_under_ci_a_leg_that_skips_fails_and_the_summary_still_comes(tmp_path):
    r = run_legs(tmp_path, "true")
    assert r.returncode != 0, r.stdout + r.stderr
    assert legs_table(r.stdout) == {"builds": "ok", "under ThreadSanitizer": "skipped (allowed)",
                                    "the benchmarks": "FAILED", "(all legs)": ""}
    assert "[FAILED under CI]" in r.stdout and "FAILED (exit 1)" in r.stdout
    assert "may not skip (needs-root is not on the allow-list" in r.stderr


def test_a_failed_step_is_marked_and_the_summary_still_comes(tmp_path):
    r = run_legs(tmp_path, None, fail_last=True)
    assert r.returncode != 0
    assert legs_table(r.stdout)["after"] == "FAILED"
    assert "FAILED (exit 1)" in r.stdout


BESIDE_SCRIPT = '''
set -euo pipefail
source "$LEGS_SH"
carrel_legs_init "$ARTIFACTS/legs"
step "before"
carrel_leg_end ok
# A leg beside the next ones: a shell whose child records its pid, then
# sleeps (or fails at once, BESIDE_FAILS).
carrel_leg_beside "the guest" -- bash -c 'echo "beside says hello"; sleep 300 & echo $! >"$ARTIFACTS/child"; [ -z "${BESIDE_FAILS:-}" ] || exit 3; wait'
step "the builds"
until [ -s "$ARTIFACTS/child" ]; do sleep 0.1; done
[ -z "${STEP_FAILS:-}" ] || false
[ -n "${BESIDE_FAILS:-}" ] || kill "$(cat "$ARTIFACTS/child")"
carrel_leg_end ok
carrel_leg_join
step "after"
'''


def run_beside(tmp_path, **env_extra):
    script = tmp_path / "beside-test"
    script.write_text(BESIDE_SCRIPT)
    (tmp_path / "artifacts").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CARREL_LEGS_DIR", "CARREL_SKIP_LOG")}
    env.update(LEGS_SH=str(h.REPO / "meson-helpers" / "legs.sh"), ARTIFACTS=str(tmp_path / "artifacts"), **env_extra)
    return subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)


def test_a_leg_beside_others_is_joined_and_its_output_and_time_are_in_the_summary(tmp_path):
    # The step ends the leg's child (as a guest ends); the leg's shell then exits 0.
    r = run_beside(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    table = legs_table(r.stdout)
    assert list(table) == ["before", "the guest (beside the legs after it)", "the builds", "after", "(all legs)"], r.stdout
    assert table["the guest (beside the legs after it)"] == "ok" and table["the builds"] == "ok", r.stdout
    # Its output comes when it is joined, after the step it ran beside.
    assert r.stdout.index("beside says hello") > r.stdout.index("==> the builds"), r.stdout


def test_a_failing_leg_beside_fails_the_run_when_joined(tmp_path):
    r = run_beside(tmp_path, BESIDE_FAILS="1")
    assert r.returncode == 3, r.stdout + r.stderr
    assert legs_table(r.stdout)["the guest (beside the legs after it)"] == "FAILED"


def test_a_step_failing_while_a_leg_runs_beside_ends_that_legs_whole_session(tmp_path):
    r = run_beside(tmp_path, STEP_FAILS="1")
    assert r.returncode != 0
    table = legs_table(r.stdout)
    assert table["the builds"] == "FAILED" and table["the guest (beside the legs after it)"] == "FAILED", r.stdout
    child = int((tmp_path / "artifacts" / "child").read_text())
    # The leg's grandchild (a guest's QEMU, here a sleep) did not outlive the run.
    assert h.wait_until(lambda: not os.path.exists(f"/proc/{child}") or
                        open(f"/proc/{child}/stat").read().split()[2] == "Z", 5), f"pid {child} outlived the run"
