"""Count the calls Qt makes into one Python function on the GUI thread, without replacing it.

Replacing a PySide virtual (``eventFilter``, ``highlightBlock``) with monkeypatch is unsafe:
Shiboken keeps the override it found, and once monkeypatch drops the replacement, widgets still
alive from the test crash the next one. A profile hook on this thread only watches.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


@contextmanager
def calls_of(function: Callable[..., Any], argument: str,
             read: Callable[[Any], Any] = lambda value: value) -> Iterator[list[Any]]:
    """Yield a list that collects ``argument`` of every call of ``function`` on this thread, as
    ``read`` returns it during the call (a Qt argument such as an index lives only that long)."""
    code, seen = function.__code__, []

    def hook(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_code is code:
            seen.append(read(frame.f_locals.get(argument)))

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(previous)
