#!/usr/bin/env python3
"""Wire-level fuzzer for Carrel (stdlib only): raw Wayland messages over AF_UNIX.

Modes: garbage (random bytes, malformed headers, bad ids/opcodes, stray fds, huge
strings/arrays, truncation) and structured (requests generated from the protocol XML
with random arguments, against objects tracked by interface: live, destroyed, wrong type).
Seeded: every connection K draws from Random(f"{seed}:{K}"), so a run is replayable.
Oracle after every connection (and each --check-every seconds): carrel alive, a fresh
client's wl_display.sync answered within --sync-timeout, VmRSS growth <= --max-rss-growth-mb.
"""
from __future__ import annotations

import argparse
import array
import errno
import os
import random
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
XMLS = [Path("/usr/share/wayland/wayland.xml"),
        Path("/usr/share/wayland-protocols/stable/xdg-shell/xdg-shell.xml"),
        ROOT / "protocols" / "carrel-assessment-v1.xml",
        # Text input (the app role sees it when the policy names an input
        # method) and the input method's own protocol (no fuzzed role sees it:
        # binding it by name must end the connection cleanly).
        Path("/usr/share/wayland-protocols/unstable/text-input/text-input-unstable-v3.xml"),
        ROOT / "protocols" / "input-method-unstable-v2.xml",
        # What the on-screen keyboard role is given.
        ROOT / "protocols" / "wlr-layer-shell-unstable-v1.xml",
        ROOT / "Tests" / "fuzz" / "virtual-keyboard-unstable-v1.xml"]


# ---------------------------------------------------------------- protocol model
class Iface:
    def __init__(self, name, version):
        self.name, self.version = name, version
        self.requests = []   # (name, since, is_destructor, [(name, type, interface, enum)])
        self.events = []
        self.enums = {}      # name -> [values]


def load_protocols(paths):
    ifaces = {}
    for p in paths:
        if not p.exists():
            continue
        for el in ET.parse(p).getroot().iter("interface"):
            it = Iface(el.get("name"), int(el.get("version", "1")))
            for kind, dest in (("request", it.requests), ("event", it.events)):
                for r in el.findall(kind):
                    args = [(a.get("name"), a.get("type"), a.get("interface"), a.get("enum"))
                            for a in r.findall("arg")]
                    dest.append((r.get("name"), int(r.get("since", "1")),
                                 r.get("type") == "destructor", args))
            for e in el.findall("enum"):
                vals = []
                for en in e.findall("entry"):
                    try:
                        vals.append(int(en.get("value"), 0))
                    except (TypeError, ValueError):
                        pass
                it.enums[e.get("name")] = vals
            ifaces[it.name] = it
    return ifaces


# ---------------------------------------------------------------- wire helpers
def pad(b):
    return b + b"\0" * (-len(b) % 4)


def wl_string(s: bytes):
    return struct.pack("<I", len(s) + 1) + pad(s + b"\0")


def wl_array(b: bytes):
    return struct.pack("<I", len(b)) + pad(b)


def header(obj, opcode, size):
    return struct.pack("<II", obj & 0xFFFFFFFF, ((size & 0xFFFF) << 16) | (opcode & 0xFFFF))


def message(obj, opcode, body=b""):
    return header(obj, opcode, 8 + len(body)) + body


def memfd(size):
    fd = os.memfd_create("carrel-fuzz", 0)
    try:
        os.ftruncate(fd, max(0, min(size, 1 << 24)))
    except OSError:
        pass
    return fd


class Closed(Exception):
    pass


