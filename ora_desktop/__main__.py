"""``python -m ora_desktop`` is the ``ora-desktop`` command."""

from .cli import main

raise SystemExit(main())
