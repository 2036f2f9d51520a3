"""Traffic for the live benches and the live tests, run inside a namespace (Python
sockets, no tools).

Every command prints one JSON value on stdout. Times are ``time.monotonic()``, which is
the same clock in every network namespace of the machine, so a sender's start and a
receiver's end can be subtracted.

    live_traffic.py sink PORT TIMEOUT_S [--hash]        one TCP connection: {"bytes", "t_first", "t_end", "complete", "sha256"}
    live_traffic.py send ADDR PORT BYTES [--cc NAME]    {"t0" (before connect), "t_sent", "sha256", "cc", "retransmissions", "final_...", "counters"}
    live_traffic.py rate-sink PORT SECONDS WARMUP_S     {"bytes", "seconds", "mss"} counted after the warm-up
    live_traffic.py blast ADDR PORT SECONDS [--cc NAME] sends as fast as TCP lets it
    live_traffic.py ping ADDR COUNT GAP_S               list of RTTs (s); lost echoes are left out
    live_traffic.py udp-sink PORT SECONDS               list of the sequence numbers received
    live_traffic.py udp-source ADDR PORT COUNT RATE SIZE
    live_traffic.py udp-blast ADDR PORT SECONDS RATE_BPS SIZE  datagrams of SIZE bytes at RATE_BPS (IP bytes)
    live_traffic.py udp-rate-sink PORT SECONDS WARMUP_S       {"bytes", "datagrams", "seconds"} after the warm-up
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import struct
import sys
import time
from pathlib import Path

CHUNK = 1 << 16


def _connect(addr: str, port: int, cc: str | None) -> socket.socket:
    """Connects, retrying while the listener is not up yet (at most 5 s)."""
    deadline = time.monotonic() + 5
    while True:
        s = socket.socket()
        if cc:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        try:
            s.settimeout(30)
            s.connect((addr, port))
            return s
        except ConnectionRefusedError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _listen(port: int, timeout: float) -> socket.socket:
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(4)
    ls.settimeout(timeout)
    return ls


def sink(port: int, timeout: float, hash_it: bool) -> dict:
    """Reads one connection to its end, or until `timeout` from now (then incomplete)."""
    deadline = time.monotonic() + timeout
    ls = _listen(port, timeout)
    c, peer = ls.accept()
    h = hashlib.sha256() if hash_it else None
    n, first, end, complete = 0, None, None, False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        c.settimeout(left)
        try:
            b = c.recv(CHUNK)
        except socket.timeout:
            break
        if not b:
            complete = True
            break
        end = time.monotonic()
        first = first or end
        n += len(b)
        if h:
            h.update(b)
    c.close()
    return {"bytes": n, "t_first": first, "t_end": end or time.monotonic(), "complete": complete,
            "peer": list(peer), "sha256": h.hexdigest() if h else None}


def send(addr: str, port: int, size: int, cc: str | None) -> dict:
    """Sends `size` pseudo-random bytes and half-closes; waits for the receiver to close."""
    data = random.Random(size).randbytes(min(size, 1 << 20))
    t0 = time.monotonic()
    s = _connect(addr, port, cc)
    s.settimeout(None)
    left = size
    while left > 0:
        chunk = data[: min(left, len(data))]
        s.sendall(chunk)
        left -= len(chunk)
    t_sent = time.monotonic()
    s.shutdown(socket.SHUT_WR)
    try:
        while s.recv(CHUNK):
            pass
    except OSError:
        pass
    used = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    # struct tcp_info: 8 bytes of u8 fields, then u32s: tcpi_snd_ssthresh is the 18th,
    # tcpi_snd_cwnd the 19th, tcpi_total_retrans the 24th.
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    u32 = struct.unpack_from("24I", info, 8) if len(info) >= 104 else (None,) * 24
    retrans, ssthresh, cwnd = u32[23], u32[17], u32[18]
    h = hashlib.sha256()
    left = size
    while left > 0:
        chunk = data[: min(left, len(data))]
        h.update(chunk)
        left -= len(chunk)
    return {"t0": t0, "t_sent": t_sent, "sha256": h.hexdigest(), "cc": used, "retransmissions": retrans,
            "final_ssthresh_segments": ssthresh, "final_cwnd_segments": cwnd, "counters": tcp_counters()}


# The namespace's TCP counters (/proc/net/netstat's TcpExt, per network namespace) that say
# how the kernel recovered: retransmission timeouts, tail loss probes, SACK and
# non-SACK fast recoveries, and RACK's reordering-window timer.
COUNTERS = ("TCPTimeouts", "TCPLossProbes", "TCPLossProbeRecovery", "TCPSackRecovery", "TCPRenoRecovery",
            "TCPSackRecoveryFail", "TCPSpuriousRTOs", "TCPLostRetransmit")


def tcp_counters() -> dict[str, int]:
    """COUNTERS of this process's network namespace; those the kernel lacks are left out.
    Meaningful per transfer when the namespace carries one connection, as the emulator's do."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return {}
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            row = dict(zip(names.split()[1:], (int(v) for v in values.split()[1:])))
            return {k: row[k] for k in COUNTERS if k in row}
    return {}