class Conn:
    """A raw client connection; reads non-blockingly, parses the events it cares about."""

    def __init__(self, path=None, fd=None):
        if fd is not None:
            # The connection Carrel made for the program it launched (WAYLAND_SOCKET).
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=fd)
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            self.sock.settimeout(2.0)
            self.sock.connect(path)
        self.sock.setblocking(False)
        self.buf = b""
        self.closed = False
        self.error = None
        self.globals = {}     # name -> (interface, version)
        self.done_callbacks = set()
        self.deleted = set()
        self.registry = None

    def send(self, data, fds=()):
        if self.closed:
            raise Closed()
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        view = memoryview(data)
        deadline = time.monotonic() + 2.0
        first = True
        while view or first:
            try:
                n = self.sock.sendmsg([view], anc if first else [])
                first = False
                view = view[n:]
            except BlockingIOError:
                self.pump(0.02)
                if time.monotonic() > deadline:
                    raise Closed("send stalled")  # carrel not reading us: drop connection
            except OSError:
                self.closed = True
                raise Closed()
            if not data:
                break

    def pump(self, timeout=0.0):
        if self.closed:
            return
        r, _, _ = select.select([self.sock], [], [], timeout)
        while r:
            try:
                msg, anc, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(28 * 4))
            except BlockingIOError:
                break
            except OSError:
                self.closed = True
                break
            for lvl, typ, data in anc:
                if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    fds = array.array("i")
                    fds.frombytes(data[:len(data) - len(data) % 4])
                    for fd in fds:
                        os.close(fd)
            if not msg:
                self.closed = True
                break
            self.buf += msg
            self._parse()
            r, _, _ = select.select([self.sock], [], [], 0)

    def _parse(self):
        while len(self.buf) >= 8:
            obj, word = struct.unpack_from("<II", self.buf)
            size, op = word >> 16, word & 0xFFFF
            if size < 8 or len(self.buf) < size:
                return
            body, self.buf = self.buf[8:size], self.buf[size:]
            try:
                if obj == 1 and op == 0:
                    oid, code, ln = struct.unpack_from("<III", body)
                    self.error = (oid, code, body[12:12 + ln - 1].decode(errors="replace"))
                elif obj == 1 and op == 1:
                    self.deleted.add(struct.unpack_from("<I", body)[0])
                elif obj == self.registry and op == 0:
                    name, ln = struct.unpack_from("<II", body)
                    iface = body[8:8 + ln - 1].decode(errors="replace")
                    ver = struct.unpack_from("<I", body, 8 + ((ln + 3) & ~3))[0]
                    self.globals[name] = (iface, ver)
                elif obj == self.registry and op == 1:
                    self.globals.pop(struct.unpack_from("<I", body)[0], None)
                elif op == 0:
                    self.done_callbacks.add(obj)
            except struct.error:
                pass

    def roundtrip(self, cb_id, timeout):
        self.send(message(1, 0, struct.pack("<I", cb_id)))
        deadline = time.monotonic() + timeout
        while cb_id not in self.done_callbacks:
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return False
            self.pump(min(left, 0.1))
        return True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
        self.closed = True


# ---------------------------------------------------------------- generators
def rand_bytes(rng, n):
    return rng.randbytes(n) if hasattr(rng, "randbytes") else bytes(rng.getrandbits(8) for _ in range(n))


