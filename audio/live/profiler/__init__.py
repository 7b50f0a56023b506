"""The live profiler: a local web page showing a run's decisions, voices and levels as they happen.

``barkbus live ... --profiler [HOST:]PORT`` serves it beside a live run, ``barkbus profile
CAPTURE|LOG`` over a finished one, and :meth:`audio.port.api.VoicePort.profiler` from a host.
Modules: :mod:`.snapshot` (what the render thread publishes), :mod:`.history` (the run as the
page sees it), :mod:`.sources` (live or finished run), :mod:`.server` (tornado, HTTP and
WebSocket), :mod:`.review` (a capture or a decision log made into a finished run), :mod:`.cli`
(the command-line options), ``static/`` (the page: HTML, script, style).
"""

from __future__ import annotations

from typing import Any

from audio.live.profiler.server import ProfilerError, ProfilerServer, parse_bind
from audio.live.profiler.snapshot import SnapshotPublisher
from audio.live.profiler.sources import LiveSource

__all__ = ["ProfilerError", "ProfilerServer", "SnapshotPublisher", "attach_publisher", "start_profiler"]


def attach_publisher(port: Any) -> SnapshotPublisher:
    """A publisher fed with every block ``port`` renders: by its running player's render thread
    (``on_block``, chained after any hook already there), else by :meth:`VoicePort.pull` and a
    later :meth:`VoicePort.play` (``port.block_hooks``)."""
    pub = SnapshotPublisher(port.engine)
    player = port.player
    if player is None:
        port.block_hooks.append(pub.on_block)
    else:
        old = player.on_block
        if old is None:
            player.on_block = pub.on_block
        else:

            def both(start: int, block: Any) -> None:
                old(start, block)
                pub.on_block(start, block)

            player.on_block = both
    return pub


def start_profiler(port: Any, bind: str | None = None, token: str | None = None) -> ProfilerServer:
    """Serve the profiler page for ``port`` at ``bind`` (``[HOST:]PORT``; default 127.0.0.1 and a
    free port); returns the running server (``url``, ``stop()``). ProfilerError if the address
    cannot be used (another host than loopback needs ``token``)."""
    host, number = parse_bind(bind)
    pub = attach_publisher(port)
    server = ProfilerServer(LiveSource(port, pub, port.player), host, number, token)
    return server.start()
