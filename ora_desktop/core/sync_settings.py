"""Sync settings in ``config.toml``: the server URL, how often, and which sites/agents take part::

    [sync]
    url = "postgresql://ora@db.example.org/ora?sslmode=require"   # password: URL, PGPASSWORD or ~/.pgpass
    interval = "15m"          # how often the scheduler syncs (default 15m when a url is set)
    sites = ["anwe-sh"]       # default: every site
    agents = ["ora"]          # default: every agent

    [sites.shop-eu.sync]
    enabled = false           # this site never syncs
    # url / interval / agents override the [sync] values for this site
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from .config_values import ConfigError, Setting, parse_interval

if TYPE_CHECKING:
    from .config import Config

DEFAULT_INTERVAL = "15m"
KEYS = {"url", "interval", "sites", "agents"}
SITE_KEYS = {"url", "interval", "agents", "enabled"}
_OVERRIDE = "_url_override"  # set by with_url(); never read from a file


def _table(config: Config, site: str | None) -> dict[str, Any]:
    table = config.data.get("sync", {}) if site is None else config.data.get("sites", {}).get(site, {}).get("sync", {})
    return table if isinstance(table, dict) else {}


def _lookup(config: Config, key: str, site: str | None) -> Setting | None:
    for where in ((site,) if site else ()) + (None,):
        table = _table(config, where)
        if key in table:
            name = f"sites.{where}.sync" if where else "sync"
            return Setting(key, table[key], f"{config.path} [{name}]")
    return None


def url_for(config: Config, site: str | None = None) -> str | None:
    """The server URL for ``site`` (``with_url`` override, then the site's, then ``[sync]``, then
    ``$ORA_DESKTOP_SYNC_URL``); ``None`` when sync is not set up."""
    override = config.data.get(_OVERRIDE)
    if override:
        return str(override)
    found = _lookup(config, "url", site)
    if found is not None and found.value:
        return str(found.value)
    return os.environ.get("ORA_DESKTOP_SYNC_URL") or None


def holds_password(url: str) -> bool:
    """Whether a libpq connection string holds a password: ``postgresql://user:PW@…``,
    ``?password=…`` in a URL, or ``password=…`` in the ``key=value`` form."""
    text = url.strip()
    if re.match(r"^postgres(ql)?://", text, re.IGNORECASE):
        parts = urlsplit(text)
        userinfo = parts.netloc.rpartition("@")[0]
        return ":" in userinfo or bool(parse_qs(parts.query).get("password"))
    return re.search(r"(^|\s)password\s*=", text, re.IGNORECASE) is not None


def with_url(config: Config, url: str) -> Config:
    """``config`` with ``url`` winning over every configured one (``--url`` on the command line)."""
    return replace(config, data={**config.data, _OVERRIDE: url})


def takes_part(config: Config, site: str, agent: str) -> bool:
    """Whether the ``agent`` of ``site`` is synced by ``--all`` and by the scheduler."""
    if _table(config, site).get("enabled") is False:
        return False
    sites = _table(config, None).get("sites")
    if sites is not None and site not in sites:
        return False
    agents = _lookup(config, "agents", site)
    return agents is None or agent in agents.value


def interval(config: Config, site: str | None = None) -> Setting:
    """How often the scheduler syncs ``site``: seconds (``None`` = off) and where that comes from."""
    found = _lookup(config, "interval", site)
    if found is not None:
        return Setting("interval", parse_interval(found.value, f"{found.source} interval"), found.source)
    return Setting("interval", parse_interval(DEFAULT_INTERVAL), "default")


def validate(config: Config) -> None:
    """Check the ``[sync]`` tables once at load time (a bad value names the file and the key)."""
    sites = [None, *config.site_slugs()]
    for site in sites:
        table = _table(config, site)
        allowed = KEYS if site is None else SITE_KEYS
        where = f"{config.path} [{'sync' if site is None else f'sites.{site}.sync'}]"
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise ConfigError(f"{where}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(allowed))})")
        if "url" in table and not isinstance(table["url"], str):
            raise ConfigError(f"{where} url: must be a text like \"postgresql://user@host/db\"")
        for key in ("sites", "agents"):
            if key in table and (not isinstance(table[key], list) or not all(isinstance(v, str) for v in table[key])):
                raise ConfigError(f"{where} {key}: must be a list of names")
        if "enabled" in table and not isinstance(table["enabled"], bool):
            raise ConfigError(f"{where} enabled: must be true or false")
        interval(config, site)
