"""The desktop window: PySide6 widgets and qasync, thin adapters over ``ora_desktop.core``.

One folder per feature (``sidebar/``, ``memories/``, ``search/``, ``detail/``, ``curate/`` …);
``context.py`` holds :class:`~ora_desktop.gui.context.AppContext`, the object every view shares.
"""

# PySide6 must be imported before qasync (qasync picks the first Qt binding already loaded).
import PySide6.QtWidgets  # noqa: E402, F401
