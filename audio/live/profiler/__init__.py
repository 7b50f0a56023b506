"""The live profiler: a local web page showing a run's decisions, voices and levels as they happen.

``barkbus live ... --profiler [HOST:]PORT`` serves it beside a live run, ``barkbus profile
CAPTURE|LOG`` over a finished one, and :meth:`audio.port.api.VoicePort.profiler` from a host.
Modules: :mod:`.snapshot` (what the render thread publishes), :mod:`.records` (the playing
voices as numpy records), :mod:`.ring` (the shared memory ring they reach the server process
by), :mod:`.history` (the run as the page sees it), :mod:`.sources` (live or finished run),
:mod:`.server` (tornado, HTTP and WebSocket), :mod:`.review` (a capture or a decision log
made into a finished run), :mod:`.cli` (the command-line options), ``static/`` (the page:
HTML, script, style), :mod:`.feed` and :mod:`.worker` (a live run's page served by another
process, fed by the render thread).
"""

from __future__ import annotations

from typing import Any

from audio.live.profiler.feed import PAGE_NICE, ProfilerProcess
from audio.live.profiler.server import ProfilerError, ProfilerServer, parse_bind
from audio.live.profiler.snapshot import SnapshotPublisher

__all__ = [
    "ProfilerError",
    "ProfilerProcess",
    "ProfilerServer",
    "SnapshotPublisher",
    "attach_publisher",
    "start_profiler",
]


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


def detach_publisher(port: Any, pub: SnapshotPublisher) -> None:
    """Undo :func:`attach_publisher` where it can (a hook not started yet)."""
    if pub.on_block in port.block_hooks:
        port.block_hooks.remove(pub.on_block)
    pub.records.detach()


def start_profiler(
    port: Any, bind: str | None = None, token: str | None = None, nice: int = PAGE_NICE
) -> ProfilerProcess:
    """Serve the profiler page for ``port`` at ``bind`` (``[HOST:]PORT``; default 127.0.0.1 and a
    free port) from a server process fed by the render thread (:mod:`.feed`: the page's work
    never takes the audio process' interpreter lock), at niceness ``nice`` (default
    :data:`~audio.live.profiler.feed.PAGE_NICE`); returns it (``url``, ``stop()``).
    ProfilerError if the address cannot be used (another host than loopback needs ``token``)."""
    host, number = parse_bind(bind)
    pub = attach_publisher(port)
    try:
        return ProfilerProcess(port, pub, host, number, token, nice).start()
    except BaseException:
        detach_publisher(port, pub)
        raise
