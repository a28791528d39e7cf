"""Privilege separation against the real binaries: carrel-privileged as root,
carrel as the unprivileged user `carrel`, the app as `exam`.

Each test makes a network namespace (as test_providers does) and a cgroup
`carrel-priv-N` in the cgroup v2 hierarchy chowned to `carrel`: exactly what
systemd's `Delegate=yes` does for carrel-kiosk.service. The helper runs in the
namespace as root (`--cgroup-subtree` that cgroup); carrel runs in the same
namespace, moved into that cgroup first, then dropped to `carrel` through
setpriv (no capabilities, bounding set empty), with a private XDG_RUNTIME_DIR
it owns, `--privileged-helper` and the network provider. The app is
netprobe.py, started by the helper as `exam` on a Wayland connection carrel
accepted; the session is begun by the pywayland assessment client (as
test_providers does) on the app socket.

The bound for a crashed carrel: the helper sees its connection close at once
and reverts within its 50 ms loop tick; the tests allow 1 s.

The users `carrel` and `exam` are created (system users, no home, no login)
if this machine lacks them. Everything here needs root; without it the tests skip.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import INTEGRITY
from carrel_clients import World
from netns import NETPROBE, SYSTEM_PYTHON, Namespace, app_connect, begin_session, run, start_server
from privileged_setup import MOUNT, Machine, PrivilegedWorld, account, privileged_bin, unit_bounding_set

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="privilege separation needs root "
                                "(users, network namespaces, nftables, cgroups)")

REVERT_BOUND = 1.0  # seconds: carrel killed -> table and session cgroups gone


def ctl_bin() -> Path:
    return Path(os.environ.get("CARREL_CTL_BIN") or h.carrel_bin().parent / "carrelctl")


def status_fields(pid: int) -> dict:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


# What the app's user tries against carrel: prints one JSON object of errno names.
ATTACKS = r"""
import ctypes, errno, json, os, signal, sys
pid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
out = {}
for name, sig in (("kill0", 0), ("term", signal.SIGTERM)):
    try:
        os.kill(pid, sig); out[name] = "allowed"
    except OSError as e:
        out[name] = errno.errorcode[e.errno]
PTRACE_ATTACH = 16
r = libc.ptrace(PTRACE_ATTACH, pid, None, None)
out["ptrace"] = "allowed" if r == 0 else errno.errorcode[ctypes.get_errno()]
try:
    os.close(os.open(f"/proc/{pid}/mem", os.O_RDONLY)); out["mem"] = "allowed"
except OSError as e:
    out["mem"] = errno.errorcode[e.errno]
print(json.dumps(out))
"""


SECOND_CONNECTION = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5)
try:
    s.sendall(b'{"request":"network_revert"}\n')
    print("answered" if s.recv(100) else "closed")
except (ConnectionResetError, BrokenPipeError):
    print("closed")
"""


