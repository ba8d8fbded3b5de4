from plugman.cli import main

raise SystemExit(main())
