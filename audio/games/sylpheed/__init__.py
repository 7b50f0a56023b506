"""Project Sylpheed (Xbox 360): data files and the reactive-chatter system.

Formats (each with a reader and a writer): :mod:`.hashes` (pak name hash, table tag
hash), :mod:`.pak` (IPFB archives), :mod:`.table` (IDXD / IXUD), :mod:`.unitgroup`
(squadron roster), :mod:`.presets` (rule, message and UnitMessageSet tables),
:mod:`.cues` (message id -> cue -> bank), :mod:`.slb` (probing bank reader over
:mod:`audio.codecs`), :mod:`.install` (an install on disk).

Behaviour (seed 000): :mod:`.rules` (loader and phase merge), :mod:`.rand` (``rand01``),
:mod:`.chatter` (the queue), :mod:`.events`, :mod:`.system` (the engine system),
:mod:`.scenario` (scenario keys), :mod:`.cli` (``barkbus sylpheed``).
"""
