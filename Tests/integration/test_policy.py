"""The policy file against the real binary: `carrel check-policy`, a bad
`--policy` stopping Carrel before anything starts, and policy keys that change
what clients get (the assessment global's visibility, the maximum time limit).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import UNSUPPORTED_CONFIGURATION
from carrel_clients import World

EXAMPLE = h.REPO / "examples" / "policy.toml"
DEFAULT_POLICY = Path("/etc/carrel/policy.toml")
PROBLEM_LINE = re.compile(r"(?P<file>[^:]+):(?P<line>\d+): (?P<key>[^:]+): (?P<message>.+)")

BAD_POLICY = """\
[assessment]
roles = ["app", "untrusted"]

[kiosk]
maximum_relaunches = "five"
enable = true

[typo]
x = 1
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o644)
    return path


def problem_lines(stderr: str) -> list[re.Match]:
    """The FILE:LINE: KEY: message lines, without the closing summary line."""
    return [m for m in map(PROBLEM_LINE.fullmatch, stderr.splitlines()) if m]


# ---------------------------------------------------------------------------
# carrel check-policy


def test_check_policy_accepts_the_example_with_a_summary(carrel_bin):
    r = h.run_carrel_cli(["check-policy", str(EXAMPLE)])
    assert r.returncode == 0, f"check-policy of the example exited {r.returncode}: {r.stderr!r}"
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"policy OK: {EXAMPLE}: "), r.stdout
    for words in ("sessions by app", "240 min at most", "participants calculator",
                  "emergency binding Ctrl+Alt+Shift+Escape"):
        assert words in lines[0], f"the summary does not say {words!r}: {lines[0]!r}"


def test_check_policy_accepts_an_empty_file_as_the_built_in_policy(carrel_bin, tmp_path):
    r = h.run_carrel_cli(["check-policy", str(write(tmp_path, "empty.toml", ""))])
    assert r.returncode == 0, r.stderr
    assert "sessions by app" in r.stdout and "Guided Access off" in r.stdout, r.stdout


def test_check_policy_reports_every_problem_with_file_line_and_key(carrel_bin, tmp_path):
    path = write(tmp_path, "bad.toml", BAD_POLICY)
    r = h.run_carrel_cli(["check-policy", str(path)])
    assert r.returncode == 2, f"check-policy of a bad file exited {r.returncode}: {r.stderr!r}"
    assert "policy OK" not in r.stdout, r.stdout
    found = [(m["file"], int(m["line"]), m["key"]) for m in problem_lines(r.stderr)]
    assert found == [(str(path), 2, "assessment.roles"), (str(path), 5, "kiosk.maximum_relaunches"),
                     (str(path), 6, "kiosk.enable"), (str(path), 8, "typo")], r.stderr
    messages = {m["key"]: m["message"] for m in problem_lines(r.stderr)}
    assert "must be an integer from 0 to 100, got \"five\"" in messages["kiosk.maximum_relaunches"]
    assert "\"untrusted\" is not allowed" in messages["assessment.roles"]
    assert "unknown key" in messages["kiosk.enable"]
    assert "unknown table" in messages["typo"]
    assert "4 problems" in r.stderr.splitlines()[-1], r.stderr


def test_check_policy_reports_a_syntax_error_with_line_and_column(carrel_bin, tmp_path):
    path = write(tmp_path, "syntax.toml", "[kiosk]\nenabled = true\n[outputs\n")
    r = h.run_carrel_cli(["check-policy", str(path)])
    assert r.returncode == 2, r.stderr
    assert re.search(rf"^{re.escape(str(path))}:3:\d+: TOML syntax: ", r.stderr, re.M), r.stderr


def test_check_policy_of_a_missing_file_fails(carrel_bin, tmp_path):
    r = h.run_carrel_cli(["check-policy", str(tmp_path / "absent.toml")])
    assert r.returncode == 2, r.stderr
    assert "absent.toml: cannot read the policy: No such file or directory" in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# carrel --policy: nothing starts under a bad policy


def assert_nothing_started(c, marker: Path) -> str:
    status = c.wait_exit()
    stderr = c.stderr_path.read_text(errors="replace")
    assert status == 2, f"carrel under a bad policy exited {status}\n{c.evidence()}"
    assert not marker.exists(), "the app ran although the policy was invalid"
    sockets = [p.name for p in c.runtime_dir.iterdir() if p.name.startswith("wayland-")]
    assert not sockets, f"carrel opened sockets before refusing the policy: {sockets}"
    return stderr