def test_helper_refuses_other_users_and_answers_garbage_with_errors(machine, procs):
    helper = machine.start_helper()
    st = os.stat(machine.socket)
    assert (st.st_uid, st.st_mode & 0o777) == (machine.carrel_user.pw_uid, 0o600), st

    # Root itself is not Carrel's user: closed without an answer, and logged.
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(machine.socket))
        s.settimeout(5)
        try:
            # The helper may close it before the request is even sent.
            s.sendall(b'{"request":"recover"}\n')
            answer = s.recv(100)
        except (BrokenPipeError, ConnectionResetError):
            answer = b""
    assert answer == b"", answer
    assert h.wait_until(lambda: "refused a connection from uid 0" in machine.helper_log.read_text(), 5)

    cases = [
        (b"not json", "not one JSON object"),
        (b"{}", "no string \\\"request\\\""),
        (b'{"request":"nft","argv":["flush","ruleset"]}', "unknown request \\\"nft\\\""),
        (b'{"request":"network_apply","session":1,"exempt":["user.slice"]}', "is neither a session cgroup"),
        (b'{"request":"network_apply","session":1,"exempt":[],"ruleset":"flush ruleset"}', "unknown key \\\"ruleset\\\""),
        (b'{"request":"spawn","role":"root","argv":["/bin/sh"],"env":{}}', "expected one of app, participant"),
        (b'{"request":"spawn","role":"app","argv":["/bin/sh"],"env":{}}', "\\\"cgroup\\\" is missing"),
        (b'{"request":"spawn","role":"app","argv":["/bin/sh"],"env":{},"cgroup":"%s/carrel-1"}' % machine.subtree.encode(),
         "exactly one descriptor"),
        (b'{"request":"signal","id":1,"signal":"KILL"}', "no running program 1"),
        (b'{"request":"network_verify"}', "no table is loaded"),
        (b'{"request":"recover"}', '{"ok":"yes"}'),
        (b'{"request":"input_readers","pid":1}', "unknown key \\\"pid\\\""),
        # The helper (root) lists who holds input devices; whether they may is Carrel's decision.
        # Where root here cannot read every process's descriptors (read independently), it says so.
        (b'{"request":"input_readers"}',
         '{"holders":[' if h.input_device_holders() is not None else "needs root with CAP_SYS_PTRACE"),
    ]
    script = ("import socket, sys\n"
              "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)\n"
              "f = s.makefile('rwb')\n"
              "for line in sys.stdin.buffer:\n"
              "    f.write(line); f.flush(); sys.stdout.write(f.readline().decode()); sys.stdout.flush()\n")
    r = subprocess.run(["setpriv", f"--reuid={machine.carrel_user.pw_uid}", f"--regid={machine.carrel_user.pw_gid}",
                        "--clear-groups", SYSTEM_PYTHON, "-c", script, str(machine.socket)],
                       input=b"".join(line + b"\n" for line, _ in cases), capture_output=True, timeout=30)
    answers = r.stdout.decode().splitlines()
    assert len(answers) == len(cases), (answers, r.stderr)
    for (line, says), answer in zip(cases, answers):
        assert says in answer, (line, answer)
        assert answer.startswith('{"error":') == (says not in ('{"ok":"yes"}', '{"holders":[')), (line, answer)
    assert helper.poll() is None, f"the helper died on garbage\n{machine.helper_log.read_text()}"


SPAWN_WITH_LOADER_VARIABLES = r"""
import json, socket, sys
subtree, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[3]); s.settimeout(10)
ours, theirs = socket.socketpair()
request = {"request": "spawn", "role": "app", "argv": ["/bin/true"], "cgroup": f"{subtree}/carrel-4242",
           "env": {"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": f"{out}/ld"}}
socket.send_fds(s, [json.dumps(request).encode() + b"\n"], [theirs.fileno()])
replies = s.makefile("rb")
print(replies.readline().decode().strip())
print(replies.readline().decode().strip())  # its end: the connection stays until then
"""


def test_a_spawns_loader_variables_reach_the_program_not_roots_loader(machine, procs):
    """What a compromised Carrel would try: LD_PRELOAD and friends in a spawn's
    environment, read by the dynamic loader of setpriv while it is still root.
    LD_DEBUG_OUTPUT shows whose loader read them: files appear for the program
    (as exam), none for a process of root's."""
    machine.start_helper()
    machine.cgroup_sh(f"mkdir /sys/fs/cgroup/{machine.subtree}/carrel-4242")
    out = machine.shared / "loader"
    out.mkdir()
    os.chmod(out, 0o1777)
    r = subprocess.run(["setpriv", f"--reuid={machine.carrel_user.pw_uid}", f"--regid={machine.carrel_user.pw_gid}",
                        "--clear-groups", SYSTEM_PYTHON, "-c", SPAWN_WITH_LOADER_VARIABLES, machine.subtree, str(out),
                        str(machine.socket)], capture_output=True, text=True, timeout=30)
    answer, event = (r.stdout.splitlines() + ["", ""])[:2]
    assert '"ok":"yes"' in answer and '"event":"exited"' in event, r.stdout + r.stderr + machine.helper_log.read_text()
    owners = lambda: {p.stat().st_uid for p in out.iterdir()}
    assert h.wait_until(lambda: machine.exam.pw_uid in owners(), 10), \
        f"the program never read its LD_DEBUG (files: {sorted(p.name for p in out.iterdir())})"
    assert 0 not in owners(), f"root's loader read the request's LD_DEBUG: {[(p.name, p.stat().st_uid) for p in out.iterdir()]}"


