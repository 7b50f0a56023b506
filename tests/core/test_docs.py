"""Shared numpydoc Parameters entries: copied once at import, in the order asked, refused loudly."""

from __future__ import annotations

import pytest

from audio.core.docs import share_parameters


def source(sample_rate: int, block: int, seed: int) -> None:
    """Source.

    Parameters
    ----------
    sample_rate:
        Output sample rate, Hz.
    block:
        Engine block, samples
        (the output does not depend on it).
    seed:
        Seed.
    """


def test_named_entries_are_appended_to_the_target_section_in_the_order_asked() -> None:
    @share_parameters(source, "block", "sample_rate")
    def target(path: str, block: int, sample_rate: int) -> None:
        """Target.

        Parameters
        ----------
        path:
            A file.
        """

    assert target.__doc__ == (
        "Target.\n\nParameters\n----------\npath:\n    A file.\n"
        "block:\n    Engine block, samples\n    (the output does not depend on it).\n"
        "sample_rate:\n    Output sample rate, Hz."
    )


def test_a_target_without_a_section_gets_one_holding_every_entry() -> None:
    @share_parameters(source)
    def target(sample_rate: int, block: int, seed: int) -> None:
        """Target, same arguments."""

    doc = target.__doc__ or ""
    assert doc.startswith("Target, same arguments.\n\nParameters\n----------\nsample_rate:\n")
    assert doc.endswith("seed:\n    Seed.")


def test_an_undocumented_name_is_refused() -> None:
    with pytest.raises(ValueError, match="documents no parameter level"):
        share_parameters(source, "level")(lambda: None)


def test_a_parameters_section_that_is_not_last_is_refused() -> None:
    def target() -> None:
        """Target.

        Parameters
        ----------
        x:
            X.

        Returns
        -------
        Nothing.
        """

    with pytest.raises(ValueError, match="last section"):
        share_parameters(source, "seed")(target)
