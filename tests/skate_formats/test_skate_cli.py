

def test_curves_command_draws_a_png(tmp_path):
    from audio.cli import main
    out = tmp_path / "c.png"
    assert main(["skate", "curves", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_tuning_command_round_trips_the_demo_tuning(tmp_path):
    from audio.cli import main
    from audio.games.skate.system import DEMO_TUNING
    from audio.games.skate.speech.tuning import load_tuning
    out = tmp_path / "t.toml"
    assert main(["skate", "tuning", "-o", str(out)]) == 0
    assert load_tuning(out) == load_tuning(DEMO_TUNING)
