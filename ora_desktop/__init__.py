"""Ora Desktop: see and tend an AI agent's long-term memory.

``import ora_desktop`` gives the headless engine (no Qt is loaded)::

    import ora_desktop
    with ora_desktop.open_store("~/.ora/sites/anwe-sh/ora.site.db") as store:
        store.add("The site deploys from main", type="fact", importance=7)
        for memory in store.recall("fact"):
            print(memory.importance, memory.title)
"""

from .core import *  # noqa: F403
from .core import __all__ as _core_all

__version__ = "0.1.0"
__all__ = [*_core_all, "__version__"]