def test_unprivileged_carrel_restricts_the_network_and_a_killed_carrel_reverts_everything(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    start_server(machine.ns, procs, logdir)
    machine.start_helper()
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine)

    carrel_status = status_fields(w.carrel.pid)
    assert carrel_status["Uid"].split()[0] == str(machine.carrel_user.pw_uid), carrel_status["Uid"]
    app = status_fields(w.app_pid)
    assert app["Uid"].split() == [str(machine.exam.pw_uid)] * 4, app["Uid"]
    for cap in ("CapEff", "CapPrm", "CapAmb", "CapInh", "CapBnd"):
        assert int(app[cap], 16) == 0, f"the app has {cap} {app[cap]}"
    assert app["NoNewPrivs"] == "1", app
    app_cgroup = Path(f"/proc/{w.app_pid}/cgroup").read_text()
    assert f"0::/{machine.subtree}/carrel-{w.carrel.pid}\n" in app_cgroup, app_cgroup

    r = subprocess.run(["setpriv", f"--reuid={machine.exam.pw_uid}", f"--regid={machine.exam.pw_gid}", "--clear-groups",
                        "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs",
                        SYSTEM_PYTHON, "-c", ATTACKS, str(w.carrel.pid)], capture_output=True, text=True, timeout=10)
    # The kernel answers EACCES for /proc/PID/mem (ptrace_may_access refused), EPERM for the rest.
    assert json.loads(r.stdout) == {"kill0": "EPERM", "term": "EPERM", "ptrace": "EPERM", "mem": "EACCES"}, r.stdout + r.stderr
    w.alive()

    assert machine.ns.outside_connect() == "ok" and w.app_connect() == "ok", "before the session everyone connects"
    a = begin_session(w)
    assert machine.ns.table_exists(), f"began without the table\n{w.log()}"
    assert machine.ns.outside_connect().startswith("fail"), "a process outside the session connected"
    assert w.app_connect() == "ok", f"the app lost its network\n{w.log()}"
    a.sync()
    assert not a.matching(r"session s interrupted .*"), f"verify through the helper failed\n{w.log()}"

    # One connection at a time: another process of carrel's user is closed unanswered while carrel is connected.
    second = subprocess.run(["setpriv", f"--reuid={machine.carrel_user.pw_uid}", f"--regid={machine.carrel_user.pw_gid}",
                             "--clear-groups", SYSTEM_PYTHON, "-c", SECOND_CONNECTION, str(machine.socket)],
                            capture_output=True, text=True, timeout=15)
    assert second.stdout.strip() == "closed", second.stdout + second.stderr
    assert "refused a second connection" in machine.helper_log.read_text()
    assert machine.ns.table_exists(), "a refused connection took the restriction down"

    assert machine.session_cgroups() == [f"carrel-{w.carrel.pid}"], machine.session_cgroups()
    w.carrel.signal(signal.SIGKILL)
    def reverted() -> bool:
        return not machine.ns.table_exists() and not machine.session_cgroups() and not h.pid_running(w.app_pid)
    # The bound DEPLOY.md states: within it, no table, no session cgroups and no app.
    assert h.wait_until(reverted, REVERT_BOUND, interval=0.05), \
        (f"{REVERT_BOUND} s after kill -9 of carrel: table {machine.ns.table_exists()}, cgroups "
         f"{machine.session_cgroups()}, app running {h.pid_running(w.app_pid)}\n{machine.helper_log.read_text()}")
    assert machine.ns.outside_connect() == "ok", "after carrel died everyone connects again"
    v = subprocess.run([str(ctl_bin()), "audit", "verify", str(w.audit_log)], capture_output=True, text=True, timeout=30)
    assert v.returncode == 0 and "chain intact" in v.stdout, v.stdout + v.stderr


def test_a_killed_helper_interrupts_the_session_and_recover_leaves_nothing(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    start_server(machine.ns, procs, logdir)
    helper = machine.start_helper()
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine)
    a = begin_session(w)
    assert machine.ns.table_exists(), f"began without the table\n{w.log()}"

    helper.kill()
    helper.wait(5)
    a.expect(rf"session s interrupted {INTEGRITY} .*privileged helper.*", what="interrupted: the helper is gone")
    # The exam app the helper started lives on (the student's work is not lost);
    # DEPLOY.md says what Carrel no longer knows of it.
    assert h.pid_running(w.app_pid), "the app died with the helper"
    assert machine.recover().returncode == 0
    assert not machine.ns.table_exists(), "the unit's ExecStopPost (--recover) left the table"
    assert machine.ns.outside_connect() == "ok"
    a.send("end s")
    a.expect("session s ended")

    # Without the helper a session cannot begin: the precondition names it.
    a.begin("t")
    m = a.expect(r"session t failed .*", what="begin fails without the helper")
    assert "privileged_helper: the privileged helper at" in m.group(0), m.group(0)

    assert w.log().count("privileged helper connected") == 1, "connected once, at start"
    machine.start_helper()
    # Carrel tries again every second.
    assert h.wait_until(lambda: w.log().count("privileged helper connected") == 2, 5), w.log()
    a.begin("u")
    a.began("u")
    assert machine.ns.table_exists(), "a session after the helper came back has no table"
    a.send("end u")
    a.expect("session u ended")
    assert h.wait_until(lambda: not machine.ns.table_exists(), 5)
    w.carrel.signal(signal.SIGTERM)
    assert w.carrel.wait_exit() == 0, w.log()
    v = subprocess.run([str(ctl_bin()), "audit", "verify", str(w.audit_log)], capture_output=True, text=True, timeout=30)
    assert v.returncode == 0 and "chain intact" in v.stdout, v.stdout + v.stderr


