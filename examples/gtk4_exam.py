#!/usr/bin/env python3
"""A small exam in Python with PyGObject GTK 4 that locks the machine with
carrel_assessment: it begins a session on its own window once the window is
drawn, shows its question only while the session holds, hides it at once
when the session is interrupted and ends the session, and quits when the
session is over.

Run it inside Carrel:  carrel -- env GDK_BACKEND=wayland python3 gtk4_exam.py --hold 30
Each event is printed as "gtk4_exam.py: event NAME [REASON MESSAGE]".
Exit status: 0 after ended, 2 when the session failed to begin, 1 otherwise.
"""

import argparse
import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import GLib, Gtk  # noqa: E402

from carrel_assessment import AssessmentError, Configuration, EventKind, features  # noqa: E402
from carrel_assessment import gtk as carrel_gtk  # noqa: E402

NAME = "gtk4_exam.py"


def say(what, event=None):
    if event is not None and event.error:
        print(f"{NAME}: {what} {event.error.protocol_name} {event.message}", flush=True)
    else:
        print(f"{NAME}: {what}", flush=True)


class Exam:
    def __init__(self, app, arguments):
        self.app = app
        self.arguments = arguments
        self.exit_status = 1
        self.session = None
        app.connect("activate", self.activate)

    def activate(self, app):
        self.window = Gtk.ApplicationWindow(application=app, title="Exam (GTK 4, Python)")
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
        self.status = Gtk.Label(label="Locking the machine for the exam…")
        self.question = Gtk.Label(label="Question 1: what is 6 × 7?", visible=False)
        box.append(self.status)
        box.append(self.question)
        self.window.set_child(box)
        self.window.present()
        try:
            self.lockdown = carrel_gtk.lockdown_for(self.window)
            configuration = Configuration(allowed_features=features(self.arguments.allow))
            self.session = carrel_gtk.session_for(self.window, self.lockdown, configuration, self.on_event)
        except AssessmentError as error:
            print(f"{NAME}: cannot lock: {error}", file=sys.stderr, flush=True)
            self.quit(2)
            return
        carrel_gtk.begin_when_drawn(self.window, self.session, on_refused=self.refused)
        say("locking")

    def refused(self, error):
        print(f"{NAME}: begin refused: {error}", file=sys.stderr, flush=True)
        self.quit(2)

    def on_event(self, session, event):
        if event.kind is EventKind.BEGAN:
            say("event began")
            self.status.set_text("The exam is locked. Answer the question.")
            self.question.set_visible(True)
            if self.arguments.hold > 0:
                GLib.timeout_add_seconds(self.arguments.hold, self.end)
        elif event.kind is EventKind.INTERRUPTED:
            # Hide the questions first: the session is no longer whole.
            self.question.set_visible(False)
            self.status.set_text("Exam paused — content hidden.")
            say("event interrupted", event)
            say("content hidden")
            self.end()
        elif event.kind is EventKind.FAILED:
            say("event failed", event)
            self.quit(2)
        elif event.kind is EventKind.ENDED:
            self.question.set_visible(False)
            say("event ended")
            self.quit(0)

    def end(self):
        try:
            self.session.end()
        except AssessmentError as error:
            print(f"{NAME}: end refused: {error}", file=sys.stderr, flush=True)
        return GLib.SOURCE_REMOVE

    def quit(self, status):
        self.exit_status = status
        self.app.quit()


def main():
    parser = argparse.ArgumentParser(description="a GTK 4 exam that locks the machine under Carrel")
    parser.add_argument("--hold", type=int, default=0, help="end the session after SECONDS (0: only when interrupted)")
    parser.add_argument("--allow", action="append", default=[], help="allow a feature (spell_check, ...)")
    arguments = parser.parse_args()
    app = Gtk.Application(application_id=None)
    exam = Exam(app, arguments)
    app.run([sys.argv[0]])
    if exam.session is not None:
        exam.session.close()  # before the connection closes with the app
    return exam.exit_status


if __name__ == "__main__":
    sys.exit(main())
