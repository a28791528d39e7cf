"""Assessment sessions under Carrel for Python exam apps.

A ctypes binding of libcarrel-assessment (the C library) that works on the
toolkit's own Wayland connection: a session must be begun on the exam
window's own connection, with its own wl_surface, so this module takes the
toolkit's `struct wl_display *` and `struct wl_surface *` as integers
(carrel_assessment.gtk and carrel_assessment.qt get them from GTK 4 and Qt 6).

    from carrel_assessment import Configuration, EventKind, Feature, Lockdown
    lockdown = Lockdown(display_pointer)              # AssessmentError(NOT_AVAILABLE) outside Carrel
    configuration = Configuration(allowed_features={Feature.SPELL_CHECK}, time_limit=90 * 60)
    session = lockdown.session(surface_pointer, configuration, on_event)
    session.begin()                                   # show "locking…"

    def on_event(session, event):                     # from within the toolkit's dispatch
        if event.kind is EventKind.INTERRUPTED:
            hide_the_questions()
            session.end()

Calls the library refuses raise AssessmentError with the library's code;
events carry codes too. Not thread-safe: use it on the toolkit's main thread.
The library is `libcarrel-assessment.so.1`, or the file CARREL_ASSESSMENT_LIBRARY names.
"""

from __future__ import annotations

import ctypes
import enum
import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Optional

__all__ = ["AssessmentError", "Configuration", "Enforcement", "Error", "Event", "EventKind", "Feature",
           "LockState", "Lockdown", "Session", "SessionState", "PROTOCOL_VERSION", "features"]

PROTOCOL_VERSION = 3


class Error(enum.IntEnum):
    """enum carrel_assessment_error: results of calls and the codes events carry."""
    OK = 0
    OTHER = 1
    ALREADY_ACTIVE = 2
    NOT_ENTITLED = 3
    UNSUPPORTED_CONFIGURATION = 4
    SURFACE_NOT_READY = 5
    TIMEOUT = 6
    RESTRICTION_FAILED = 7
    INTERNAL = 8
    INTERRUPTED = 9
    CANCELLED = 10
    PRECONDITIONS_UNMET = 11
    PARTICIPANT_UNAVAILABLE = 12
    INTEGRITY = 20
    ADMINISTRATIVE = 21
    TIME_LIMIT = 22
    SHUTDOWN = 23
    ATTESTATION_UNAVAILABLE = 30
    INVALID_NONCE = 31
    TOO_LARGE = 32
    CONNECTION = 40
    NOT_AVAILABLE = 41
    NOT_ACTIVE = 42
    MULTIPLE_PARTICIPANTS_NOT_SUPPORTED = 43
    ALREADY_BEGUN = 44
    INVALID_ARGUMENT = 45
    NO_MEMORY = 46

    @classmethod
    def _missing_(cls, value):
        # A code of a newer library: as the protocol does for reasons, other.
        return cls.OTHER

    @property
    def protocol_name(self) -> str:
        """The protocol's name ("already_active", "time_limit", ...)."""
        return _lib().carrel_assessment_error_name(int(self)).decode()


class Feature(enum.IntEnum):
    SPELL_CHECK = 0
    PREDICTIVE_TEXT = 1
    AUTOCORRECT = 2
    INPUT_METHOD = 3
    ON_SCREEN_KEYBOARD = 4
    KEYBOARD_SHORTCUTS = 5
    SCREEN_MAGNIFIER = 6
    SCREEN_READER = 7


class Enforcement(enum.IntEnum):
    NOT_ANNOUNCED = -1
    COMPOSITOR = 0
    CLIENT = 1


class LockState(enum.IntEnum):
    INACTIVE = 0
    ACTIVE = 1


class SessionState(enum.IntEnum):
    IDLE = 0
    BEGINNING = 1
    ACTIVE = 2
    INTERRUPTED = 3
    ENDING = 4
    ENDED = 5
    FAILED = 6


class EventKind(enum.IntEnum):
    BEGAN = 1
    FAILED = 2
    INTERRUPTED = 3
    ENDED = 4
    UPDATED = 5
    UPDATE_FAILED = 6
    ATTESTATION = 7
    ATTESTATION_FAILED = 8


