"""A privileged helper that answers a start late: a Unix socket in front of
the real carrel-privileged that passes Carrel's requests on (with the
descriptor a spawn carries) and the helper's answers back, but holds a
`spawn` request for role WHAT (or, with WHAT `signal`, every `signal`
request), and everything Carrel sends after it, for DELAY seconds before
passing it on; with SKIP, the first SKIP such requests (over all of
Carrel's connections) pass at once. Run as Carrel's user (the helper
accepts only that user). Used by test_loop_never_waits.py.

    slow_helper_proxy.py LISTEN_PATH HELPER_PATH WHAT DELAY_SECONDS [SKIP]

Prints "ready" once listening, "held WHAT" for each request it holds and
"passed WHAT" for each it let through at once.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time


def close_both(a: socket.socket, b: socket.socket) -> None:
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def holds(data: bytes, what: str) -> bool:
    if what == "signal":
        return b'"request":"signal"' in data
    return b'"request":"spawn"' in data and f'"role":"{what}"'.encode() in data


skipped = [0]
skipping = threading.Lock()


def requests(carrel: socket.socket, helper: socket.socket, what: str, delay: float, skip: int) -> None:
    try:
        while True:
            data, fds, _, _ = socket.recv_fds(carrel, 65536, 4)
            if not data:
                break
            if holds(data, what):
                with skipping:
                    passing = skipped[0] < skip
                    skipped[0] += passing
                if passing:
                    print(f"passed {what}", flush=True)
                else:
                    print(f"held {what}", flush=True)
                    time.sleep(delay)
            if fds:
                socket.send_fds(helper, [data], fds)
                for fd in fds:
                    os.close(fd)
            else:
                helper.sendall(data)
    except OSError:
        pass
    close_both(carrel, helper)


def answers(helper: socket.socket, carrel: socket.socket) -> None:
    try:
        while True:
            data = helper.recv(65536)
            if not data:
                break
            carrel.sendall(data)
    except OSError:
        pass
    close_both(carrel, helper)


def main() -> None:
    listen_path, helper_path, what, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    skip = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(listen_path)
    os.chmod(listen_path, 0o600)
    server.listen(16)
    print("ready", flush=True)
    while True:
        carrel, _ = server.accept()
        helper = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        helper.connect(helper_path)
        threading.Thread(target=requests, args=(carrel, helper, what, delay, skip), daemon=True).start()
        threading.Thread(target=answers, args=(helper, carrel), daemon=True).start()


if __name__ == "__main__":
    main()
