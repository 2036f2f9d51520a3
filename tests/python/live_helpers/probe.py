"""Traffic for the live-mode tests, run inside a namespace (python sockets, no tools).

    probe.py ping ADDR COUNT GAP_S             -> JSON list of RTTs in seconds
    probe.py sink PORT SECONDS WARMUP_S        -> JSON {"bytes", "seconds"} after warm-up
    probe.py source ADDR PORT SECONDS          -> sends as fast as TCP lets it
    probe.py udp-sink PORT SECONDS             -> JSON list of sequence numbers received
    probe.py udp-source ADDR PORT COUNT RATE SIZE
"""

import json
import socket
import struct
import sys
import time


def checksum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(addr: str, count: int, gap: float) -> list:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(2.0)
    rtts = []
    for i in range(count):
        h = struct.pack("!BBHHH", 8, 0, 0, 4242, i) + b"x" * 56
        h = h[:2] + struct.pack("!H", checksum(h)) + h[4:]
        t = time.monotonic()
        s.sendto(h, (addr, 0))
        try:
            while True:
                d, _ = s.recvfrom(2048)
                if d[20] == 0 and struct.unpack("!HH", d[24:28]) == (4242, i):
                    rtts.append(time.monotonic() - t)
                    break
        except socket.timeout:
            pass
        time.sleep(gap)
    return rtts


def sink(port: int, seconds: float, warmup: float) -> dict:
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    ls.settimeout(seconds + 10)
    c, _ = ls.accept()
    c.settimeout(5)
    first = None
    counted = 0
    start = None
    while True:
        try:
            d = c.recv(1 << 16)
        except socket.timeout:
            break
        now = time.monotonic()
        if not d:
            break
        if first is None:
            first = now
        if now - first >= warmup:
            if start is None:
                start = now
            else:
                counted += len(d)
            end = now
    mss = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
    return {"bytes": counted, "seconds": end - start if start else 0.0, "mss": mss}


def source(addr: str, port: int, seconds: float) -> None:
    for _ in range(50):
        try:
            c = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            time.sleep(0.1)
    buf = b"x" * 65536
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        c.sendall(buf)
    c.close()


def udp_sink(port: int, seconds: float) -> list:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.5)
    got = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            d = s.recv(4096)
        except socket.timeout:
            continue
        got.append(struct.unpack("!I", d[:4])[0])
    return got


def udp_source(addr: str, port: int, count: int, rate: float, size: int) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    t0 = time.monotonic()
    for i in range(count):
        wait = t0 + i / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        s.sendto(struct.pack("!I", i) + b"x" * (size - 4), (addr, port))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "ping":
        print(json.dumps(ping(args[0], int(args[1]), float(args[2]))))
    elif cmd == "sink":
        print(json.dumps(sink(int(args[0]), float(args[1]), float(args[2]))))
    elif cmd == "source":
        source(args[0], int(args[1]), float(args[2]))
    elif cmd == "udp-sink":
        print(json.dumps(udp_sink(int(args[0]), float(args[1]))))
    elif cmd == "udp-source":
        udp_source(args[0], int(args[1]), int(args[2]), float(args[3]), int(args[4]))
