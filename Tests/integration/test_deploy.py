"""An exam machine for real: the install layout, the shipped unit run as
systemd would run it, and the shipped policy failing closed.

- meson-helpers/install into a temporary DESTDIR, with the binaries under
  test (--bindir-from, no release build): the tree, pkg-config's pkgdatadir,
  an edited policy kept, and the installed carrel started headless under the
  installed policy.
- dist/carrel-kiosk-root.service (Carrel as root, no helper): its ExecStart,
  parsed from the installed unit and run as written with the unit's
  Environment, as the unit's user (root),
  headless, in private mount and network namespaces that hold what systemd
  and the installer would have made: the installed binaries over /usr/bin and
  /etc/carrel/policy.toml (overlays), the users `exam` and `carrel-admin`
  when the machine lacks them (an overlaid /etc/passwd and /etc/group), and
  RuntimeDirectory, LogsDirectory and StateDirectory with the unit's modes.
  Carrel is ready when its control socket is there.
- dist/carrel-privileged.service and dist/carrel-kiosk.service: both
  ExecStart lines the same way, the helper as root and Carrel as `carrel` in
  a cgroup chowned to it (Delegate=yes).
- dist/policy.toml on a machine without nftables on PATH and without a
  session bus: a session fails to begin (restriction_failed), never runs
  unrestricted.

Root only for the unit test (mount namespaces); it skips otherwise.
"""

from __future__ import annotations

import configparser
import grp
import json
import os
import pwd
import select
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import RESTRICTION_FAILED
from carrel_clients import World

INSTALL = h.REPO / "meson-helpers" / "install"
PROGRAMS = ("carrel", "carrelctl", "carrel-demo-exam", "carrel-privileged")
READY_TIMEOUT = 20.0


def bindir() -> Path:
    return h.carrel_bin().parent


def run(argv, timeout=120.0, **kwargs) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, **kwargs)
    except subprocess.TimeoutExpired:
        raise h.HarnessError(f"{argv} did not finish within {timeout}s") from None


def install(destdir: Path, prefix: str = "/usr") -> subprocess.CompletedProcess:
    r = run([INSTALL, "--destdir", destdir, "--prefix", prefix, "--bindir-from", bindir()])
    assert r.returncode == 0, f"install exited {r.returncode}\n{r.stderr}"
    return r


def unit_sections(path: Path) -> configparser.ConfigParser:
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str
    unit.read(path)
    return unit


# A mount can fail (ENOENT) while a lower directory changes under it: a package
# being installed elsewhere on the machine edits /etc. Tried again for up to 10 s.
OVERLAY = ('overlay() { n=0; until mount -t overlay overlay -o "lowerdir=$1" "$2"; do '
           'n=$((n + 1)); [ "$n" -lt 20 ] || return 1; sleep 0.5; done; }')


