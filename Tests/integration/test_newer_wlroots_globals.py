"""The globals newer wlroots releases can serve for capture, the clipboard and
the window list reach no one they must not, during a session and outside one.

wlroots 0.19 and 0.20 bring ext-image-copy-capture-v1 with its capture sources
(ext-image-capture-source-v1: outputs and, in 0.20, toplevels), ext-data-control-v1
and ext-foreign-toplevel-list-v1; security-context-v1 exists since 0.17. Carrel
creates none of them and its global filter classifies them as privileged (hidden
from every role, whatever `[capture]` says). Real clients check what each role is
offered: wayland-info as the app and as an untrusted client, grim (which takes
ext-image-copy-capture where it is offered, screencopy otherwise), wl-copy and
wl-paste (which take a data-control global where one is offered).

The test runs against every wlroots the suite is run with (CARREL_WLROOTS). On
0.15, which has none of these protocols, it asserts exactly what 0.15 offers each
role; on 0.19 and 0.20 the same tables must hold: no new global is added to any.
"""

import carrel_harness as h
from carrel_clients import begin_exam, end_exam
from global_tables import DESKTOP_TABLE, GPU_ONLY

# What wlroots 0.19/0.20 (and security-context, 0.17+) could offer.
NEWER_GLOBALS = {
    "ext_image_copy_capture_manager_v1",
    "ext_output_image_capture_source_manager_v1",
    "ext_foreign_toplevel_image_capture_source_manager_v1",
    "ext_data_control_manager_v1",
    "ext_foreign_toplevel_list_v1",
    "wp_security_context_manager_v1",
}
SCREENCOPY = "zwlr_screencopy_manager_v1"
APP = DESKTOP_TABLE | {"carrel_assessment_manager_v1"}

# The policy grants capture (screencopy) to the app outside sessions: the one
# way Carrel ever offers capture. The untrusted role never gets it.
EXPECTED = {
    ("app", "outside"): APP | {SCREENCOPY},
    ("untrusted", "outside"): DESKTOP_TABLE,
    ("app", "during"): APP,
    ("untrusted", "during"): DESKTOP_TABLE,
}


def offered(w, role: str) -> set:
    status, out, err = w.run_tool("wayland-info", ["wayland-info"], role=role, timeout=10.0)
    assert status == 0, f"wayland-info as {role} exited {status}: {err[-2000:]}\n{w.carrel.evidence()}"
    seen = h.wayland_info_interfaces(out)
    assert seen, f"wayland-info as {role} listed no globals:\n{out[-2000:]}"
    return seen


def check_offered(w, role: str, when: str) -> None:
    seen = offered(w, role)
    expected = EXPECTED[(role, when)]
    context = f"wlroots {h.wlroots_version()}, {role} {when} a session: wayland-info saw {sorted(seen)}"
    assert not seen & NEWER_GLOBALS, f"{context}\nnewer capture/clipboard/window-list globals reached " \
                                     f"the {role} role: {sorted(seen & NEWER_GLOBALS)}"
    assert seen - GPU_ONLY == expected - GPU_ONLY, \
        f"{context}\nextra {sorted(seen - expected)}, missing {sorted(expected - GPU_ONLY - seen)}"


def grim(w, tmp_path, role: str, name: str):
    shot = tmp_path / f"grim-{name}.png"
    status, _, err = w.run_tool("grim", ["grim", str(shot)], role=role, timeout=10.0)
    return status, shot.exists() and shot.stat().st_size > 0, err


def test_newer_capture_clipboard_and_window_list_globals_reach_no_one(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols):
    from carrel_clients import World

    for tool in ("wayland-info", "grim", "wl-copy", "wl-paste", "Xvfb"):
        h.require_tool(tool)
    policy = tmp_path / "policy.toml"
    policy.write_text('[capture]\nenabled_outside_sessions = true\nroles = ["app"]\n')
    # The x11 backend under Xvfb: a seat with a keyboard, which wl-clipboard needs
    # when no data-control global is offered.
    display = h.start_xvfb(procs, logdir, logs)
    w = World(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
              backend="x11", env={"DISPLAY": display}, args=["--policy", str(policy)])

    # Outside a session: the app has screencopy (the policy's grant) and nothing newer.
    check_offered(w, "app", "outside")
    check_offered(w, "untrusted", "outside")
    status, wrote, err = grim(w, tmp_path, "app", "app-before")
    assert (status, wrote) == (0, True), f"the policy's capture did not work for the app: {status} {err}"
    status, wrote, err = grim(w, tmp_path, "untrusted", "untrusted-before")
    assert status not in (0, None) and not wrote, f"an untrusted grim captured outside a session: {err}"
    # A clipboard the app set before the session: an untrusted wl-paste must not
    # get it through a data-control global (there is none); it may get it as any
    # desktop client does outside a session, so only the session's part is checked.
    copier = w.copy("before the session")

    exam = begin_exam(w)
    check_offered(w, "app", "during")
    check_offered(w, "untrusted", "during")
    for role in ("app", "untrusted"):
        status, wrote, err = grim(w, tmp_path, role, f"{role}-during")
        assert status not in (0, None) and not wrote, f"grim as {role} captured during the session: {err}"
    # The selection was cleared at begin; an untrusted wl-paste, whose window is
    # hidden and never focused, gets nothing, and an untrusted wl-copy reaches no one.
    status, out, err = w.run_tool("wl-paste", ["wl-paste", "--no-newline"], role="untrusted", timeout=3.0)
    assert "before the session" not in out and out == "", \
        f"an untrusted wl-paste got {out!r} during the session (status {status}, {err!r})"
    w.run_tool("wl-copy", ["wl-copy", "smuggled by an untrusted client"], role="untrusted", timeout=3.0)
    status, out, err = w.paste(timeout=3.0)
    assert "smuggled" not in out, f"an app-role wl-paste got an untrusted selection: {out!r}"
    end_exam(exam)

    # After the session: as before it.
    check_offered(w, "app", "outside")
    check_offered(w, "untrusted", "outside")
    status, wrote, err = grim(w, tmp_path, "app", "app-after")
    assert (status, wrote) == (0, True), f"capture did not come back for the app after the session: {err}"
    status, wrote, err = grim(w, tmp_path, "untrusted", "untrusted-after")
    assert status not in (0, None) and not wrote, f"an untrusted grim captured after the session: {err}"
    copier.kill()
    w.alive()