@pytest.mark.parametrize("problem", ["invalid", "syntax", "missing"])
def test_a_bad_policy_stops_carrel_before_anything_starts(carrel, tmp_path, problem):
    marker = tmp_path / "app-ran"
    if problem == "missing":
        path = tmp_path / "absent.toml"
    else:
        path = write(tmp_path, "bad.toml", BAD_POLICY if problem == "invalid" else "[kiosk\n")
    c = carrel.start(app=["sh", "-c", 'touch "$0"', str(marker)], args=["--policy", str(path)],
                     wait_ready=False)
    stderr = assert_nothing_started(c, marker)
    if problem == "invalid":
        keys = [m["key"] for m in problem_lines(stderr) if m["file"] == str(path)]
        assert keys == ["assessment.roles", "kiosk.maximum_relaunches", "kiosk.enable", "typo"], stderr
    elif problem == "syntax":
        assert re.search(rf"^{re.escape(str(path))}:1:\d+: TOML syntax: ", stderr, re.M), stderr
    else:
        assert f"{path}: cannot read the policy" in stderr, stderr


def test_without_a_policy_file_carrel_runs_under_the_built_in_policy(carrel):
    if DEFAULT_POLICY.exists():
        pytest.skip(f"{DEFAULT_POLICY} exists on this machine; the built-in policy is not in force")
    c = carrel.start(app=None)
    assert c.alive(), c.evidence()
    c.signal(15)
    assert c.wait_exit() == 0, c.evidence()
    stderr = c.stderr_path.read_text(errors="replace")
    assert f"no policy file at {DEFAULT_POLICY}: running under the built-in policy" in stderr, stderr


# ---------------------------------------------------------------------------
# Policy keys that change what clients get


@pytest.mark.parametrize("roles", ["[]", '["app"]'])
def test_assessment_roles_decide_whether_the_app_sees_the_assessment_global(carrel, tmp_path, roles):
    """[assessment] roles = [] hides carrel_assessment_manager_v1 from the app;
    ["app"] (the control case) shows it, so the test can tell the difference."""
    h.require_tool("wayland-info")
    path = write(tmp_path, "policy.toml", f"[assessment]\nroles = {roles}\n")
    printed = h.run_carrel_cli(["--policy", str(path), "--print-globals", "app"])
    assert printed.returncode == 0, printed.stderr
    table = {line.strip() for line in printed.stdout.splitlines() if line.strip()}
    c = carrel.start(app=["wayland-info"], args=["--policy", str(path)])
    status = c.wait_exit()
    out = c.stdout_path.read_text(errors="replace")
    assert status == 0, f"carrel -- wayland-info exited {status}\n{c.evidence()}"
    seen = h.wayland_info_interfaces(out)
    assert h.CORE_GLOBALS <= seen, f"wayland-info saw no desktop globals: {sorted(seen)}"
    if roles == "[]":
        assert not seen & h.ASSESSMENT_GLOBALS, f"the app saw the assessment global under roles = []: {sorted(seen)}"
        assert not table & h.ASSESSMENT_GLOBALS, f"--print-globals app lists it under roles = []: {sorted(table)}"
    else:
        assert h.ASSESSMENT_GLOBALS <= seen, f"the app did not see the assessment global: {sorted(seen)}"
        assert h.ASSESSMENT_GLOBALS <= table, sorted(table)


class _WithPolicy:
    """A carrel factory that starts every carrel with `--policy PATH`."""

    def __init__(self, factory, path: Path) -> None:
        self.factory, self.path = factory, path

    def start(self, app=None, args=(), **kwargs):
        return self.factory.start(app, args=["--policy", str(self.path), *args], **kwargs)


