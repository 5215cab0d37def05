from icr_app.cli import main

raise SystemExit(main())
