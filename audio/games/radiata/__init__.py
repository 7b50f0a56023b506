"""Radiata Stories (PS2): RMF1 dialogue packets as voice cues."""
