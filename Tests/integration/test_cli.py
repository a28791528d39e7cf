"""The command line: answers that need no compositor."""

import re

import pytest

import carrel_harness as h

ROLES = ("app", "participant", "untrusted")


def test_version_exits_zero_and_prints_a_version(carrel_bin):
    r = h.run_carrel_cli(["--version"])
    assert r.returncode == 0, f"--version exited {r.returncode}; stderr: {r.stderr!r}"
    assert re.search(r"\d+\.\d+", r.stdout), f"--version printed no version: {r.stdout!r}"


def test_help_exits_zero_and_documents_the_contract(carrel_bin):
    r = h.run_carrel_cli(["--help"])
    assert r.returncode == 0, f"--help exited {r.returncode}; stderr: {r.stderr!r}"
    text = r.stdout + r.stderr
    for option in ("--ready-fd", "--log-level", "--print-globals", "--version"):
        assert option in text, f"--help does not mention {option}:\n{text}"


def test_unknown_option_fails_with_a_message(carrel_bin):
    r = h.run_carrel_cli(["--no-such-option-for-carrel"])
    assert r.returncode != 0, "an unknown option was accepted (exit 0)"
    assert "no-such-option-for-carrel" in r.stderr, \
        f"stderr does not name the unknown option: {r.stderr!r}"


def test_bad_log_level_is_refused(carrel_bin):
    r = h.run_carrel_cli(["--log-level", "loud", "--print-globals", "app"])
    assert r.returncode != 0, "--log-level loud was accepted"
    assert r.stderr.strip(), "refusing --log-level loud printed nothing on stderr"


@pytest.mark.parametrize("role", ROLES)
def test_print_globals_never_lists_a_privileged_global(carrel_bin, role):
    r = h.run_carrel_cli(["--print-globals", role])
    assert r.returncode == 0, f"--print-globals {role} exited {r.returncode}: {r.stderr!r}"
    names = [line.strip() for line in r.stdout.splitlines() if line.strip()]
    assert names, f"--print-globals {role} printed nothing"
    for name in names:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), f"not an interface name: {name!r}"
    assert not set(names) & h.FORBIDDEN_GLOBALS, \
        f"role {role} may see privileged globals: {sorted(set(names) & h.FORBIDDEN_GLOBALS)}"
    assert h.CORE_GLOBALS <= set(names), \
        f"role {role} lacks core globals: {sorted(h.CORE_GLOBALS - set(names))}"
    if role != "app":
        assert not set(names) & h.ASSESSMENT_GLOBALS, \
            f"role {role} may see the assessment global"


def test_print_globals_rejects_an_unknown_role(carrel_bin):
    r = h.run_carrel_cli(["--print-globals", "root"])
    assert r.returncode != 0, "--print-globals root was accepted"
    assert r.stderr.strip(), "rejecting role 'root' printed nothing on stderr"
