"""The Radiata talk sequencer: :mod:`.settings` (the unknowns as settings) and :mod:`.sequencer`."""
