"""carrel-assessment-v1 against the real binary, from a client nobody wrote in Swift.

The client (assessment_client.py) is pywayland, with its protocol modules
generated from the XML by pywayland's scanner once per test session: the XML is
the contract. Each client maps a real xdg_toplevel with a wl_shm buffer before it
begins a session, and prints every event it receives as one line.

App-role clients connect to carrel's app socket: carrel's app is a shell that
records its WAYLAND_DISPLAY (an absolute path) and sleeps, and the test starts
clients itself with that WAYLAND_DISPLAY. Untrusted clients use the public
socket. The clipboard tests run carrel on the x11 backend under Xvfb, because
wl-copy and wl-paste need a seat with a keyboard and a headless seat has none.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import carrel_harness as h
from assessment_protocol import (ACTIVE, ALREADY_ACTIVE, ALREADY_ENDED, ALREADY_SET, BAD_SURFACE,
                                 CLIENT_ENFORCEMENT, CONFIGURATION, ENFORCEMENTS, FAILED_INTERRUPTED,
                                 FEATURES, INACTIVE, INVALID_FEATURE, INVALID_TIME_LIMIT, MANAGER,
                                 MANAGER_WIRE, NOT_A_FEATURE, NOT_BEGUN, SESSION, SURFACE_NOT_READY,
                                 TEXT_ASSISTANCE, TIME_LIMIT, UNSUPPORTED_CONFIGURATION, expect_lock_state,
                                 lock_states, wait_lock_state)

QUIET_PERIOD = 1.5  # how long "nothing more arrives" is watched for


# ---------------------------------------------------------------------------
# Tests (the fixtures are in conftest.py; Driver and World in carrel_clients.py;
# the wire values and the lock-state helpers in assessment_protocol.py)


def test_bind_sends_each_feature_then_lock_state_then_done(world):
    a = world.client("app")
    events = a.bind()
    features = [tuple(map(int, e.split()[3:5])) for e in events if " feature " in e]
    assert len(features) == len(FEATURES), f"expected {len(FEATURES)} feature events: {events}"
    assert {f for f, _ in features} == FEATURES, f"not one event per feature: {events}"
    assert all(e in ENFORCEMENTS for _, e in features), f"enforcement outside the enum: {events}"
    client_enforced = {f for f, e in features if e == CLIENT_ENFORCEMENT}
    assert TEXT_ASSISTANCE <= client_enforced, \
        f"spell check, prediction and autocorrect live in the app; only the client can keep " \
        f"them off, yet they were announced as {features}"
    announced = dict(features)
    feature, enforcement = MANAGER_WIRE.feature, MANAGER_WIRE.enforcement
    assert announced[feature.screen_reader.value] == enforcement.client.value, \
        f"a screen reader reads the app over AT-SPI, past the compositor: only the app can keep " \
        f"its accessibility tree from it, yet it was announced as {features}"
    for name in ("input_method", "on_screen_keyboard", "keyboard_shortcuts"):
        assert announced[getattr(feature, name).value] == enforcement.compositor.value, \
            f"{name} is carrel's to keep off (a program it launches only when allowed, its own shortcuts), " \
            f"yet it was announced as {features}"
    assert events[len(FEATURES):] == [f"manager m lock_state {INACTIVE}", "manager m done"], \
        f"after the features: lock_state(inactive) then done, got {events}"
    a.sync()
    assert len(a.matching("manager m .*")) == len(events), "events after done without a change"


def test_happy_path_begin_then_end(world):
    observer = world.client("observer")
    observer.bind()
    a = world.client("exam")
    a.map()
    a.bind()
    a.begin()
    a.began()
    expect_lock_state(observer, ACTIVE)
    expect_lock_state(a, ACTIVE)
    a.sync()
    assert len(a.matching("session s .*")) == 1, f"begin answered more than once: {a.lines}"
    a.send("end s")
    a.expect("session s ended")
    expect_lock_state(observer, INACTIVE)
    expect_lock_state(a, INACTIVE)
    a.sync()
    observer.sync()
    assert a.matching("session s .*") == ["session s began", "session s ended"], a.lines
    assert lock_states(observer) == [INACTIVE, ACTIVE, INACTIVE], observer.lines
    world.alive()


def test_second_begin_while_active_fails_and_first_stays(world):
    b = world.client("second")
    b.map()  # before the session: a window mapped during one is another test
    a = world.client("first")
    a.map()
    a.bind()
    a.begin()
    a.began()
    b_bind = b.bind()
    assert f"manager m lock_state {ACTIVE}" in b_bind, f"bind during a session must say active: {b_bind}"
    b.begin("t")
    m = b.expect(r"session t (began|failed (\d+) .*)")
    assert m.group(2) == str(ALREADY_ACTIVE), f"second begin answered {m.group(0)!r}"
    b.send("end t")  # after failed, end is ignored: no protocol error
    b.sync()
    a.sync()
    assert a.matching("session s .*") == ["session s began"], f"the first session was disturbed: {a.lines}"
    assert lock_states(a) == [INACTIVE, ACTIVE], f"lock state changed: {a.lines}"
    a.send("end s")
    a.expect("session s ended")
    expect_lock_state(b, INACTIVE)
    b.begin("u")  # the refusal left nothing behind
    b.began("u")
    b.send("end u")
    b.expect("session u ended")
    world.alive()


def test_untrusted_client_cannot_see_or_bind_the_manager(world):
    a = world.client("app")
    names = [int(line.split()[1]) for line in a.matching(f"global \\d+ {MANAGER} \\d+")]
    assert len(names) == 1, f"the app does not see exactly one {MANAGER}: {a.lines}"
    u = world.client("intruder", role="untrusted")
    assert not u.matching(f"global \\d+ {MANAGER} \\d+"), f"untrusted client sees the manager: {u.lines}"
    assert u.matching("global \\d+ wl_compositor \\d+"), f"untrusted registry looks empty: {u.lines}"
    u.send("bind_manager m")
    u.expect(f"no_global {MANAGER}")
    u.send(f"bind_manager m {names[0]}")  # forced: the name the app was given
    interface, code = u.protocol_error()
    assert (interface, code) == ("wl_registry", 0), \
        f"forced bind: expected libwayland's 'invalid global' error, got {interface} {code}"
    assert "invalid global" in u.stderr_path.read_text(errors="replace"), u.evidence()
    u_events = [line for line in u.lines if line.startswith("manager ")]
    assert not u_events, f"the untrusted client got manager events: {u_events}"
    world.alive()
    a.map()
    a.bind()
    a.begin()
    a.began()
    a.send("end s")
    a.expect("session s ended")


CLIENT_BUGS = {
    # name: (commands after a mapped window w and a manager m, interface, code, wait for began)
    "allow_feature_twice": (f"config c ; allow c {MANAGER_WIRE.feature.spell_check.value} ; allow c {MANAGER_WIRE.feature.spell_check.value}", CONFIGURATION, ALREADY_SET, False),
    "add_participant_twice": ("config c ; participant c calc ; participant c calc",
                              CONFIGURATION, ALREADY_SET, False),
    "set_time_limit_twice": ("config c ; time_limit c 60 ; time_limit c 60", CONFIGURATION, ALREADY_SET, False),
    # set_time_limit is once per configuration object, whatever the value.
    "set_time_limit_twice_other_value": ("config c ; time_limit c 60 ; time_limit c 120",
                                         CONFIGURATION, ALREADY_SET, False),
    "invalid_feature": (f"config c ; allow c {NOT_A_FEATURE}", CONFIGURATION, INVALID_FEATURE, False),
    "time_limit_zero": ("config c ; time_limit c 0", CONFIGURATION, INVALID_TIME_LIMIT, False),
    "end_before_began": ("begin s m w null ; end s", SESSION, NOT_BEGUN, False),
    "update_before_began": ("config c ; begin s m w null ; update s c", SESSION, NOT_BEGUN, False),
    # Back to back: the second end arrives before ended could reach the client.
    "end_after_end": ("end s ; end s", SESSION, ALREADY_ENDED, True),
    "begin_without_toplevel_role": ("plain_surface p ; begin s m p null", MANAGER, BAD_SURFACE, False),
}


@pytest.mark.parametrize("case", sorted(CLIENT_BUGS))
def test_client_bug_is_a_protocol_error_and_carrel_carries_on(world, case):
    commands, interface, code, after_began = CLIENT_BUGS[case]
    observer = world.client("observer")
    observer.bind()
    a = world.client("buggy")
    a.map()
    a.bind()
    if after_began:
        a.begin()
        a.began()
    a.send(commands)
    got = a.protocol_error()
    assert got == (interface, code), f"{case}: expected error {interface} {code}, got {got}\n" \
                                     f"{a.evidence()}"
    world.alive()
    # The disconnect ended whatever the buggy client had begun: the lock is free.
    wait_lock_state(observer, INACTIVE)
    b = world.client("next")
    b.map()
    b.bind()
    b.begin()
    b.began()
    b.send("end s")
    b.expect("session s ended")
    world.alive()


def test_destroy_while_beginning_then_a_new_session_begins(world):
    observer = world.client("observer")
    observer.bind()
    a = world.client("exam")
    a.map()
    a.bind()
    a.send("begin s m w null ; destroy s")  # one batch: before began can arrive
    a.sync()
    expect_lock_state(observer, ACTIVE)
    expect_lock_state(observer, INACTIVE)
    a.begin("s2")
    a.began("s2")
    assert not a.matching("session s .*"), f"events on the destroyed session: {a.lines}"
    a.send("end s2")
    a.expect("session s2 ended")
    world.alive()


def test_kill_9_mid_session_frees_the_lock_and_leaves_the_clipboard_empty(x11_world):
    world = x11_world
    secret = "carrel-kill9-secret"
    copier = world.copy(secret)
    b = world.client("next")
    b.send("watch_selection")  # before its window gets focus: it hears the selection on enter
    b.map()
    b.bind()
    a = world.client("killed")
    a.map()
    a.bind()
    a.begin()
    a.began()
    expect_lock_state(b, ACTIVE)
    os.kill(a.pid, signal.SIGKILL)
    assert a.wait_exit() == -signal.SIGKILL
    expect_lock_state(b, INACTIVE)
    world.alive()
    world.assert_clipboard_empty(secret, "after the killed session")
    b.begin("t")
    b.began("t")
    b.sync()
    selections = b.matching("selection .*")
    assert selections and selections[-1] == "selection none", \
        f"the new session's focused window should hear selection(null); heard {selections}"
    b.send("end t")
    b.expect("session t ended")
    world.assert_clipboard_empty(secret, "after the new session ended")
    assert h.wait_until(lambda: copier.poll() is not None, 5), \
        "wl-copy still serves: its source was never cancelled"
    world.alive()


def test_time_limit_interrupts_and_the_session_stays_until_end(world):
    observer = world.client("observer")
    observer.bind()
    a = world.client("exam")
    a.map()
    a.bind()
    a.send("config c ; time_limit c 1")
    a.begin(config="c")
    a.began()
    began_at = time.monotonic()
    m = a.expect(r"session s interrupted (\d+) (.*)", timeout=5,
                 what="interrupted(time_limit) about 1 s after began")
    elapsed = time.monotonic() - began_at
    assert int(m.group(1)) == TIME_LIMIT, f"interrupted for reason {m.group(1)}, not time_limit"
    assert elapsed > 0.5, f"interrupted {elapsed:.2f}s after began: before the 1 s limit"
    # Not terminal: nothing ends the session until the client does.
    a.collect(QUIET_PERIOD)
    a.sync()
    observer.sync()
    assert not a.matching("session s ended"), f"ended without end: {a.lines}"
    assert lock_states(observer)[-1] == ACTIVE, f"lock released by the interruption: {observer.lines}"
    a.send("config c2 ; allow c2 0 ; update s c2")
    m = a.expect(r"session s (updated|update_failed (\d+) .*)")
    assert m.group(2) == str(FAILED_INTERRUPTED), \
        f"update of an interrupted session answered {m.group(0)!r}"
    a.send("end s")
    a.expect("session s ended")
    expect_lock_state(observer, INACTIVE)
    a.sync()
    assert a.matching("session s .*")[-1] == "session s ended", a.lines
    world.alive()


def test_update_while_active_applies_completely_or_not_at_all(world):
    observer = world.client("observer")
    observer.bind()
    a = world.client("exam")
    a.map()
    a.bind()
    a.begin()
    a.began()
    a.send("config ok ; allow ok 0 ; allow ok 3 ; config unknown ; participant unknown "
           "no-such-participant ; config long ; time_limit long 86400")
    a.send("update s ok ; update s unknown ; update s long")
    answers = [a.expect(r"session s (updated|update_failed \d+ .*)").group(1) for _ in range(3)]
    assert answers[0] == "updated", f"update allowing features was answered {answers[0]!r}"
    for answer, what in zip(answers[1:], ("an unknown participant", "a 24 h time limit")):
        assert answer.startswith(f"update_failed {UNSUPPORTED_CONFIGURATION} "), \
            f"update with {what} was answered {answer!r}"
    a.sync()
    observer.sync()
    assert lock_states(observer)[-1] == ACTIVE, f"a failed update ended the session: {observer.lines}"
    assert not a.matching("session s (interrupted|ended).*"), a.lines
    a.send("end s")
    a.expect("session s ended")
    world.alive()


def test_clipboard_from_before_begin_is_empty_after_began_and_after_ended(x11_world):
    world = x11_world
    secret = "carrel-clipboard-secret"
    copier = world.copy(secret)
    a = world.client("exam")
    a.send("watch_selection")
    a.map()
    a.bind()
    a.sync()
    a.begin()
    a.began()
    a.sync()
    selections = a.matching("selection .*")
    assert selections and selections[-1] == "selection none", \
        f"the session's own window still sees the selection from before: {selections}"
    assert h.wait_until(lambda: copier.poll() is not None, 5), \
        "wl-copy still serves after began: its data source was not cancelled"
    world.assert_clipboard_empty(secret, "during the session", may_wait=True)
    world.alive()
    a.send("end s")
    a.expect("session s ended")
    world.assert_clipboard_empty(secret, "after ended")
    world.alive()


def test_a_network_denial_without_the_network_restriction_fails_the_begin(world):
    """deny_owner_network on a machine whose policy restricts no one's network
    (the built-in policy): nothing would keep the app off, so the begin fails
    with unsupported_configuration, saying why, and nothing is left locked."""
    a = world.client("exam")
    a.map()
    a.bind(version=3)
    a.send("config c ; deny_owner_network c")
    a.begin(config="c")
    m = a.expect(r"session s (began|failed (\d+) (.*))")
    assert m.group(2) == str(UNSUPPORTED_CONFIGURATION), m.group(0)
    assert "off the network" in m.group(3) and "providers.network is off" in m.group(3), m.group(0)
    # The same app, without the denial, begins at once: the failure left nothing behind.
    a.begin("s2")
    a.began("s2")
    a.send("end s2")
    a.expect("session s2 ended")
    world.alive()


def test_begin_with_an_unmapped_toplevel_fails_surface_not_ready(world):
    a = world.client("exam")
    a.send("toplevel u")
    a.expect("configured u")
    a.bind()
    a.sync()
    a.begin(window="u")
    m = a.expect(r"session s (began|failed (\d+) .*)")
    assert m.group(2) == str(SURFACE_NOT_READY), f"begin with an unmapped toplevel: {m.group(0)!r}"
    a.map()
    a.begin("s2")
    a.began("s2")
    a.send("end s2")
    a.expect("session s2 ended")
    world.alive()


def test_begin_with_a_toplevel_mapped_then_unmapped_fails_surface_not_ready(world):
    """The XML: readiness is judged when begin is handled, so a toplevel that
    was mapped once and then unmapped (a null buffer committed) is not ready."""
    a = world.client("exam")
    a.map()
    a.bind()
    a.send("unmap w")
    a.sync()
    a.begin()
    m = a.expect(r"session s (began|failed (\d+) .*)")
    assert m.group(2) == str(SURFACE_NOT_READY), f"begin with an unmapped toplevel: {m.group(0)!r}"
    a.map("w2")
    a.begin("s2", window="w2")
    a.began("s2")
    a.send("end s2")
    a.expect("session s2 ended")
    world.alive()


def test_a_begin_refused_at_once_changes_no_lock_state(world):
    """A begin refused by the checks made when it is handled never holds the
    lock: no manager, the client's own included, hears lock_state for it."""
    observer = world.client("observer")
    observer.bind()
    a = world.client("exam")
    a.map()
    a.bind()
    # Above any policy's maximum (eight hours by default): unsupported_configuration.
    a.send("config c ; time_limit c 4000000000")
    a.begin(config="c")
    m = a.expect(r"session s (began|failed (\d+) .*)")
    assert m.group(2) == str(UNSUPPORTED_CONFIGURATION), m.group(0)
    a.send("toplevel u")
    a.expect("configured u")
    a.begin("s2", window="u")
    m = a.expect(r"session s2 (began|failed (\d+) .*)")
    assert m.group(2) == str(SURFACE_NOT_READY), m.group(0)
    a.sync()
    observer.sync()
    assert lock_states(a) == [INACTIVE], f"the refused begins changed the lock state: {a.lines}"
    assert lock_states(observer) == [INACTIVE], f"the observer heard a lock state change: {observer.lines}"
    world.alive()