class AssessmentError(Exception):
    """A call the library refused, or a lockdown it could not set up."""

    def __init__(self, code: Error, detail: str = "") -> None:
        self.code = Error(code)
        sentence = _lib().carrel_assessment_error_describe(int(self.code)).decode()
        super().__init__(f"{self.code.protocol_name}: {detail or sentence}")


@dataclass(frozen=True)
class Event:
    kind: EventKind
    error: Error
    message: str
    statement: Optional[bytes] = None   # ATTESTATION: canonical JSON, as signed
    signature: Optional[bytes] = None   # ATTESTATION: Ed25519, 64 bytes

    @property
    def is_terminal(self) -> bool:
        return self.kind in (EventKind.FAILED, EventKind.ENDED)


@dataclass
class Configuration:
    """What a session allows; most restrictive by default. `participants`
    maps the policy's participant ids to whether each keeps the network its
    policy gives it (False takes it away; protocol version 3)."""
    allowed_features: set = field(default_factory=set)
    participants: Dict[str, bool] = field(default_factory=dict)
    time_limit: Optional[int] = None    # seconds from began; None: the policy's
    owner_network: bool = True          # the exam app keeps its network

    def _to_c(self) -> "_CConfiguration":
        return _CConfiguration(self)


# ---------------------------------------------------------------------------
# The C library


class _CEvent(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("error", ctypes.c_int), ("message", ctypes.c_char_p),
                ("statement", ctypes.c_void_p), ("statement_length", ctypes.c_size_t),
                ("signature", ctypes.c_void_p), ("signature_length", ctypes.c_size_t)]


_EVENT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_CEvent))
_LOCK_STATE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)

_library: Optional[ctypes.CDLL] = None


def _lib() -> ctypes.CDLL:
    global _library
    if _library is not None:
        return _library
    name = os.environ.get("CARREL_ASSESSMENT_LIBRARY", "libcarrel-assessment.so.1")
    try:
        lib = ctypes.CDLL(name)
    except OSError as error:
        raise ImportError(f"cannot load {name} ({error}); install libcarrel-assessment "
                          "(meson-helpers/install) or set CARREL_ASSESSMENT_LIBRARY to its path") from None
    p, i, u, b, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_bool, ctypes.c_size_t
    signatures = {
        "carrel_assessment_create": (p, [p, p, ctypes.POINTER(i)]),
        "carrel_assessment_destroy": (None, [p]),
        "carrel_assessment_get_version": (u, [p]),
        "carrel_assessment_get_enforcement": (i, [p, i]),
        "carrel_assessment_get_lock_state": (i, [p]),
        "carrel_assessment_set_lock_state_callback": (None, [p, _LOCK_STATE_FN, p]),
        "carrel_assessment_supports_multiple_participants": (b, [p]),
        "carrel_assessment_connection_failed": (None, [p]),
        "carrel_assessment_configuration_create": (p, []),
        "carrel_assessment_configuration_destroy": (None, [p]),
        "carrel_assessment_configuration_allow_feature": (i, [p, i, b]),
        "carrel_assessment_configuration_add_participant": (i, [p, ctypes.c_char_p, b]),
        "carrel_assessment_configuration_set_time_limit": (i, [p, u]),
        "carrel_assessment_configuration_set_owner_network": (i, [p, b]),
        "carrel_assessment_session_create": (p, [p, p, p, _EVENT_FN, p]),
        "carrel_assessment_session_begin": (i, [p]),
        "carrel_assessment_session_end": (i, [p]),
        "carrel_assessment_session_update": (i, [p, p]),
        "carrel_assessment_session_request_attestation": (i, [p, ctypes.c_char_p, s]),
        "carrel_assessment_session_end_with_attestation": (i, [p, ctypes.c_char_p, s]),
        "carrel_assessment_session_get_state": (i, [p]),
        "carrel_assessment_session_destroy": (None, [p]),
        "carrel_assessment_error_name": (ctypes.c_char_p, [i]),
        "carrel_assessment_error_describe": (ctypes.c_char_p, [i]),
    }
    for function, (restype, argtypes) in signatures.items():
        getattr(lib, function).restype = restype
        getattr(lib, function).argtypes = argtypes
    _library = lib
    return lib


