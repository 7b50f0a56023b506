from audio.cli import main

raise SystemExit(main())
