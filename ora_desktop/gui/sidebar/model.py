"""What the sidebar shows about each file, gathered off the GUI thread (no Qt here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core import AgentFile, CorruptFile, FileProblem, OraError, OraHome, Store
from ...core.operations.stats import file_health, last_check_damage
from ...core.schema import RECALL_THRESHOLD


@dataclass(frozen=True)
class FileInfo:
    """One agent file: its memory count and health, or why it cannot be opened."""

    path: Path
    label: str
    agent: AgentFile | None = None
    count: int | None = None
    average_health: float | None = None
    low_health: int = 0
    error: str | None = None
    warnings: tuple[str, ...] = ()
    #: Why the file is damaged (it failed to open as damaged, or its last check found damage).
    damaged: str | None = None

    @property
    def is_task_agent(self) -> bool:
        return bool(self.agent and self.agent.is_task_agent)

    @property
    def ok(self) -> bool:
        return self.error is None

    def tooltip(self) -> str:
        salvage = "\nRight-click › Recover… salvages its memories into a new file"
        if self.error:
            return f"Cannot be opened: {self.error}" + (salvage if self.damaged else "")
        lines = [str(self.path), f"{self.count:,} memories (superseded ones included)"]
        if self.average_health is not None:
            lines.append(f"Average health {self.average_health:.2f}; {self.low_health:,} at or below "
                         f"the recall threshold {RECALL_THRESHOLD}")
        if self.is_task_agent:
            lines.append("A spawned task agent")
        lines.extend(f"Note: {w}" for w in self.warnings)
        if self.damaged:
            lines.insert(0, f"Damaged: {self.damaged}{salvage}")
        return "\n".join(lines)


@dataclass(frozen=True)
class SiteInfo:
    slug: str
    path: Path
    files: tuple[FileInfo, ...]


def file_info(store_for, path: Path, label: str, agent: AgentFile | None = None) -> FileInfo:  # noqa: ANN001
    """Count and health of one file through ``store_for(path) -> Store`` (errors become words)."""
    try:
        health = file_health(store_for(path))
    except CorruptFile as exc:
        return FileInfo(path, label, agent, error=exc.problem, damaged=exc.problem)
    except OraError as exc:
        return FileInfo(path, label, agent, error=exc.problem if isinstance(exc, FileProblem) else str(exc))
    except Exception as exc:  # a file we cannot read at all must not break the sidebar
        return FileInfo(path, label, agent, error=f"{type(exc).__name__}: {exc}")
    return FileInfo(path, label, agent, count=health.count, average_health=health.average_health,
                    low_health=health.low_health, warnings=health.warnings, damaged=last_check_damage(path))


def file_info_in(store: Store, path: Path, label: str, agent: AgentFile | None = None) -> FileInfo:
    """:func:`file_info` of ``path`` read through ``store`` (its open store)."""
    return file_info(lambda _path: store, path, label, agent)


def scan(home: OraHome, store_for, extra: list[Path]) -> tuple[list[SiteInfo], list[FileInfo]]:  # noqa: ANN001
    """Every site of ``home`` with its files' info, and the info of ``extra`` files opened from elsewhere."""
    sites = []
    for site in home.sites():
        files = tuple(file_info(store_for, a.path, a.agent, a) for a in site.agents)
        sites.append(SiteInfo(site.slug, site.path, files))
    others = [file_info(store_for, p, p.name) for p in extra]
    return sites, others
