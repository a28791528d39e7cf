"""The Wayland pointers of a Qt 6 window, for carrel_assessment (PyQt6).

    from carrel_assessment import qt as carrel_qt
    lockdown = carrel_qt.lockdown_for()                         # the app's own connection
    session = carrel_qt.session_for(widget.windowHandle(), lockdown, configuration, on_event)

Qt 6.4 (Debian bookworm) has no public API for them, and PyQt6 does not wrap
QPlatformNativeInterface, so this calls Qt Wayland's exported native
interface through ctypes: nativeResourceForIntegration("wl_display") and
nativeResourceForWindow("surface", window), the same calls Qt's own Wayland
extensions use. Qt must run on Wayland (QT_QPA_PLATFORM=wayland under Carrel).
"""

from __future__ import annotations

import ctypes
import os
import stat
from typing import Optional

from PyQt6 import sip
from PyQt6.QtCore import QByteArray
from PyQt6.QtGui import QGuiApplication, QWindow

from . import AssessmentError, Configuration, Error, Lockdown, Session

_NATIVE_INTERFACE = "_ZN15QGuiApplication23platformNativeInterfaceEv"
_FOR_INTEGRATION = "_ZN15QtWaylandClient23QWaylandNativeInterface28nativeResourceForIntegrationERK10QByteArray"
_FOR_WINDOW = "_ZN15QtWaylandClient23QWaylandNativeInterface23nativeResourceForWindowERK10QByteArrayP7QWindow"


def _native_interface() -> tuple:
    if QGuiApplication.platformName() != "wayland":
        raise AssessmentError(Error.NOT_AVAILABLE,
                              f"Qt runs on the '{QGuiApplication.platformName()}' platform, not Wayland; start "
                              "the app with QT_QPA_PLATFORM=wayland inside Carrel")
    gui = ctypes.CDLL("libQt6Gui.so.6")
    wayland = ctypes.CDLL("libQt6WaylandClient.so.6")  # loaded already, by the wayland platform plugin
    get = getattr(gui, _NATIVE_INTERFACE)
    get.restype, get.argtypes = ctypes.c_void_p, []
    for name, args in ((_FOR_INTEGRATION, [ctypes.c_void_p, ctypes.c_void_p]),
                       (_FOR_WINDOW, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p])):
        getattr(wayland, name).restype = ctypes.c_void_p
        getattr(wayland, name).argtypes = args
    interface = get()
    if not interface:
        raise AssessmentError(Error.NOT_AVAILABLE, "Qt has no platform native interface; create the QApplication first")
    return interface, wayland


def wl_display() -> int:
    """The `struct wl_display *` of the running Qt application."""
    interface, wayland = _native_interface()
    name = QByteArray(b"wl_display")  # held: Qt reads it through the address below
    display = getattr(wayland, _FOR_INTEGRATION)(interface, sip.unwrapinstance(name))
    # A guard against a Qt whose layout differs: a wl_display's fd is the
    # compositor's Unix socket.
    if not display or not _is_socket(ctypes.CDLL("libwayland-client.so.0"), display):
        raise AssessmentError(Error.NOT_AVAILABLE, "Qt's native interface gave no Wayland display")
    return display


def _is_socket(client: ctypes.CDLL, display: int) -> bool:
    client.wl_display_get_fd.restype = ctypes.c_int
    client.wl_display_get_fd.argtypes = [ctypes.c_void_p]
    fd = client.wl_display_get_fd(display)
    try:
        return fd >= 0 and stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


def wl_surface(window: QWindow) -> int:
    """The `struct wl_surface *` of a shown QWindow (widget.windowHandle())."""
    interface, wayland = _native_interface()
    name = QByteArray(b"surface")  # held: Qt reads it through the address below
    surface = getattr(wayland, _FOR_WINDOW)(interface, sip.unwrapinstance(name), sip.unwrapinstance(window))
    if not surface:
        raise AssessmentError(Error.SURFACE_NOT_READY, "the window has no wl_surface yet; show() it first")
    return surface


def lockdown_for() -> Lockdown:
    """The lockdown on the Qt application's own connection."""
    return Lockdown(wl_display())


def session_for(window: QWindow, lockdown: Lockdown, configuration: Optional[Configuration] = None,
                on_event=None) -> Session:
    """A session for a shown `window` (begin it once its first frame is drawn)."""
    return lockdown.session(wl_surface(window), configuration, on_event)
