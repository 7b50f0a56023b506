"""Radiata Stories' registry record (RMF1 dialogue packets as voice cues)."""

from audio.games import Game

GAME = Game(
    name="radiata",
    title="Radiata Stories",
    package="audio.games.radiata",
    demo="demo/talk.toml",
    outcomes=(
        (
            "refused",
            ("ChoiceTimeout", "TalkRefused", "Dropped", "AdvanceIgnored", "NoClip", "NoPacket", "Trap"),
        ),
        ("quiet", ("Message", "Wait", "WaitDone", "Prologue", "TalkQueued", "Proper")),
        ("state", ("Advanced", "ChoiceOpen", "Chosen", "Signal", "TalkStarted", "TalkEnd", "Mouth")),
    ),
)
