"""Load for the PEP memory tests (test_pep_memory.py), run inside a namespace.

    hold_probe.py flood-server PORT SECONDS
        -> accepts every connection and writes to each as fast as it takes bytes, until
           its peer goes or SECONDS pass; then JSON {"accepted"}
    hold_probe.py hold ADDR PORT N SECONDS
        -> opens N connections and never reads them; prints "ready" once all are open,
           holds them until a line arrives on stdin (or SECONDS pass), closes them all
           with a reset (SO_LINGER 0); then JSON {"opened"}
    hold_probe.py fetch ADDR PORT BYTES TIMEOUT_S
        -> reads BYTES from one connection; JSON {"received", "seconds"}
"""

import json
import select
import selectors
import socket
import struct
import sys
import time

from accepting import accept_waiting, listener

BLOCK = bytes(range(256)) * 256  # 64 KiB


def flood_server(port: int, seconds: float) -> dict:
    lst = listener(port, backlog=1024)
    sel = selectors.DefaultSelector()
    sel.register(lst, selectors.EVENT_READ)
    accepted, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            if s is lst:
                for c in accept_waiting(lst):
                    sel.register(c, selectors.EVENT_WRITE)
                    accepted += 1
                continue
            try:
                s.send(BLOCK)
            except BlockingIOError:
                pass
            except OSError:
                sel.unregister(s)
                s.close()
    return {"accepted": accepted}


def hold(addr: str, port: int, n: int, seconds: float) -> dict:
    socks = []
    for _ in range(n):
        s = socket.create_connection((addr, port), timeout=10)
        socks.append(s)
    print("ready", flush=True)
    select.select([sys.stdin], [], [], seconds)
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    return {"opened": len(socks)}


def fetch(addr: str, port: int, size: int, timeout: float) -> dict:
    t0 = time.monotonic()
    s = socket.create_connection((addr, port), timeout=timeout)
    s.settimeout(timeout)
    n = 0
    try:
        while n < size:
            b = s.recv(min(1 << 16, size - n))
            if not b:
                break
            n += len(b)
    except OSError:
        pass
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    return {"received": n, "seconds": time.monotonic() - t0}


def main(argv: list) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "flood-server":
        out = flood_server(int(args[0]), float(args[1]))
    elif cmd == "hold":
        out = hold(args[0], int(args[1]), int(args[2]), float(args[3]))
    elif cmd == "fetch":
        out = fetch(args[0], int(args[1]), int(args[2]), float(args[3]))
    else:
        raise SystemExit(f"unknown probe {cmd}")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