def rate_sink(port: int, seconds: float, warmup: float) -> dict:
    c, _ = _listen(port, seconds + 20).accept()
    c.settimeout(5)
    first = start = end = None
    counted = 0
    while True:
        try:
            d = c.recv(CHUNK)
        except socket.timeout:
            break
        if not d:
            break
        now = time.monotonic()
        first = first or now
        if now - first >= warmup:
            if start is None:
                start = now
            else:
                counted += len(d)
            end = now
    mss = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)
    return {"bytes": counted, "seconds": (end - start) if start and end else 0.0, "mss": mss}


def blast(addr: str, port: int, seconds: float, cc: str | None) -> None:
    c = _connect(addr, port, cc)
    c.settimeout(None)
    buf = b"x" * CHUNK
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        c.sendall(buf)
    c.close()


def _checksum(b: bytes) -> int:
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
        h = struct.pack("!BBHHH", 8, 0, 0, 4243, i) + b"x" * 56
        h = h[:2] + struct.pack("!H", _checksum(h)) + h[4:]
        t = time.monotonic()
        s.sendto(h, (addr, 0))
        try:
            while True:
                d, _ = s.recvfrom(2048)
                if d[20] == 0 and struct.unpack("!HH", d[24:28]) == (4243, i):
                    rtts.append(time.monotonic() - t)
                    break
        except socket.timeout:
            pass
        time.sleep(gap)
    return rtts


def _big_receive_buffer(s: socket.socket, size: int = 1 << 22) -> None:
    """A receive buffer of `size` bytes: as root past net.core.rmem_max (SO_RCVBUFFORCE),
    so that a sink descheduled for a while (a busy machine) loses nothing to its socket."""
    try:
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), size)
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)


def udp_sink(port: int, seconds: float) -> list:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    _big_receive_buffer(s)
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
    """`count` numbered datagrams at `rate` per second. A source that was not scheduled
    for a while falls behind rather than sending the missed datagrams in a burst: a
    burst would overflow the link's queue, and those drops are the source's, not the
    channel's that a loss measurement is after."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    t0 = time.monotonic()
    pad = b"x" * (size - 4)
    for i in range(count):
        wait = t0 + i / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        elif wait < -2 / rate:
            t0 -= wait  # late by more than two gaps: the schedule moves, nothing is made up
        s.sendto(struct.pack("!I", i) + pad, (addr, port))


def udp_blast(addr: str, port: int, seconds: float, rate_bps: float, size: int) -> dict:
    """Datagrams of `size` payload bytes at `rate_bps` counted in IP bytes (size + 28),
    sent in bursts of up to 64 so that Python keeps up at a gigabit; the sender falls
    behind rather than bursting to catch up."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
    payload = b"x" * size
    gap = (size + 28) * 8 / rate_bps
    t0 = time.monotonic()
    end, sent, errors = t0 + seconds, 0, 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        due = int((now - t0) / gap) + 1 - sent
        if due <= 0:
            time.sleep(min(gap * 32, 0.001))
            continue
        for _ in range(min(due, 64)):
            try:
                s.sendto(payload, (addr, port))
                sent += 1
            except OSError:  # ENOBUFS: the device queue is full; the datagram is gone
                errors += 1
                sent += 1
    return {"sent": sent, "errors": errors}


def udp_rate_sink(port: int, seconds: float, warmup: float) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
    s.bind(("0.0.0.0", port))
    s.settimeout(1.0)
    first = start = end = None
    counted = datagrams = 0
    deadline = time.monotonic() + seconds + 10
    while time.monotonic() < deadline:
        try:
            n = len(s.recv(65536))
        except socket.timeout:
            if first is not None:
                break
            continue
        now = time.monotonic()
        first = first or now
        if now - first >= warmup:
            if start is None:
                start = now
            else:
                counted += n
                datagrams += 1
            end = now
    return {"bytes": counted, "datagrams": datagrams, "seconds": (end - start) if start and end else 0.0}


def _option(args: list[str], name: str) -> str | None:
    if name in args:
        i = args.index(name)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return None


def main(argv: list[str]) -> None:
    cmd, args = argv[0], argv[1:]
    cc = _option(args, "--cc")
    hash_it = "--hash" in args
    args = [a for a in args if a != "--hash"]
    if cmd == "sink":
        out: object = sink(int(args[0]), float(args[1]), hash_it)
    elif cmd == "send":
        out = send(args[0], int(args[1]), int(args[2]), cc)
    elif cmd == "rate-sink":
        out = rate_sink(int(args[0]), float(args[1]), float(args[2]))
    elif cmd == "blast":
        out = blast(args[0], int(args[1]), float(args[2]), cc)
    elif cmd == "ping":
        out = ping(args[0], int(args[1]), float(args[2]))
    elif cmd == "udp-sink":
        out = udp_sink(int(args[0]), float(args[1]))
    elif cmd == "udp-source":
        out = udp_source(args[0], int(args[1]), int(args[2]), float(args[3]), int(args[4]))
    elif cmd == "udp-blast":
        out = udp_blast(args[0], int(args[1]), float(args[2]), float(args[3]), int(args[4]))
    elif cmd == "udp-rate-sink":
        out = udp_rate_sink(int(args[0]), float(args[1]), float(args[2]))
    else:
        sys.exit(f"live_traffic.py: unknown command '{cmd}'")
    if out is not None:
        print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