def _check(code: int, detail: str = "") -> None:
    if code != Error.OK:
        raise AssessmentError(Error(code), detail)


class _CConfiguration:
    """A C configuration for the length of one call."""

    def __init__(self, configuration: Configuration) -> None:
        lib = _lib()
        self.pointer = lib.carrel_assessment_configuration_create()
        if not self.pointer:
            raise MemoryError("carrel_assessment_configuration_create")
        try:
            for feature in configuration.allowed_features:
                _check(lib.carrel_assessment_configuration_allow_feature(self.pointer, int(feature), True),
                       f"feature {feature!r} is not one of carrel_assessment.Feature")
            for participant, network in configuration.participants.items():
                _check(lib.carrel_assessment_configuration_add_participant(
                    self.pointer, participant.encode(), bool(network)),
                    f"participant id {participant!r} must be 1 to 255 bytes")
            if configuration.time_limit is not None:
                if not 1 <= configuration.time_limit <= 0xFFFFFFFF:
                    raise AssessmentError(Error.UNSUPPORTED_CONFIGURATION,
                                          f"time limit {configuration.time_limit} s is not positive; give at least "
                                          "1 second, or None for the policy's")
                _check(lib.carrel_assessment_configuration_set_time_limit(self.pointer, configuration.time_limit))
            _check(lib.carrel_assessment_configuration_set_owner_network(self.pointer, configuration.owner_network))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.pointer:
            _lib().carrel_assessment_configuration_destroy(self.pointer)
            self.pointer = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Lockdown:
    """carrel_assessment_manager_v1 on the app's connection (`display`: the
    address of its `struct wl_display`). Events go to the display's default
    queue, which GTK and Qt dispatch on their main thread, unless `queue`
    (a `struct wl_event_queue *`) names another."""

    def __init__(self, display: int, queue: Optional[int] = None) -> None:
        if not display:
            raise AssessmentError(Error.INVALID_ARGUMENT, "no wl_display: is the toolkit running on Wayland?")
        lib = _lib()
        error = ctypes.c_int(Error.OK)
        self._pointer = lib.carrel_assessment_create(display, queue, ctypes.byref(error))
        if not self._pointer:
            raise AssessmentError(Error(error.value))
        self._sessions: set = set()
        self._lock_state_callback = None
        self._lock_state_trampoline = None

    @property
    def version(self) -> int:
        return _lib().carrel_assessment_get_version(self._live())

    @property
    def lock_state(self) -> LockState:
        return LockState(_lib().carrel_assessment_get_lock_state(self._live()))

    @property
    def supports_multiple_participants(self) -> bool:
        return bool(_lib().carrel_assessment_supports_multiple_participants(self._live()))

    def enforcement(self, feature: Feature) -> Enforcement:
        return Enforcement(_lib().carrel_assessment_get_enforcement(self._live(), int(feature)))

    def on_lock_state_change(self, callback: Optional[Callable[[LockState], None]]) -> None:
        """Calls callback(state) from within dispatch when the lock state changes; None stops it."""
        if callback is None:
            _lib().carrel_assessment_set_lock_state_callback(self._live(), _LOCK_STATE_FN(), None)
            self._lock_state_trampoline = None
            return

        def trampoline(data, lockdown, state):
            try:
                callback(LockState(state))
            except Exception:  # an exception cannot cross the C frames below
                traceback.print_exc()

        self._lock_state_trampoline = _LOCK_STATE_FN(trampoline)
        _lib().carrel_assessment_set_lock_state_callback(self._live(), self._lock_state_trampoline, None)

    def session(self, surface: int, configuration: Optional[Configuration] = None,
                on_event: Optional[Callable[["Session", Event], None]] = None) -> "Session":
        """A new session, not begun, for the exam window's `struct wl_surface *`."""
        return Session(self, surface, configuration or Configuration(), on_event)

    def connection_failed(self) -> None:
        """Tell the sessions the connection died (when the toolkit's dispatch failed)."""
        _lib().carrel_assessment_connection_failed(self._live())

    def close(self) -> None:
        """Destroys the manager; sessions keep working until closed themselves."""
        if self._pointer:
            _lib().carrel_assessment_destroy(self._pointer)
            self._pointer = None

    def __del__(self) -> None:
        # As Session.__del__: not at interpreter exit, when the display may be gone.
        if not sys.is_finalizing() and getattr(self, "_pointer", None):
            self.close()

    def _live(self) -> int:
        if not self._pointer:
            raise AssessmentError(Error.INVALID_ARGUMENT, "this Lockdown was closed")
        return self._pointer


