"""``ORA_HOME`` (default ``~/.ora``): its sites, their agents, and new agent files."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidName
from .schema import create_database

SUFFIX = ".site.db"
_TASK = re.compile(r"^task[-_]")


def location(path: Path) -> tuple[str | None, str | None]:
    """(site, agent) for ``…/<site>/<agent>.site.db``, else (None, None)."""
    if path.name.endswith(SUFFIX):
        return path.parent.name or None, path.name[: -len(SUFFIX)] or None
    return None, None


def check_name(name: str, what: str = "name") -> str:
    """Refuse names that could leave their folder: ``/``, ``\\``, ``..``, a leading dot, NUL."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidName(f"{what} must not be empty")
    if "/" in name or "\\" in name or "\x00" in name:
        raise InvalidName(f"{what} {name!r} must not contain '/', '\\' or NUL")
    if name.startswith(".") or ".." in name:
        raise InvalidName(f"{what} {name!r} must not start with '.' or contain '..'")
    return name


@dataclass(frozen=True, slots=True)
class AgentFile:
    """One agent's memory file in a site."""

    site: str
    agent: str
    path: Path

    @property
    def is_task_agent(self) -> bool:
        """Spawned task agents are named ``task-…`` (the seed's ``task-123.site.db``)."""
        return bool(_TASK.match(self.agent))

    @property
    def label(self) -> str:
        """``site/agent``, for lists and messages."""
        return f"{self.site}/{self.agent}"


@dataclass(frozen=True, slots=True)
class Site:
    """One site folder and its agent files."""
    slug: str
    path: Path
    agents: tuple[AgentFile, ...]


class OraHome:
    """The root folder holding ``sites/<slug>/<agent>.site.db``."""

    def __init__(self, root: str | Path | None = None) -> None:
        if root is None:
            root = os.environ.get("ORA_HOME") or Path.home() / ".ora"
        self.root = Path(root).expanduser()

    @property
    def sites_dir(self) -> Path:
        """The ``sites`` folder inside the home."""
        return self.root / "sites"

    def exists(self) -> bool:
        """Whether the home has a ``sites`` folder."""
        return self.sites_dir.is_dir()

    def sites(self) -> list[Site]:
        """Every site folder with its agent files, sorted by name. Hidden folders are skipped."""
        if not self.sites_dir.is_dir():
            return []
        out = []
        for entry in sorted(self.sites_dir.iterdir()):
            if entry.is_dir() and not entry.name.startswith("."):
                out.append(Site(entry.name, entry, tuple(self._agents(entry))))
        return out

    def _agents(self, folder: Path) -> list[AgentFile]:
        files = sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIX) and p.is_file())
        return [AgentFile(folder.name, p.name[: -len(SUFFIX)], p) for p in files if not p.name.startswith(".")]

    def agents(self) -> list[AgentFile]:
        """Every agent file of every site."""
        return [agent for site in self.sites() for agent in site.agents]

    def agent_for(self, path: str | Path) -> AgentFile | None:
        """The agent whose file is ``path`` (compared resolved), or ``None`` for a file outside
        this home. The one answer the window's open, search hits, sidebar and promote use."""
        target = Path(path).expanduser().resolve()
        return next((agent for agent in self.agents() if agent.path.resolve() == target), None)

    def path_for(self, site: str, agent: str) -> Path:
        """The file of ``agent`` in ``site`` (names checked; the file need not exist)."""
        return self.sites_dir / check_name(site, "site") / f"{check_name(agent, 'agent')}{SUFFIX}"

    def create_agent(self, site: str, agent: str) -> Path:
        """Create a new agent file with the seed's init SQL; refuses to overwrite."""
        path = self.path_for(site, agent)
        create_database(path)
        return path

    def parent_of(self, task_agent: AgentFile) -> AgentFile | None:
        """The agent a task agent reports to: ``ora`` if present, else the site's first non-task agent."""
        site = next((s for s in self.sites() if s.slug == task_agent.site), None)
        if site is None:
            return None
        candidates = [a for a in site.agents if not a.is_task_agent]
        for agent in candidates:
            if agent.agent == "ora":
                return agent
        return candidates[0] if candidates else None
