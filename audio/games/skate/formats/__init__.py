"""audio/games/skate/formats

:data:`BANK_PREFIXES` lives here, numpy-free, so the command line lists the banks without
loading a reader (``barkbus skate --help``); :mod:`.install` uses it.
"""

__all__ = ["BANK_PREFIXES"]

#: The speech banks an install may hold, in the order they are looked for.
BANK_PREFIXES = ("livingworld", "maincast", "announcer")
