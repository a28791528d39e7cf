"""A GTK 4 entry, composing through GTK's own Wayland input method module
(text-input-v3), for test_input_method.py. Each line entered (Return) is
appended to the file named on the command line, with a newline, and the entry
emptied; the file is created when the window is presented.

Run with /usr/bin/python3 (python3-gi, gir1.2-gtk-4.0)."""

import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gio, Gtk  # noqa: E402

path = sys.argv[1]


def entered(entry) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(entry.get_text() + "\n")
    entry.set_text("")


def activate(app) -> None:
    window = Gtk.ApplicationWindow(application=app, title="entry")
    entry = Gtk.Entry()
    entry.connect("activate", entered)
    window.set_child(entry)
    window.present()
    entry.grab_focus()
    open(path, "a").close()


# Not unique: there is no session bus to register a name on.
app = Gtk.Application(application_id="org.carrel.test.Entry", flags=Gio.ApplicationFlags.NON_UNIQUE)
app.connect("activate", activate)
sys.exit(app.run([sys.argv[0]]))
