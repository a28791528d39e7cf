#!/usr/bin/env python3
"""A client of carrel-assessment-v1 written with pywayland, driven line by line.

The protocol modules are generated at run time from the XML (the contract) by
pywayland's own scanner, never from our Swift: wayland.xml, xdg-shell.xml and
protocols/carrel-assessment-v1.xml go through `python -m pywayland.scanner`
into a directory that is put first on sys.path. Tests generate it once per
session (`generate_protocols`) and pass it in CARREL_PYWAYLAND_PROTOCOLS; run
by hand without it, the client generates its own copy in a temporary directory.

Run it with WAYLAND_DISPLAY set (the app socket's absolute path gives the app
role, the public socket name the untrusted role). It connects, prints every
global (`global NAME INTERFACE VERSION`), then `ready`, and from then on reads
commands from stdin, one per line. Several commands on one line, separated by
` ; `, are sent back to back with no event dispatched in between (used to send
`end` or `destroy` before the compositor can answer `begin`). Objects are named
by the test (`m`, `w`, `s1`, ...).

Commands:
  bind_manager M [NAME] [vN]  bind carrel_assessment_manager_v1 at version N
                            (default 1, never above what is advertised unless
                            NAME is given; NAME: a numeric global name to force,
                            even one never advertised)
  destroy_manager M
  map W                     an xdg_toplevel with a wl_shm buffer; prints
                            `configured W`, then `mapped W` once a frame
                            callback after the first buffer is done
  map_transparent_claiming_opaque W
                            as map, but the buffer is argb8888 and fully
                            transparent while the surface declares its whole
                            area opaque (a lie a compositor must not trust)
  toplevel W                an xdg_toplevel that is configured but never gets
                            a buffer (so never mapped); prints `configured W`
  plain_surface W           a wl_surface with no role
  popup_cycle self|pair     ask for a popup that is its own ancestor (must be refused)
  inert_toplevel            destroy a toplevel's wl_surface first, then send every
                            xdg_toplevel request to the inert toplevel (ignored)
  inert_popup               get_popup on an xdg_surface whose wl_surface is gone (refused)
  close_window W            destroy W's xdg_toplevel and xdg_surface: W leaves the screen
  unmap W                   commit a null buffer on W: the toplevel is unmapped, keeps its role
  config C                  manager create_configuration (on the first manager)
  allow C FEATURE | participant C ID | time_limit C SECONDS | destroy_config C
  deny_network C ID | deny_owner_network C   (version 3) take the network away
  begin S M W C|null        manager M begins session S for surface W
  end S | update S C | destroy S
  attest S HEX|empty        request_attestation on S with the nonce HEX (or none)
  flood_selection N         wl_data_device.set_selection(null, 0) N times back to
                            back (blocked attempts during a session); prints
                            `flooded N` once they are sent (sync to know they arrived)
  fullscreen W              xdg_toplevel.set_fullscreen on W (a raise attempt)
  watch_selection           bind wl_seat and a wl_data_device; prints
                            `selection none` or `selection offer MIME,...`
  sync TAG                  prints `synced TAG` after a wl_display.sync round trip
  connect PORT TAG          one TCP connection attempt from this process to
                            127.0.0.1:PORT (netprobe.py's); prints `connect TAG ok`
                            or `connect TAG fail WHY`
  exit                      disconnects and exits 0 (so does EOF on stdin)
  exit_on_ended             from now on, hearing `ended` on any session exits as `exit` does
                            (an app that quits at once, with no round trip through the test)

Events printed (one line each, flushed at once):
  manager M feature FEATURE ENFORCEMENT | manager M lock_state STATE | manager M done
  session S began | session S failed REASON MESSAGE | session S interrupted REASON MESSAGE
  session S ended | session S updated | session S update_failed REASON MESSAGE
  session S attestation STATEMENT_BASE64 SIGNATURE_BASE64 | session S attestation_failed REASON MESSAGE
  error INTERFACE CODE OBJECT_ID   a protocol error (wl_display_get_protocol_error);
                                   followed by `disconnected ERRNO`, exit status 3
  disconnected ERRNO               the connection failed otherwise; exit status 2
  bad_command TEXT                 a command the client does not understand; exit status 4
"""

