#!/usr/bin/env python3
"""The far ends of test-seat's isolated network, run by QEMU's user-mode
network for each connection the guest opens to a forwarded address
(guestfwd=...-cmd:): standard input and output are that TCP connection.

  fleetnet.py dns LOG       a DNS server over TCP (RFC 1035 4.2.2: each
                            message after a 2-byte length): every name
                            under carrel.test has the address 10.0.2.100,
                            anything else exists with no data; each query
                            is appended to LOG as "QNAME QTYPE"
  fleetnet.py journal FILE  what systemd-journal-upload talks to: HTTP/1.1
                            POSTs (chunked or with a length) of the journal
                            export format, each body appended to FILE and
                            answered 202, as systemd-journal-remote does

Both stay for as many requests as the connection carries. Only the test's
guest reaches them: QEMU runs them, on no port of the host.
"""

import struct
import sys

ZONE = b"carrel.test"
ADDRESS = bytes([10, 0, 2, 100])


def read_exactly(stream, n):
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def dns_answer(query, log):
    if len(query) < 12:
        return None
    ident, flags, qdcount = struct.unpack("!HHH", query[:6])
    labels = []
    position = 12
    while position < len(query) and query[position] != 0:
        length = query[position]
        labels.append(query[position + 1:position + 1 + length])
        position += 1 + length
    position += 1
    if qdcount != 1 or position + 4 > len(query):
        return struct.pack("!HHHHHH", ident, 0x8000 | (flags & 0x7900) | 1, 0, 0, 0, 0)  # FORMERR
    qtype, qclass = struct.unpack("!HH", query[position:position + 4])
    question = query[12:position + 4]
    name = b".".join(labels).lower()
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"{name.decode(errors='replace')} {qtype}\n")
    answers = b""
    count = 0
    if (name == ZONE or name.endswith(b"." + ZONE)) and qtype in (1, 255) and qclass == 1:
        # A pointer to the question's name, A, IN, 60 s, 4 bytes.
        answers = struct.pack("!HHHIH", 0xC00C, 1, 1, 60, 4) + ADDRESS
        count = 1
    # QR, the query's opcode and RD, AA and RA; NOERROR (with no data when count is 0).
    reply_flags = 0x8000 | (flags & 0x7900) | 0x0400 | 0x0080
    return struct.pack("!HHHHHH", ident, reply_flags, 1, count, 0, 0) + question + answers


def serve_dns(log):
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        length = read_exactly(stdin, 2)
        if length is None:
            return
        query = read_exactly(stdin, struct.unpack("!H", length)[0])
        if query is None:
            return
        reply = dns_answer(query, log)
        if reply is None:
            return
        stdout.write(struct.pack("!H", len(reply)) + reply)
        stdout.flush()


def serve_journal(path):
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        request = stdin.readline()
        if not request:
            return
        if not request.strip():
            continue
        headers = {}
        while True:
            line = stdin.readline()
            if not line or line in (b"\r\n", b"\n"):
                break
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        if headers.get("expect", "").lower() == "100-continue":
            stdout.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            stdout.flush()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                size_line = stdin.readline()
                if not size_line:
                    return
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:  # trailers, then the empty line
                        line = stdin.readline()
                        if not line or line in (b"\r\n", b"\n"):
                            break
                    break
                chunk = read_exactly(stdin, size)
                if chunk is None:
                    return
                stdin.readline()  # the CRLF after the chunk
                with open(path, "ab") as f:  # as it comes: an upload may last
                    f.write(chunk)
        else:
            body = read_exactly(stdin, int(headers.get("content-length", "0") or 0)) or b""
            with open(path, "ab") as f:
                f.write(body)
        message = b"OK.\n"
        stdout.write(b"HTTP/1.1 202 Accepted\r\nContent-Type: text/plain\r\nContent-Length: "
                     + str(len(message)).encode() + b"\r\n\r\n" + message)
        stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("dns", "journal"):
        sys.exit("usage: fleetnet.py dns LOG | fleetnet.py journal FILE")
    try:
        (serve_dns if sys.argv[1] == "dns" else serve_journal)(sys.argv[2])
    except (BrokenPipeError, ConnectionResetError):
        pass