def test_maximum_time_limit_refuses_a_longer_configuration(carrel, procs, logdir, logs, tmp_path,
                                                           client_python, pywayland_protocols):
    path = write(tmp_path, "policy.toml", "[assessment]\nmaximum_time_limit_minutes = 1\n")
    world = World(_WithPolicy(carrel, path), procs, logdir, logs, tmp_path, client_python,
                  pywayland_protocols)
    a = world.client("exam")
    a.map()
    a.bind()
    a.send("config long ; time_limit long 61")
    a.begin("s", config="long")
    m = a.expect(r"session s (began|failed (\d+) (.*))", what="the answer to begin")
    assert m.group(1) != "began", f"a 61 s time limit began under a 1-minute maximum\n{a.evidence()}"
    assert int(m.group(2)) == UNSUPPORTED_CONFIGURATION, f"refused with {m.group(0)!r}, not unsupported_configuration"
    assert "maximum of 60 s" in m.group(3), m.group(0)
    # The maximum itself is allowed: the refusal was the limit, not the client.
    a.send("config exact ; time_limit exact 60")
    a.begin("t", config="exact")
    a.began("t")
    a.send("end t")
    a.expect("session t ended")
    world.alive()


# ---------------------------------------------------------------------------
# carrel hash-passcode


def verify_with_hashlib(line: str, passcode: str) -> bool:
    """Checks carrel's hash line with Python's own PBKDF2, an independent implementation."""
    import base64
    import hashlib
    import hmac

    scheme, iterations, salt, derived = line.split("$")
    assert scheme == "pbkdf2-sha256", line
    assert int(iterations) >= 200_000, f"too few iterations: {line}"
    assert len(base64.b64decode(salt)) >= 16, f"salt too short: {line}"
    ours = hashlib.pbkdf2_hmac("sha256", passcode.encode(), base64.b64decode(salt), int(iterations))
    return hmac.compare_digest(ours, base64.b64decode(derived))


def test_hash_passcode_prints_a_line_python_verifies_and_the_policy_accepts(carrel_bin, tmp_path):
    import subprocess

    r = subprocess.run([str(carrel_bin), "hash-passcode"], input="correct horse\n", env=h.clean_env(),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert re.fullmatch(r"pbkdf2-sha256\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+", line), r.stdout
    assert "correct horse" not in r.stdout + r.stderr, "the passcode was echoed"
    assert verify_with_hashlib(line, "correct horse")
    assert not verify_with_hashlib(line, "correct horsE")
    path = write(tmp_path, "ga.toml", f'[guided_access]\npasscode_hash = "{line}"\nunlock_keys = "Ctrl+Alt+Shift+U"\n')
    checked = h.run_carrel_cli(["check-policy", str(path)])
    assert checked.returncode == 0 and "Guided Access on" in checked.stdout, checked.stdout + checked.stderr


@pytest.mark.parametrize("stdin, complaint", [("123\n", "at least 4 characters"),
                                              ("", "at least 4 characters"),
                                              ("first\nsecond\n", "more than one line")])
def test_hash_passcode_refuses_bad_input(carrel_bin, stdin, complaint):
    import subprocess

    r = subprocess.run([str(carrel_bin), "hash-passcode"], input=stdin, env=h.clean_env(),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, f"exit {r.returncode}: {r.stdout!r} {r.stderr!r}"
    assert r.stdout == "", f"printed a hash for bad input: {r.stdout!r}"
    assert complaint in r.stderr, r.stderr


def test_hash_passcode_on_a_terminal_asks_twice_without_echo(carrel_bin):
    import pty
    import select
    import time

    pid, fd = pty.fork()
    if pid == 0:
        os.execve(str(carrel_bin), [str(carrel_bin), "hash-passcode"], h.clean_env())
    seen = b""

    def read_until(pattern: bytes, timeout: float = 25.0) -> None:
        nonlocal seen
        deadline = time.monotonic() + timeout
        while pattern not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(fd, 4096)
                except OSError:
                    break
        assert pattern in seen, f"no {pattern!r} on the terminal; saw {seen!r}"

    try:
        read_until(b"Passcode: ")
        os.write(fd, b"secret-4711\n")
        read_until(b"Again: ")
        os.write(fd, b"secret-4711\n")
        read_until(b"pbkdf2-sha256$")
        read_until(b"=\r\n")
    finally:
        # Bounded: a child still waiting for input is killed, not waited on forever.
        deadline = time.monotonic() + 10
        while (waited := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if waited[0] == 0:
            os.kill(pid, 9)
            waited = os.waitpid(pid, 0)
        status = waited[1]
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert b"secret-4711" not in seen, f"the passcode was echoed on the terminal: {seen!r}"
    line = re.search(rb"pbkdf2-sha256\$\S+", seen).group(0).decode()
    assert verify_with_hashlib(line, "secret-4711")
