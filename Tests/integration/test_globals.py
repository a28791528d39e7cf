"""Which globals each role sees, as a real client (wayland-info) reports them.

The expectation is written down here, per role, as literal interface names;
the role table carrel prints (`--print-globals ROLE`) and what wayland-info
sees must both agree with it.
"""

import os
import stat
from pathlib import Path

import carrel_harness as h
import pytest
from global_tables import DESKTOP_TABLE, GPU_ONLY

PINNED_TABLES = {
    "app": DESKTOP_TABLE | {"carrel_assessment_manager_v1"},
    "participant": DESKTOP_TABLE,
    "untrusted": DESKTOP_TABLE,
    "input_method": DESKTOP_TABLE,
    # Launched only for a session allowing it: its band and its keys.
    "on_screen_keyboard": DESKTOP_TABLE | {"zwlr_layer_shell_v1", "zwp_virtual_keyboard_manager_v1"},
}
# The same under a policy that names an input method: text input for the
# app and participants, the input method's globals for its role alone.
INPUT_METHOD_TABLES = {
    "app": DESKTOP_TABLE | {"carrel_assessment_manager_v1", "zwp_text_input_manager_v3"},
    "participant": DESKTOP_TABLE | {"zwp_text_input_manager_v3"},
    "untrusted": DESKTOP_TABLE,
    "input_method": DESKTOP_TABLE | {"zwp_input_method_manager_v2", "zwp_virtual_keyboard_manager_v1"},
    "on_screen_keyboard": DESKTOP_TABLE | {"zwlr_layer_shell_v1", "zwp_virtual_keyboard_manager_v1"},
}


def role_table(role: str) -> set:
    r = h.run_carrel_cli(["--print-globals", role])
    assert r.returncode == 0, f"--print-globals {role} exited {r.returncode}: {r.stderr!r}"
    return {line.strip() for line in r.stdout.splitlines() if line.strip()}


def check_globals(role: str, seen: set, raw_output: str) -> None:
    table = role_table(role)
    context = f"\nrole {role}: wayland-info saw {sorted(seen)}\nrole table: {sorted(table)}"
    assert seen, f"wayland-info listed no globals; its output:\n{raw_output[-4000:]}"
    pinned = PINNED_TABLES[role]
    assert table == pinned, f"--print-globals {role} differs from the pinned table: " \
                            f"extra {sorted(table - pinned)}, missing {sorted(pinned - table)}{context}"
    assert pinned - GPU_ONLY <= seen <= pinned, \
        f"the {role} role saw other than its pinned globals: extra {sorted(seen - pinned)}, " \
        f"missing {sorted(pinned - GPU_ONLY - seen)}{context}"
    forbidden = seen & h.FORBIDDEN_GLOBALS
    assert not forbidden, f"privileged globals reached the {role} role: {sorted(forbidden)}{context}"
    outside = seen - table
    assert not outside, f"globals not in the {role} role table were advertised: " \
                        f"{sorted(outside)}{context}"
    missing_core = h.CORE_GLOBALS - seen
    assert not missing_core, f"core globals missing for {role}: {sorted(missing_core)}{context}"
    missing_desktop = h.DESKTOP_GLOBALS - seen
    assert not missing_desktop, f"desktop globals missing for {role}: " \
                                f"{sorted(missing_desktop)}{context}"
    allowed_extra = h.RENDERER_GLOBALS | (h.ASSESSMENT_GLOBALS if role == "app" else set())
    unexpected = seen - h.DESKTOP_GLOBALS - allowed_extra
    assert not unexpected, f"globals beyond the desktop set for {role}: {sorted(unexpected)}{context}"
    # Everything in the table that was not advertised must be a global that is
    # legitimately not created here (GPU-only with pixman; the assessment
    # manager when the policy entitles nobody) -- otherwise the table and the
    # server disagree.
    not_seen = table - seen
    assert not_seen <= h.RENDERER_GLOBALS | h.ASSESSMENT_GLOBALS, \
        f"the {role} role table lists globals the server did not advertise: " \
        f"{sorted(not_seen - h.RENDERER_GLOBALS - h.ASSESSMENT_GLOBALS)}{context}"