def tiny_dir(prefix: str) -> Path:
    """A short directory under /tmp (sun_path is 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(path, 0o755)
    return path


@pytest.fixture
def staged(tmp_path) -> Path:
    root = tmp_path / "stage"
    install(root)
    return root


def test_install_lays_out_the_tree_and_keeps_an_edited_policy(staged, tmp_path, procs, logdir, logs):
    for p in PROGRAMS:
        installed = staged / "usr/bin" / p
        assert installed.is_file() and os.access(installed, os.X_OK), installed
        assert installed.read_bytes() == (bindir() / p).read_bytes(), f"{installed} is not {bindir() / p}"
    # carrel-browser, when built (test-all's CARREL_BROWSER=1 builds it), with its web
    # process extension where the installed carrel-browser finds it (../lib/carrel).
    browser_built = (bindir() / "carrel-browser").is_file()
    if os.environ.get("CARREL_BROWSER") == "1":
        assert browser_built, f"CARREL_BROWSER=1 but {bindir() / 'carrel-browser'} was not built"
    if browser_built:
        browser = staged / "usr/bin/carrel-browser"
        extension = staged / "usr/lib/carrel/libCarrelBrowserExtension.so"
        assert browser.read_bytes() == (bindir() / "carrel-browser").read_bytes(), browser
        assert extension.read_bytes() == (bindir() / "libCarrelBrowserExtension.so").read_bytes(), extension
        seb = tmp_path / "exam.seb"
        seb.write_text('<?xml version="1.0"?><plist version="1.0"><dict><key>startURL</key>'
                       '<string>https://exam.example.org/</string></dict></plist>')
        env = {k: v for k, v in os.environ.items() if k != "CARREL_BROWSER_EXTENSION"}
        r = run([browser, "--keys", seb], env=env, timeout=30)
        assert r.returncode == 0 and "Config Key: " in r.stdout and "not found" not in r.stdout, \
            f"the installed carrel-browser did not find its extension:\n{r.stdout}{r.stderr}"
    else:
        assert not (staged / "usr/bin/carrel-browser").exists(), "carrel-browser installed though not built"
    unit = staged / "usr/lib/systemd/system/carrel-kiosk.service"
    assert unit.read_text() == (h.REPO / "dist/carrel-kiosk.service").read_text(), "prefix /usr: the unit as shipped"
    assert (staged / "usr/share/wayland-sessions/carrel.desktop").is_file()
    helper_unit = staged / "usr/lib/systemd/system/carrel-privileged.service"
    assert helper_unit.read_text() == (h.REPO / "dist/carrel-privileged.service").read_text()
    root_unit = staged / "usr/lib/systemd/system/carrel-kiosk-root.service"
    assert root_unit.read_text() == (h.REPO / "dist/carrel-kiosk-root.service").read_text()
    # What the kernel and init are told, so the keyboard has no way out of the seat.
    for shipped, installed in (("dist/sysctl.d/60-carrel.conf", "usr/lib/sysctl.d/60-carrel.conf"),
                               ("dist/system.conf.d/60-carrel.conf", "usr/lib/systemd/system.conf.d/60-carrel.conf")):
        assert (staged / installed).read_text() == (h.REPO / shipped).read_text(), installed
    assert "kernel.sysrq = 0" in (staged / "usr/lib/sysctl.d/60-carrel.conf").read_text()
    xml = staged / "usr/share/carrel/protocols/carrel-assessment-v1.xml"
    assert xml.read_bytes() == (h.REPO / "protocols/carrel-assessment-v1.xml").read_bytes()
    policy = staged / "etc/carrel/policy.toml"
    assert policy.read_text() == (h.REPO / "dist/policy.toml").read_text()
    assert stat.S_IMODE(policy.stat().st_mode) == 0o644

    # pkg-config finds the XML, as with wayland-protocols (sysroot: the staging tree).
    pc_path = staged / "usr/share/pkgconfig"
    assert (pc_path / "carrel-assessment.pc").is_file()
    env = h.clean_env({"PKG_CONFIG_PATH": str(pc_path), "PKG_CONFIG_LIBDIR": str(pc_path)})
    r = run(["pkg-config", "--variable=pkgdatadir", "carrel-assessment"], env=env, timeout=10)
    # pkgconf's pc_sysrootdir is "/" by default: "//usr/…", as for wayland-protocols.
    assert r.returncode == 0 and r.stdout.strip().lstrip("/") == "usr/share/carrel/protocols", (r.stdout, r.stderr)
    r = run(["pkg-config", "--variable=pkgdatadir", "carrel-assessment"],
            env={**env, "PKG_CONFIG_SYSROOT_DIR": str(staged)}, timeout=10)
    assert r.returncode == 0 and Path(r.stdout.strip()) / "carrel-assessment-v1.xml" == xml, (r.stdout, r.stderr)
    r = run(["pkg-config", "--modversion", "carrel-assessment"], env=env, timeout=10)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr

    # The policy is the administrator's once installed.
    policy.write_text(policy.read_text() + "\n# edited by the administrator\n")
    edited = policy.read_text()
    r = install(staged)
    assert policy.read_text() == edited and "kept the existing" in r.stderr, r.stderr

    # Another prefix: the unit and the session entry name its binaries.
    other = tmp_path / "opt-stage"
    install(other, prefix="/opt/carrel")
    moved = (other / "opt/carrel/lib/systemd/system/carrel-kiosk.service").read_text()
    assert "/opt/carrel/bin/carrel --kiosk" in moved and "/opt/carrel/bin/carrel-demo-exam" in moved, moved
    assert "/usr/bin/carrel" not in moved
    helper_moved = (other / "opt/carrel/lib/systemd/system/carrel-privileged.service").read_text()
    assert "ExecStart=/opt/carrel/bin/carrel-privileged --socket" in helper_moved and "/usr/bin/" not in helper_moved
    root_moved = (other / "opt/carrel/lib/systemd/system/carrel-kiosk-root.service").read_text()
    assert "/opt/carrel/bin/carrel --kiosk" in root_moved and "/usr/bin/carrel" not in root_moved
    assert (other / "etc/carrel/policy.toml").is_file() and (other / "opt/carrel/bin/carrel").is_file()

    # The installed carrel starts headless under the installed policy; its
    # audit log and provider state go to scratch paths, and as root it runs
    # in a mount namespace with a /run of its own (the policy's control
    # socket is /run/carrel/control.sock).
    scratch = tiny_dir("carrel-inst-")
    try:
        rfd, wfd = os.pipe()
        os.set_inheritable(wfd, True)
        err = logdir / "installed-carrel.stderr"
        logs.append(("installed carrel stderr", err))
        argv = [staged / "usr/bin/carrel", "--policy", policy, "--ready-fd", str(wfd),
                "--audit-log", scratch / "audit.jsonl", "--provider-state-dir", scratch / "providers"]
        if os.geteuid() == 0:
            argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    'mount -t tmpfs -o mode=0755 tmpfs /run && exec "$@"', "carrel", *argv]
        env = h.clean_env({"XDG_RUNTIME_DIR": str(scratch), "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman"})
        with open(err, "wb") as e:
            proc = procs.spawn("installed-carrel", argv, env=env, stderr=e, pass_fds=(wfd,))
        os.close(wfd)
        ready, _, _ = select.select([rfd], [], [], READY_TIMEOUT)
        assert ready, f"the installed carrel was not ready in {READY_TIMEOUT}s\n{h.tail(err)}"
        assert os.read(rfd, 256).decode().startswith("wayland-"), h.tail(err)
        os.close(rfd)
        log = err.read_text(errors="replace")
        assert f"policy {policy}: " in log and "providers network;" in log, \
            "carrel did not run under the installed policy"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, h.tail(err)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _free_id(taken) -> int:
    for candidate in range(64990, 60000, -1):
        if candidate not in taken:
            return candidate
    raise h.HarnessError("no free uid/gid between 60000 and 64990")


def _accounts(etc: Path) -> tuple[int, int]:
    """Copies /etc/passwd and /etc/group into `etc` with `exam` and
    `carrel-admin` added if this machine lacks them; returns (exam uid, admin gid)."""
    passwd, group = Path("/etc/passwd").read_text(), Path("/etc/group").read_text()
    try:
        exam = pwd.getpwnam("exam").pw_uid
    except KeyError:
        exam = _free_id({p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()})
        passwd += f"exam:x:{exam}:{exam}:exam app:/nonexistent:/usr/sbin/nologin\n"
        group += f"exam:x:{exam}:\n"
    try:
        admin = grp.getgrnam("carrel-admin").gr_gid
    except KeyError:
        admin = _free_id({g.gr_gid for g in grp.getgrall()} | {exam})
        group += f"carrel-admin:x:{admin}:\n"
    (etc / "passwd").write_text(passwd)
    (etc / "group").write_text(group)
    return exam, admin


def _directories(service) -> list[tuple[str, str]]:
    """(path, mode) of what systemd makes for RuntimeDirectory= and the others."""
    made = []
    for key, base, default_mode in (("RuntimeDirectory", "/run", "0755"), ("LogsDirectory", "/var/log", "0755"),
                                    ("StateDirectory", "/var/lib", "0755")):
        for name in service.get(key, "").split():
            made.append((f"{base}/{name}", service.get(f"{key}Mode", default_mode)))
    return made


def test_shipped_unit_execstart_runs_as_systemd_would(staged, procs, logdir, logs, carrel_ctl_bin):
    if os.geteuid() != 0:
        pytest.skip("needs root: mount and network namespaces stand in for the installed machine")
    h.require_tool("unshare")
    h.require_tool("nsenter")
    h.require_tool("dbus-run-session")
    # The root layout, for machines without carrel-privileged.
    unit = unit_sections(staged / "usr/lib/systemd/system/carrel-kiosk-root.service")
    service = unit["Service"]
    assert "carrel-kiosk.service" in unit["Unit"]["Conflicts"], "one kiosk on tty7"
    assert service["Restart"] == "always", "the kiosk must come back whatever ends it"
    assert unit["Unit"].get("StartLimitIntervalSec") == "0", "and not stop coming back after a few quick failures"
    assert service["Type"] == "exec"
    assert "User" not in service, "Carrel runs as root; the app as --app-user"
    exec_start = shlex.split(service["ExecStart"])
    assert "--app-user" in exec_start and "/usr/bin/carrel" in exec_start, exec_start
    app_user = exec_start[exec_start.index("--app-user") + 1]
    environment = dict(item.split("=", 1) for item in shlex.split(service.get("Environment", "")))
    made = _directories(service)
    assert ("/run/carrel", "0711") in made and ("/var/log/carrel", "0750") in made, made
    assert any(path == "/var/lib/carrel" for path, _ in made), made

    work = tiny_dir("carrel-unit-")
    try:
        etc = work / "etc"
        (etc / "carrel").mkdir(parents=True)
        shutil.copy2(staged / "etc/carrel/policy.toml", etc / "carrel/policy.toml")
        exam_uid, admin_gid = _accounts(etc)
        assert app_user == "exam"
        varlib = work / "varlib"
        varlib.mkdir()
        # The service manager's side: the environment.
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "LANG": "C.UTF-8", **environment,
               "RUNTIME_DIRECTORY": "/run/carrel", "LOGS_DIRECTORY": "/var/log/carrel",
               "STATE_DIRECTORY": "/var/lib/carrel",
               # Headless: this machine has no seat for it.
               "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman"}
        # A build against a wlroots outside the library path (the 0.18 leg)
        # finds it as the test suite does; an installed Carrel needs nothing.
        if os.environ.get("LD_LIBRARY_PATH"):
            env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
        mkdirs = []
        for path, mode in made:
            if path.startswith("/var/lib/"):
                (varlib / Path(path).name).mkdir(mode=int(mode, 8))
                os.chmod(varlib / Path(path).name, int(mode, 8))
            else:
                mkdirs.append(f"mkdir -p {path} && chmod {mode} {path}")
        setup = " && ".join([
            OVERLAY,
            f"overlay {staged}/usr/bin:/usr/bin /usr/bin",
            f"overlay {etc}:/etc /etc",
            f"overlay {varlib}:/var/lib /var/lib",
            "mount -t tmpfs -o mode=0755 tmpfs /run",
            "mount -t tmpfs -o mode=0755 tmpfs /var/log",
            *mkdirs,
            'exec "$@"'])
        argv = ["unshare", "--mount", "--net", "--propagation", "private", "sh", "-c", setup, "unit", *exec_start]
        err = logdir / "unit.stderr"
        logs.append(("unit stderr", err))
        with open(err, "wb") as e:
            proc = procs.spawn("unit", argv, env=env, stdout=e, stderr=e)

        socket_path = "/run/carrel/control.sock"
        assert h.wait_until(lambda: _unit_listens(proc, socket_path, err) or proc.poll() is not None, READY_TIMEOUT) \
            and proc.poll() is None, f"no control socket within {READY_TIMEOUT}s\n{h.tail(err)}"

        inside = ["nsenter", "--mount", "--net", "--target", str(proc.pid)]
        st = run([*inside, "stat", "-c", "%u %g %a", socket_path], timeout=10)
        assert st.returncode == 0 and st.stdout.split() == ["0", str(admin_gid), "660"], (st.stdout, st.stderr)

        def ctl(*prefix: str) -> subprocess.CompletedProcess:
            return run([*inside, *prefix, "/usr/bin/carrelctl", "--socket", socket_path, "--json", "status"],
                       timeout=15, env=h.clean_env())
        r = ctl()
        assert r.returncode == 0 and json.loads(r.stdout)["status"]["mode"] == "kiosk", (r.stdout, r.stderr)
        member = ctl("setpriv", "--reuid=nobody", "--regid=nogroup", f"--groups={admin_gid}")
        assert member.returncode == 0, f"a member of carrel-admin was refused: {member.stderr}"
        stranger = ctl("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")
        assert stranger.returncode == 77, f"someone outside carrel-admin got in: {stranger.returncode} {stranger.stdout}"

        # Carrel runs as root; the app as exam, with nothing of root's.
        def app_status():
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    try:
                        if os.readlink(entry / "exe").endswith("/carrel-demo-exam") and _in_namespace(entry, proc.pid):
                            return (entry / "status").read_text()
                    except OSError:
                        continue
            return None
        status = h.wait_until(app_status, 10)
        assert status, f"the app never ran\n{h.tail(err)}"
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        assert fields["Uid"].split()[:2] == [str(exam_uid)] * 2, fields["Uid"]
        assert int(fields["CapEff"], 16) == 0 and int(fields["CapBnd"], 16) == 0, (fields["CapEff"], fields["CapBnd"])
        assert fields["NoNewPrivs"].strip() == "1"
        audit = run([*inside, "cat", "/var/log/carrel/audit.jsonl"], timeout=10)
        assert audit.returncode == 0 and '"event":"started"' in audit.stdout, audit.stderr

        os.killpg(proc.pid, signal.SIGTERM)  # as systemd stops the unit's cgroup
        proc.wait(timeout=15)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _unit_listens(proc, socket_path: str, log: Path) -> bool:
    """Carrel in the unit's namespace listens on socket_path. The path alone is
    not enough: until the unit's /run is mounted, /proc/PID/root/run is the
    host's, where another Carrel on the machine (a test run beside this one)
    may hold the same path."""
    return os.path.exists(f"/proc/{proc.pid}/root{socket_path}") and \
        f"control socket {socket_path} " in log.read_text(errors="replace")


def _in_namespace(entry: Path, pid: int) -> bool:
    try:
        return os.readlink(entry / "ns/mnt") == os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return False


@pytest.fixture
def carrel_ctl_bin() -> Path:
    return bindir() / "carrelctl"


def test_shipped_policy_fails_closed_without_what_its_providers_need(carrel, procs, logdir, logs, tmp_path,
                                                                     client_python, pywayland_protocols):
    """No nft on PATH and no session bus: begin fails, naming the provider. (The
    policy's control socket is left as it is: without the group carrel-admin
    Carrel runs without one, logged.)"""
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              env={"PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"},
              args=("--policy", str(h.REPO / "dist/policy.toml"),
                    "--provider-state-dir", str(tmp_path / "providers")))
    a = w.client("exam")
    a.map()
    a.bind()
    a.begin()
    m = a.expect(r"session s (began|failed (\d+) (.*))", what="the answer to begin")
    assert m.group(1) != "began", "began without the restrictions the shipped policy turns on"
    assert int(m.group(2)) == RESTRICTION_FAILED and "network" in m.group(3), m.group(0)
    records = [json.loads(line) for line in w.carrel.audit_log.read_text().splitlines()]
    assert [r["reason"] for r in records if r["event"] == "provider_failed"] == ["apply"], records
    w.alive()


def _rendered(value) -> str:
    """A TOML value as docs/POLICY.md's built-in table writes it."""
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value}`"


def test_readme_names_exactly_the_keys_where_the_shipped_policy_differs():
    import re
    import tomllib

    shipped = tomllib.loads((h.REPO / "dist/policy.toml").read_text())
    keys = {f"{table}.{key}": value for table, entries in shipped.items() for key, value in entries.items()}
    built_in_section = (h.REPO / "docs/POLICY.md").read_text().split("## The built-in policy", 1)[1]
    built_in = {m.group(1): m.group(2).strip() for m in
                re.finditer(r"^\| `([a-z_.]+)` \| ([^|]+) \|", built_in_section, re.M)}
    assert set(keys) <= set(built_in), f"keys the built-in table does not list: {set(keys) - set(built_in)}"
    differing = {key for key, value in keys.items() if _rendered(value) != built_in[key]}
    readme = (h.REPO / "README.md").read_text().split("## An exam machine", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z_.]+)` \|", readme, re.M))
    assert listed == differing, f"README lists {sorted(listed)}; the shipped policy differs in {sorted(differing)}"
    assert differing >= {"providers.network", "providers.network_exempt_units", "control.group"}, differing


