"""Network probes for test_providers.py; stdlib only.

  netprobe.py serve PORT                 TCP server on 127.0.0.1:PORT: greets
                                         each connection with "hi\\n"; prints
                                         "listening" once it accepts.
  netprobe.py connect PORT               one connection attempt (2 s bound):
                                         prints "ok" (exit 0) or "fail WHY" (exit 1)
  netprobe.py app RECORD FIFO RESULTS    Carrel's app: records WAYLAND_DISPLAY in
                                         RECORD (its pid in RECORD.pid), then for each "connect PORT TAG"
                                         line written to FIFO appends "TAG ok" or
                                         "TAG fail WHY" to RESULTS. Its connections
                                         come from the app's own cgroup.
"""

import os
import socket
import sys
import threading

TIMEOUT = 2.0


def attempt(port: int) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
            s.settimeout(TIMEOUT)
            data = s.recv(16)
        return "ok" if data == b"hi\n" else f"fail got {data!r}"
    except OSError as e:
        return f"fail {e.__class__.__name__} {e}"


def serve(port: int) -> None:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    print("listening", flush=True)

    def greet(conn):
        with conn:
            try:
                conn.sendall(b"hi\n")
            except OSError:
                pass

    while True:
        conn, _ = server.accept()
        threading.Thread(target=greet, args=(conn,), daemon=True).start()


def app(record: str, fifo: str, results: str) -> None:
    with open(record + ".pid", "w") as f:
        f.write(f"{os.getpid()}\n")
    with open(record + ".tmp", "w") as f:
        f.write(os.environ.get("WAYLAND_DISPLAY", "") + "\n")
    os.rename(record + ".tmp", record)
    while True:
        with open(fifo) as requests:
            for line in requests:
                words = line.split()
                if len(words) == 3 and words[0] == "connect":
                    outcome = attempt(int(words[1]))
                    with open(results, "a") as out:
                        out.write(f"{words[2]} {outcome}\n")


def main() -> int:
    mode = sys.argv[1]
    if mode == "serve":
        serve(int(sys.argv[2]))
    elif mode == "connect":
        outcome = attempt(int(sys.argv[2]))
        print(outcome, flush=True)
        return 0 if outcome == "ok" else 1
    elif mode == "app":
        app(*sys.argv[2:5])
    return 0


if __name__ == "__main__":
    sys.exit(main())
