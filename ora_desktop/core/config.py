"""Maintenance settings: ``config.toml`` in the user config directory (read with stdlib ``tomllib``).

Every setting has a built-in default; ``[schedule]``, ``[backup]``, ``[retention]`` and
``[daemon]`` override it for every site, ``[sites.<slug>.schedule]`` / ``[sites.<slug>.retention]``
for one site. :meth:`Config.effective` says where each value comes from::

    [schedule]            # "hourly", "daily", "weekly", "off", or "30s" / "15m" / "6h" / "2d"
    decay = "daily"
    cleanup = "hourly"
    backup = "daily"
    check = "weekly"

    [backup]
    dir = "~/ora-backups"  # default: <user data dir>/backups; relative = beside this file
    keep_last = 7          # plus the newest backup of each of the last keep_daily days
    keep_daily = 7         # and of each of the last keep_weekly weeks
    keep_weekly = 4
    keep_before_restore = 5  # copies a restore kept of the file it replaced (the newest; at least 1)

    [trash]
    keep_days = 30         # the purge-trash job forgets deleted memories after this; 0 = never

    [summarizer]           # optional: consolidate --summarizer endpoint (the extractive one is the default)
    url = "http://localhost:11434/v1"  # any OpenAI-compatible endpoint (POST {url}/chat/completions)
    model = "llama3.2"
    api_key_env = "OPENAI_API_KEY"     # the environment variable holding its key, if it needs one
    timeout = 60                       # seconds per request

    [sites.anwe-sh.retention]
    max_age_days = 90      # delete memories older than this (never importance 10), recoverably
    max_memories = 50000   # keep at most this many
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths, sync_settings
from .config_values import (  # re-exported: callers import them from here
    NAMED_INTERVALS as NAMED_INTERVALS,
)
from .config_values import (
    UNITS as UNITS,
)
from .config_values import (
    ConfigError as ConfigError,
)
from .config_values import (
    Setting as Setting,
)
from .config_values import (
    describe_interval as describe_interval,
)
from .config_values import (
    parse_interval as parse_interval,
)

JOB_NAMES = ("decay", "cleanup", "retention", "promote", "backup", "check", "purge-trash", "sync", "consolidate")
DEFAULT_SCHEDULE = {
    "decay": "daily", "cleanup": "hourly", "retention": "daily", "promote": "hourly",
    "backup": "daily", "check": "weekly", "purge-trash": "daily",
    "sync": "15m",  # only where a [sync] url is set (see core/sync/settings.py)
    "consolidate": "off",  # rewrites memories into summaries: only when the user schedules it
}
DEFAULT_TRASH = {"keep_days": 30}
# [embeddings]: which model gives memories their vectors (see core.embeddings).
EMBEDDING_PROVIDERS = ("wordllama", "http", "fastembed")
EMBEDDING_KEYS = ("provider", "model", "url", "api_key", "key_env", "dimensions")
DEFAULT_BACKUP = {"keep_last": 7, "keep_daily": 7, "keep_weekly": 4, "keep_before_restore": 5}
ROTATION_KEYS = ("keep_last", "keep_daily", "keep_weekly")  # the regular backups' rotation rule
DEFAULT_DAEMON = {"rescan": "1m"}
RETENTION_KEYS = ("max_age_days", "max_memories")  # RetentionPolicy field order
# [summarizer]: an optional OpenAI-compatible chat endpoint that writes consolidation summaries.
SUMMARIZER_KEYS = ("url", "model", "api_key_env", "timeout")
DEFAULT_SUMMARIZER_TIMEOUT = 60.0
DEFAULT = "default"


def config_path() -> Path:
    """``$ORA_DESKTOP_CONFIG`` or ``<user config dir>/config.toml``."""
    return Path(os.environ.get("ORA_DESKTOP_CONFIG") or paths.config_dir() / "config.toml").expanduser()


@dataclass(frozen=True)
class RetentionPolicy:
    """Delete memories older than ``max_age_days`` and/or beyond ``max_memories`` (None = no limit)."""

    max_age_days: float | None = None
    max_memories: int | None = None

    @property
    def active(self) -> bool:
        return self.max_age_days is not None or self.max_memories is not None


@dataclass(frozen=True)
class Config:
    """The parsed config file (``data`` is the raw TOML table; empty when there is no file)."""

    path: Path
    data: dict[str, Any] = field(default_factory=dict)
    exists: bool = False

    @classmethod
    def load(cls, path: str | Path | None = None) -> Config:
        """Read and validate ``config.toml``; a missing file means all defaults."""
        path = Path(path).expanduser() if path else config_path()
        if not path.exists():
            return cls(path, {}, False)
        try:
            with path.open("rb") as handle:
                data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                              f"{exc.start}); save it as UTF-8") from exc
        except OSError as exc:
            raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
        config = cls(path, data, True)
        config.validate()
        return config

    @classmethod
    def defaults(cls) -> Config:
        """Built-in defaults only (no file)."""
        return cls(Path("(defaults)"), {}, False)

    # ------------------------------------------------------------------ lookups
    def _table(self, *keys: str) -> dict[str, Any]:
        table: Any = self.data
        for key in keys:
            table = table.get(key, {}) if isinstance(table, dict) else {}
        return table if isinstance(table, dict) else {}

    def _source(self, *keys: str) -> str:
        return f"{self.path} [{'.'.join(keys)}]"

    def schedule(self, job: str, site: str | None = None) -> Setting:
        """How often ``job`` runs (seconds, ``None`` = off) for ``site``, and where that comes from."""
        if job not in DEFAULT_SCHEDULE:
            raise ConfigError(f"unknown job {job!r} (jobs: {', '.join(JOB_NAMES)})")
        for keys in ((("sites", site, "schedule"),) if site else ()) + (("schedule",),):
            table = self._table(*keys)
            if job in table:
                where = self._source(*keys)
                return Setting(job, parse_interval(table[job], f"{where} {job}"), where)
        if job == "sync":  # [sync] interval

            return sync_settings.interval(self, site)
        return Setting(job, parse_interval(DEFAULT_SCHEDULE[job]), DEFAULT)

    def retention(self, site: str | None = None) -> RetentionPolicy:
        """The retention policy for ``site`` (site table overrides the global one, key by key)."""
        return RetentionPolicy(*(s.value for s in self._retention_settings(site)))

    def _retention_settings(self, site: str | None) -> list[Setting]:
        out = []
        for key in RETENTION_KEYS:
            setting = Setting(key, None, DEFAULT)
            for keys in ((("sites", site, "retention"),) if site else ()) + (("retention",),):
                table = self._table(*keys)
                if key in table:
                    setting = Setting(key, _positive(table[key], f"{self._source(*keys)} {key}",
                                                     integer=key == "max_memories"), self._source(*keys))
                    break
            out.append(setting)
        return out

    def backup_setting(self, key: str) -> Setting:
        """``dir``, ``keep_last``, ``keep_daily``, ``keep_weekly`` or ``keep_before_restore`` with its source."""
        table = self._table("backup")
        if key == "dir":
            if "dir" in table:
                folder = Path(str(table["dir"])).expanduser()
                if not folder.is_absolute():  # relative to the config file, not to wherever we run
                    folder = self.path.parent / folder
                return Setting("dir", folder, self._source("backup"))
            return Setting("dir", paths.data_dir() / "backups", DEFAULT)
        if key in table:
            value = table[key]
            least = 1 if key == "keep_before_restore" else 0  # a restore always keeps the file it replaced
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"{self._source('backup')} {key}: {value!r} must be a whole number >= {least}")
            return Setting(key, value, self._source("backup"))
        return Setting(key, DEFAULT_BACKUP[key], DEFAULT)

    def trash_keep_days(self) -> Setting:
        """How many days the trash keeps deleted memories before ``purge-trash`` forgets them
        (``None`` = forever, from ``keep_days = 0``)."""
        table = self._table("trash")
        if "keep_days" in table:
            value = table["keep_days"]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"{self._source('trash')} keep_days: {value!r} must be a number of days >= 0 "
                                  "(0 = never purge automatically)")
            return Setting("keep_days", float(value) or None, self._source("trash"))
        return Setting("keep_days", float(DEFAULT_TRASH["keep_days"]), DEFAULT)

    def summarizer(self) -> dict[str, Any] | None:
        """The ``[summarizer]`` endpoint (``url``, ``model``, ``api_key_env``, ``timeout``), or
        ``None`` when the file has no such table. A bad value raises ``ConfigError`` naming it."""
        table = self._table("summarizer")
        if not table:
            return None
        where = self._source("summarizer")
        url, model = table.get("url"), table.get("model")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where} url: {url!r} must be an http:// or https:// address of an OpenAI-compatible "
                              "endpoint, e.g. \"http://localhost:11434/v1\"")
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{where} model: {model!r} must name the endpoint's model, e.g. \"llama3.2\"")
        key_env = table.get("api_key_env")
        if key_env is not None and (not isinstance(key_env, str) or not key_env.strip()):
            raise ConfigError(f"{where} api_key_env: {key_env!r} must name an environment variable")
        timeout = table.get("timeout", DEFAULT_SUMMARIZER_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigError(f"{where} timeout: {timeout!r} must be a positive number of seconds")
        return {"url": url.rstrip("/"), "model": model.strip(), "api_key_env": key_env, "timeout": float(timeout),
                "source": where}

    @property
    def backup_dir(self) -> Path:
        return self.backup_setting("dir").value

    def rescan_seconds(self) -> Setting:
        """How often the scheduler looks for new sites and agents under ``ORA_HOME``."""
        table = self._table("daemon")
        if "rescan" in table:
            where = self._source("daemon")
            return Setting("rescan", parse_interval(table["rescan"], f"{where} rescan") or 60, where)
        return Setting("rescan", parse_interval(DEFAULT_DAEMON["rescan"]), DEFAULT)

    def site_slugs(self) -> list[str]:
        return sorted(self._table("sites"))

    # ------------------------------------------------------------------ reporting
    def validate(self) -> None:
        """Parse every value once so a bad one is reported at load time, naming file and key."""
        known = {"schedule", "backup", "retention", "daemon", "sites", "trash", "sync", "embeddings", "summarizer"}
        unknown = sorted(set(self.data) - known)
        if unknown:
            raise ConfigError(f"{self.path}: unknown table(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        for job in self._table("schedule"):
            if job not in DEFAULT_SCHEDULE:
                raise ConfigError(f"{self._source('schedule')}: unknown job {job!r} (jobs: {', '.join(JOB_NAMES)})")
        tables = {("backup",): {"dir", *DEFAULT_BACKUP}, ("retention",): set(RETENTION_KEYS),
                  ("daemon",): set(DEFAULT_DAEMON), ("trash",): set(DEFAULT_TRASH),
                  ("embeddings",): set(EMBEDDING_KEYS), ("summarizer",): set(SUMMARIZER_KEYS)}
        provider = self._table("embeddings").get("provider", "wordllama")
        if provider not in EMBEDDING_PROVIDERS:
            raise ConfigError(f"{self._source('embeddings')}: provider {provider!r} is not one of "
                              f"{', '.join(EMBEDDING_PROVIDERS)}")
        for site in self.site_slugs():
            extra = set(self._table("sites", site)) - {"schedule", "retention", "sync"}
            if extra:
                raise ConfigError(f"{self._source('sites', site)}: unknown table(s) {', '.join(sorted(extra))} "
                                  "(a site may have schedule, retention and sync)")
            tables[("sites", site, "retention")] = set(RETENTION_KEYS)
        for keys, allowed in tables.items():
            unknown_keys = sorted(set(self._table(*keys)) - allowed)
            if unknown_keys:
                raise ConfigError(f"{self._source(*keys)}: unknown setting(s) {', '.join(unknown_keys)} "
                                  f"(known: {', '.join(sorted(allowed))})")
        for site in [None, *self.site_slugs()]:
            for job in JOB_NAMES:
                self.schedule(job, site)
            self.retention(site)
            if site is not None:
                for job in self._table("sites", site, "schedule"):
                    if job not in DEFAULT_SCHEDULE:
                        raise ConfigError(f"{self._source('sites', site, 'schedule')}: unknown job {job!r}")
        for key in ("dir", *DEFAULT_BACKUP):
            self.backup_setting(key)
        if not any(self.backup_setting(key).value for key in ROTATION_KEYS):
            raise ConfigError(f"{self._source('backup')}: keep_last, keep_daily and keep_weekly are all 0, which "
                              "would keep no backup at all; set keep_last to 1 or more")
        self.rescan_seconds()
        self.trash_keep_days()
        self.summarizer()

        sync_settings.validate(self)

    @property
    def exposure_warning(self) -> str | None:
        """A warning when other users can read or write the config file (it may hold a sync URL)."""
        if not self.exists:
            return None
        try:
            mode = self.path.stat().st_mode & 0o777
        except OSError:
            return None
        if mode & 0o066:
            return (f"warning: {self.path} can be read or written by other users (mode {mode:o}); "
                    f"it may hold secrets — run: chmod 600 {self.path}")
        return None

    def effective(self, sites: list[str] | None = None) -> list[Setting]:
        """Every effective setting (globally, then per site) with where it comes from."""
        out: list[Setting] = []
        for job in JOB_NAMES:
            s = self.schedule(job)
            out.append(Setting(f"schedule.{job}", describe_interval(s.value), s.source))
        for key in ("dir", *DEFAULT_BACKUP):
            s = self.backup_setting(key)
            out.append(Setting(f"backup.{key}", s.value, s.source))
        for s in self._retention_settings(None):
            out.append(Setting(f"retention.{s.key}", s.value, s.source))
        s = self.rescan_seconds()
        out.append(Setting("daemon.rescan", describe_interval(s.value), s.source))
        s = self.trash_keep_days()
        out.append(Setting("trash.keep_days", s.value, s.source))
        summarizer = self.summarizer() or {}
        out += [Setting(f"summarizer.{key}", summarizer[key], summarizer["source"])
                for key in SUMMARIZER_KEYS if summarizer.get(key) is not None]
        for site in sorted(set(sites or []) | set(self.site_slugs())):
            for job in JOB_NAMES:
                s = self.schedule(job, site)
                if s.source.endswith(f"[sites.{site}.schedule]"):
                    out.append(Setting(f"sites.{site}.schedule.{job}", describe_interval(s.value), s.source))
            for s in self._retention_settings(site):
                if s.source.endswith(f"[sites.{site}.retention]"):
                    out.append(Setting(f"sites.{site}.retention.{s.key}", s.value, s.source))
        return out


def _positive(value: Any, where: str, integer: bool = False) -> float | int | None:
    if value in (0, None, "off"):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (integer and value != int(value)):
        kind = "a whole number" if integer else "a number"
        raise ConfigError(f"{where}: {value!r} must be {kind} >= 0 (0 = no limit)")
    return int(value) if integer else float(value)
