def test_curves_command_draws_six_panels_of_curves(tmp_path):
    import numpy as np
    from PIL import Image

    from audio.cli import main

    out = tmp_path / "c.png"
    assert main(["skate", "curves", "-o", str(out)]) == 0
    img = np.asarray(Image.open(out).convert("RGB"))
    assert img.shape[:2] == (850, 1500)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50


def test_curves_command_takes_overrides_and_reports_a_bad_scenario_in_one_line(tmp_path, capsys):
    from audio.cli import main

    scn = tmp_path / "s.toml"
    scn.write_text("[skate.mix]\nout99 = { x = [0], y = [1] }\n")
    assert main(["skate", "curves", "--scenario", str(scn), "-o", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "s.toml: skate.mix.out99: unknown field" in err[0]
    missing = str(tmp_path / "none.toml")
    assert main(["skate", "curves", "--scenario", missing, "-o", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none.toml" in err[0]
    assert not (tmp_path / "c.png").exists()


def test_tuning_command_round_trips_the_demo_tuning(tmp_path):
    from audio.cli import main
    from audio.games.skate.speech.tuning import load_tuning
    from audio.games.skate.system import DEMO_TUNING

    out = tmp_path / "t.toml"
    assert main(["skate", "tuning", "-o", str(out)]) == 0
    assert load_tuning(out) == load_tuning(DEMO_TUNING)
