"""Starting the profiler page beside a running port: the render thread's publisher and the
page's server process."""

from __future__ import annotations

from typing import Any

from audio.live.profiler.feed import PAGE_NICE, ProfilerProcess
from audio.live.profiler.server import parse_bind
from audio.live.profiler.snapshot import SnapshotPublisher

__all__ = ["attach_publisher", "detach_publisher", "start_profiler"]


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
