

def test_curves_command_draws_a_png(tmp_path):
    from audio.cli import main
    out = tmp_path / "c.png"
    assert main(["skate", "curves", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
