"""barkbus: a real-time audio middleware emulator for in-game speech.

Sub-packages: :mod:`audio.dsp` (block DSP graph), :mod:`audio.codecs` (sample codecs: PCM16BE,
XAS1, EA-XMA, XMA1/XMA2, PS-ADPCM, LPC), :mod:`audio.containers` (EA SNR/SNS, XWB, RIFF, VAG),
:mod:`audio.games.skate` (Skate 3 speech),
:mod:`audio.games.sylpheed` (Project Sylpheed chatter), :mod:`audio.port` (embedding API and
network interface). Core modules: :mod:`audio.core.bus`, :mod:`audio.core.clock`,
:mod:`audio.core.engine`, :mod:`audio.offline.render`.
"""

__version__ = "0.1.0"
