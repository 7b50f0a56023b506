"""Starlancer (PC, 2000): mission-script radio comms and .ut speech."""