def test_a_second_end_after_ended_arrived_is_already_ended(world):
    """The XML: a second end raises already_ended whether or not ended has
    reached the client (the back-to-back case is in CLIENT_BUGS)."""
    a = world.client("exam")
    a.map()
    a.bind()
    a.begin()
    a.began()
    a.send("end s")
    a.expect("session s ended")
    a.send("end s")
    assert a.protocol_error() == (SESSION, ALREADY_ENDED), a.evidence()
    world.alive()


def test_destroying_an_active_session_sends_no_session_event_but_lock_state_to_every_manager(world):
    """The XML: destroy sends nothing more on the session object; the lock
    state change goes to every bound manager, the destroying client's own too."""
    observer = world.client("observer")
    observer.bind()
    a = world.client("exam")
    a.map()
    a.bind()
    a.begin()
    a.began()
    wait_lock_state(a, ACTIVE)
    a.send("destroy s")
    wait_lock_state(a, INACTIVE)
    wait_lock_state(observer, INACTIVE)
    a.sync()
    assert lock_states(a) == [INACTIVE, ACTIVE, INACTIVE], f"the own manager's lock states: {a.lines}"
    assert a.matching("session s .*") == ["session s began"], f"events after destroy: {a.lines}"
    world.alive()


def test_untrusted_toplevel_mapped_during_a_session_breaks_nothing(world):
    a = world.client("exam")
    a.map()
    a.bind()
    a.begin()
    a.began()
    u = world.client("intruder", role="untrusted")
    u.send("map x")
    u.expect("configured x")
    u.sync()
    a.collect(QUIET_PERIOD)
    a.sync()
    world.alive()
    assert a.matching("session s .*") == ["session s began"], f"session disturbed: {a.lines}"
    a.send("end s")
    a.expect("session s ended")
    # Shown again once the session is over: it gets its first frame.
    u.expect("mapped x", what="a frame once the session no longer hides the window")
    assert u.proc.poll() is None and not u.matching("error .*"), u.evidence()
    world.alive()


def test_another_app_client_window_mapped_during_a_session_breaks_nothing(world):
    """A second app-role client (not the session's) maps a window mid-session:
    the session hides it, carrel stays up, and the session ends cleanly."""
    a = world.client("exam")
    a.map()
    a.bind()
    a.begin()
    a.began()
    b = world.client("other-app")
    b.send("map x")
    b.expect("configured x")
    b.sync()
    a.collect(QUIET_PERIOD)
    world.alive()
    a.sync()
    assert a.matching("session s .*") == ["session s began"], f"session disturbed: {a.lines}"
    a.send("end s")
    a.expect("session s ended")
    b.expect("mapped x", what="a frame once the session no longer hides the window")
    world.alive()