def garbage(rng, conn, steps):
    """Malformed traffic; a protocol error or disconnect ends it early."""
    sent = 0
    for _ in range(steps):
        k = rng.randrange(11)
        fds = []
        if k == 0:
            data = rand_bytes(rng, rng.randrange(1, 512))
        elif k == 1:   # size < 8
            data = header(rng.choice([1, 2, 3]), rng.randrange(4), rng.randrange(8)) + rand_bytes(rng, 8)
        elif k == 2:   # size not multiple of 4
            sz = rng.randrange(9, 64) | 1
            data = header(1, rng.randrange(2), sz) + rand_bytes(rng, sz)
        elif k == 3:   # size > 4096 / huge
            sz = rng.choice([4100, 8192, 0xFFFF, 4097])
            data = header(1, rng.randrange(2), sz) + rand_bytes(rng, rng.randrange(0, 5000))
        elif k == 4:   # bad opcode on display / registry
            data = message(rng.choice([1, 2]), rng.randrange(2, 0x10000), rand_bytes(rng, 4 * rng.randrange(4)))
        elif k == 5:   # unknown object ids
            data = message(rng.choice([0, 5, 999, 0xFF000000, 0xFFFFFFFF, rng.getrandbits(32)]),
                           rng.randrange(8), rand_bytes(rng, 4 * rng.randrange(6)))
        elif k == 6:   # fds where none are expected (sync with fds)
            fds = [memfd(rng.randrange(0, 65536)) for _ in range(rng.randrange(1, 5))]
            data = message(1, 0, struct.pack("<I", rng.randrange(3, 1000)))
        elif k == 7:   # huge / lying strings: get_registry with string length tricks
            ln = rng.choice([0, 1, 4000, 0xFFFF, 0xFFFFFFFF, 0x7FFFFFFF])
            body = struct.pack("<I", ln) + rand_bytes(rng, 4 * rng.randrange(0, 1000))
            data = message(2, 0, struct.pack("<I", 1) + body)
        elif k == 8:   # truncated message (header says more than sent), then close
            data = header(1, 0, 16) + struct.pack("<I", 3)
        elif k == 9:   # valid get_registry + sync (keeps some states interesting)
            data = message(1, 1, struct.pack("<I", 2)) + message(1, 0, struct.pack("<I", rng.randrange(3, 100)))
        else:          # many fds with random bytes
            fds = [memfd(4096) for _ in range(rng.randrange(1, 29))]
            data = rand_bytes(rng, rng.randrange(8, 64))
        try:
            conn.send(data, fds)
            sent += 1
        finally:
            for fd in fds:
                os.close(fd)
        conn.pump(0)
        if conn.closed or conn.error:
            break
        if k == 8 and rng.random() < 0.5:
            break
    return sent