def programs_named(prefix: str, subtree: str) -> list[int]:
    """Live processes called `prefix`... inside the test's delegated cgroup
    (other tests on the machine run carrel-paint too)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().startswith(prefix) \
                    and f"0::/{subtree}/" in Path(f"/proc/{entry}/cgroup").read_text() \
                    and status_fields(int(entry))["State"][0] != "Z":
                found.append(int(entry))
        except (OSError, KeyError):
            continue
    return found


def test_a_participant_is_started_by_the_helper_as_the_participant_user_in_its_cgroup(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    machine.start_helper()
    policy = machine.carrel_dir / "policy.toml"
    policy.write_text("[participants.calc]\n"
                      f"command = [\"{h.paint_bin()}\", \"--color\", \"33cc66\"]\n"
                      "network = true\n")
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine,
                        args=["--policy", str(policy)])
    a = w.client("exam")
    a.map()
    a.bind(version=2)
    a.send("config c ; participant c calc")
    a.begin(config="c")
    a.began()
    pids = programs_named("carrel-paint", machine.subtree)
    assert len(pids) == 1, f"expected one participant, found {pids}\n{w.log()}"
    fields = status_fields(pids[0])
    assert fields["Uid"].split() == [str(machine.exam.pw_uid)] * 4, fields["Uid"]
    assert int(fields["CapEff"], 16) == 0 and int(fields["CapBnd"], 16) == 0, fields
    assert int(fields["PPid"]) != w.carrel.pid, "the participant is carrel's child, not the helper's"
    cgroup = Path(f"/proc/{pids[0]}/cgroup").read_text()
    assert f"0::/{machine.subtree}/carrel-{w.carrel.pid}-participant-calc\n" in cgroup, cgroup
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not programs_named("carrel-paint", machine.subtree), 5), "the participant outlived its session"
    # Its cgroup goes once the helper says it has ended (the stop does not wait
    # for that), retried while the kernel still counts the reaped process in it.
    gone = h.wait_until(lambda: f"carrel-{w.carrel.pid}-participant-calc" not in machine.session_cgroups(), 12)
    assert gone, f"the participant's cgroup outlived it: {machine.session_cgroups()}"
    w.alive()


class FifoProcess:
    """The Popen face Driver needs, for an app the helper started: its
    stdin and stdout are FIFOs the test holds both ends of (O_RDWR, so no
    open blocks and no read sees a false end of file)."""

    def __init__(self, fifo_in: Path, fifo_out: Path) -> None:
        self.stdin = os.fdopen(os.open(fifo_in, os.O_RDWR), "wb", buffering=0)
        self.stdout = os.fdopen(os.open(fifo_out, os.O_RDWR), "rb", buffering=0)
        self.pid = -1

    def poll(self):
        return None

    def close(self) -> None:
        self.stdin.close()
        self.stdout.close()


def test_a_helper_started_participants_escaped_processes_end_with_it(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    """The shipped layout: the helper starts the participant as its own user,
    so Carrel can signal neither it nor what it starts, and a process that
    calls setsid or double-forks leaves the process group the helper kills.
    All of them were born in the participant's cgroup, and Carrel kills that
    cgroup as it stops the participant: none outlives `ended`, the cgroup
    goes, and none of them could reach Carrel's private sockets meanwhile."""
    machine.start_helper()
    report = machine.app_dir / "escaper.report"
    # A copy the participant's user can read, wherever the checkout is.
    script = machine.app_dir / "escaping_participant.py"
    shutil.copy(Path(__file__).with_name("escaping_participant.py"), script)
    os.chmod(script, 0o644)
    policy = machine.carrel_dir / "policy.toml"
    w_args = ["--policy", str(policy)]
    # The socket directory is known only once Carrel runs; the escaper reads it from a file.
    where = machine.app_dir / "sockets"
    policy.write_text("[participants.escaper]\n"
                      f"command = [\"/bin/sh\", \"-c\", \"\\\"{h.paint_bin()}\\\" & exec {SYSTEM_PYTHON} "
                      f"{script} {report} \\\"$(cat {where})\\\"\"]\n")
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine, args=w_args)
    where.write_text(str(Path(w.app_display).parent))
    os.chmod(where, 0o644)
    a = w.client("exam")
    a.map()
    a.bind(version=2)
    a.send("config c ; participant c escaper")
    a.begin(config="c")
    a.began()

    def lines():
        return report.read_text().splitlines() if report.exists() else []
    assert h.wait_until(lambda: all(any(l.startswith(f"{kind} ") and l.endswith(" app") for l in lines())
                                    for kind in ("setsid", "double-fork")), 15, interval=0.1), \
        f"the escaped processes did not knock on the app's socket: {lines()}\n{w.log()}"
    assert not [l for l in lines() if " connected " in l], f"an escaped process reached a private socket: {lines()}"
    escaped = {int(l.split()[2]): l.split()[1] for l in lines() if l.startswith("escaped ")}
    assert sorted(escaped.values()) == ["double-fork", "setsid"], escaped
    cgroup = f"carrel-{w.carrel.pid}-participant-escaper"
    for pid in escaped:
        assert f"/{cgroup}\n" in Path(f"/proc/{pid}/cgroup").read_text(), f"pid {pid} is not in {cgroup}"
        assert status_fields(pid)["Uid"].split()[0] == str(machine.exam.pw_uid)
    a.send("end s")
    a.expect("session s ended")

    def alive(pid):
        try:
            return status_fields(pid)["State"][0] != "Z"
        except (OSError, KeyError):
            return False
    h.wait_until(lambda: not any(alive(pid) for pid in escaped), 2, interval=0.02)
    survivors = {pid: kind for pid, kind in escaped.items() if alive(pid)}
    assert not survivors, f"outlived the session: {survivors}\n{w.log()}"
    assert h.wait_until(lambda: cgroup not in machine.session_cgroups(), 12), \
        f"the participant's cgroup outlived it: {machine.session_cgroups()}"


