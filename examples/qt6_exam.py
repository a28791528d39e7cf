#!/usr/bin/env python3
"""A small exam in Python with PyQt6 that locks the machine with
carrel_assessment: it begins a session on its own window once the window is
drawn, shows its question only while the session holds, hides it at once
when the session is interrupted and ends the session, and quits when the
session is over.

Run it inside Carrel:  carrel -- env QT_QPA_PLATFORM=wayland python3 qt6_exam.py --hold 30
Each event is printed as "qt6_exam.py: event NAME [REASON MESSAGE]".
Exit status: 0 after ended, 2 when the session failed to begin, 1 otherwise.
"""

import argparse
import sys

from PyQt6.QtCore import QTimer
from PyQt6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from carrel_assessment import AssessmentError, Configuration, Error, EventKind, features
from carrel_assessment import qt as carrel_qt

NAME = "qt6_exam.py"
# Qt commits a frame after the paint event that drew it; a begin that still
# finds the window unmapped is retried this often, this many times.
RETRY_MS, RETRIES = 100, 30
# Seen with Qt 6.4 (bookworm): quitting within milliseconds of the
# session's end, while the compositor's post-end events arrive, sometimes
# hangs Qt's own exit (its Wayland reader thread waits forever in
# wl_display_read_events). Whether Qt hangs so without this library is not
# known yet; quitting a moment later never hung in our runs.
QUIT_DELAY_MS = 500


def say(what, event=None):
    if event is not None and event.error:
        print(f"{NAME}: {what} {event.error.protocol_name} {event.message}", flush=True)
    else:
        print(f"{NAME}: {what}", flush=True)


class ExamWindow(QWidget):
    def __init__(self, arguments):
        super().__init__()
        self.arguments = arguments
        self.exit_status = 1
        self.session = None
        self.lockdown = None
        self.retries = RETRIES
        self.setWindowTitle("Exam (Qt 6, Python)")
        layout = QVBoxLayout(self)
        self.status = QLabel("Locking the machine for the exam…")
        self.question = QLabel("Question 1: what is 6 × 7?")
        self.question.hide()
        layout.addWidget(self.status)
        layout.addWidget(self.question)
        self.painted = False

    def paintEvent(self, event):
        super().paintEvent(event)
        if not self.painted:
            self.painted = True
            # After this paint event Qt flushes and commits the frame.
            QTimer.singleShot(0, self.lock)

    def lock(self):
        try:
            if self.lockdown is None:
                self.lockdown = carrel_qt.lockdown_for()
            configuration = Configuration(allowed_features=features(self.arguments.allow))
            self.session = carrel_qt.session_for(self.windowHandle(), self.lockdown, configuration, self.on_event)
            self.session.begin()
        except AssessmentError as error:
            print(f"{NAME}: cannot lock: {error}", file=sys.stderr, flush=True)
            self.quit(2)
            return
        say("locking")

    def on_event(self, session, event):
        if event.kind is EventKind.BEGAN:
            say("event began")
            self.status.setText("The exam is locked. Answer the question.")
            self.question.show()
            if self.arguments.hold > 0:
                QTimer.singleShot(self.arguments.hold * 1000, self.end)
        elif event.kind is EventKind.INTERRUPTED:
            # Hide the questions first: the session is no longer whole.
            self.question.hide()
            self.status.setText("Exam paused — content hidden.")
            say("event interrupted", event)
            say("content hidden")
            self.end()
        elif event.kind is EventKind.FAILED:
            if event.error is Error.SURFACE_NOT_READY and self.retries > 0:
                # The frame was not committed yet: nothing is restricted, try a new session.
                self.retries -= 1
                QTimer.singleShot(RETRY_MS, self.lock)
                return
            say("event failed", event)
            self.quit(2)
        elif event.kind is EventKind.ENDED:
            self.question.hide()
            say("event ended")
            self.quit(0)

    def end(self):
        try:
            self.session.end()
        except AssessmentError as error:
            print(f"{NAME}: end refused: {error}", file=sys.stderr, flush=True)

    def quit(self, status):
        self.exit_status = status
        QTimer.singleShot(QUIT_DELAY_MS, QApplication.instance().quit)


def main():
    parser = argparse.ArgumentParser(description="a PyQt6 exam that locks the machine under Carrel")
    parser.add_argument("--hold", type=int, default=0, help="end the session after SECONDS (0: only when interrupted)")
    parser.add_argument("--allow", action="append", default=[], help="allow a feature (spell_check, ...)")
    arguments = parser.parse_args()
    app = QApplication([sys.argv[0]])
    window = ExamWindow(arguments)
    window.show()
    app.exec()
    if window.session is not None:
        window.session.close()  # before the connection closes with the app
    return window.exit_status


if __name__ == "__main__":
    sys.exit(main())
