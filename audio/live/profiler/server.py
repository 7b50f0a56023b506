"""The profiler page's server: tornado (HTTP + WebSocket) on its own thread and event loop.

Why tornado: it is the server bokeh runs on (already installed with it), a well-kept asyncio
framework with WebSockets built in, and the page needs nothing more than one socket pushing
JSON at 10 Hz to a small hand-written front end (``static/``: canvas timeline and meters, no
library, no font files: the page uses the browser's own sans-serif and monospace faces). A bokeh
server session was measured as the other option: it re-diffs its document models per update
and ships a 2 MB client, where this page's update is a few kB of JSON.

Every script and style is served from ``static/`` by this server; the page names no other host.
Bound to 127.0.0.1 by default; another address needs a token (``?token=`` on the page's URL,
then a cookie), since anyone who reaches the page can send the game's actions. On a loopback
address the ``Host`` header must be a loopback name too (no DNS rebinding), and WebSocket
origins are checked by tornado (same host only).

A slow or closed browser only loses updates: a client whose previous message is still being
written is skipped for that tick (counted in ``stats["skipped"]``).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from audio.core.errors import BarkbusError

__all__ = ["ProfilerError", "ProfilerServer", "bind_page", "is_loopback", "page_url", "parse_bind"]

log = logging.getLogger("barkbus.profiler")
TICK_S = 1.0 / 15.0
"""The page's update period (s)."""


class ProfilerError(BarkbusError):
    """A profiler address or token that cannot be used (one line, exit status 2)."""


def static_dir() -> Path:
    """The page's files (HTML, script, style), shipped inside the package."""
    return Path(str(resources.files("audio.live.profiler").joinpath("static")))


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_bind(value: str | None) -> tuple[str, int]:
    """``[HOST:]PORT`` (or ``HOST:`` / empty: a free port) -> (host, port); ProfilerError if bad."""
    text = (value or "").strip()
    host, port_text = "127.0.0.1", text
    if ":" in text and not text.startswith("["):
        host, _, port_text = text.rpartition(":")
        if ":" in host:  # a bare IPv6 address without a port
            host, port_text = text, ""
    elif text.startswith("["):
        head, _, port_text = text[1:].partition("]")
        host, port_text = head, port_text.lstrip(":")
    if port_text == "":
        port = 0
    elif port_text.isdigit() and int(port_text) <= 65535:
        port = int(port_text)
    else:
        raise ProfilerError(f"--profiler: expected [HOST:]PORT with PORT 0..65535, got {value!r}")
    return host or "127.0.0.1", port


def bind_page(host: str, port: int, token: str | None) -> list[Any]:
    """The page's listening sockets at ``host:port`` (0 = a free port), bound and listening;
    ProfilerError for a busy port, a bad address, or a non-loopback host without ``token``."""
    from tornado.netutil import bind_sockets

    if not is_loopback(host) and not token:
        raise ProfilerError(
            f"--profiler {host}: binding the profiler beyond this machine needs --profiler-token "
            "TOKEN (anyone who reaches the page can send the game's actions)"
        )
    try:
        return list(bind_sockets(port, host))
    except OSError as exc:
        raise ProfilerError(f"--profiler {host}:{port}: cannot bind: {exc.strerror or exc}") from None


def page_url(host: str, port: int, token: str | None) -> str:
    """The page's address for a server bound at ``host:port`` (with the token, when one is needed)."""
    shown = host if ":" not in host else f"[{host}]"
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    q = f"?token={token}" if token else ""
    return f"http://{shown}:{port}/{q}"


