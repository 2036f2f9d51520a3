"""Traffic for the PEP tests, run inside a namespace (python sockets, no tools).

    pep_probe.py server PORT TIMEOUT_S           -> JSON {"peer", "bytes", "sha256"} of one connection; answers "ok:<sha>"
    pep_probe.py client ADDR PORT BYTES SEED     -> JSON {"local", "sha256", "answer"}
    pep_probe.py stall-server PORT SECONDS       -> accepts one connection and reads nothing for SECONDS
    pep_probe.py stall-client ADDR PORT SECONDS  -> JSON {"sent"}: bytes the socket took before SECONDS
    pep_probe.py reset ADDR PORT                 -> JSON {"error"}: what a connect-and-read sees
    pep_probe.py esp-recv TIMEOUT_S              -> JSON {"src", "payload"} of one IP protocol 50 packet
    pep_probe.py esp-send ADDR PAYLOAD_HEX
"""

import hashlib
import json
import random
import socket
import sys
import time


def server(port: int, timeout: float) -> dict:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(4)
    s.settimeout(timeout)
    c, peer = s.accept()
    c.settimeout(timeout)
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.sendall(f"ok:{h.hexdigest()}".encode())
    c.close()
    return {"peer": list(peer), "bytes": n, "sha256": h.hexdigest()}


def client(addr: str, port: int, size: int, seed: int) -> dict:
    data = random.Random(seed).randbytes(size)
    s = socket.create_connection((addr, port), timeout=60)
    local = s.getsockname()
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)  # half-close: the answer still comes back
    answer = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        answer += b
    return {"local": list(local), "sha256": hashlib.sha256(data).hexdigest(), "answer": answer.decode()}


def stall_server(port: int, seconds: float) -> None:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.bind(("0.0.0.0", port))
    s.listen(1)
    s.settimeout(seconds)
    c, _ = s.accept()
    time.sleep(seconds)
    c.close()


def stall_client(addr: str, port: int, seconds: float) -> dict:
    s = socket.create_connection((addr, port), timeout=10)
    s.setblocking(False)
    chunk = b"x" * 65536
    sent, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            sent += s.send(chunk)
        except BlockingIOError:
            time.sleep(0.01)
    return {"sent": sent}


def reset(addr: str, port: int) -> dict:
    try:
        s = socket.create_connection((addr, port), timeout=10)
        s.settimeout(10)
        s.sendall(b"hello")
        b = s.recv(100)
        return {"error": None if b else "eof"}
    except OSError as e:
        return {"error": type(e).__name__}


def esp_recv(timeout: float) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
    s.settimeout(timeout)
    d, (src, _) = s.recvfrom(4096)
    ihl = (d[0] & 0xF) * 4
    return {"src": src, "payload": d[ihl:].hex()}


def esp_send(addr: str, payload: str) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, 50)
    for _ in range(3):  # the receiver may start a moment late; it keeps the first
        s.sendto(bytes.fromhex(payload), (addr, 0))
        time.sleep(0.2)


def main(argv: list) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "server":
        out = server(int(args[0]), float(args[1]))
    elif cmd == "client":
        out = client(args[0], int(args[1]), int(args[2]), int(args[3]))
    elif cmd == "stall-server":
        out = stall_server(int(args[0]), float(args[1]))
    elif cmd == "stall-client":
        out = stall_client(args[0], int(args[1]), float(args[2]))
    elif cmd == "reset":
        out = reset(args[0], int(args[1]))
    elif cmd == "esp-recv":
        out = esp_recv(float(args[0]))
    elif cmd == "esp-send":
        out = esp_send(args[0], args[1])
    else:
        raise SystemExit(f"unknown probe {cmd}")
    if out is not None:
        print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
