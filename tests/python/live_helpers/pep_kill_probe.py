"""A paced download for the PEP kill tests, run inside a namespace (python sockets only).

    pep_kill_probe.py server PORT BYTES RATE TIMEOUT_S -> JSON {"sent", "sha256", "error"}:
        accepts one connection, sends BYTES (seeded) at about RATE bytes/s, then closes
    pep_kill_probe.py fetch ADDR PORT TIMEOUT_S        -> JSON {"bytes", "sha256", "end"}:
        reads until the end; "end" is "eof" (a FIN) or the error's name (a RST is
        "ConnectionResetError")
"""

import hashlib
import json
import random
import socket
import sys
import time

CHUNK = 1 << 16


def server(port: int, size: int, rate: float, timeout: float) -> dict:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(4)
    s.settimeout(timeout)
    c, _ = s.accept()
    c.settimeout(timeout)
    rng, h, sent, error = random.Random(7), hashlib.sha256(), 0, None
    start = time.monotonic()
    try:
        while sent < size:
            b = rng.randbytes(min(CHUNK, size - sent))
            h.update(b)
            c.sendall(b)
            sent += len(b)
            ahead = sent / rate - (time.monotonic() - start)
            if ahead > 0:
                time.sleep(ahead)
        c.shutdown(socket.SHUT_WR)
        c.recv(1)  # the client's FIN (or its reset)
    except OSError as e:
        error = type(e).__name__
    c.close()
    return {"sent": sent, "sha256": h.hexdigest(), "error": error}


def fetch(addr: str, port: int, timeout: float) -> dict:
    s = socket.create_connection((addr, port), timeout=timeout)
    h, n, end = hashlib.sha256(), 0, "eof"
    try:
        while True:
            b = s.recv(CHUNK)
            if not b:
                break
            h.update(b)
            n += len(b)
    except OSError as e:
        end = type(e).__name__
    s.close()
    return {"bytes": n, "sha256": h.hexdigest(), "end": end}


def main(argv: list) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "server":
        out = server(int(args[0]), int(args[1]), float(args[2]), float(args[3]))
    elif cmd == "fetch":
        out = fetch(args[0], int(args[1]), float(args[2]))
    else:
        raise SystemExit(f"unknown probe {cmd}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
