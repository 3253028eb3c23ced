"""The desktop window: PySide6 widgets and qasync, thin adapters over ``ora_desktop.core``.

One folder per feature (``sidebar/``, ``memories/``, ``search/``, ``detail/``, ``curate/`` …);
``context.py`` holds :class:`~ora_desktop.gui.context.AppContext`, the object every view shares.
"""

import ctypes
import sys

# PySide6 must be imported before qasync (qasync picks the first Qt binding already loaded).
import PySide6.QtWidgets  # noqa: F401


def _guard_bool_refcount() -> None:
    """Work around PySide6 6.12 on Python 3.11: ``Signal.emit()`` returns ``True`` without a
    new reference (and some calls do the same with ``None``), so every emit from Python drops one
    reference and a long session aborts with "Fatal Python error: bool_dealloc" (or
    ``none_dealloc``). From 3.12 on these objects are immortal; here we give them enough extra
    references that no session can run out."""
    if sys.version_info >= (3, 12):
        return
    for value in (True, False, None):
        ctypes.c_ssize_t.from_address(id(value)).value += 1 << 40


_guard_bool_refcount()