from __future__ import annotations

import base64
import ctypes
import errno
import mmap
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "carrel_wl"
PROTOCOL_XMLS = (
    Path("/usr/share/wayland/wayland.xml"),
    Path("/usr/share/wayland-protocols/stable/xdg-shell/xdg-shell.xml"),
    REPO / "protocols" / "carrel-assessment-v1.xml",
)

EXIT_PROTOCOL_ERROR = 3
EXIT_DISCONNECTED = 2
EXIT_BAD_COMMAND = 4


def generate_protocols(outdir: Path, python: str = sys.executable) -> Path:
    """Runs pywayland's scanner on the XML files into outdir/carrel_wl; returns outdir."""
    for xml in PROTOCOL_XMLS:
        if not xml.is_file():
            raise FileNotFoundError(f"protocol XML {xml} is missing")
    package = outdir / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [python, "-m", "pywayland.scanner", "-o", str(package), "-i", *map(str, PROTOCOL_XMLS)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"pywayland.scanner failed ({result.returncode}):\n{result.stderr}")
    (package / "__init__.py").write_text("# generated by assessment_client.generate_protocols\n")
    for module in ("wayland", "xdg_shell", "carrel_assessment_v1"):
        if not (package / f"{module}.py").is_file():
            raise RuntimeError(f"pywayland.scanner did not write {module}.py:\n{result.stderr}")
    return outdir


_WIRE = None


def wire(python: str = sys.executable):
    """The protocol module pywayland's scanner makes from the XML (generated
    once per process, into a temporary directory): tests take wire values
    from its enums, e.g. `wire().CarrelAssessmentSessionV1.failure_reason.timeout`,
    never from literals. Needs pywayland in this interpreter."""
    global _WIRE
    if _WIRE is None:
        import atexit
        import importlib
        import importlib.util
        import shutil
        outdir = Path(tempfile.mkdtemp(prefix="carrel-wire-"))
        atexit.register(shutil.rmtree, outdir, True)
        package_dir = generate_protocols(outdir, python=python) / PACKAGE
        # Loaded as a package of its own name, so this copy never shadows the
        # client's `carrel_wl` (its modules import each other relatively).
        name = "carrel_wire_protocols"
        spec = importlib.util.spec_from_file_location(
            name, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)])
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
        _WIRE = importlib.import_module(f"{name}.carrel_assessment_v1")
    return _WIRE


def emit(*words: object) -> None:
    sys.stdout.write(" ".join(str(w) for w in words) + "\n")
    sys.stdout.flush()


class Disconnected(Exception):
    pass


