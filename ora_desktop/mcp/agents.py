"""Which agent file a call acts on: the one file a server was started on, or any agent of a site.

``ora-desktop mcp --db F`` (or ``--site S --agent A``) serves one file; a tool's ``agent``
argument may be left out (or name that agent). ``ora-desktop mcp --site S`` serves every agent
of site ``S``: each call names its ``agent``, whose file is opened on first use and kept open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from ..core import InvalidValue, NotFound, OraHome, Store, open_store
from ..core.home import location


def base_uri(path: Path) -> str:
    """``ora://SITE/AGENT`` for ``…/SITE/AGENT.site.db`` (the file's folder and stem otherwise)."""
    site, agent = location(path)
    return f"ora://{site or path.parent.name or 'local'}/{agent or path.stem}"


class Agents:
    """The stores a server acts on; :meth:`get` resolves a call's ``agent`` argument."""

    def __init__(self, *, store: Store | None = None, home: OraHome | None = None, site: str | None = None,
                 readonly: bool = False) -> None:
        self.store, self.home, self.site, self.readonly = store, home, site, readonly
        self.opened: dict[str, Store] = {}
        self.lock = threading.Lock()
        self.listeners: list[Callable[[Store], None]] = []

    @classmethod
    def one(cls, store: Store) -> Agents:
        return cls(store=store, readonly=store.readonly)

    @classmethod
    def of_site(cls, home: OraHome, site: str, readonly: bool = False) -> Agents:
        folder = home.sites_dir / site
        home.path_for(site, "x")  # the slug checked (no '..', no separators)
        if not folder.is_dir():
            raise NotFound(f"{folder}: no such site (see 'ora-desktop sites')")
        return cls(home=home, site=site, readonly=readonly)

    @property
    def serves_site(self) -> bool:
        return self.store is None

    def names(self) -> list[str]:
        """The agents this server can act on."""
        if self.store is not None:
            return [location(self.store.path)[1] or self.store.path.stem]
        assert self.home is not None
        return sorted(a.agent for s in self.home.sites() if s.slug == self.site for a in s.agents)

    def label(self) -> str:
        return f"site {self.site}" if self.serves_site else base_uri(self.store.path)  # type: ignore[union-attr]

    def on_open(self, listener: Callable[[Store], None]) -> None:
        """Call ``listener(store)`` for each store, now for those open and later for new ones."""
        self.listeners.append(listener)
        for store in self.stores():
            listener(store)

    def stores(self) -> list[Store]:
        return [self.store] if self.store is not None else list(self.opened.values())

    def is_open(self, agent: str | None) -> bool:
        """Whether :meth:`get` of ``agent`` would find its store open already (opens nothing)."""
        return self.store is not None or (agent is not None and agent in self.opened)

    def get(self, agent: str | None) -> Store:
        """The store of ``agent`` (``None``: the one file this server was started on)."""
        if self.store is not None:
            own = self.names()[0]
            if agent not in (None, own):
                raise InvalidValue("agent", f"this server serves only agent {own!r} (leave agent out)")
            return self.store
        if agent is None:
            raise InvalidValue("agent", f"this server serves every agent of site {self.site!r}: give agent, one of "
                                        f"{', '.join(self.names()) or '(none yet)'}")
        assert self.home is not None and self.site is not None
        path = self.home.path_for(self.site, agent)
        with self.lock:
            store = self.opened.get(agent)
            if store is None:
                if not path.exists():
                    raise NotFound(f"agent: no agent {agent!r} in site {self.site!r} (agents: "
                                   f"{', '.join(self.names()) or 'none'})")
                store = self.opened[agent] = open_store(path, readonly=self.readonly)
                for listener in self.listeners:
                    listener(store)
        return store

    def close(self) -> None:
        with self.lock:
            for store in self.opened.values():
                store.close()
            self.opened.clear()