def process_of(program: str, user: pwd.struct_passwd) -> int | None:
    """The pid of a live process running `program` as `user`, if any."""
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/exe").resolve().name == program \
                    and status_fields(int(entry))["Uid"].split()[0] == str(user.pw_uid) \
                    and status_fields(int(entry))["State"][0] != "Z":
                return int(entry)
        except (OSError, KeyError):
            continue
    return None


def test_the_input_method_and_keyboard_run_as_users_of_their_own(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    """The shipped layout with fcitx5 as the input method and wvkbd as the
    keyboard: the helper starts each as its own user (neither Carrel's, the
    exam's nor each other's), in a cgroup of its own, with a fresh private
    home (the engine's configuration in it, made by the helper). From each
    role's user, Carrel, the app and the other role are out of reach:
    signals, ptrace and /proc/PID/mem are refused, and the other's home
    cannot be entered. When the session ends the keyboard, its processes and
    its home are gone; the engine's home goes when Carrel does."""
    h.require_tool("fcitx5")
    h.require_tool("wvkbd-mobintl")
    engine_user, keyboard_user = account("carrel-input"), account("carrel-keyboard")
    machine.start_helper("--input-method-user", "carrel-input", "--keyboard-user", "carrel-keyboard")
    policy = machine.carrel_dir / "policy.toml"
    policy.write_text('[input_method]\ncommand = ["/usr/bin/fcitx5"]\nengines = ["mozc"]\n\n'
                      '[on_screen_keyboard]\ncommand = ["/usr/bin/wvkbd-mobintl", "-L", "250"]\n')
    w = PrivilegedWorld(carrel, procs, logdir, logs, client_python, pywayland_protocols, machine,
                        args=["--policy", str(policy)])
    assert h.wait_until(lambda: "input method: the engine bound the input method" in w.log(), 20), w.log()
    a = w.client("exam")
    a.map()
    a.bind(version=2)
    a.send("config c ; allow c 3 ; allow c 4")
    a.begin(config="c")
    a.began()
    assert h.wait_until(lambda: "on-screen keyboard: its layer surface was accepted" in w.log(), 20), w.log()
    # The session turned prediction off: the engine was restarted with it.
    assert h.wait_until(lambda: "input method: the engine bound the input method" in w.log().split("prediction off")[-1], 20), w.log()
    engine = process_of("fcitx5", engine_user)
    keyboard = process_of("wvkbd-mobintl", keyboard_user)
    assert engine and keyboard, f"engine {engine}, keyboard {keyboard}\n{w.log()}"
    homes = {}
    for pid, cgroup, user in ((engine, "input-method", engine_user), (keyboard, "keyboard", keyboard_user)):
        assert f"/carrel-{w.carrel.pid}-{cgroup}\n" in Path(f"/proc/{pid}/cgroup").read_text()
        fields = status_fields(pid)
        assert int(fields["CapEff"], 16) == 0 and int(fields["CapBnd"], 16) == 0, fields
        environ = dict(item.split("=", 1) for item in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in item)
        home = Path(environ["HOME"])
        assert environ.get("XDG_RUNTIME_DIR") == str(home) and home.parent == machine.shared, environ
        info = home.stat()
        assert (info.st_uid, info.st_mode & 0o777) == (user.pw_uid, 0o700), (home, oct(info.st_mode))
        homes[cgroup] = home
    profile = (homes["input-method"] / ".config" / "fcitx5" / "profile").read_text()
    assert "Name=mozc" in profile, profile
    # Each role's user against Carrel, the app and the other role.
    for user, other, other_home in ((engine_user, keyboard, homes["keyboard"]), (keyboard_user, engine, homes["input-method"])):
        for target in (w.carrel.pid, w.app_pid, other):
            out = run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups",
                       SYSTEM_PYTHON, "-c", ATTACKS, str(target)]).stdout
            result = json.loads(out)
            assert result == {"kill0": "EPERM", "term": "EPERM", "ptrace": "EPERM", "mem": "EACCES"}, (user.pw_name, target, result)
        entered = run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups",
                       "ls", str(other_home)], check=False)
        assert entered.returncode != 0 and "Permission denied" in entered.stderr, (user.pw_name, entered)
    a.send("end s")
    a.expect("session s ended")
    assert h.wait_until(lambda: not process_of("wvkbd-mobintl", keyboard_user), 5), "the keyboard outlived its session"
    assert h.wait_until(lambda: not homes["keyboard"].exists(), 5), f"the keyboard's home {homes['keyboard']} was left"
    # Prediction is back on between sessions: a new engine, in a new home
    # (the old one may still be ending when the new one starts).
    def home_of(pid):
        try:
            environ = Path(f"/proc/{pid}/environ").read_text()
        except (OSError, TypeError):
            return None
        return Path(dict(item.split("=", 1) for item in environ.split("\0") if "=" in item).get("HOME", ""))
    new_home = [None]

    def restarted() -> bool:
        new_home[0] = home_of(process_of("fcitx5", engine_user))
        return new_home[0] is not None and new_home[0] != homes["input-method"]
    assert h.wait_until(restarted, 10), "no new engine runs between sessions"
    assert h.wait_until(lambda: not homes["input-method"].exists(), 5), "the restarted engine's old home was left"
    engine_home = new_home[0]
    w.carrel.signal(signal.SIGTERM)
    w.carrel.wait_exit()
    assert h.wait_until(lambda: not process_of("fcitx5", engine_user), 5), "the engine outlived Carrel"
    assert h.wait_until(lambda: not engine_home.exists(), 5), f"the engine's home {engine_home} was left"