class ProfilerServer:
    """Serves the page for one ``source`` (:class:`~audio.live.profiler.sources.LiveSource` or
    :class:`~audio.live.profiler.sources.ReviewSource`) at ``host:port`` (0 = a free port).

    The socket is bound in the constructor (a busy port or a bad address fails there, before
    the run starts), or given already bound (``sockets``, from :func:`bind_page`: the server
    process of a live run); :meth:`start` runs the loop on a daemon thread; :meth:`stop` ends it.

    A source's ``request`` may answer later (None): its replies are then queued in the client's
    state (``state["replies"]``) and sent at the next tick.
    """

    def __init__(
        self,
        source: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        sockets: list[Any] | None = None,
    ) -> None:
        self.source = source
        self.host = host
        self.token = token
        self.loopback = is_loopback(host)
        self._sockets = sockets if sockets is not None else bind_page(host, port, token)
        self.port = int(self._sockets[0].getsockname()[1])
        self.clients: set[Any] = set()
        self.stats = {"sent": 0, "skipped": 0, "clients": 0, "actions": 0, "rejected": 0}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        """The page's address (with the token, when one is needed)."""
        return page_url(self.host, self.port, self.token)

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> ProfilerServer:
        self._thread = threading.Thread(target=self._run, name="barkbus-profiler", daemon=True)
        self._thread.start()
        self._ready.wait(10.0)
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        finally:
            loop.close()

    async def _main(self) -> None:
        from tornado.httpserver import HTTPServer

        app = self._app()
        server = HTTPServer(app, xheaders=False)
        server.add_sockets(self._sockets)
        self._stop_event = asyncio.Event()
        self._ready.set()
        try:
            while not self._stop_event.is_set():
                try:
                    self._tick()
                except Exception:  # the page is a view: log and go on
                    log.exception("profiler tick failed")
                try:
                    await asyncio.wait_for(self._stop_event.wait(), TICK_S)
                except TimeoutError:
                    pass
        finally:
            for c in list(self.clients):
                c.close()
            server.stop()
            await server.close_all_connections()

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        loop = self._loop
        if loop is not None and self._thread is not None and self._thread.is_alive():
            loop.call_soon_threadsafe(self._stop_event.set)
            self._thread.join(5.0)
        self._thread = None

    # -- pushing --------------------------------------------------------------------------
    def _tick(self) -> None:
        self.source.update()
        for c in list(self.clients):
            replies = c.state.pop("replies", None)
            for kind, reply in replies or ():
                self.answer(c, kind, reply)
            if c.busy():
                self.stats["skipped"] += 1
                continue
            msg = self.source.tick(c.state)
            if msg is not None:
                c.send(msg)

    def answer(self, client: Any, kind: Any, reply: dict[str, Any]) -> None:
        """Send ``reply`` to a request of type ``kind`` (counted as an action or a rejection)."""
        if kind in ("action", "listener"):
            self.stats["actions" if reply.get("ok") else "rejected"] += 1
        client.send(reply)

    def authorised(self, handler: Any) -> bool:
        """Token (query or cookie) and, on loopback, a loopback ``Host`` header."""
        if self.loopback and not is_loopback(host_name(handler.request.host)):
            return False
        if not self.token:
            return True
        given = handler.get_query_argument("token", None) or handler.get_cookie("barkbus_token") or ""
        return hmac.compare_digest(given.encode(), self.token.encode())

    def _app(self) -> Any:
        import tornado.web
        import tornado.websocket

        server = self

        class Page(tornado.web.StaticFileHandler):
            def prepare(self) -> None:
                if not server.authorised(self):
                    raise tornado.web.HTTPError(403)
                if server.token and self.get_query_argument("token", None):
                    self.set_cookie("barkbus_token", server.token, httponly=True, samesite="Strict")

            def set_extra_headers(self, path: str) -> None:
                self.set_header("Cache-Control", "no-store")
                self.set_header(
                    "Content-Security-Policy",
                    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'",
                )

        class Socket(tornado.websocket.WebSocketHandler):
            def prepare(self) -> Any:
                if not server.authorised(self):
                    raise tornado.web.HTTPError(403)

            def open(self, *args: Any, **kwargs: Any) -> None:
                self.state: dict[str, Any] = {}
                self._pending: Any = None
                server.clients.add(self)
                server.stats["clients"] += 1
                self.send(server.source.hello(self.state))

            def busy(self) -> bool:
                return self._pending is not None and not self._pending.done()

            def send(self, msg: dict[str, Any] | str) -> None:
                text = msg if isinstance(msg, str) else json.dumps(msg, separators=(",", ":"))
                try:
                    self._pending = self.write_message(text)
                    server.stats["sent"] += 1
                except tornado.websocket.WebSocketClosedError:
                    server.clients.discard(self)

            def on_message(self, message: str | bytes) -> None:
                try:
                    req = json.loads(message)
                    if not isinstance(req, dict):
                        raise ValueError("a request is a JSON object")
                except ValueError as exc:
                    server.stats["rejected"] += 1
                    self.send({"type": "result", "ok": False, "text": f"bad request: {exc}"})
                    return
                reply = server.source.request(req, self.state)
                if reply is not None:  # else it comes later, through state["replies"]
                    server.answer(self, req.get("type"), reply)

            def on_close(self) -> None:
                server.clients.discard(self)

        return tornado.web.Application(
            [
                (r"/ws", Socket),
                (r"/(.*)", Page, {"path": str(static_dir()), "default_filename": "index.html"}),
            ],
            websocket_max_message_size=65536,
        )


def host_name(host_header: str) -> str:
    """The host of an HTTP ``Host`` header (``[::1]:80`` -> ``::1``, ``a:80`` -> ``a``)."""
    if host_header.startswith("["):
        return host_header[1:].partition("]")[0]
    return host_header.rpartition(":")[0] if host_header.count(":") == 1 else host_header
