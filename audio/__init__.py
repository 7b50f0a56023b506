"""barkbus: a real-time audio middleware emulator for in-game speech.

Sub-packages: :mod:`audio.dsp` (block DSP graph), :mod:`audio.codecs` (EA SNR/SNS,
EA-XMA, XAS1, PCM, XMA1/XMA2, XWB), :mod:`audio.skate` (Skate 3 speech),
:mod:`audio.sylpheed` (Project Sylpheed chatter), :mod:`audio.port` (embedding API and
network interface). Core modules: :mod:`audio.bus`, :mod:`audio.clock`,
:mod:`audio.engine`, :mod:`audio.render`.
"""
__version__ = "0.1.0"