def test_each_role_needs_a_user_of_its_own(machine, procs):
    """A role's user that is also another role's, Carrel's or the app's
    stops the helper at start, with a message saying which."""
    account("carrel-input")
    for extra, says in ((["--input-method-user", "exam"], "is also the app's user"),
                        (["--keyboard-user", "carrel"], "is also Carrel's user"),
                        (["--input-method-user", "carrel-input", "--keyboard-user", "carrel-input"], "carrel-input, is also the keyboard's user")):
        out = machine.ns.exec(["unshare", "-m", "sh", "-c", MOUNT + 'exec "$0" "$@"', privileged_bin(),
                               "--socket", str(machine.socket), "--cgroup-subtree", machine.subtree, *extra], check=False)
        assert out.returncode != 0 and says in out.stderr, (extra, out)


def test_end_force_stops_the_helpers_app_through_the_helper(
        carrel, procs, logdir, logs, machine, client_python, pywayland_protocols):
    """The session's owner is the app the helper started (the assessment
    client, as `exam`, on WAYLAND_SOCKET): `carrelctl end --force` ends the
    session, then the app gets SIGTERM through the helper after the notice."""
    from carrel_clients import CLIENT, Driver
    machine.start_helper()
    protocols = machine.shared / "protocols"
    shutil.copytree(pywayland_protocols, protocols)
    for path in [protocols, *protocols.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    fifo_in, fifo_out = machine.app_dir / "stdin", machine.app_dir / "stdout"
    for fifo in (fifo_in, fifo_out):
        os.mkfifo(fifo, 0o600)
        os.chown(fifo, machine.exam.pw_uid, machine.exam.pw_gid)
    pipes = FifoProcess(fifo_in, fifo_out)
    control = machine.carrel_dir / "control.sock"
    audit_log = machine.carrel_dir / "audit.jsonl"
    old = os.environ.get("CARREL_BIN")
    os.environ["CARREL_BIN"] = str(machine.wrapper)
    try:
        c = carrel.start(app=["sh", "-c", 'exec "$0" "$1" < "$2" > "$3"', client_python, CLIENT, fifo_in, fifo_out],
                         args=["--privileged-helper", str(machine.socket), "--control-socket", str(control)],
                         env={"CARREL_PYWAYLAND_PROTOCOLS": str(protocols), "PYTHONUNBUFFERED": "1"},
                         audit_log=audit_log)
    finally:
        if old is None:
            os.environ.pop("CARREL_BIN", None)
        else:
            os.environ["CARREL_BIN"] = old
    transcript = logdir / "helper-app.transcript"
    logs.append(("the helper's app transcript", transcript))
    a = Driver("helper-app", pipes, logdir / "helper-app.stderr", transcript)
    try:
        a.expect("ready", what="the app connected through WAYLAND_SOCKET")
        a.map()
        a.bind()
        a.begin()
        a.began()
        # No network provider: the app is still in carrel's (delegated) cgroup, not the helper's.
        procs_in = machine.cgroup_sh(f"cat /sys/fs/cgroup/{machine.subtree}/carrel-{c.pid}/cgroup.procs").stdout.split()
        assert len(procs_in) == 1, procs_in
        assert Path(f"/proc/{procs_in[0]}/status").read_text().count(f"\t{machine.exam.pw_uid}") >= 4
        r = subprocess.run([str(ctl_bin()), "--socket", str(control), "end", "--reason", "app hangs", "--force"],
                           capture_output=True, text=True, timeout=15, env=h.clean_env())
        assert r.returncode == 0, r.stdout + r.stderr
        a.expect("session s ended", what="ended after end --force")
        # The notice (1 s), then SIGTERM through the helper; the app ends, and so does carrel (no kiosk).
        assert c.wait_exit() == 128 + signal.SIGTERM, c.evidence()
        records = [json.loads(line) for line in audit_log.read_text().splitlines()]
        stops = [r.get("detail", "") for r in records if r["event"] == "app_stop"]
        assert any("SIGTERM sent to helper program 1" in d for d in stops), stops
        v = subprocess.run([str(ctl_bin()), "audit", "verify", str(audit_log)], capture_output=True, text=True, timeout=30)
        assert v.returncode == 0 and "chain intact" in v.stdout, v.stdout + v.stderr
    finally:
        pipes.close()


def test_helper_unit_passes_systemd_analyze_verify(tmp_path):
    """dist/carrel-privileged.service, with its binary swapped for one that exists here."""
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        pytest.skip("systemd-analyze is not installed (Debian package systemd, which meson-helpers/packages.sh installs)")
    unit = (h.REPO / "dist/carrel-privileged.service").read_text()
    assert "ExecStopPost=/usr/bin/carrel-privileged --recover" in unit
    probe = tmp_path / "carrel-privileged.service"
    probe.write_text(unit.replace("/usr/bin/carrel-privileged", "/bin/true"))
    r = subprocess.run([analyze, "verify", str(probe)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and not r.stderr.strip(), f"systemd-analyze verify: {r.stderr}"
