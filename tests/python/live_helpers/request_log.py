"""A tiny HTTP-ish server that logs every connection and request it receives, and its
client, run inside a namespace (python sockets): what the replay tests count.

    request_log.py server PORT LOG SECONDS
        -> accepts connections for SECONDS (each on a thread of its own); appends to LOG
           one JSON line per connection accepted {"event": "accept", "peer"} and per
           request read whole {"event": "request", "peer", "line", "body"}, and answers
           "HTTP/1.0 200 OK" with the body "receipt N: BODY" (N counts requests)
    request_log.py post ADDR PORT PATH BODY TIMEOUT_S
        -> POSTs BODY to PATH; JSON {"response": the answer's body, or null, "error"}
"""

import json
import socket
import sys
import threading
import time

LOCK = threading.Lock()
COUNT = [0]


def _log(path: str, rec: dict) -> None:
    with LOCK, open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def _read_request(c: socket.socket):
    data = b""
    while b"\r\n\r\n" not in data:
        b = c.recv(4096)
        if not b:
            return None
        data += b
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for h in lines[1:]:
        name, _, value = h.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    while len(body) < length:
        b = c.recv(4096)
        if not b:
            return None
        body += b
    return lines[0], body.decode("latin-1")


def _serve(c: socket.socket, peer, path: str) -> None:
    with c:
        try:
            c.settimeout(10)
            req = _read_request(c)
            if req is None:
                return
            _log(path, {"event": "request", "peer": list(peer), "line": req[0], "body": req[1]})
            with LOCK:
                COUNT[0] += 1
                n = COUNT[0]
            answer = f"receipt {n}: {req[1]}".encode()
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(answer), answer))
        except OSError:
            pass


def server(port: int, path: str, seconds: float) -> None:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(16)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            c, peer = s.accept()
        except socket.timeout:
            break
        _log(path, {"event": "accept", "peer": list(peer)})
        threading.Thread(target=_serve, args=(c, peer, path), daemon=True).start()


def post(addr: str, port: int, target: str, body: str, timeout: float) -> dict:
    try:
        s = socket.create_connection((addr, port), timeout=timeout)
        s.settimeout(timeout)
        data = body.encode()
        s.sendall(b"POST %s HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (target.encode(), len(data), data))
        answer = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            answer += b
        s.close()
    except OSError as e:
        return {"response": None, "error": type(e).__name__}
    head, _, rest = answer.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.0 200"):
        return {"response": None, "error": f"answer {answer[:60]!r}"}
    return {"response": rest.decode("latin-1"), "error": None}


def main(argv: list) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "server":
        server(int(args[0]), args[1], float(args[2]))
    elif cmd == "post":
        print(json.dumps(post(args[0], int(args[1]), args[2], args[3], float(args[4]))), flush=True)
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv[1:])
