"""Realistic demo data: agent files and a whole ``ORA_HOME`` tree, fast and deterministic.

Used by ``ora-desktop demo``, the app's first run, the tests and the benchmarks (a
1,000,000-memory file is written in seconds). Files are created with the seed's init SQL
verbatim, then filled with plain ``sqlite3`` ``executemany`` in one transaction.

What a file holds: all five types; importance 1-10 bunched in the middle; health 0-1 with a
cluster of sickly memories; never-accessed and often-accessed rows; ``created_at`` over about
two years in three formats (mostly ``YYYY-MM-DD HH:MM:SS``, some ``…T…000Z``, a few ``+02:00``);
expired and soon-expiring rows; pending, synced (clean and dirty) and local-only rows;
``related_to`` arrays (some dangling ids, a few malformed); superseded chains; content with code
fences, file paths, shell commands, function names, error types, URLs, non-Latin text and emoji.
Output is the same for the same ``seed`` and ``now`` (``now`` defaults to today, midnight UTC).
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path

from .errors import OraError
from .home import OraHome
from .private import touch_private
from .schema import INIT_SQL, SEED_INDEXES

DAY = 86400
SPAN_DAYS = 730
BATCH = 50000

# (site, agent, share of the memories). ``task-123`` is a spawned task agent.
DEMO_AGENTS: tuple[tuple[str, str, float], ...] = (
    ("anwe-sh", "ora", 0.40),
    ("anwe-sh", "writer", 0.15),
    ("anwe-sh", "task-123", 0.03),
    ("docs-portal", "ora", 0.15),
    ("docs-portal", "researcher", 0.10),
    ("shop-eu", "ora", 0.12),
    ("shop-eu", "support", 0.05),
)

_INSERT = (
    "INSERT INTO memories (id, content, type, importance, access_count, last_accessed_at, "
    "health_score, related_to, superseded_by, created_at, updated_at, expires_at, synced_at, "
    "sync_status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)

# ---------------------------------------------------------------------------- vocabulary
COMPONENTS = ("checkout", "search index", "newsletter", "deploy pipeline", "auth service", "image CDN",
              "billing webhook", "sitemap", "i18n layer", "cache", "rate limiter", "admin panel",
              "payment gateway", "analytics", "backup job", "staging database", "contact form")
PATHS = ("src/app.ts", "src/routes/checkout.ts", "src/lib/cache.py", "app/models/order.py",
         "config/deploy.yml", "docs/architecture.md", "scripts/migrate.sh", "web/static/main.css",
         "api/handlers/webhook.go", "tests/test_billing.py", "src/components/Cart.tsx",
         ".github/workflows/ci.yml", "infra/terraform/main.tf", "package.json", "pyproject.toml")
FUNCTIONS = ("handleCheckout", "parse_invoice", "renderSitemap", "sync_inventory", "fetchUser",
             "build_index", "sendNewsletter", "validate_coupon", "resize_image", "computeTax",
             "refresh_token", "loadTranslations", "retry_payment", "normalize_slug")
ERRORS = ("TypeError", "KeyError", "ValueError", "ReferenceError", "IndexError", "TimeoutError",
          "AttributeError", "PermissionError", "ConnectionResetError", "SyntaxError",
          "UnicodeDecodeError", "sqlite3.OperationalError")
COMMANDS = ("npm run build", "pytest -q tests/", "git push origin main", "docker compose up -d",
            "make deploy ENV=staging", "pip install -e .", "rsync -avz dist/ web:/srv/site",
            "curl -sS https://api.anwe.sh/health", "psql -c 'VACUUM ANALYZE'", "yarn test --watch",
            "kubectl rollout restart deploy/web", "sqlite3 ora.site.db '.schema'")
URLS = ("https://anwe.sh/blog", "https://docs.anwe.sh/guide/setup", "https://shop.example.eu/cart",
        "https://github.com/anwe/site/issues/42", "https://status.anwe.sh", "https://stripe.com/docs/webhooks",
        "https://developer.mozilla.org/en-US/docs/Web/API/Fetch_API")
PEOPLE = ("Mara", "the owner", "Kenji", "Eleni", "Dmitri", "the editor", "support", "Amélie")
PREFERENCES = ("short answers with code first", "British spelling", "dark mode screenshots",
               "tabs over spaces in Go files", "no emoji in commit messages", "ISO dates (2025-01-14)",
               "TypeScript strict mode", "metric units", "a weekly summary on Fridays",
               "pull requests under 300 lines", "prices shown with VAT", "plain-language release notes")
TOPICS = ("pricing page copy", "the migration to Postgres", "flaky CI runs", "SEO for product pages",
          "GDPR cookie banner", "the Japanese translation", "image sizes on mobile", "search relevance",
          "webhook retries", "newsletter signup drop", "dark mode contrast", "checkout abandonment")
ACTIONS = ("ship it behind a feature flag", "revisit next sprint", "add a regression test",
           "roll back and investigate", "write a migration guide", "ask the owner before changing it",
           "split the PR in two", "measure first, then optimise")
NON_LATIN = ("日本語の翻訳はまだ途中です。", "ユーザーは短い返事を好む。", "Η μετάφραση στα Ελληνικά είναι έτοιμη.",
             "Ο πελάτης ζήτησε επιστροφή χρημάτων.", "Пользователь предпочитает русский интерфейс.",
             "Ошибка при оплате картой.", "العميل يفضل الردود القصيرة", "中文页面需要重新审核。",
             "Déjà vu: the naïve café résumé bug again ☕", "Deploy went fine 🎉🚀", "Build broke again 🔥🐛",
             "한국어 지원 요청이 들어왔다.")


def _code_block(rng: random.Random) -> str:
    fn, err = rng.choice(FUNCTIONS), rng.choice(ERRORS)
    if rng.random() < 0.5:
        return (f"```python\ndef {fn}(order, *, retries=3):\n    if order is None:\n"
                f"        raise {err}(\"order missing\")\n    return order.total\n```")
    return (f"```ts\nexport async function {fn}(id: string): Promise<void> {{\n"
            f"  const res = await fetch(`/api/items/${{id}}`);\n"
            f"  if (!res.ok) throw new {err}('bad status ' + res.status);\n}}\n```")


def _head(kind: str, rng: random.Random) -> str:
    """One first line (and maybe body) of a memory of type ``kind``."""
    c, p, f, e = rng.choice(COMPONENTS), rng.choice(PATHS), rng.choice(FUNCTIONS), rng.choice(ERRORS)
    cmd, url, who = rng.choice(COMMANDS), rng.choice(URLS), rng.choice(PEOPLE)
    if kind == "fact":
        return rng.choice((
            f"The {c} lives in {p}; {f}() is the entry point.",
            f"Deploys of the {c} go out with `{cmd}`.",
            f"The {c} raises {e} when the payload has no currency field.",
            f"Docs for the {c}: {url}",
            f"The {c} config is read from {p} at startup.",
            f"{who} owns the {c}; ask before touching {p}.",
        ))
    if kind == "preference":
        return rng.choice((
            f"{who} prefers {rng.choice(PREFERENCES)}.",
            f"Preference: {rng.choice(PREFERENCES)} for anything about the {c}.",
            f"Always run `{cmd}` before proposing a change to {p}.",
        ))
    if kind == "context":
        return rng.choice((
            f"Background: the {c} was rewritten last quarter after repeated {e} reports.",
            f"Context for {rng.choice(TOPICS)}: traffic doubled, the {c} is the bottleneck.",
            f"The site runs on a single VPS; the {c} shares it with the {rng.choice(COMPONENTS)}.",
            f"Background reading: {url}",
        ))
    if kind == "task":
        return rng.choice((
            f"TODO: fix {e} in {f}() ({p}), then run `{cmd}`.",
            f"Task: migrate the {c} and update {p}.",
            f"Follow up with {who} about {rng.choice(TOPICS)}.",
            f"Investigate {e} reported at {url}",
        ))
    return rng.choice((
        f"Conversation summary: {who} asked about {rng.choice(TOPICS)}; we agreed to {rng.choice(ACTIONS)}.",
        f"Chat recap: debugging {e} in {f}(); the fix touched {p}.",
        f"Discussed {rng.choice(TOPICS)} with {who}. Outcome: {rng.choice(ACTIONS)}.",
    ))


def _tails(rng: random.Random) -> list[str]:
    """Optional extra lines appended to a head: mostly nothing, sometimes code or other scripts."""
    tails = [""] * 60
    for _ in range(12):
        tails.append("\n\n" + _code_block(rng))
    for line in NON_LATIN:
        tails.append("\n" + line)
    for _ in range(10):
        tails.append(f"\nSteps:\n1. `{rng.choice(COMMANDS)}`\n2. check {rng.choice(PATHS)}\n"
                     f"3. watch for {rng.choice(ERRORS)}")
    for _ in range(6):
        tails.append(f" See {rng.choice(URLS)} and {rng.choice(PATHS)}.")
    return tails


def _weighted(pairs: tuple[tuple[object, int], ...]) -> list:
    return [value for value, weight in pairs for _ in range(weight)]


TYPE_TABLE = _weighted((("fact", 35), ("context", 20), ("conversation", 20), ("task", 15), ("preference", 10)))
IMPORTANCE_TABLE = _weighted(((1, 2), (2, 4), (3, 8), (4, 14), (5, 20), (6, 18), (7, 14), (8, 10), (9, 6), (10, 4)))


class _Clock:
    """Second offsets from a base day to text, with precomputed day and time-of-day strings."""

    def __init__(self, now: datetime) -> None:
        today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
        self.base = today - timedelta(days=SPAN_DAYS)
        self.now = SPAN_DAYS * DAY + int((now.astimezone(UTC).replace(tzinfo=None) - today).total_seconds())
        days = SPAN_DAYS + 400
        self.days = [(self.base + timedelta(days=d)).strftime("%Y-%m-%d") for d in range(days)]
        self.times = [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(DAY)]

    def sql(self, sec: int) -> str:
        return f"{self.days[sec // DAY]} {self.times[sec % DAY]}"

    def iso(self, sec: int) -> str:
        return f"{self.days[sec // DAY]}T{self.times[sec % DAY]}.000Z"

    def plus2(self, sec: int) -> str:
        local = sec + 7200
        return f"{self.days[local // DAY]}T{self.times[local % DAY]}+02:00"


def _rows(memories: int, seed: int, clock: _Clock) -> Iterator[tuple]:
    """The rows of one agent file, in id order."""
    rng = random.Random(seed)
    rand = rng.random
    # Kinds in their first-seen order, never a set of strings: a set's order follows the hash seed.
    heads = {kind: [_head(kind, rng) for _ in range(400)] for kind in dict.fromkeys(TYPE_TABLE)}
    tails = _tails(rng)
    n_tails = len(tails)
    now, span = clock.now, clock.now - DAY
    sql, iso, plus2 = clock.sql, clock.iso, clock.plus2
    prefix = f"mem-{seed}-"
    last_created = 0
    for i in range(memories):
        kind = TYPE_TABLE[int(rand() * 100)]
        pool = heads[kind]
        content = pool[int(rand() * 400)] + tails[int(rand() * n_tails)]
        importance = IMPORTANCE_TABLE[int(rand() * 100)]

        # Supersession chains of three (i -> i+1 -> i+2) wherever all three fit, each member
        # created after the one it supersedes (so the newest of a chain is also the live one).
        phase = i % 40
        in_chain = phase < 3 and i - phase + 2 < memories
        superseded_by = None
        if in_chain and phase in (0, 1):
            superseded_by = f"{prefix}{i + 1:07d}"
            content = ("Revised: " if phase == 1 else "") + content
        if in_chain and phase in (1, 2):
            created = min(now - 60, last_created + 3600 + int(rand() * 20 * DAY))
            if phase == 2:
                content = "Latest: " + content
        elif in_chain:  # a chain's first member: early enough that its successors fit before now
            created = int((rand() ** 0.8) * (span - 60 * DAY))
        else:
            created = int((rand() ** 0.8) * span)
        if i % 1000 == 500:
            superseded_by = f"{prefix}deleted-{i}"  # dangling: its successor was removed
        last_created = created

        r = rand()
        created_sql = sql(created)
        created_text = created_sql if r < 0.85 else (iso(created) if r < 0.97 else plus2(created))
        updated = created if rand() < 0.6 else created + int(rand() * (now - created))

        if rand() < 0.3:
            access_count, last_accessed = 0, None
        else:
            access_count = 1 + int(rand() ** 3 * 250)
            last_accessed = sql(created + int(rand() * (now - created)))

        r = rand()
        health = round(r * 2.5, 2) if r < 0.12 else round(1.0 - (rand() ** 2) * 0.7, 2)

        r = rand()
        if r < 0.8:
            expires = None
        elif r < 0.88:
            expires = sql(created + int(rand() * (now - created)))  # already expired
        elif r < 0.92:
            expires = sql(now + 600 + int(rand() * 7 * DAY))  # within the next week
        else:
            stamp = now + int((8 + rand() * 350) * DAY)
            expires = sql(stamp) if r < 0.98 else iso(stamp)

        r = rand()
        if r < 0.5:
            status = "synced"
            if rand() < 0.2:  # dirty: edited after the last sync
                if updated == created:
                    updated = created + 1 + int(rand() * DAY)
                synced = sql(max(created, updated - 1 - int(rand() * DAY)))
            else:
                synced = sql(min(now, updated + int(rand() * DAY)))
        elif r < 0.85:
            status = "pending"
            synced = None
            if rand() >= 0.7 and updated > created:  # synced once, edited since
                synced = sql(max(created, updated - 1 - int(rand() * 30 * DAY)))
        else:
            status, synced = "local_only", None

        related = None
        if i % 500 == 7:
            before = f"{prefix}{i - 1:07d}"
            related = f'["{before}", ' if rand() < 0.5 else f"{before},{prefix}{i - 2:07d}"
        elif rand() < 0.3 and i > 3:
            picks = [f"{prefix}{int(rand() * i):07d}" for _ in range(1 + int(rand() * 3))]
            if rand() < 0.12:
                picks.append(f"{prefix}gone-{int(rand() * 10**6)}")
            related = '["' + '", "'.join(dict.fromkeys(picks)) + '"]'  # json.dumps, faster

        yield (f"{prefix}{i:07d}", content, kind, importance, access_count, last_accessed, health, related,
               superseded_by, created_text, created_sql if updated == created else sql(updated), expires, synced,
               status)


def write_agent(path: Path, memories: int, seed: int = 0, task: bool = False,
                now: datetime | None = None) -> int:
    """Create ``path`` with the seed's init SQL and ``memories`` realistic rows; returns the count.

    With ``task=True`` the file also gets a completed ``task_context`` row. Refuses to
    overwrite an existing file. ``now`` anchors expiry and age (default: today, 00:00 UTC).
    """
    path = Path(path)
    if memories < 0:
        raise OraError(f"memories: {memories} is negative")
    if path.exists():
        raise OraError(f"{path}: already exists; the demo never overwrites a file")
    clock = _Clock(now or datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0))
    try:
        touch_private(path)  # 0600, folders 0700: demo memories are memories
        conn = sqlite3.connect(path, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        culprit = getattr(exc, "filename", None)
        reason = f"{exc.strerror}: {culprit}" if isinstance(exc, OSError) and culprit else str(exc)
        raise OraError(f"{path}: cannot create the file ({reason})") from exc
    try:
        _fill(conn, memories, seed, task, clock)
    except BaseException as exc:
        conn.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        if isinstance(exc, (OSError, sqlite3.Error)):
            raise OraError(f"{path}: could not write the demo data ({exc}); nothing was kept") from exc
        raise
    conn.close()
    return memories


def _fill(conn: sqlite3.Connection, memories: int, seed: int, task: bool, clock: _Clock) -> None:
    """Fill a brand-new file: the seed's init SQL, then the rows in one transaction."""
    conn.executescript(INIT_SQL)
    # Only for our own brand-new file, which nobody else can be reading yet: no journal, no
    # fsync, and the seed's indexes built once at the end (running INIT_SQL again recreates
    # exactly them and sets WAL back), which is much faster than updating them row by row.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -131072")
    for name in SEED_INDEXES:
        conn.execute(f"DROP INDEX {name}")
    conn.execute("BEGIN")
    for batch in _batches(_rows(memories, seed, clock)):
        conn.executemany(_INSERT, batch)
    if task:
        _write_task(conn, clock, seed)
    conn.execute("COMMIT")
    conn.executescript(INIT_SQL)
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _batches(rows: Iterator[tuple]) -> Iterator[list[tuple]]:
    """Rows in lists of ``BATCH`` for ``executemany``.

    (Making them in a second thread does not help: the GIL hand-off on every ``sqlite3_step``
    makes it slower.)
    """
    while batch := list(islice(rows, BATCH)):
        yield batch