class Structured:
    def __init__(self, rng, conn, ifaces, trace=False):
        self.rng, self.conn, self.ifaces, self.trace = rng, conn, ifaces, trace
        self.objs = {1: ("wl_display", 1)}     # id -> (interface, version)
        self.dead = {}                         # destroyed id -> interface
        self.next_id = 2
        # How hostile this connection is: 0 keeps ids/objects/versions valid (only the
        # values are random), so sequences get deep; higher values misuse more often.
        self.bad = rng.choice([0.0, 0.002, 0.01, 0.05])

    def new_id(self, iface, version):
        rng = self.rng
        if self.objs and rng.random() < self.bad:
            nid = rng.choice(list(self.objs))           # reuse a live id
        elif self.dead and rng.random() < self.bad:
            nid = rng.choice(list(self.dead))           # reuse a destroyed id
        elif rng.random() < self.bad / 2:
            nid = rng.choice([0, 0xFF000001, self.next_id + 50])
        else:
            nid = self.next_id
            self.next_id += 1
        if iface:
            self.objs[nid] = (iface, version)
            self.dead.pop(nid, None)
        return nid

    def obj_arg(self, iface):
        rng = self.rng
        live = [i for i, (n, _) in self.objs.items() if n == iface]
        x = rng.random()
        if live and (x < 0.8 or rng.random() > self.bad * 10):
            return rng.choice(live)
        if x < 0.88 and self.dead:
            return rng.choice(list(self.dead))
        if x < 0.95:
            return rng.choice(list(self.objs))          # wrong type
        return rng.choice([0, 0xDEADBEEF, self.next_id + 7])

    def int_arg(self, iface, enum, signed):
        rng = self.rng
        if enum:
            owner, _, ename = enum.rpartition(".")
            vals = self.ifaces.get(owner or iface, Iface("", 1)).enums.get(ename, [])
            if vals and rng.random() < 1 - self.bad * 4:
                v = rng.choice(vals)
                if rng.random() < 0.3:
                    v |= rng.choice(vals)
                return v
        return rng.choice([0, 1, 2, -1, 7, 64, 255, 256, 4096, 0x7FFFFFFF, -0x80000000,
                           rng.getrandbits(32) - (1 << 31), rng.randrange(-1000, 1000)])

    def request(self):
        rng = self.rng
        oid = rng.choice(list(self.objs)) if rng.random() > self.bad or not self.dead \
            else rng.choice(list(self.dead))
        iname, ver = self.objs.get(oid, (self.dead.get(oid), 1))
        it = self.ifaces.get(iname)
        if not it or not it.requests:
            return None
        reqs = [(i, r) for i, r in enumerate(it.requests) if r[1] <= ver or rng.random() < self.bad]
        if not reqs:
            return None
        opcode, (rname, _, destructor, args) = rng.choice(reqs)
        body, fds = b"", []
        for aname, atype, aiface, enum in args:
            if atype in ("int", "uint"):
                v = self.int_arg(iname, enum, atype == "int")
                body += struct.pack("<I", v & 0xFFFFFFFF)
            elif atype == "fixed":
                body += struct.pack("<i", rng.randrange(-(1 << 31), 1 << 31))
            elif atype == "string":
                r = rng.random()
                s = (b"xdg_wm_base" if r < 0.1 else rand_bytes(rng, rng.randrange(0, 40)).replace(b"\0", b"a")
                     if r < 0.8 else b"x" * rng.choice([1000, 4000, 5000]))
                body += wl_string(s) if rng.random() > self.bad else struct.pack("<I", 0)
            elif atype == "array":
                body += wl_array(rand_bytes(rng, rng.choice([0, 4, 8, 64, 3000, 5000])))
            elif atype == "object":
                body += struct.pack("<I", self.obj_arg(aiface) if aiface else rng.choice(list(self.objs)))
            elif atype == "new_id":
                if aiface:
                    nv = ver if aiface in self.ifaces else 1
                    nv = min(nv, self.ifaces[aiface].version) if aiface in self.ifaces else nv
                    body += struct.pack("<I", self.new_id(aiface, nv))
                else:  # wl_registry.bind
                    if self.conn.globals and rng.random() > self.bad:
                        gname, (gif, gver) = rng.choice(list(self.conn.globals.items()))
                        bver = rng.randrange(1, gver + 1) if rng.random() > self.bad else gver + rng.randrange(1, 5)
                    else:
                        gname, gif, bver = rng.randrange(0, 100), rng.choice(list(self.ifaces)), rng.randrange(0, 9)
                    body = struct.pack("<I", gname)
                    body += wl_string(gif.encode()) + struct.pack("<I", bver)
                    body += struct.pack("<I", self.new_id(gif, bver))
            elif atype == "fd":
                fds.append(memfd(rng.choice([0, 1, 4096, 65536, 1 << 20, rng.randrange(0, 1 << 22)])))
        try:
            self.conn.send(message(oid, opcode, body), fds)
        finally:
            for fd in fds:
                os.close(fd)
        if destructor and oid in self.objs and oid != 1:
            self.dead[oid] = self.objs.pop(oid)[0]
        if self.trace:
            print(f"  -> {iname}@{oid}.{rname} {body.hex()}" + (f" fds={len(fds)}" if fds else ""))
        return f"{iname}@{oid}.{rname}"

    def run(self, steps):
        rng = self.rng
        reg = self.new_id("wl_registry", 1)
        self.conn.registry = reg
        self.conn.send(message(1, 1, struct.pack("<I", reg)))
        cb = self.next_id
        self.next_id += 1
        self.conn.roundtrip(cb, 2.0)
        # Bind most advertised globals first so there is something to talk to.
        for gname, (gif, gver) in list(self.conn.globals.items()):
            if gif in self.ifaces and rng.random() < 0.8:
                bver = rng.randrange(1, min(gver, self.ifaces[gif].version) + 1)
                nid = self.new_id(gif, bver)
                self.conn.send(message(reg, 0, struct.pack("<I", gname) + wl_string(gif.encode())
                                       + struct.pack("<II", bver, nid)))
        done = 0
        for _ in range(steps):
            self.request()
            done += 1
            self.conn.pump(0)
            if self.conn.closed or self.conn.error:
                break
            if rng.random() < 0.05:
                self.conn.pump(0.005)
        return done


