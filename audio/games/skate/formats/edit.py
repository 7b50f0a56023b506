"""Edit a speech bank: replace one take or add a take, and write a new install.

Every other take keeps its SNR header and SNS body byte for byte; the bank's ``.dat``
clips, nested ``.hdr`` / ``.sth`` archives and ``.evt`` are rebuilt by
:func:`~audio.games.skate.formats.install.write_install` (so the ``.sth`` row offsets
follow the new bodies). Adding a take rewrites that clip's header in the game's layout
(take count + 1, history length = take count, row offsets ``12 k``, an empty history
ring); a replaced take keeps its clip's header as stored.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from audio.codecs.xma2_encoder import encode_xma2
from audio.containers.snr import eaxma_take
from audio.core.errors import InputError, OutputError
from audio.games.skate.formats.hdr import ClipHeader
from audio.games.skate.formats.install import SPEECH_DIR, ClipSpec, SkateInstall, bank_paths, write_install

__all__ = ["DEFAULT_KBPS", "encode_take", "edited_clips", "write_edited_install"]

DEFAULT_KBPS = 64.0
"""Bitrate of takes written by the edit commands, kbit/s (retail banks run at about 60-90)."""


def encode_take(pcm: np.ndarray, sample_rate: int, bitrate: float = DEFAULT_KBPS) -> tuple[bytes, bytes]:
    """(SNR header, SNS body) of a new EA-XMA2 (codec 3) take from float PCM (samples,) or (samples, ch)."""
    arr = np.asarray(pcm, np.float32)
    arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
    enc = encode_xma2(arr, sample_rate, bitrate=bitrate * arr.shape[1])
    return eaxma_take(enc.streams, arr.shape[1], sample_rate, arr.shape[0])


def edited_clips(
    install: SkateInstall,
    prefix: str,
    clip_name: str,
    *,
    replace: tuple[int, tuple[bytes, bytes]] | None = None,
    add: tuple[bytes, bytes] | None = None,
) -> list[ClipSpec]:
    """Every clip of bank ``prefix`` as :func:`write_install` specs, with one take replaced or added."""
    bank = install.bank(prefix)
    target = bank.clip(clip_name)  # MissingEntry (did-you-mean) for an unknown name
    if replace is not None and not 0 <= replace[0] < len(target.takes):
        raise InputError(
            f"{target.name} has {len(target.takes)} takes (0..{len(target.takes) - 1}), no take {replace[0]}"
        )
    if add is not None and len(target.takes) >= 255:
        raise InputError(f"{target.name} already has 255 takes (the .hdr count is one byte)")
    specs: list[ClipSpec] = []
    for clip in bank.clips:
        if clip.header is None:
            raise InputError(f"{bank.path}: clip {clip.name} has no .hdr; this bank cannot be rewritten")
        takes = [bank.take_bytes(clip, k) for k in range(len(clip.takes))]
        header = clip.header
        if clip.name == target.name:
            if replace is not None:
                takes[replace[0]] = replace[1]
            if add is not None:
                takes.append(add)
                header = ClipHeader.new(header.id, len(takes), flags=header.flags)
        specs.append((clip.name, header, takes))
    return specs


def write_edited_install(
    src_root: Path, dst_root: Path, prefix: str, specs: Sequence[ClipSpec], install: SkateInstall
) -> Path:
    """Copy the install at ``src_root`` to the new ``dst_root`` and write bank ``prefix`` there.

    ``dst_root`` must not exist yet (or be an empty folder) and must not be ``src_root``.
    Returns the new ``<prefix>speech.big``.
    """
    if dst_root.exists() and (not dst_root.is_dir() or any(dst_root.iterdir())):
        raise OutputError(f"{dst_root}: exists and is not an empty folder; give a new install root")
    if dst_root.resolve() == src_root.resolve():
        raise OutputError(f"{dst_root}: is the source install; give a new install root")
    bank = install.bank(prefix)
    compressed = any(e.compression for e in bank.archive.entries)
    compression = "refpack" if compressed else "none"
    evt = bank.events
    tmp = dst_root.with_name(dst_root.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        shutil.copytree(src_root, tmp, symlinks=False)
        speech = tmp / SPEECH_DIR / bank_paths(prefix)["speech"]
        source_bank = Path(bank.path)
        rel = source_bank.relative_to(src_root) if source_bank.is_relative_to(src_root) else None
        if rel is not None and (tmp / rel) != speech:
            (tmp / rel).unlink()
        write_install(tmp, prefix, specs, evt, compression=compression)
        if dst_root.exists():
            dst_root.rmdir()
        tmp.rename(dst_root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dst_root / SPEECH_DIR / bank_paths(prefix)["speech"]
