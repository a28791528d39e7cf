"""A GTK 4 app that misuses carrel_assessment on purpose, under the real Carrel.

Every misuse must come back as an AssessmentError with the library's code,
sent nothing to the compositor (a protocol error would close the connection
and GTK with it), and leave the connection able to lock again. Prints one
line per check ("check NAME ok" or "check NAME FAILED ..."), then "done"
and exits 0 only if every check passed. Run by test_c_client.py.
"""

from __future__ import annotations

import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import GLib, Gtk  # noqa: E402

from carrel_assessment import AssessmentError, Error, EventKind, SessionState  # noqa: E402
from carrel_assessment import gtk as carrel_gtk  # noqa: E402

RETRY_MS, RETRIES = 100, 30
failures = []


def check(name: str, call, code: Error) -> None:
    try:
        call()
    except AssessmentError as error:
        if error.code is code:
            print(f"check {name} ok", flush=True)
            return
        failures.append(name)
        print(f"check {name} FAILED: {error.code.name}, expected {code.name}", flush=True)
        return
    failures.append(name)
    print(f"check {name} FAILED: accepted, expected {code.name}", flush=True)


class Misuse:
    def __init__(self, app: Gtk.Application) -> None:
        self.app = app
        self.retries = RETRIES
        app.connect("activate", self.activate)

    def activate(self, app) -> None:
        self.window = Gtk.ApplicationWindow(application=app, title="misuse")
        self.window.set_child(Gtk.Label(label="misuse"))
        self.window.present()
        self.lockdown = carrel_gtk.lockdown_for(self.window)
        self.first = carrel_gtk.session_for(self.window, self.lockdown, on_event=self.first_event)
        carrel_gtk.begin_when_drawn(self.window, self.first)
        GLib.idle_add(self.while_beginning)

    def while_beginning(self):
        if self.first.state is SessionState.IDLE:
            return GLib.SOURCE_CONTINUE  # not drawn yet
        check("begin twice", self.first.begin, Error.ALREADY_BEGUN)
        check("update before began", lambda: self.first.update(self.first.configuration), Error.NOT_ACTIVE)
        check("attest before began", lambda: self.first.request_attestation(b"n" * 16), Error.NOT_ACTIVE)
        return GLib.SOURCE_REMOVE

    def first_event(self, session, event) -> None:
        print(f"first {event.kind.name.lower()} {event.error.protocol_name}", flush=True)
        if event.kind is EventKind.BEGAN:
            check("a nonce too long", lambda: session.request_attestation(b"n" * 300), Error.INVALID_NONCE)
            session.end()
            check("end twice", session.end, Error.NOT_ACTIVE)
        elif event.kind is EventKind.ENDED:
            check("begin after ended", session.begin, Error.ALREADY_BEGUN)
            check("end after ended", session.end, Error.NOT_ACTIVE)
            check("update after ended", lambda: session.update(session.configuration), Error.NOT_ACTIVE)
            # End before began withdraws the session, answered at once.
            self.second = carrel_gtk.session_for(self.window, self.lockdown, on_event=self.second_event)
            self.second.begin()
            self.second.end()
        elif event.kind is EventKind.FAILED:
            self.finish(f"the first session failed: {event.error.name} {event.message}")

    def second_event(self, session, event) -> None:
        print(f"second {event.kind.name.lower()} {event.error.protocol_name}", flush=True)
        if event.kind is EventKind.FAILED and event.error is Error.CANCELLED:
            print("check end before began withdraws ok", flush=True)
            GLib.idle_add(self.lock_again)
        else:
            self.finish(f"end before began: {event.kind.name} {event.error.name}, expected FAILED CANCELLED")

    def lock_again(self):
        # The connection must still lock: no misuse reached the compositor.
        self.third = carrel_gtk.session_for(self.window, self.lockdown, on_event=self.third_event)
        self.third.begin()
        return GLib.SOURCE_REMOVE

    def third_event(self, session, event) -> None:
        print(f"third {event.kind.name.lower()} {event.error.protocol_name}", flush=True)
        if event.kind is EventKind.BEGAN:
            session.end()
        elif event.kind is EventKind.ENDED:
            self.finish()
        elif event.kind is EventKind.FAILED and event.error is Error.ALREADY_ACTIVE and self.retries > 0:
            # The withdrawn session's lock may still be let go of.
            self.retries -= 1
            GLib.timeout_add(RETRY_MS, self.lock_again)
        else:
            self.finish(f"locking again: {event.kind.name} {event.error.name} {event.message}")

    def finish(self, problem: str = "") -> None:
        if problem:
            failures.append(problem)
            print(f"problem: {problem}", flush=True)
        print("done", flush=True)
        self.app.quit()


def main() -> int:
    app = Gtk.Application(application_id=None)
    Misuse(app)
    app.run([sys.argv[0]])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
