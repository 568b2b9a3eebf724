from bot.commands.cli import main

raise SystemExit(main())
