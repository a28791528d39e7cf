"""The Wayland pointers of a GTK 4 window, for carrel_assessment (PyGObject).

    from carrel_assessment import gtk as carrel_gtk
    lockdown = carrel_gtk.lockdown_for(window)          # the window's own connection
    session = carrel_gtk.session_for(window, lockdown, configuration, on_event)
    carrel_gtk.begin_when_drawn(window, session)        # begin once the window shows

GDK's `gdk_wayland_*_get_wl_*` functions return C pointers that
introspection cannot carry, so they are called through ctypes on the
objects PyGObject wraps. GTK must run on Wayland (GDK_BACKEND=wayland under Carrel).
"""

from __future__ import annotations

import ctypes
from typing import Callable, Optional

import gi

gi.require_version("Gdk", "4.0")
gi.require_version("GdkWayland", "4.0")
gi.require_version("Gtk", "4.0")
from gi.repository import Gdk, GdkWayland, GLib, Gtk  # noqa: E402

from . import AssessmentError, Configuration, Error, Lockdown, Session  # noqa: E402

_gtk: Optional[ctypes.CDLL] = None


def _gdk() -> ctypes.CDLL:
    global _gtk
    if _gtk is None:
        lib = ctypes.CDLL("libgtk-4.so.1")
        for name in ("gdk_wayland_display_get_wl_display", "gdk_wayland_surface_get_wl_surface"):
            getattr(lib, name).restype = ctypes.c_void_p
            getattr(lib, name).argtypes = [ctypes.c_void_p]
        _gtk = lib
    return _gtk


def _address(obj) -> int:
    """The C address of a PyGObject-wrapped GObject (its __gpointer__ capsule)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get(obj.__gpointer__, None)


def _require_wayland(display: Gdk.Display) -> None:
    if not isinstance(display, GdkWayland.WaylandDisplay):
        raise AssessmentError(Error.NOT_AVAILABLE,
                              f"GTK runs on {display.__gtype__.name}, not Wayland; start the app with "
                              "GDK_BACKEND=wayland inside Carrel")


def wl_display(display: Optional[Gdk.Display] = None) -> int:
    """The `struct wl_display *` of a GDK display (default: the default display)."""
    display = display or Gdk.Display.get_default()
    _require_wayland(display)
    return _gdk().gdk_wayland_display_get_wl_display(_address(display))


def wl_surface(window: Gtk.Window) -> int:
    """The `struct wl_surface *` of a realized GTK window."""
    surface = window.get_surface()
    if surface is None:
        raise AssessmentError(Error.SURFACE_NOT_READY, "the window has no surface yet; present() it first")
    _require_wayland(surface.get_display())
    return _gdk().gdk_wayland_surface_get_wl_surface(_address(surface))


def lockdown_for(window: Gtk.Window) -> Lockdown:
    """The lockdown on the connection of the window's display."""
    return Lockdown(wl_display(window.get_display()))


def session_for(window: Gtk.Window, lockdown: Lockdown, configuration: Optional[Configuration] = None,
                on_event=None) -> Session:
    """A session for `window` (realized; begin it once drawn)."""
    return lockdown.session(wl_surface(window), configuration, on_event)


def begin_when_drawn(window: Gtk.Window, session: Session,
                     on_refused: Optional[Callable[[AssessmentError], None]] = None) -> None:
    """Begins `session` once GDK has committed the window's first frame, so
    the compositor finds the window mapped (else: failed, surface_not_ready).
    A refusal of begin goes to on_refused (default: raised in the main loop)."""
    clock = window.get_surface().get_frame_clock()
    handler = None

    def begin():
        try:
            session.begin()
        except AssessmentError as refusal:
            if on_refused is None:
                raise
            on_refused(refusal)
        return GLib.SOURCE_REMOVE

    def painted(_clock):
        # GDK commits in its own after-paint handler, connected before this one.
        clock.disconnect(handler)
        GLib.idle_add(begin)

    handler = clock.connect("after-paint", painted)
    window.queue_draw()
