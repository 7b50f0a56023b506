"""What the game systems expect to play: expected shares, catalogues, event names, variety.

After a run, the batch asks each game system the contract's questions
(:class:`audio.core.plugin.GameSystem`; a system that cannot say answers empty):

``expected_shares(decisions) -> {(event, clip): expected plays}``
    For every line that started in the run, the probability that the line includes each
    clip, summed: the count the weights predict (Skate 3: a request's matching records share
    ``weight / sum(weights)``; Project Sylpheed: a rule's messages share ``1 / count``).
``catalogue(decisions) -> {(event, clip)}``
    Every line the run's speakers could play.
``event_names() -> {event: name}``
    Display names of event ids (Skate: the ``.evt`` tables' names).
``variety() -> (group key, variant key)``
    What groups plays and what should vary inside a group, for take repeat rates.

Events and clips are strings (``str(id)`` for numeric ids).
"""

from __future__ import annotations

from audio.core.outcomes import OutcomeClass

__all__ = ["DEFAULT_VARIETY", "PLAY_CLASS"]

PLAY_CLASS = OutcomeClass.START
"""The outcome class that marks a clip (or line) starting to play."""
DEFAULT_VARIETY = ("clip", "take")
"""Repeat-rate grouping of a system that declares none: a clip's take should vary."""
