"""`python -m zorora_tui` is the `zorora` command (used by `zorora web`)."""

from .cli import main

raise SystemExit(main())
