"""Radiata Stories file formats: RMF1 dialogue, PS-ADPCM .vag voice clips, the voice table."""