@pytest.mark.parametrize("user, says", [("carrel-no-such-user", "no such user"), ("root", "that is root")])
def test_app_user_that_cannot_be_used_stops_carrel_at_start(carrel, tmp_path, user, says):
    if os.geteuid() != 0:
        pytest.skip("as root; unprivileged, --app-user is refused for that reason first")
    marker = tmp_path / "ran"
    c = carrel.start(app=["touch", str(marker)], args=["--app-user", user], wait_ready=False)
    try:
        status = c.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"carrel kept running with --app-user {user}\n{c.evidence()}") from None
    assert status != 0, c.evidence()
    err = c.stderr_path.read_text(errors="replace")
    assert f"--app-user {user}: {says}" in err, err[-3000:]
    assert not marker.exists(), "the app ran although its user could not be used"


def test_separated_units_execstart_lines_run_as_systemd_would(staged, procs, logdir, logs, carrel_ctl_bin):
    """carrel-privileged.service's ExecStart as root and carrel-kiosk.service's
    as `carrel`: the helper's socket,
    Carrel's user and capabilities, the app's user (started by the helper),
    the control socket, and the helper's ExecStopPost. As the root unit's
    test: private mount and network namespaces with the installed files, the
    unit's directories and Environment, headless; Delegate=yes is the unit's
    cgroup, system.slice/carrel-kiosk.service, made and chowned to `carrel`."""
    if os.geteuid() != 0:
        pytest.skip("needs root: mount and network namespaces stand in for the installed machine")
    from privileged_setup import MOUNT, account, unit_bounding_set
    h.require_tool("unshare")
    h.require_tool("nsenter")
    h.require_tool("dbus-run-session")
    carrel_user, exam = account("carrel"), account("exam")
    # The helper's ExecStart names a user for the input method and one for the keyboard.
    account("carrel-input"), account("carrel-keyboard")
    helper = unit_sections(staged / "usr/lib/systemd/system/carrel-privileged.service")["Service"]
    kiosk = unit_sections(staged / "usr/lib/systemd/system/carrel-kiosk.service")
    assert kiosk["Service"]["User"] == "carrel" and kiosk["Service"]["Delegate"] == "yes", dict(kiosk["Service"])
    assert kiosk["Service"]["SupplementaryGroups"] == "carrel-admin video" and kiosk["Service"]["Restart"] == "always"
    # Wanted, not required: the helper's loss interrupts the session, it does not restart the kiosk.
    assert "Requires" not in kiosk["Unit"] and "carrel-privileged.service" in kiosk["Unit"]["Wants"].split()
    # The seat through seatd, not a logind PAM session (which would move Carrel out of its delegated cgroup).
    assert "PAMName" not in kiosk["Service"] and "seatd.service" in kiosk["Unit"]["Wants"].split()
    assert "After=carrel-privileged.service" in (staged / "usr/lib/systemd/system/carrel-kiosk.service").read_text()
    assert helper["Restart"] == "always" and "--recover" in helper["ExecStopPost"], dict(helper)
    assert "CAP_SYS_ADMIN" not in helper["CapabilityBoundingSet"] and "CAP_NET_ADMIN" in helper["CapabilityBoundingSet"]
    helper_start = shlex.split(helper["ExecStart"])
    kiosk_start = shlex.split(kiosk["Service"]["ExecStart"])
    assert "--app-user" not in kiosk_start and "--privileged-helper" in kiosk_start, kiosk_start
    socket_path = kiosk_start[kiosk_start.index("--privileged-helper") + 1]
    assert socket_path == helper_start[helper_start.index("--socket") + 1]
    subtree = helper_start[helper_start.index("--cgroup-subtree") + 1]
    assert subtree == "system.slice/carrel-kiosk.service", subtree
    environment = dict(item.split("=", 1) for item in shlex.split(kiosk["Service"].get("Environment", "")))

    probe = run(["unshare", "-m", "sh", "-c", MOUNT + f"ls /sys/fs/cgroup/{subtree} 2>/dev/null | grep -c '^carrel-' || true"],
                timeout=10)
    if probe.stdout.strip() not in ("", "0"):
        pytest.skip(f"/sys/fs/cgroup/{subtree} is in use on this machine")
    work = tiny_dir("carrel-sep-")
    try:
        etc = work / "etc"
        (etc / "carrel").mkdir(parents=True)
        shutil.copy2(staged / "etc/carrel/policy.toml", etc / "carrel/policy.toml")
        exam_uid, admin_gid = _accounts(etc)
        varlib = work / "varlib"
        varlib.mkdir()
        owner = f"{carrel_user.pw_uid}:{carrel_user.pw_gid}"
        cg = f"/sys/fs/cgroup/{subtree}"
        env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "LANG": "C.UTF-8", **environment,
               "WLR_BACKENDS": "headless", "WLR_RENDERER": "pixman"}
        if os.environ.get("LD_LIBRARY_PATH"):
            env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
        exports = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        helper_err = logdir / "helper-unit.stderr"
        logs.append(("helper unit stderr", helper_err))
        # StateDirectory: in the /var/lib overlay's lower layer (an overlay of lower layers is read-only).
        (varlib / "carrel").mkdir(mode=0o700)
        os.chown(varlib / "carrel", carrel_user.pw_uid, carrel_user.pw_gid)
        setup = "\n".join([
            "set -e",
            OVERLAY,
            f"overlay {staged}/usr/bin:/usr/bin /usr/bin",
            f"overlay {etc}:/etc /etc",
            f"overlay {varlib}:/var/lib /var/lib",
            "mount -t tmpfs -o mode=0755 tmpfs /run",
            "mount -t tmpfs -o mode=0755 tmpfs /var/log",
            # What systemd makes: the helper's RuntimeDirectory (root), the kiosk's
            # directories (User=carrel), the delegated cgroup.
            "mkdir -m 0755 /run/carrel-privileged",
            f"mkdir -m 0711 /run/carrel && chown {owner} /run/carrel",
            f"mkdir -m 0750 /var/log/carrel && chown {owner} /var/log/carrel",
            "ip link set lo up",
            MOUNT.replace("exit 97; ", "exit 97"),
            f"mkdir -p {cg} && chown {owner} {cg} {cg}/cgroup.procs {cg}/cgroup.threads {cg}/cgroup.subtree_control",
            # With the unit's capability bounding set, as systemd starts it.
            f"(setpriv --bounding-set=-all,{unit_bounding_set()} --inh-caps=-all {shlex.join(helper_start)} 2>{helper_err} &)",
            f"for i in $(seq 100); do [ -S {socket_path} ] && break; sleep 0.1; done",
            f"echo $$ > {cg}/cgroup.procs",
            f"exec setpriv --reuid={carrel_user.pw_uid} --regid={carrel_user.pw_gid} --groups={admin_gid} "
            f"--inh-caps=-all --bounding-set=-all env -i {exports} {shlex.join(kiosk_start)}"])
        err = logdir / "separated-unit.stderr"
        logs.append(("kiosk unit (as carrel) stderr", err))
        with open(err, "wb") as e:
            proc = procs.spawn("separated-unit", ["unshare", "--mount", "--net", "--propagation", "private",
                                                  "sh", "-c", setup], env=h.clean_env(), stdout=e, stderr=e)
        control = "/run/carrel/control.sock"
        assert h.wait_until(lambda: _unit_listens(proc, control, err) or proc.poll() is not None,
                            READY_TIMEOUT) and proc.poll() is None, \
            f"no control socket within {READY_TIMEOUT}s\n{h.tail(err)}\n{h.tail(helper_err)}"
        inside = ["nsenter", "--mount", "--net", "--target", str(proc.pid)]
        st = run([*inside, "stat", "-c", "%u %g %a", socket_path], timeout=10)
        assert st.stdout.split() == [str(carrel_user.pw_uid), str(carrel_user.pw_gid), "600"], (st.stdout, st.stderr)
        st = run([*inside, "stat", "-c", "%u %g %a", control], timeout=10)
        assert st.stdout.split() == [str(carrel_user.pw_uid), str(admin_gid), "660"], (st.stdout, st.stderr)
        member = run([*inside, "setpriv", "--reuid=nobody", "--regid=nogroup", f"--groups={admin_gid}",
                      "/usr/bin/carrelctl", "--socket", control, "--json", "status"], timeout=15, env=h.clean_env())
        assert member.returncode == 0 and json.loads(member.stdout)["status"]["mode"] == "kiosk", (member.stdout, member.stderr)

        def status_of(exe: str):
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    try:
                        if os.readlink(entry / "exe").endswith(exe) and _in_namespace(entry, proc.pid):
                            return dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
                    except OSError:
                        continue
            return None
        carrel_status = h.wait_until(lambda: status_of("/usr/bin/carrel"), 10)
        assert carrel_status["Uid"].split() == [str(carrel_user.pw_uid)] * 4, carrel_status["Uid"]
        for cap in ("CapEff", "CapPrm", "CapAmb", "CapBnd"):
            assert int(carrel_status[cap], 16) == 0, (cap, carrel_status[cap])
        app = h.wait_until(lambda: status_of("/carrel-demo-exam"), 10)
        assert app, f"the app never ran\n{h.tail(err)}\n{h.tail(helper_err)}"
        assert app["Uid"].split() == [str(exam_uid)] * 4, app["Uid"]
        assert int(app["CapEff"], 16) == 0 and int(app["CapBnd"], 16) == 0 and app["NoNewPrivs"].strip() == "1"
        helper_status = status_of("/usr/bin/carrel-privileged")
        assert helper_status and int(app["PPid"]) == int(helper_status["Pid"]), "the app is not the helper's child"

        # Stopping the kiosk unit: systemd signals its cgroup (not the helper's).
        helper_pid = int(helper_status["Pid"])
        for pid in h.group_members(proc.pid):
            if pid != helper_pid:
                os.kill(pid, signal.SIGTERM)
        proc.wait(timeout=15)
        assert h.wait_until(lambda: "closed its connection; reverting" in helper_err.read_text(), 5), h.tail(helper_err)
        # The machine's namespaces outlive the helper for its ExecStopPost.
        held = [os.open(f"/proc/{helper_pid}/ns/{kind}", os.O_RDONLY) for kind in ("mnt", "net")]
        try:
            os.kill(helper_pid, signal.SIGTERM)
            assert h.wait_until(lambda: not h.pid_running(helper_pid) or h.proc_state(helper_pid) == "Z", 5)
            enter = ["nsenter", f"--mount=/proc/self/fd/{held[0]}", f"--net=/proc/self/fd/{held[1]}"]
            stop_post = run([*enter, *shlex.split(helper["ExecStopPost"])], timeout=15, pass_fds=held)
            assert stop_post.returncode == 0, stop_post.stderr
            left = run([*enter, "nft", "list", "tables"], timeout=10, pass_fds=held)
            assert left.returncode == 0 and "carrel" not in left.stdout, (left.stdout, left.stderr)
        finally:
            for fd in held:
                os.close(fd)
    finally:
        # The helper shares the namespace's process group: the fixture ends it.
        run(["unshare", "-m", "sh", "-c", MOUNT + f"for d in {cg}/carrel-*; do [ -d \"$d\" ] && echo 1 > \"$d/cgroup.kill\"; done; sleep 0.2; "
             f"rmdir {cg}/carrel-* {cg} 2>/dev/null; rmdir /sys/fs/cgroup/system.slice 2>/dev/null; true"], timeout=10)
        shutil.rmtree(work, ignore_errors=True)