class Client:
    def __init__(self) -> None:
        from pywayland import ffi
        from pywayland.client import Display

        import carrel_wl.carrel_assessment_v1 as ca
        import carrel_wl.wayland as wl
        import carrel_wl.xdg_shell as xdg

        self.ffi, self.wl, self.xdg, self.ca = ffi, wl, xdg, ca
        self.display = Display(os.environ.get("WAYLAND_DISPLAY"))
        self.display.connect()
        self.globals: dict[int, tuple[str, int]] = {}
        self.registry = self.display.get_registry()
        self.registry.dispatcher["global"] = self._on_global
        self.registry.dispatcher["global_remove"] = lambda r, name: self.globals.pop(name, None)
        # Every proxy stays referenced here: pywayland destroys proxies it collects.
        self.objects: dict[str, object] = {}
        self.keep: list[object] = []
        self.compositor = self.shm = self.wm_base = self.seat = None
        self.running = True
        self.exit_on_ended = False
        self.roles: dict = {}  # window name -> (xdg_surface, xdg_toplevel)
        self.stdin_buffer = b""
        self._libwc = ctypes.CDLL(self._loaded_libwayland_client())
        self._libwc.wl_display_get_protocol_error.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint32)]
        self._libwc.wl_display_get_protocol_error.restype = ctypes.c_uint32
        self._libwc.wl_display_get_error.argtypes = [ctypes.c_void_p]
        self._libwc.wl_display_get_error.restype = ctypes.c_int
        if self.display.roundtrip() < 0:
            self._fail()
        for name, (interface, version) in sorted(self.globals.items()):
            emit("global", name, interface, version)
        emit("ready")

    # -- connection ---------------------------------------------------------

    @staticmethod
    def _loaded_libwayland_client() -> str:
        """The libwayland-client pywayland is linked to (PyPI wheels bundle their
        own copy): wl_display_get_protocol_error must come from the same library
        as the wl_display, which pywayland's cffi module does not expose."""
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "/libwayland-client" in path:
                    return path
        return "libwayland-client.so.0"

    def _on_global(self, registry, name, interface, version):
        self.globals[name] = (interface, version)

    def _display_ptr(self) -> int:
        return int(self.ffi.cast("uintptr_t", self.display._ptr))

    def _fail(self) -> None:
        """The connection is broken: report why and stop."""
        ptr = self._display_ptr()
        err = self._libwc.wl_display_get_error(ptr)
        if err == errno.EPROTO:
            iface = ctypes.c_void_p()
            object_id = ctypes.c_uint32()
            code = self._libwc.wl_display_get_protocol_error(ptr, ctypes.byref(iface),
                                                             ctypes.byref(object_id))
            name = ctypes.cast(iface, ctypes.POINTER(ctypes.c_char_p))[0].decode() \
                if iface.value else "unknown"
            emit("error", name, code, object_id.value)
        emit("disconnected", err)
        raise Disconnected(EXIT_PROTOCOL_ERROR if err == errno.EPROTO else EXIT_DISCONNECTED)

    def _bind(self, interface_class, max_version: int):
        for name, (interface, version) in self.globals.items():
            if interface == interface_class.name:
                return self.registry.bind(name, interface_class, min(version, max_version))
        raise RuntimeError(f"the compositor does not advertise {interface_class.name}")

    def _need_shell(self) -> None:
        wl, xdg = self.wl, self.xdg
        if self.compositor is None:
            self.compositor = self._bind(wl.WlCompositor, 4)
            self.shm = self._bind(wl.WlShm, 1)
            self.wm_base = self._bind(xdg.XdgWmBase, 2)
            self.wm_base.dispatcher["ping"] = lambda base, serial: base.pong(serial)

    # -- windows ------------------------------------------------------------

    def _buffer(self, width: int, height: int, transparent: bool = False):
        """An xrgb8888 buffer of #3366cc, or (transparent) an argb8888 one
        whose every pixel is fully transparent."""
        stride = width * 4
        size = stride * height
        fd = os.memfd_create("carrel-assessment-client", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            with mmap.mmap(fd, size) as data:
                data[:] = (b"\x00\x00\x00\x00" if transparent else b"\xcc\x66\x33\xff") * (width * height)
            pool = self.shm.create_pool(fd, size)
        finally:
            os.close(fd)  # libwayland sent a duplicate
        format = self.wl.WlShm.format.argb8888 if transparent else self.wl.WlShm.format.xrgb8888
        buffer = pool.create_buffer(0, width, height, stride, format.value)
        pool.destroy()
        self.keep.append(buffer)
        return buffer

    def make_toplevel(self, name: str, with_buffer: bool, claims_opaque_when_transparent: bool = False) -> None:
        """A toplevel; with_buffer: mapped with the exam's colour, or
        (claims_opaque_when_transparent) with a fully transparent buffer
        whose whole area the surface declares opaque: a lie."""
        self._need_shell()
        surface = self.compositor.create_surface()
        xdg_surface = self.wm_base.get_xdg_surface(surface)
        toplevel = xdg_surface.get_toplevel()
        toplevel.set_title(f"carrel assessment client {name}")
        toplevel.set_app_id("carrel-assessment-client")
        state = {"size": (0, 0), "configured": False, "attached": None, "mapped": False}

        def on_toplevel_configure(_, width, height, states):
            state["size"] = (width, height)

        def on_frame_done(callback, _time):
            if not state["mapped"]:
                state["mapped"] = True
                emit("mapped", name)

        def on_configure(xs, serial):
            xs.ack_configure(serial)
            if not state["configured"]:
                state["configured"] = True
                emit("configured", name)
            if not with_buffer:
                surface.commit()
                return
            width, height = state["size"]
            size = (width or 640, height or 480)
            if state["attached"] != size:
                surface.attach(self._buffer(*size, transparent=claims_opaque_when_transparent), 0, 0)
                if claims_opaque_when_transparent:
                    region = self.compositor.create_region()
                    region.add(0, 0, *size)
                    surface.set_opaque_region(region)
                    region.destroy()
                surface.damage_buffer(0, 0, *size)
                if state["attached"] is None:
                    callback = surface.frame()
                    callback.dispatcher["done"] = on_frame_done
                    self.keep.append(callback)
                state["attached"] = size
            surface.commit()

        toplevel.dispatcher["configure"] = on_toplevel_configure
        toplevel.dispatcher["close"] = lambda _: emit("close", name)
        xdg_surface.dispatcher["configure"] = on_configure
        surface.commit()
        self.objects[name] = surface
        self.roles[name] = (xdg_surface, toplevel)
        self.keep += [xdg_surface, toplevel]

    # -- assessment protocol ------------------------------------------------

    def bind_manager(self, name: str, *rest: str) -> None:
        manager_class = self.ca.CarrelAssessmentManagerV1
        numeric = next((r for r in rest if not r.startswith("v")), None)
        version = int(next((r[1:] for r in rest if r.startswith("v")), "1"))
        if numeric is None:
            found = [(n, v) for n, (i, v) in self.globals.items() if i == manager_class.name]
            if not found:
                emit("no_global", manager_class.name)
                return
            numeric, advertised = found[0]
            version = min(version, advertised)
        manager = self.registry.bind(int(numeric), manager_class, version)
        manager.dispatcher["feature"] = lambda _, f, e: emit("manager", name, "feature", f, e)
        manager.dispatcher["lock_state"] = lambda _, s: emit("manager", name, "lock_state", s)
        manager.dispatcher["done"] = lambda _: emit("manager", name, "done")
        self.objects[name] = manager

    def begin(self, session_name: str, manager: str, surface: str, config: str) -> None:
        configuration = None if config == "null" else self.objects[config]
        session = self.objects[manager].begin(self.objects[surface], configuration)
        d = session.dispatcher
        d["began"] = lambda _: emit("session", session_name, "began")
        d["failed"] = lambda _, r, m: emit("session", session_name, "failed", r, m)
        d["interrupted"] = lambda _, r, m: emit("session", session_name, "interrupted", r, m)
        d["ended"] = lambda _: self.on_ended(session_name)
        d["updated"] = lambda _: emit("session", session_name, "updated")
        d["update_failed"] = lambda _, r, m: emit("session", session_name, "update_failed", r, m)
        d["attestation"] = lambda _, statement, signature: emit(
            "session", session_name, "attestation",
            base64.b64encode(statement.encode()).decode(), base64.b64encode(bytes(signature)).decode())
        d["attestation_failed"] = lambda _, r, m: emit("session", session_name, "attestation_failed", r, m)
        self.objects[session_name] = session

    def request_attestation(self, session, nonce: bytes) -> None:
        """request_attestation marshalled here: pywayland's own marshalling of
        array arguments fails (it cannot allocate a `void[]`), so the one
        wl_argument (a wl_array with the nonce) is built with cffi directly."""
        from pywayland import lib
        ffi = self.ffi
        opcode = [r.name for r in self.ca.CarrelAssessmentSessionV1.requests].index("request_attestation")
        data = ffi.new("char[]", max(1, len(nonce)))
        ffi.buffer(data, len(nonce))[:] = nonce
        array = ffi.new("struct wl_array *")
        array.size = array.alloc = len(nonce)
        array.data = data
        arguments = ffi.new("union wl_argument[]", 1)
        arguments[0].a = array
        lib.wl_proxy_marshal_array(ffi.cast("struct wl_proxy *", session._ptr), opcode, arguments)

    def watch_selection(self) -> None:
        wl = self.wl
        if self.seat is None:
            self.seat = self._bind(wl.WlSeat, 5)
        manager = self._bind(wl.WlDataDeviceManager, 3)
        device = manager.get_data_device(self.seat)
        offers: dict[int, list] = {}

        def on_data_offer(_, offer):
            mimes: list = []
            offers[id(offer)] = mimes
            offer.dispatcher["offer"] = lambda _, mime: mimes.append(mime)
            self.keep.append(offer)

        def on_selection(_, offer):
            if offer is None:
                emit("selection", "none")
            else:
                emit("selection", "offer", ",".join(offers.get(id(offer), [])) or "-")

        device.dispatcher["data_offer"] = on_data_offer
        device.dispatcher["selection"] = on_selection
        self.keep += [manager, device]

    def flood_selection(self, count: int) -> None:
        wl = self.wl
        if self.seat is None:
            self.seat = self._bind(wl.WlSeat, 5)
        manager = self._bind(wl.WlDataDeviceManager, 3)
        device = manager.get_data_device(self.seat)
        self.keep += [manager, device]
        for i in range(count):
            device.set_selection(None, 0)
            if i % 256 == 255:
                self.display.flush()
        self.display.flush()
        emit("flooded", count)

    def popup_cycle(self, kind: str) -> None:
        """Asks for a popup tree with a cycle, then destroys it (what crashed wlroots 0.15):
        `self`: an xdg_surface's popup whose parent is that xdg_surface;
        `pair`: popup B under a not-yet-constructed A, then A's popup under B."""
        self._need_shell()
        positioner = self.wm_base.create_positioner()
        positioner.set_size(10, 10)
        positioner.set_anchor_rect(0, 0, 1, 1)
        a = self.wm_base.get_xdg_surface(self.compositor.create_surface())
        if kind == "self":
            popup = a.get_popup(a, positioner)
            popup.destroy()
        elif kind == "pair":
            b = self.wm_base.get_xdg_surface(self.compositor.create_surface())
            popup_b = b.get_popup(a, positioner)
            popup_a = a.get_popup(b, positioner)
            popup_a.destroy()
            popup_b.destroy()
        else:
            raise ValueError(kind)
        a.destroy()

    def inert_xdg(self, kind: str) -> None:
        """What crashed wlroots 0.15 (found by the fuzzer): requests on an xdg_toplevel
        or xdg_surface after the client destroyed their wl_surface."""
        self._need_shell()
        surface = self.compositor.create_surface()
        xdg_surface = self.wm_base.get_xdg_surface(surface)
        if kind == "popup":
            surface.destroy()
            positioner = self.wm_base.create_positioner()
            positioner.set_size(10, 10)
            positioner.set_anchor_rect(0, 0, 1, 1)
            xdg_surface.get_popup(None, positioner)
            return
        toplevel = xdg_surface.get_toplevel()
        surface.destroy()
        toplevel.set_title("inert")
        toplevel.set_app_id("inert")
        toplevel.set_parent(None)
        toplevel.set_min_size(10, 10)
        toplevel.set_max_size(100, 100)
        toplevel.set_maximized()
        toplevel.unset_maximized()
        toplevel.set_fullscreen(None)
        toplevel.unset_fullscreen()
        toplevel.set_minimized()
        toplevel.destroy()
        xdg_surface.destroy()

    def on_ended(self, session_name: str) -> None:
        emit("session", session_name, "ended")
        if self.exit_on_ended:
            self.running = False

    def sync(self, tag: str) -> None:
        callback = self.display.sync()
        callback.dispatcher["done"] = lambda *_: emit("synced", tag)
        self.keep.append(callback)

    # -- commands -------------------------------------------------------------

    def command(self, words: list) -> None:
        op, args = words[0], words[1:]
        o = self.objects
        if op == "bind_manager":
            self.bind_manager(*args)
        elif op == "destroy_manager":
            o.pop(args[0]).destroy()
        elif op == "map":
            self.make_toplevel(args[0], with_buffer=True)
        elif op == "map_transparent_claiming_opaque":
            self.make_toplevel(args[0], with_buffer=True, claims_opaque_when_transparent=True)
        elif op == "toplevel":
            self.make_toplevel(args[0], with_buffer=False)
        elif op == "plain_surface":
            self._need_shell()
            o[args[0]] = self.compositor.create_surface()
        elif op == "popup_cycle":
            self.popup_cycle(args[0])
        elif op == "inert_toplevel":
            self.inert_xdg("toplevel")
        elif op == "inert_popup":
            self.inert_xdg("popup")
        elif op == "config":
            managers = [v for v in o.values()
                        if isinstance(v, self.ca.CarrelAssessmentManagerV1.proxy_class)]
            o[args[0]] = managers[0].create_configuration()
        elif op == "allow":
            o[args[0]].allow_feature(int(args[1]))
        elif op == "participant":
            o[args[0]].add_participant(args[1])
        elif op == "time_limit":
            o[args[0]].set_time_limit(int(args[1]))
        elif op == "deny_network":
            o[args[0]].deny_participant_network(args[1])
        elif op == "deny_owner_network":
            o[args[0]].deny_owner_network()
        elif op == "destroy_config":
            o.pop(args[0]).destroy()
        elif op == "begin":
            self.begin(*args)
        elif op == "end":
            o[args[0]].end()
        elif op == "update":
            o[args[0]].update(o[args[1]])
        elif op == "attest":
            self.request_attestation(o[args[0]], bytes.fromhex(args[1]) if args[1] != "empty" else b"")
        elif op == "destroy":
            o.pop(args[0]).destroy()
        elif op == "close_window":
            # Destroys the toplevel (not the wl_surface): the window leaves the
            # screen, the session does not end.
            xdg_surface, toplevel = self.roles.pop(args[0])
            toplevel.destroy()
            xdg_surface.destroy()
        elif op == "unmap":
            surface = o[args[0]]
            surface.attach(None, 0, 0)
            surface.commit()
        elif op == "watch_selection":
            self.watch_selection()
        elif op == "flood_selection":
            self.flood_selection(int(args[0]))
        elif op == "fullscreen":
            self.roles[args[0]][1].set_fullscreen(None)
        elif op == "sync":
            self.sync(args[0])
        elif op == "connect":
            import netprobe  # beside this script
            emit("connect", args[1], netprobe.attempt(int(args[0])))
        elif op == "exit":
            self.running = False
        elif op == "exit_on_ended":
            self.exit_on_ended = True
        else:
            raise ValueError(op)

    def handle_line(self, line: str) -> None:
        for part in line.split(" ; "):
            words = part.split()
            if not words:
                continue
            try:
                self.command(words)
            except (ValueError, KeyError, IndexError, TypeError, RuntimeError) as e:
                emit("bad_command", part.strip(), f"({type(e).__name__}: {e})")
                raise Disconnected(EXIT_BAD_COMMAND)
            if not self.running:
                return

    def read_stdin(self) -> None:
        chunk = os.read(sys.stdin.fileno(), 65536)
        if not chunk:
            self.running = False
            return
        self.stdin_buffer += chunk
        while b"\n" in self.stdin_buffer and self.running:
            line, self.stdin_buffer = self.stdin_buffer.split(b"\n", 1)
            self.handle_line(line.decode())

    def run(self) -> int:
        display = self.display
        fd = display.get_fd()
        stdin_fd = sys.stdin.fileno()
        try:
            while self.running:
                try:
                    display.dispatch(block=False)
                except RuntimeError:
                    self._fail()
                if not self.running:
                    break  # an event said to exit (exit_on_ended)
                if display.flush() < 0 and self._libwc.wl_display_get_error(self._display_ptr()):
                    self._fail()  # (a -1 with no display error is EAGAIN: flush again later)
                readable, _, _ = select.select([stdin_fd, fd], [], [])
                if fd in readable:
                    try:
                        display.read()
                    except RuntimeError:
                        self._fail()
                if stdin_fd in readable:
                    self.read_stdin()
            display.flush()
            display.roundtrip()
        except Disconnected as e:
            return e.args[0]
        return 0


def main() -> int:
    protocols = os.environ.get("CARREL_PYWAYLAND_PROTOCOLS")
    if not protocols:
        protocols = str(generate_protocols(Path(tempfile.mkdtemp(prefix="carrel-pywayland-"))))
    sys.path.insert(0, protocols)
    try:
        client = Client()
    except ValueError as e:  # pywayland: "Unable to connect to display"
        emit("disconnected", "connect", str(e).replace("\n", " "))
        return EXIT_DISCONNECTED
    except Disconnected as e:
        return e.args[0]
    return client.run()


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: pywayland's finalizers may destroy proxies after
    # the display they belong to, which crashes in libwayland. Closing the socket
    # is all a disconnect needs.
    os._exit(status)