class Session:
    """One assessment session (Apple's AEAssessmentSession). `on_event(session,
    event)` hears every Event: exactly one of BEGAN and FAILED per begin;
    INTERRUPTED is not the end (hide the exam, then end()); FAILED and ENDED are.
    Closing (or dropping) a pending or active session ends it at once, silently."""

    def __init__(self, lockdown: Lockdown, surface: int, configuration: Configuration,
                 on_event: Optional[Callable[["Session", Event], None]]) -> None:
        if not surface:
            raise AssessmentError(Error.INVALID_ARGUMENT, "no wl_surface: show the exam window first")
        self.lockdown = lockdown  # the C session keeps the C lockdown; this keeps the Python one
        self.on_event = on_event
        self.configuration = configuration
        self._trampoline = _EVENT_FN(self._deliver)
        with configuration._to_c() as c:
            self._pointer = _lib().carrel_assessment_session_create(lockdown._live(), surface, c.pointer,
                                                                    self._trampoline, None)
        if not self._pointer:
            raise AssessmentError(Error.NO_MEMORY, "carrel_assessment_session_create failed")
        self._updates: list = []

    def _deliver(self, data, session, event_pointer) -> None:
        e = event_pointer.contents
        statement = ctypes.string_at(e.statement, e.statement_length) if e.statement else None
        signature = ctypes.string_at(e.signature, e.signature_length) if e.signature else None
        event = Event(EventKind(e.kind), Error(e.error), (e.message or b"").decode("utf-8", "replace"),
                      statement, signature)
        if event.kind is EventKind.UPDATED and self._updates:
            self.configuration = self._updates.pop(0)
        elif event.kind is EventKind.UPDATE_FAILED and self._updates:
            self._updates.pop(0)
        elif event.is_terminal:
            self._updates.clear()
        if self.on_event is None:
            return
        try:
            self.on_event(self, event)
        except Exception:  # an exception cannot cross the C frames below
            traceback.print_exc()

    @property
    def state(self) -> SessionState:
        return SessionState(_lib().carrel_assessment_session_get_state(self._live()))

    def begin(self) -> None:
        _check(_lib().carrel_assessment_session_begin(self._live()))

    def end(self) -> None:
        """Ends an active session (ENDED follows); before BEGAN, withdraws it (FAILED, CANCELLED, at once)."""
        _check(_lib().carrel_assessment_session_end(self._live()))

    def update(self, configuration: Configuration) -> None:
        with configuration._to_c() as c:
            _check(_lib().carrel_assessment_session_update(self._live(), c.pointer))
        self._updates.append(configuration)

    def request_attestation(self, nonce: bytes) -> None:
        """ATTESTATION (statement, signature) or ATTESTATION_FAILED follows."""
        _check(_lib().carrel_assessment_session_request_attestation(self._live(), bytes(nonce), len(nonce)))

    def end_with_attestation(self, nonce: bytes) -> None:
        """The closing statement: ATTESTATION (or ATTESTATION_FAILED), then ENDED."""
        _check(_lib().carrel_assessment_session_end_with_attestation(self._live(), bytes(nonce), len(nonce)))

    def close(self) -> None:
        if getattr(self, "_pointer", None):
            _lib().carrel_assessment_session_destroy(self._pointer)
            self._pointer = None

    def __del__(self) -> None:
        # At interpreter exit the toolkit may have closed its display
        # already; the compositor ends the session when the connection goes.
        if sys.is_finalizing():
            return
        try:
            self.close()
        except Exception:
            pass

    def _live(self) -> int:
        if not self._pointer:
            raise AssessmentError(Error.INVALID_ARGUMENT, "this Session was closed")
        return self._pointer


def features(values: Iterable) -> set:
    """Features from names ("spell_check") or values, for command lines."""
    return {Feature[v.upper()] if isinstance(v, str) else Feature(v) for v in values}
