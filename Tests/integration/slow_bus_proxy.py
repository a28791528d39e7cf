"""A session bus that answers late: a Unix socket in front of a real bus
daemon that passes what clients send straight on, but holds what the daemon
answers a connection until `delay` seconds after that connection was made
(its authentication, Hello and every early answer come late). Used by
test_loop_never_waits.py for the media provider's connection at begin.

    slow_bus_proxy.py LISTEN_PATH UPSTREAM_PATH DELAY_SECONDS

Prints "ready" once listening, and "connection" for each client.
"""

from __future__ import annotations

import socket
import sys
import threading
import time


def pump(source: socket.socket, target: socket.socket, not_before: float) -> None:
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            wait = not_before - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            target.sendall(data)
    except OSError:
        pass
    for s in (source, target):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main() -> None:
    listen_path, upstream_path, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(listen_path)
    server.listen(16)
    print("ready", flush=True)
    while True:
        client, _ = server.accept()
        print("connection", flush=True)
        not_before = time.monotonic() + delay
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(upstream_path)
        threading.Thread(target=pump, args=(client, upstream, 0.0), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client, not_before), daemon=True).start()


if __name__ == "__main__":
    main()