def _write_task(conn: sqlite3.Connection, clock: _Clock, seed: int) -> None:
    started = clock.now - 3 * DAY
    conn.execute(
        "INSERT INTO task_context (id, task_description, input_data, output_data, status, created_at, "
        "completed_at) VALUES (?, ?, ?, ?, 'completed', ?, ?)",
        (
            "task-123",
            "Audit the checkout flow for i18n bugs (日本語, Ελληνικά, русский) and report findings",
            json.dumps({"site": "anwe-sh", "pages": ["/cart", "/checkout", "/thanks"], "locales": ["ja", "el", "ru"],
                        "seed": seed}),
            json.dumps({"findings": 3, "fixed": ["src/routes/checkout.ts"], "open": ["TypeError in computeTax()"],
                        "summary": "Currency symbols were hard-coded; two pages lacked translations."},
                       ensure_ascii=False),
            clock.sql(started),
            clock.sql(started + 5 * 3600),
        ),
    )


def write_demo_home(root: Path, memories: int = 2000, seed: int = 0, now: datetime | None = None) -> list[Path]:
    """Write a demo ``ORA_HOME`` under ``root``: three sites, several agents, one task agent.

    ``memories`` is the total, shared among the agents. Refuses (and writes nothing) when any
    of the files already exists. Returns the paths written.
    """
    home = OraHome(root)
    plan = [(home.path_for(site, agent), agent, share) for site, agent, share in DEMO_AGENTS]
    existing = [str(path) for path, _, _ in plan if path.exists()]
    if existing:
        raise OraError(f"{existing[0]}: already exists; the demo never overwrites a file "
                       f"(choose another --home or remove the demo files)")
    counts = [int(memories * share) for _, _, share in plan]
    counts[0] += memories - sum(counts)
    written: list[Path] = []
    try:
        for index, ((path, agent, _), count) in enumerate(zip(plan, counts, strict=True)):
            write_agent(path, count, seed=seed * 100 + index, task=agent.startswith("task-"), now=now)
            written.append(path)
    except BaseException:
        for path in written:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        raise
    return written
