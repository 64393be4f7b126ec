"""A TCP proxy in front of the test S3 server that cuts every connection after a number of
bytes of the server's answer: a download that the network drops mid-body, as a real one can be.
With ``stalling_proxy`` it holds the connection open instead, sending nothing more: a download
that stalls mid-body until the proxy is closed.
Once closed it drops the connections it still relays too: a store that went away. Without a
limit (``counting_proxy``) it relays everything and counts the bytes of the server's answers
that reached the client, to tell how much of an object a client read.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class _Relay(socketserver.BaseRequestHandler):
    server: _CuttingServer

    def handle(self) -> None:
        client: socket.socket = self.request
        with socket.create_connection(self.server.upstream, timeout=30) as upstream:
            self.server.track(client, upstream)
            forward = threading.Thread(target=_pump, args=(client, upstream, None), daemon=True)
            forward.start()
            cut = _pump(upstream, client, self.server.limit, self.server.count)
            if cut and self.server.stall:
                self.server.stalled.set()
                self.server.released.wait()
            # The answer was cut (or ended): close both ends, which also stops the forward pump.
            for end in (client, upstream):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
            forward.join(timeout=5)


def _pump(
    source: socket.socket,
    target: socket.socket,
    limit: int | None,
    count: Callable[[int], None] | None = None,
) -> bool:
    """Relays until the source ends or ``limit`` bytes went; True when the limit cut it."""
    sent = 0
    with contextlib.suppress(OSError):
        while limit is None or sent < limit:
            wanted = 65536 if limit is None else min(65536, limit - sent)
            data = source.recv(wanted)
            if not data:
                return False
            target.sendall(data)
            sent += len(data)
            if count is not None:
                count(len(data))
        return True
    return False


class _CuttingServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, upstream: tuple[str, int], limit: int | None, stall: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Relay)
        self.upstream = upstream
        self.limit = limit
        self.stall = stall
        self.stalled = threading.Event()  # a connection reached the limit and is held
        self.released = threading.Event()  # set when the proxy closes
        self.served = 0  # bytes of the server's answers handed to clients, all connections
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()

    def count(self, sent: int) -> None:
        with self._lock:
            self.served += sent

    def track(self, *ends: socket.socket) -> None:
        with self._lock:
            self._open.extend(ends)

    def drop_connections(self) -> None:
        with self._lock:
            ends, self._open = self._open, []
        for end in ends:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


@dataclass
class Relay:
    """A running proxy: its http:// endpoint and what it relayed so far."""

    endpoint: str
    _server: _CuttingServer

    @property
    def stalled(self) -> threading.Event:
        """Set once a connection reached the limit and is held (stalling_proxy)."""
        return self._server.stalled

    @property
    def served(self) -> int:
        """Bytes of the server's answers (headers and bodies) that reached the clients."""
        with self._server._lock:
            return self._server.served


@contextlib.contextmanager
def _relaying(upstream_port: int, limit: int | None, stall: bool = False) -> Iterator[Relay]:
    server = _CuttingServer(("127.0.0.1", upstream_port), limit, stall)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Relay(f"http://127.0.0.1:{server.server_address[1]}", server)
    finally:
        server.released.set()
        server.shutdown()
        server.server_close()
        server.drop_connections()
        thread.join(timeout=10)


@contextlib.contextmanager
def cutting_proxy(upstream_port: int, limit: int) -> Iterator[str]:
    """An http:// endpoint relaying to 127.0.0.1:``upstream_port`` whose answers stop after
    ``limit`` bytes, the connection closed."""
    with _relaying(upstream_port, limit) as relay:
        yield relay.endpoint


@contextlib.contextmanager
def counting_proxy(upstream_port: int) -> Iterator[Relay]:
    """A proxy relaying every byte to 127.0.0.1:``upstream_port``, counting what it served."""
    with _relaying(upstream_port, None) as relay:
        yield relay


@contextlib.contextmanager
def stalling_proxy(upstream_port: int, limit: int) -> Iterator[Relay]:
    """A proxy relaying to 127.0.0.1:``upstream_port`` whose answers stop after ``limit`` bytes
    with the connection held open until the proxy closes (``Relay.stalled`` tells when one did)."""
    with _relaying(upstream_port, limit, stall=True) as relay:
        yield relay
