"""``kstp explore``'s server: the application of :mod:`kstp.explore.app` under uvicorn.

Binds the address itself first, so a port in use is one line naming it (and port 0 picks a
free one, which the start line names). uvicorn stops on Ctrl-C or SIGTERM in about a second:
running ad-hoc statements are interrupted and the requests in flight get :data:`SHUTDOWN_S`;
the graph is closed by the caller.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import webbrowser
from collections.abc import Callable

from kstp.errors import ConfigError
from kstp.explore.pages import Explorer

__all__ = ["is_loopback", "bind", "serve", "SHUTDOWN_S"]

#: Seconds the requests in flight get to finish after Ctrl-C or SIGTERM (their statements are
#: interrupted first; a page that is still reading is then dropped).
SHUTDOWN_S = 0.5


def is_loopback(host: str) -> bool:
    """Whether ``host`` is only reachable from this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one).

    Raises
    ------
    ConfigError
        When the address cannot be bound (the port is in use, the host is not this machine's).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}: {exc.strerror}; give --host an address of this machine") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}; choose another port with --port "
                          "(--port 0 picks a free one)") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(explorer: Explorer, sock: socket.socket, open_browser: bool = False,
          announce: Callable[[str], None] = print) -> None:
    """Serve ``explorer``'s pages on the bound ``sock`` until Ctrl-C or SIGTERM, once what the pages keep is
    computed (:meth:`~kstp.explore.pages.Explorer.warm`: seconds at XES3G5M scale).

    Parameters
    ----------
    explorer : Explorer
        The pages of a graph opened read-only.
    sock : socket.socket
        From :func:`bind`.
    open_browser : bool
        Open the overview in the default browser once the server listens.
    announce : callable
        Receives the line naming the address.
    """
    import uvicorn

    from kstp.explore.app import abandon, create_app

    began = time.perf_counter()
    explorer.warm()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            super().handle_exit(sig, frame)
            explorer.interrupt()  # a running ad-hoc statement ends now, not at its time limit
            abandon()  # and a request waiting on one (Neo4j's cannot be interrupted) is answered

    server = Server(uvicorn.Config(create_app(explorer), log_level="warning", access_log=False,
                                   timeout_graceful_shutdown=SHUTDOWN_S))
    announce(f"kstp explore: {url} (graph {explorer.where}, read-only; ready in {time.perf_counter() - began:.1f} s); "
             "Ctrl-C stops it")
    if open_browser:
        def wait_then_open() -> None:
            while not server.started and not server.should_exit:
                threading.Event().wait(0.05)
            if server.started:
                webbrowser.open(url)

        threading.Thread(target=wait_then_open, daemon=True).start()
    server.run(sockets=[sock])
