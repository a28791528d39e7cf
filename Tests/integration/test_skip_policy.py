"""The skip policy (skip_policy.py): under CI a skip whose reason is not on the
allow-list fails, outside CI it stays a skip, and every skip is recorded for
test-all's summary. Runs pytest on small test files of its own (pytester)."""

from __future__ import annotations

import pytest

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