@pytest.mark.parametrize("role", sorted(PINNED_TABLES))
def test_printed_role_table_is_the_pinned_one(carrel_bin, role):
    table = role_table(role)
    assert table == PINNED_TABLES[role], \
        f"--print-globals {role}: extra {sorted(table - PINNED_TABLES[role])}, " \
        f"missing {sorted(PINNED_TABLES[role] - table)}"


@pytest.mark.parametrize("role", sorted(INPUT_METHOD_TABLES))
def test_printed_role_table_with_an_input_method_is_the_pinned_one(tmp_path, role):
    policy = tmp_path / "policy.toml"
    policy.write_text('[input_method]\ncommand = ["/usr/bin/fcitx5"]\n')
    r = h.run_carrel_cli(["--policy", str(policy), "--print-globals", role])
    assert r.returncode == 0, f"--print-globals {role} exited {r.returncode}: {r.stderr!r}"
    table = {line.strip() for line in r.stdout.splitlines() if line.strip()}
    assert table == INPUT_METHOD_TABLES[role], \
        f"--print-globals {role} with an input method: extra {sorted(table - INPUT_METHOD_TABLES[role])}, " \
        f"missing {sorted(INPUT_METHOD_TABLES[role] - table)}"


def test_app_role_sees_exactly_the_desktop_globals(carrel):
    h.require_tool("wayland-info")
    c = carrel.start(app=["wayland-info"])
    status = c.wait_exit()
    out = c.stdout_path.read_text(errors="replace")
    assert status == 0, f"carrel -- wayland-info exited {status}\n{c.evidence()}"
    check_globals("app", h.wayland_info_interfaces(out), out)


def test_untrusted_role_sees_exactly_the_desktop_globals(carrel):
    h.require_tool("wayland-info")
    c = carrel.start(app=None)  # no app: carrel runs until SIGTERM
    info = c.client(["wayland-info"])
    status = info.wait_exit()
    assert status == 0, f"wayland-info on the public socket exited {status}:\n{info.stderr()[-3000:]}"
    out = info.stdout()
    check_globals("untrusted", h.wayland_info_interfaces(out), out)
    assert not h.wayland_info_interfaces(out) & h.ASSESSMENT_GLOBALS, \
        "an untrusted client saw the assessment global"
    assert c.alive(), f"carrel without an app ended on its own\n{c.evidence()}"
    c.signal(15)
    assert c.wait_exit() == 0, c.evidence()


def test_app_gets_a_private_socket_apart_from_the_public_one(carrel, tmp_path):
    """The app's WAYLAND_DISPLAY is an absolute path to a socket that is not the
    public one and that no other user can reach."""
    record = tmp_path / "app-env"
    c = carrel.start(app=["sh", "-c", 'printf "%s\\n" "$WAYLAND_DISPLAY" > "$0.tmp" && '
                                      'mv "$0.tmp" "$0" && exec sleep 300', str(record)])
    assert h.wait_until(record.exists, 10), f"the app never ran\n{c.evidence()}"
    app_display = record.read_text().strip()
    assert app_display.startswith("/"), f"app WAYLAND_DISPLAY is not absolute: {app_display!r}"
    path = Path(app_display)
    assert stat.S_ISSOCK(path.stat().st_mode), f"{path} is not a socket"
    public = c.runtime_dir / c.socket_name
    assert not os.path.samefile(path, public), "the app was given the public socket"
    # The socket's directory must keep other users out (0700 or stricter).
    mode = stat.S_IMODE(path.parent.stat().st_mode)
    assert mode & 0o077 == 0, f"app socket directory {path.parent} has mode {oct(mode)}"
    c.signal(15)
    assert c.wait_exit() == 0, c.evidence()
