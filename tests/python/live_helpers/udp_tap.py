"""Records and replays the gateways' UDP datagrams on one interface, run inside a
namespace (AF_PACKET, python only): what an on-path attacker who records and replays
can do on the satellite leg.

    udp_tap.py record IFACE PORT FILE SECONDS
        -> every IPv4/UDP frame to or from PORT that crosses IFACE, one JSON line each in
           FILE: {"out": sent by this namespace, "frame": the Ethernet frame in hex}.
           Prints "ready" once capturing; stops after SECONDS or at SIGTERM/SIGINT.
    udp_tap.py replay IFACE FILE DIRECTION GAP_S [REPEAT [forge]]
        -> sends again, out of IFACE, the recorded frames of DIRECTION ("out": those this
           namespace sent, "in": those it received), in their order, GAP_S apart (0: as
           fast as the socket takes them), the whole list REPEAT times (1); with
           "forge", each datagram's last byte (its authentication tag's) flipped, a
           copy the key holder never sealed; JSON {"sent"}.

A replayed frame is the recorded one with its UDP checksum cleared (0: none, RFC 768):
a frame the kernel sent over a veth may hold a partial checksum its offload never
filled in. Replayed out of the interface the original sender used, the frame carries
that sender's addresses and reaches the other side as the original did.
"""

import json
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
PACKET_OUTGOING = 4
ETH_HEADER = 14


def _udp_ports(frame: bytes):
    """(source port, destination port, offset of the UDP header) of an IPv4/UDP frame, or None."""
    if len(frame) < ETH_HEADER + 20 or struct.unpack("!H", frame[12:14])[0] != ETH_P_IP:
        return None
    ip = frame[ETH_HEADER:]
    ihl = (ip[0] & 0xF) * 4
    if ip[9] != socket.IPPROTO_UDP or len(ip) < ihl + 8:
        return None
    sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
    return sport, dport, ETH_HEADER + ihl


def record(iface: str, port: int, path: str, seconds: float) -> None:
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.settimeout(0.05)
    end = time.monotonic() + seconds
    print("ready", flush=True)
    with open(path, "w") as out:
        while not stop and time.monotonic() < end:
            try:
                frame, addr = s.recvfrom(1 << 16)
            except socket.timeout:
                continue
            except InterruptedError:
                continue
            ports = _udp_ports(frame)
            if ports is None or port not in ports[:2]:
                continue
            out.write(json.dumps({"out": addr[2] == PACKET_OUTGOING, "frame": frame.hex()}) + "\n")
            out.flush()


def replay(iface: str, path: str, direction: str, gap: float, repeat: int, forge: bool) -> dict:
    want = direction == "out"
    frames = []
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec["out"] == want:
                frame = bytearray.fromhex(rec["frame"])
                ports = _udp_ports(bytes(frame))
                if ports is not None:
                    frame[ports[2] + 6:ports[2] + 8] = b"\0\0"
                    if forge:  # the IP datagram's last byte: a frame may carry padding after it
                        frame[ETH_HEADER + struct.unpack("!H", frame[ETH_HEADER + 2:ETH_HEADER + 4])[0] - 1] ^= 0x01
                    frames.append(bytes(frame))
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    sent = 0
    for _ in range(repeat):
        for frame in frames:
            s.send(frame)
            sent += 1
            if gap > 0:
                time.sleep(gap)
    return {"sent": sent}


def main(argv: list) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "record":
        record(args[0], int(args[1]), args[2], float(args[3]))
    elif cmd == "replay":
        repeat = int(args[4]) if len(args) > 4 else 1
        out = replay(args[0], args[1], args[2], float(args[3]), repeat, args[5:6] == ["forge"])
        print(json.dumps(out), flush=True)
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv[1:])
