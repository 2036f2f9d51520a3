"""Traffic for the gateway-mode PEP tests, run inside a namespace (python sockets).

    gateway_probe.py stream-server PORT BYTES RATE_BPS TIMEOUT_S
        -> accepts one connection, sends BYTES (seeded) at about RATE_BPS, closes;
           JSON {"peer", "sent", "sha256", "error"} (sha256 of what it sent; error: what
           ended the sending early)
    gateway_probe.py stream-client ADDR PORT TIMEOUT_S
        -> JSON {"received", "sha256", "end"}: end is "eof" (a clean FIN) or the
           exception's name (ConnectionResetError for a RST)
"""

import hashlib
import json
import random
import socket
import sys
import time


def stream_server(port: int, size: int, rate: float, timeout: float) -> dict:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(4)
    s.settimeout(timeout)
    c, peer = s.accept()
    c.settimeout(timeout)
    rng, h = random.Random(1), hashlib.sha256()
    sent, start, error = 0, time.monotonic(), None
    try:
        while sent < size:
            chunk = rng.randbytes(min(65536, size - sent))
            h.update(chunk)
            c.sendall(chunk)
            sent += len(chunk)
            ahead = sent / rate - (time.monotonic() - start)
            if ahead > 0:
                time.sleep(ahead)
        c.shutdown(socket.SHUT_WR)
        c.recv(1)
    except OSError as e:
        error = type(e).__name__
    c.close()
    return {"peer": list(peer), "sent": sent, "sha256": h.hexdigest(), "error": error}


def stream_client(addr: str, port: int, timeout: float) -> dict:
    s = socket.create_connection((addr, port), timeout=timeout)
    s.settimeout(timeout)
    h, n, end = hashlib.sha256(), 0, "eof"
    try:
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            h.update(b)
            n += len(b)
    except OSError as e:
        end = type(e).__name__
    return {"received": n, "sha256": h.hexdigest(), "end": end}


def main(argv: list) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "stream-server":
        out = stream_server(int(args[0]), int(args[1]), float(args[2]), float(args[3]))
    elif cmd == "stream-client":
        out = stream_client(args[0], int(args[1]), float(args[2]))
    else:
        raise SystemExit(f"unknown probe {cmd}")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