# ---------------------------------------------------------------- oracle + driver
def rss_kb(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return 0


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


class Fuzzer:
    def __init__(self, args, public_path, app_path):
        self.args = args
        self.paths = {"untrusted": public_path, "app": app_path}
        self.ifaces = load_protocols(XMLS)
        self.pid = args.carrel_pid
        self.rss0 = rss_kb(self.pid) if self.pid else None
        self.peak = self.rss0

    def check(self, k):
        if self.pid and not alive(self.pid):
            return "carrel is not running any more"
        path = self.paths["untrusted"] or self.paths["app"]
        try:
            c = Conn(path)
            ok = c.roundtrip(2, self.args.sync_timeout)
            detail = f"(fresh client closed={c.closed} error={c.error} fds_open={len(os.listdir('/proc/self/fd'))})"
            c.close()
        except OSError as e:
            return f"fresh client could not connect: {e}"
        except Closed:
            ok, detail = False, "(send failed)"
        if not ok:
            if self.pid and not alive(self.pid):
                return "carrel died"
            return f"no answer to wl_display.sync within {self.args.sync_timeout}s (hang) {detail}"
        if self.pid:
            r = rss_kb(self.pid)
            if r:
                self.peak = max(self.peak or 0, r)
                if self.rss0 and r - self.rss0 > self.args.max_rss_growth_mb * 1024:
                    return f"RSS grew from {self.rss0} kB to {r} kB"
        return None

    def fuzz(self, rng, conn, mode, settle):
        """One connection's messages in `mode`, then `settle` s for the answers; how many were sent."""
        try:
            if mode == "garbage":
                n = garbage(rng, conn, rng.randrange(1, 40))
            else:
                n = Structured(rng, conn, self.ifaces, self.args.trace).run(rng.randrange(10, 300))
            conn.pump(settle)
            return n
        except Closed:
            return 0

    def run_inherited(self):
        """One connection over WAYLAND_SOCKET, as the program Carrel launched
        in a role (the on-screen keyboard, the input method): connection K of
        the seed, K being the number of lines already in the report, so each
        launch fuzzes the next one and `--connection K` names it. The line
        it appends says what was sent and how it ended; Carrel's health is
        for the test that started Carrel to judge."""
        a = self.args
        fd = int(os.environ["WAYLAND_SOCKET"])
        k = a.connection
        if k is None:
            k = len(Path(a.report).read_text().splitlines()) if Path(a.report).exists() else 0
        rng = random.Random(f"{a.seed}:{k}")
        mode = rng.choice(["garbage", "structured"] if a.mode == "both" else [a.mode])
        conn = Conn(fd=fd)
        n = self.fuzz(rng, conn, mode, settle=0.05)
        globals_seen = sorted({iface for iface, _ in conn.globals.values()})
        with open(a.report, "a") as f:
            f.write(f"seed={a.seed} connection={k} mode={mode} messages={n} error={conn.error} "
                    f"closed={conn.closed} globals={','.join(globals_seen)}\n")
        conn.close()

    def run(self):
        a = self.args
        if a.inherited:
            return self.run_inherited()
        roles = ["untrusted", "app"] if a.role == "both" else [a.role]
        roles = [r for r in roles if self.paths[r]]
        if not roles:
            sys.exit("no socket for the requested role(s)")
        modes = ["garbage", "structured"] if a.mode == "both" else [a.mode]
        start = time.monotonic()
        last_check = start
        stats = {"connections": 0, "messages": 0, "errors": 0, "disconnects": 0}
        k = 0
        only = a.connection
        while True:
            if only is None:
                if a.iterations and k >= a.iterations:
                    break
                if a.duration and time.monotonic() - start >= a.duration:
                    break
            elif k > only:
                break
            rng = random.Random(f"{a.seed}:{k}")
            role, mode = rng.choice(roles), rng.choice(modes)
            if only is None or k == only:
                try:
                    conn = Conn(self.paths[role])
                except OSError as e:
                    self.fail(k, f"connect {role}: {e}")
                n = self.fuzz(rng, conn, mode, settle=0.01)
                stats["messages"] += n
                stats["connections"] += 1
                stats["errors"] += conn.error is not None
                stats["disconnects"] += conn.closed and conn.error is None
                if a.verbose:
                    print(f"connection {k} {role} {mode}: {n} msgs error={conn.error} closed={conn.closed}")
                conn.close()
                now = time.monotonic()
                if self.pid and not alive(self.pid) or now - last_check >= a.check_every or only is not None:
                    last_check = now
                    problem = self.check(k)
                    if problem:
                        self.fail(k, problem)
            k += 1
        problem = self.check(k)
        if problem:
            self.fail(k, problem)
        rss1 = rss_kb(self.pid) if self.pid else None
        print(f"carrel-fuzz: PASSED seed={a.seed} connections={stats['connections']} "
              f"messages={stats['messages']} protocol_errors={stats['errors']} "
              f"disconnects={stats['disconnects']} seconds={time.monotonic() - start:.1f} "
              f"rss_start_kb={self.rss0} rss_end_kb={rss1} rss_peak_kb={self.peak}", flush=True)

    def fail(self, k, why):
        a = self.args
        cmd = [sys.executable, str(Path(__file__).resolve()), "--seed", str(a.seed),
               "--mode", a.mode, "--role", a.role, "--connection", str(k)]
        if a.spawn:
            cmd.append("--spawn")
        else:
            cmd += ["--public", str(self.paths["untrusted"] or ""), "--app", str(self.paths["app"] or ""),
                    "--carrel-pid", str(a.carrel_pid or 0)]
        print(f"carrel-fuzz: {why}", flush=True)
        if a.carrel_pid and alive(a.carrel_pid):
            try:
                st = Path(f"/proc/{a.carrel_pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                wchan = Path(f"/proc/{a.carrel_pid}/wchan").read_text()
                print(f"carrel-fuzz: carrel state={st} wchan={wchan}", flush=True)
            except OSError:
                pass
            if a.backtrace and shutil.which("gdb"):
                bt = subprocess.run(["gdb", "-p", str(a.carrel_pid), "-batch", "-ex", "thread apply all bt 30"],
                                    capture_output=True, text=True, timeout=60)
                print("carrel-fuzz: backtrace\n" + "\n".join(l for l in bt.stdout.splitlines() if l.startswith(("#", "Thread"))), flush=True)
        print(f"FAILED seed={a.seed} connection={k}", flush=True)
        print("replay (this connection only, on a fresh carrel): " + shlex.join(cmd), flush=True)
        print("replay (whole run): " + shlex.join(cmd[:cmd.index("--connection")] + cmd[cmd.index("--connection") + 2:]
                                                 + ["--iterations", str(k + 1)]), flush=True)
        sys.exit(1)


def spawn_carrel(log):
    binary = os.environ.get("CARREL_BIN", str(ROOT / ".build" / "debug" / "carrel"))
    runtime = tempfile.mkdtemp(prefix="carrel-fuzz-")
    os.chmod(runtime, 0o700)
    record = Path(runtime) / "app-display"
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "DISPLAY")}
    env.update(XDG_RUNTIME_DIR=runtime, WLR_BACKENDS="headless", WLR_RENDERER="pixman")
    # A policy naming an input method, so text-input-v3 exists for the app
    # role; the "engine" only holds its connection (the fuzzer drives the
    # app and untrusted roles, never the input method's).
    policy = Path(runtime) / "policy.toml"
    policy.write_text('[input_method]\ncommand = ["/bin/sh", "-c", "exec sleep 100000"]\n')
    r, w = os.pipe()
    proc = subprocess.Popen([binary, "--ready-fd", str(w), "--audit-log", os.path.join(runtime, "audit.jsonl"),
                             "--policy", str(policy),
                             # A test machine: headless, no logind seat (docs/PRECONDITIONS.md).
                             "--waive-precondition", "nested", "--waive-precondition", "x_server",
                             "--waive-precondition", "seat", "--waive-precondition", "kernel_keys",
                             "--waive-precondition", "virtual_input", "--waive-precondition", "input_readers",
                             "--", "sh", "-c",
                             'printf "%s\\n" "$WAYLAND_DISPLAY" > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 100000',
                             str(record)], env=env, pass_fds=(w,), stdout=log, stderr=log,
                            start_new_session=True)
    os.close(w)
    data = b""
    deadline = time.monotonic() + 15
    while b"\n" not in data and time.monotonic() < deadline:
        if select.select([r], [], [], 0.2)[0]:
            chunk = os.read(r, 256)
            if not chunk:
                break
            data += chunk
    os.close(r)
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if b"\n" not in data or not record.exists():
        sys.exit(f"spawned carrel did not become ready (log: {log.name})")
    return proc, os.path.join(runtime, data.decode().split("\n")[0].strip()), record.read_text().strip()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--iterations", type=int, default=0, help="connections (0: until --duration)")
    p.add_argument("--duration", type=float, default=0, help="seconds (0: until --iterations)")
    p.add_argument("--mode", choices=["garbage", "structured", "both"], default="both")
    p.add_argument("--role", choices=["untrusted", "app", "both"], default="both")
    p.add_argument("--public", help="public socket name (relative to XDG_RUNTIME_DIR) or path")
    p.add_argument("--app", help="app-role socket path")
    p.add_argument("--carrel-pid", type=int)
    p.add_argument("--spawn", action="store_true", help="start a headless carrel of our own")
    p.add_argument("--connection", type=int, help="replay only connection K")
    p.add_argument("--sync-timeout", type=float, default=5.0)
    p.add_argument("--check-every", type=float, default=1.0)
    p.add_argument("--max-rss-growth-mb", type=float, default=64)
    p.add_argument("--backtrace", action="store_true", help="on a hang, gdb backtrace of carrel")
    p.add_argument("--trace", action="store_true", help="print every structured request sent")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--inherited", action="store_true",
                   help="fuzz one connection over WAYLAND_SOCKET (a policy's keyboard or input method command)")
    p.add_argument("--report", help="with --inherited: the file a line per connection is appended to")
    # Launched as the input method, Carrel appends fcitx5's own options: ignored.
    a, unknown = p.parse_known_args()
    if unknown and not a.inherited:
        p.error(f"unrecognised arguments: {' '.join(unknown)}")
    if a.inherited and not (a.report and "WAYLAND_SOCKET" in os.environ and a.seed is not None):
        p.error("--inherited needs --report FILE, --seed N and WAYLAND_SOCKET (run it as a policy's program)")
    if a.seed is None:
        a.seed = int(time.time())
    if not a.iterations and not a.duration:
        a.iterations = 200
    print(f"carrel-fuzz: seed={a.seed}", flush=True)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    proc = None
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if a.spawn:
        log = open(tempfile.mktemp(prefix="carrel-fuzz-", suffix=".log"), "wb")
        print(f"carrel-fuzz: carrel log {log.name}", flush=True)
        proc, public, app = spawn_carrel(log)
        a.carrel_pid = proc.pid
    else:
        public = a.public or (os.environ.get("WAYLAND_DISPLAY") if a.role != "app" else None)
        app = a.app
        if public and not public.startswith("/"):
            public = os.path.join(runtime, public)
        if app and not app.startswith("/"):
            app = os.path.join(runtime, app)
    try:
        Fuzzer(a, public, app).run()
    finally:
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    print(f"carrel-fuzz: carrel exited {proc.wait(10)} on SIGTERM", flush=True)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    print("carrel-fuzz: carrel did not exit on SIGTERM", flush=True)
            else:
                print(f"carrel-fuzz: carrel exited {proc.returncode}", flush=True)


if __name__ == "__main__":
    main()
