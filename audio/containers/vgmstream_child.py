"""The child process that decodes files with vgmstream for :mod:`audio.containers.vgmstream`.

Run by path (``python -P vgmstream_child.py MEMORY_BYTES``), it imports nothing of barkbus, so
it starts in the time Python and pyvgmstream take. It caps its address space at
``MEMORY_BYTES`` once (``RLIMIT_AS``) and gives each file a CPU budget (``ITIMER_PROF``, user +
system time: the kernel ends the process with ``SIGPROF`` past it), so a file that sends
vgmstream into a long scan or a crash costs this process, never the host.

Protocol on the standard streams, binary, big-endian: a request is ``f64`` CPU budget in
seconds, ``u32 n``, then ``n`` bytes of UTF-8 path; the reply is one status byte (``W``: a WAV
follows; ``E``: a one-line reason follows) then ``u64 n`` and ``n`` bytes. End of input ends
the process.

:func:`load_pyvgmstream` is also the parent's way of importing pyvgmstream (in-process decoding
of buffers barkbus made, :func:`audio.containers.vgmstream.decode_buffer`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import resource
import signal
import struct
import sys
from types import ModuleType
from typing import BinaryIO

__all__ = ["load_pyvgmstream", "serve"]

_LIBS = ("ogg", "vorbis", "vorbisfile")


def load_pyvgmstream() -> tuple[ModuleType | None, str]:
    """``(pyvgmstream, "pyvgmstream loaded")``, or ``(None, why not)``.

    The 0.1.1 Linux wheel's extension needs libogg, libvorbis and libvorbisfile loaded with
    ``RTLD_GLOBAL`` before import (else ``undefined symbol: ov_test_callbacks``).
    """
    try:
        for name in _LIBS:
            found = ctypes.util.find_library(name)
            if found is None:
                raise OSError(f"lib{name} not found (Debian: libogg0, libvorbis0a, libvorbisfile3)")
            ctypes.CDLL(found, mode=ctypes.RTLD_GLOBAL)
        import pyvgmstream
    except (OSError, ImportError) as exc:
        return None, f"pyvgmstream unavailable: {exc}"
    return pyvgmstream, "pyvgmstream loaded"


def _reply(out: BinaryIO, status: bytes, payload: bytes) -> None:
    out.write(status + struct.pack(">Q", len(payload)) + payload)
    out.flush()


def serve(memory_bytes: int, inp: BinaryIO, out: BinaryIO) -> None:
    """Answer decode requests from ``inp`` on ``out`` until ``inp`` ends (module docstring).

    Parameters
    ----------
    memory_bytes:
        Address-space limit of this process, bytes.
    inp, out:
        The request and reply streams.
    """
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a killed child leaves no core file
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    module, reason = load_pyvgmstream()
    config = None
    if module is not None:
        config = module.DecodeConfig(sample_format=module.SampleFormat.PCM16, ignore_loop=True)
    while len(head := inp.read(12)) == 12:
        cpu_seconds, size = struct.unpack(">dI", head)
        path = inp.read(size).decode("utf-8", "surrogateescape")
        if module is None:
            _reply(out, b"E", reason.encode())
            continue
        signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
        try:
            wav = module.decode_to_wav_bytes(path, config=config)
        except (module.PyVGMStreamError, ValueError, RuntimeError, OSError, MemoryError) as exc:
            line = " ".join(str(exc).split()) or type(exc).__name__
            _reply(out, b"E", line.encode("utf-8", "replace"))
            continue
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        _reply(out, b"W", wav)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.stdin.buffer, sys.stdout.buffer)
