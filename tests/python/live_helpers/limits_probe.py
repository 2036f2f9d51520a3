"""Traffic for the PEP's limits tests, run inside a namespace (python sockets, no tools).

    limits_probe.py hold-server PORT SECONDS
        accepts every connection for SECONDS and holds it; one that ends its data with a
        FIN is answered "ok:<sha256>" and closed -> JSON {"accepted", "answered", "reset"}
    limits_probe.py flood SRC ADDR PORT N SECONDS [K EVERY_S]
        opens N connections from address SRC and holds them for SECONDS, sending nothing
        (the first K send one byte every EVERY_S) -> JSON {"open", "reset", "eof",
        "reset_at"}: how each ended, and when the resets came (seconds from the start)
"""

import hashlib
import json
import resource
import selectors
import socket
import sys
import time

from accepting import accept_waiting, listener


def _more_descriptors() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def hold_server(port: int, seconds: float) -> dict:
    _more_descriptors()
    lst = listener(port, backlog=4096)
    sel = selectors.DefaultSelector()
    sel.register(lst, selectors.EVENT_READ, None)
    out = {"accepted": 0, "answered": 0, "reset": 0}
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        for key, _ in sel.select(min(left, 0.2)):
            if key.data is None:
                for c in accept_waiting(lst):
                    out["accepted"] += 1
                    sel.register(c, selectors.EVENT_READ, hashlib.sha256())
                continue
            c, h = key.fileobj, key.data
            try:
                b = c.recv(1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                out["reset"] += 1
                sel.unregister(c)
                c.close()
                continue
            if b:
                h.update(b)
                continue
            sel.unregister(c)
            try:
                c.setblocking(True)
                c.sendall(f"ok:{h.hexdigest()}".encode())
                out["answered"] += 1
            except OSError:
                out["reset"] += 1
            c.close()
    return out


def flood(src: str, addr: str, port: int, n: int, seconds: float, k: int, every: float) -> dict:
    _more_descriptors()
    start = time.monotonic()
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind((src, 0))
        s.setblocking(False)
        s.connect_ex((addr, port))
        socks.append(s)
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        sel.register(s, selectors.EVENT_READ, i)
    state = ["open"] * n
    reset_at = []
    next_send = start + every
    end = start + seconds
    while (now := time.monotonic()) < end:
        for key, _ in sel.select(max(0.0, min(end, next_send if k else end) - now)):
            s, i = key.fileobj, key.data
            try:
                got = s.recv(1 << 16)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                state[i] = "reset"
                reset_at.append(round(time.monotonic() - start, 2))
                sel.unregister(s)
                continue
            except OSError:  # a connect refused or unreachable
                state[i] = "reset"
                reset_at.append(round(time.monotonic() - start, 2))
                sel.unregister(s)
                continue
            if not got:
                state[i] = "eof"
                sel.unregister(s)
        if k and time.monotonic() >= next_send:
            next_send += every
            for i in range(min(k, n)):
                if state[i] == "open":
                    try:
                        socks[i].send(b"x")
                    except OSError:
                        pass  # its reset shows on the next read
    return {
        "open": state.count("open"),
        "reset": state.count("reset"),
        "eof": state.count("eof"),
        "reset_at": sorted(reset_at),
    }


def main(argv: list) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "hold-server":
        out = hold_server(int(args[0]), float(args[1]))
    elif cmd == "flood":
        k, every = (int(args[5]), float(args[6])) if len(args) > 5 else (0, 1.0)
        out = flood(args[0], args[1], int(args[2]), int(args[3]), float(args[4]), k, every)
    else:
        raise SystemExit(f"unknown probe {cmd}")
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