def test_deploy_names_exactly_the_seats_runtime_packages():
    """docs/DEPLOY.md's apt-get line and its table are the list test-seat builds the guest from
    (CARREL_SEAT_PACKAGES): a package added to one and not the other fails here."""
    import re

    listed = subprocess.run(["bash", "-c", 'source meson-helpers/packages.sh && printf "%s\\n" "${CARREL_SEAT_PACKAGES[@]}"'],
                            cwd=h.REPO, capture_output=True, text=True, check=True).stdout.split()
    deploy = (h.REPO / "docs/DEPLOY.md").read_text()
    command = re.search(r"apt-get install --no-install-recommends (.*?)\n```", deploy, re.S)
    assert command, "docs/DEPLOY.md has no apt-get line for the seat's packages"
    assert sorted(command.group(1).replace("\\", " ").split()) == sorted(listed)
    table = deploy.split("| package | what for |", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`([a-z0-9.+-]+)`", table))
    missing = [p for p in listed if p not in named and p not in ("systemd", "systemd-sysv", "udev", "util-linux",
                                                                 "fcitx5-modules", "fcitx5-mozc", "fcitx5-hangul",
                                                                 "fcitx5-chinese-addons")]
    assert not missing, f"DEPLOY.md's table does not say what these are for: {missing}"
