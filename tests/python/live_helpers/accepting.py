"""What the probes' servers share: a nonblocking listener on every address of the
namespace, and every connection waiting on it taken at once."""

from __future__ import annotations

import socket
from typing import Iterator


def listener(port: int, backlog: int) -> socket.socket:
    lst = socket.create_server(("0.0.0.0", port), backlog=backlog)  # SO_REUSEADDR on POSIX
    lst.setblocking(False)
    return lst


def accept_waiting(lst: socket.socket) -> Iterator[socket.socket]:
    """Each connection the listener holds, nonblocking, until none waits."""
    while True:
        try:
            c, _ = lst.accept()
        except BlockingIOError:
            return
        c.setblocking(False)
        yield c
