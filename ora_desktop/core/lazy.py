"""Public names a package's ``__init__`` imports on first use (PEP 562), so importing the package
stays light: ``__all__, __getattr__, __dir__ = lazy.exports(__name__, globals(), PUBLIC)``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def exports(package: str, namespace: dict[str, Any], public: dict[str, tuple[str, ...]]
            ) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package``, whose ``public`` maps a submodule to
    the names it gives; a name's module is imported when the name is first asked for, and the
    value is then kept in ``namespace`` (the package's globals)."""
    home = {name: module for module, names in public.items() for name in names}

    def __getattr__(name: str) -> object:  # noqa: N807
        module = home.get(name)
        if module is None:  # a submodule name falls through to the import system
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *home})

    return sorted(home), __getattr__, __dir__
