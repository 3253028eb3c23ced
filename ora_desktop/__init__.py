"""Ora Desktop: see and tend an AI agent's long-term memory.

``import ora_desktop`` gives the headless engine (no Qt is loaded)::

    import ora_desktop
    with ora_desktop.open_store("~/.ora/sites/anwe-sh/ora.site.db") as store:
        store.add("The site deploys from main", type="fact", importance=7)
        for memory in store.recall("fact"):
            print(memory.importance, memory.title)

The names come from :mod:`ora_desktop.core`, each imported on first use, so this import stays
light (the search engine, psycopg and the job runner load when something needs them).

A store opened here journals its ``add``, ``update`` and ``delete`` as ``library``: a person
sees them in ``ora-desktop undo --list`` and can undo them (``journal_as=None`` opts out).
"""

from importlib import metadata as _metadata
from pathlib import Path as _Path
from typing import TYPE_CHECKING

from . import core as _core

try:  # the one version source is pyproject.toml, through the installed distribution's metadata
    __version__ = _metadata.version("ora-desktop")
except _metadata.PackageNotFoundError:  # a checkout on sys.path that was never installed
    __version__ = "0+unknown"
__all__ = [*_core.__all__, "__version__", "sync"]


def __getattr__(name: str) -> object:
    """A public name of :mod:`ora_desktop.core`, imported on first use."""
    if name in _core.__all__:
        value = getattr(_core, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def open_store(path: "str | _Path", readonly: bool = False, *, timeout: "float | None" = None,
               journal_as: "str | None" = "library") -> "_core.Store":
    """Open an Ora memory file (see :func:`ora_desktop.core.library.open_store`); its own
    ``add``/``update``/``delete`` are journalled as ``journal_as`` (``"library"``; ``None``: not
    journalled), so a person can list and undo an agent's writes."""
    from .core.library import open_store as open_file

    return open_file(path, readonly, timeout=timeout, journal_as=journal_as)


def sync(*args, **kwargs):  # type: ignore[no-untyped-def]
    """Sync memory files with the shared PostgreSQL server; see
    :func:`ora_desktop.core.operations.sync.sync` (imported on first use: psycopg and the job
    runner are not loaded by ``import ora_desktop``)::

        report = ora_desktop.sync(site="anwe-sh", agent="ora", url="postgresql://ora@db/ora")
        for result in report.results:
            print(result.summary)
    """
    from .core.operations.sync import sync as run_sync

    return run_sync(*args, **kwargs)


if TYPE_CHECKING:  # the names, for type checkers and readers
    from .core import *  # noqa: F403
