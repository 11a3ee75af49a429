from hangwatch.cli import main

raise SystemExit(main())
