"""A participant that leaves its process group and its process tree, then
knocks on every private socket, for test_participants.py.

    python escaping_participant.py REPORT_FILE [SOCKET_DIRECTORY]

Run by the policy's command as a participant (WAYLAND_DISPLAY is its own
socket, beside the app's and the other participants'; started by the
privileged helper it has only WAYLAND_SOCKET, and the test names the
directory of Carrel's private sockets instead). It starts two
processes that try to outlive it: one that calls setsid (out of the
participant's process group, still in its tree) and one that double-forks
(out of the tree too: its parent exits). Each writes `escaped KIND PID` to
REPORT_FILE, then keeps connecting to the app's socket and to every other
participant's, writing `KIND connected SOCKET` when Carrel answers a
wl_display.sync there and `KIND refused SOCKET` when the connection is
closed unanswered or cannot be reached (a directory it may not enter, a
socket it may not connect to). The participant itself then waits (its window is drawn
by a sibling, carrel-paint, which the policy's shell starts)."""

import os
import socket
import struct
import sys
import time

REPORT = sys.argv[1]
# Every process here ends by itself after this, whatever happens to Carrel
# and the test (a SIGKILLed Carrel leaves the escaped ones to init).
DEADLINE = time.monotonic() + 90
OWN = os.environ.get("WAYLAND_DISPLAY", "")
DIRECTORY = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(OWN)


def note(line):
    with open(REPORT, "a") as f:
        f.write(line + "\n")


def knock(path):
    """True when Carrel answers a wl_display.sync on `path`, False when it
    closes the connection unanswered or the connection is not permitted,
    None when the socket is not there."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(2)
        conn.connect(path)
    except PermissionError:
        return False
    except OSError:
        return None
    try:
        # wl_display (object 1).sync (opcode 0), new callback id 2.
        conn.sendall(struct.pack("<III", 1, (12 << 16) | 0, 2))
        return len(conn.recv(64)) > 0
    except OSError:
        return False
    finally:
        conn.close()


def knock_until_deadline(kind):
    note(f"escaped {kind} {os.getpid()}")
    seen = set()
    while time.monotonic() < DEADLINE:
        try:
            names = sorted(os.listdir(DIRECTORY))
        except PermissionError:
            names = ["app"]
        for name in names:
            path = os.path.join(DIRECTORY, name)
            if path == OWN or not (name == "app" or name.startswith("participant-")):
                continue
            answered = knock(path)
            if answered is None:
                continue
            line = f"{kind} {'connected' if answered else 'refused'} {name}"
            if line not in seen:
                seen.add(line)
                note(line)
        time.sleep(0.1)
    os._exit(0)


if os.fork() == 0:
    os.setsid()
    knock_until_deadline("setsid")
if os.fork() == 0:
    os.setsid()
    intermediate = os.getpid()
    if os.fork() == 0:
        # Wait until the intermediate has exited: this one is an orphan then.
        while os.getppid() == intermediate:
            time.sleep(0.01)
        knock_until_deadline("double-fork")
    os._exit(0)
while time.monotonic() < DEADLINE:
    time.sleep(1)
