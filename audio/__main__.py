from audio.cli import run

run()
