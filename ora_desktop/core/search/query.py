"""The search box language, parsed into a safe structure (never passed raw to FTS5).

Grammar (whitespace separated; :func:`parse_query` never raises, whatever the input):

* ``word`` — matched stemmed (``running`` finds ``run``); ``foo*`` — prefix;
  ``"exact phrase"`` (an unbalanced quote runs to the end of the text);
* ``-word`` / ``-"phrase"`` / ``NOT word`` — exclude; ``a OR b`` — either (binds tighter than
  the implicit AND between terms: ``a OR b c`` is ``(a OR b) AND c``); ``AND`` is implied;
* field filters: ``type:fact`` (``type:fact,task``), ``importance:>=7`` (``>``, ``<``, ``<=``,
  ``=``, ``5..8``, ``5..<8`` half-open, ``none`` for no value; a comma between values means
  either: ``importance:7,9``, ``health:<0.1,0.5..<0.6``), ``health:<0.3``, ``sync:pending``
  (``synced``, ``local_only``, ``dirty``),
  ``tag:error=TypeError`` / ``tag:file=src/app.ts`` / ``tag:TypeError`` (any kind),
  ``session:S`` (one conversation: ``tag:session=S``), ``site:anwe-sh``, ``agent:ora``,
  ``is:expired``, ``is:superseded``, ``is:dirty``, ``is:pinned``;
  ``-type:…``, ``-sync:…``, ``-tag:…``, ``-session:…``, ``-is:expired`` and ``-is:pinned`` negate;
* plain-language time: ``last week``, ``yesterday``, ``today``, ``this month``, ``since Monday``,
  ``in November`` … become ``created:`` filters (:mod:`.plaintime`), said in a warning;
* time filters: ``created:``, ``updated:``, ``accessed:``, ``expires:`` with a date
  (``created:>=2026-11-01``, ``created:2026-11-01..2026-11-30``) or an age
  (``created:<7d``, ``accessed:>=30d``, ``expires:<2w``); see :mod:`ora_desktop.core.timefilter`.
  A comma means either here too: ``created:<1d,>=365d``; ``created:1d..<7d`` is at least a
  day old and under a week.

A ``name:value`` whose name is not a field gets a note naming it and the nearest field
(``improtance:>=7`` — "did you mean importance?"); when it looks like a mistyped filter it is
ignored, else it is searched as words.

Anything else — ``NEAR(``, stray ``*``, SQL, control characters — is read as plain words.
Problems (an unknown type, a number that is not one) become ``warnings`` and the filter is
ignored; they never raise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime

from ..errors import InvalidValue
from ..schema import MEMORY_TYPES, SYNC_STATUSES
from ..timefilter import EXAMPLE, TIME_FIELDS, TimeBound, time_bounds
from .plaintime import read_plain_time

MAX_TERMS = 32
MAX_TERM_CHARS = 200
FIELDS = ("type", "importance", "health", "sync", "tag", "session", "site", "agent", "is", *TIME_FIELDS)
_FIELD_NAME = re.compile(r"^[A-Za-z_]{2,20}$")
_FILTER_VALUE = re.compile(r"^(?:[<>=]|-?\d|\d{4}-\d{2})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HAS_TOKEN = re.compile(r"[^\W_]")
_COMPARE = re.compile(r"^(>=|<=|=>|=<|>|<|=|==)?\s*(-?\d+(?:\.\d*)?|-?\.\d+)$")
_RANGE = re.compile(r"^(-?\d+(?:\.\d*)?)\s*(?:\.\.|-)\s*(-?\d+(?:\.\d*)?)$")
_HALF_OPEN = re.compile(r"^(-?\d+(?:\.\d*)?)\s*\.\.<\s*(-?\d+(?:\.\d*)?)$")
_NONE = ("none", "unknown", "null")
#: One bound of an either-or filter: (column, operator, value); operator ``null`` tests IS NULL.
Bound = tuple[str, str, object]


@dataclass(frozen=True, slots=True)
class Term:
    """One search term: ``kind`` is ``word``, ``prefix`` or ``phrase``."""

    text: str
    kind: str = "word"

    def fts(self) -> str:
        """This term as a quoted FTS5 string (quotes doubled), ``*`` appended for a prefix."""
        quoted = '"' + self.text.replace('"', '""') + '"'
        return quoted + ("*" if self.kind == "prefix" else "")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A parsed search: OR-groups ANDed together, exclusions, and field filters."""

    text: str = ""
    groups: tuple[tuple[Term, ...], ...] = ()
    excluded: tuple[Term, ...] = ()
    types: tuple[str, ...] = ()
    not_types: tuple[str, ...] = ()
    #: Numeric comparisons: (operator, value) with operator one of > >= < <= =.
    importance: tuple[tuple[str, float], ...] = ()
    health: tuple[tuple[str, float], ...] = ()
    sync: tuple[str, ...] = ()
    not_sync: tuple[str, ...] = ()
    #: (kind or None for any kind, value)
    tags: tuple[tuple[str | None, str], ...] = ()
    not_tags: tuple[tuple[str | None, str], ...] = ()
    sites: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    expired: bool | None = None
    superseded: str = "hide"  # hide | show | only
    dirty: bool | None = None
    #: ``is:pinned`` (True) / ``-is:pinned`` (False): see :mod:`ora_desktop.core.pins`.
    pinned: bool | None = None
    #: Time filters: (column, operator, UTC time), see :mod:`ora_desktop.core.timefilter`.
    times: tuple[TimeBound, ...] = ()
    #: Either-or filters (``importance:7,9``, ``health:<0.1,none``, ``created:<1d,>=365d``): each
    #: entry holds options ORed together, each option its bounds ANDed; entries are ANDed.
    any_of: tuple[tuple[tuple[Bound, ...], ...], ...] = ()
    warnings: tuple[str, ...] = field(default=())

    @property
    def terms(self) -> tuple[str, ...]:
        """The positive terms' text, for highlighting (phrases whole, prefixes without ``*``)."""
        return tuple(dict.fromkeys(t.text for group in self.groups for t in group))

    @property
    def has_text(self) -> bool:
        return bool(self.groups)

    @property
    def has_filters(self) -> bool:
        return bool(
            self.types or self.not_types or self.importance or self.health or self.sync
            or self.not_sync or self.tags or self.not_tags or self.expired is not None
            or self.superseded != "hide" or self.dirty is not None or self.times or self.any_of
            or self.pinned is not None
        )

    @property
    def is_empty(self) -> bool:
        """Nothing to search for and nothing to filter by."""
        return not self.groups and not self.excluded and not self.has_filters

    def fts_expression(self) -> str | None:
        """The FTS5 MATCH expression for the positive terms and exclusions, or ``None``
        when there is no positive term (FTS5 cannot express a pure exclusion)."""
        if not self.groups:
            return None
        parts = []
        for group in self.groups:
            inner = " OR ".join(t.fts() for t in group)
            parts.append(f"({inner})" if len(group) > 1 else inner)
        expr = " AND ".join(parts)
        if self.excluded:
            expr = f"({expr})" + "".join(f" NOT {t.fts()}" for t in self.excluded)
        return expr

    def positive_expression(self) -> str | None:
        """Every positive term ORed: used to find highlight spans in a hit's text."""
        terms = [t for group in self.groups for t in group]
        return " OR ".join(t.fts() for t in terms) if terms else None


def _clean(text: str) -> str:
    return _CONTROL.sub(" ", text)


def _usable(text: str) -> bool:
    """True when the text holds at least one character the tokenizer keeps."""
    return bool(_HAS_TOKEN.search(text))


def _scan(text: str) -> list[tuple[str, str, bool]]:
    """Split into (kind, text, negated) tokens: kind is ``bare`` or ``quoted``."""
    tokens: list[tuple[str, str, bool]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        negated = False
        if ch == "-" and i + 1 < n and not text[i + 1].isspace():
            negated = True
            i += 1
            ch = text[i]
        if ch == '"':
            end = text.find('"', i + 1)
            end = n if end < 0 else end
            tokens.append(("quoted", text[i + 1:end], negated))
            i = end + 1
            continue
        start = i
        while i < n and not text[i].isspace():
            if text[i] == '"':
                # field:"quoted value" keeps the quoted part; elsewhere a quote splits the word
                if i > start and text[i - 1] == ":" or (i > start and text[start:i].endswith("=")):
                    end = text.find('"', i + 1)
                    end = n if end < 0 else end
                    i = end + 1
                    continue
                break
            i += 1
        tokens.append(("bare", text[start:i], negated))
    return tokens


def _comparisons(name: str, value: str, warnings: list[str]) -> list[tuple[str, float]]:
    value = value.strip()
    match = _HALF_OPEN.match(value)
    if match:
        return [(">=", float(match.group(1))), ("<", float(match.group(2)))]
    match = _RANGE.match(value)
    if match:
        low, high = float(match.group(1)), float(match.group(2))
        return [(">=", min(low, high)), ("<=", max(low, high))]
    match = _COMPARE.match(value)
    if not match:
        warnings.append(f"{name}:{value} ignored: expected a number such as {name}:>=7 or {name}:5..8")
        return []
    op = {"=>": ">=", "=<": "<=", "==": "=", None: "="}.get(match.group(1), match.group(1))
    return [(op, float(match.group(2)))]


def parse_query(text: object, now: datetime | None = None) -> ParsedQuery:
    """Parse what a user typed. Never raises; problems become ``warnings``. Plain-language time
    ("last week", "yesterday", "in November") becomes ``created:`` filters, said in a warning
    (:mod:`.plaintime`; ``now`` is its clock)."""
    try:
        cleaned = _clean(text if isinstance(text, str) else ("" if text is None else str(text)))
        plain = read_plain_time(cleaned, now)
        if plain.note is None:
            return _parse(cleaned)
        parsed = _parse(" ".join(x for x in (plain.text, *plain.filters) if x))
        return replace(parsed, warnings=(plain.note, *parsed.warnings))
    except Exception as exc:  # a last guard: a search box must never crash the caller
        return ParsedQuery(text=str(text)[:200], warnings=(f"query not understood ({exc}); searching nothing",))


def _parse(text: str) -> ParsedQuery:
    warnings: list[str] = []
    groups: list[list[Term]] = []
    excluded: list[Term] = []
    filters: dict[str, list] = {k: [] for k in (
        "types", "not_types", "importance", "health", "sync", "not_sync", "tags", "not_tags",
        "sites", "agents", "times", "any_of")}
    flags: dict[str, object] = {"expired": None, "superseded": "hide", "dirty": None, "pinned": None}
    pending_or = False
    negate_next = False
    dropped = 0

    def add_term(term: Term, negated: bool) -> None:
        nonlocal pending_or, dropped
        if len(term.text) > MAX_TERM_CHARS:
            term = Term(term.text[:MAX_TERM_CHARS], term.kind)
        if negated:
            if len(excluded) >= MAX_TERMS:
                dropped += 1
            else:
                excluded.append(term)
            pending_or = False
            return
        if pending_or and groups:
            groups[-1].append(term)
        elif len(groups) >= MAX_TERMS:
            dropped += 1
        else:
            groups.append([term])
        pending_or = False

    for kind, raw, negated in _scan(text):
        negated = negated or negate_next
        negate_next = False
        if kind == "quoted":
            phrase = " ".join(raw.split())
            if _usable(phrase):
                add_term(Term(phrase, "phrase"), negated)
            continue
        if raw == "OR" and not negated:
            pending_or = bool(groups)
            continue
        if raw == "AND" and not negated:
            continue
        if raw == "NOT" and not negated:
            negate_next = True
            continue
        name, sep, value = raw.partition(":")
        if sep and name.lower() in FIELDS and value:
            _field(name.lower(), value.strip('"'), negated, filters, flags, warnings)
            continue
        if (sep and value and _FIELD_NAME.match(name) and not value.startswith("/")
                and _unknown_field(name, value, warnings)):
            continue
        raw = raw.rstrip("?!,;")  # "token?" at the end of a question is the word token
        raw = raw[:-1] if raw.endswith(".") and not raw.endswith("..") else raw
        word = raw.strip("*")
        prefix = raw.endswith("*") and _usable(word)
        # Leading/trailing punctuation (NEAR(, "(", ")") is not part of a word.
        if _usable(word):
            add_term(Term(word, "prefix" if prefix else "word"), negated)
    if dropped:
        warnings.append(f"{dropped} terms beyond the first {MAX_TERMS} were ignored")
    return ParsedQuery(
        text=text,
        groups=tuple(tuple(g) for g in groups),
        excluded=tuple(excluded),
        types=tuple(dict.fromkeys(filters["types"])),
        not_types=tuple(dict.fromkeys(filters["not_types"])),
        importance=tuple(filters["importance"]),
        health=tuple(filters["health"]),
        sync=tuple(dict.fromkeys(filters["sync"])),
        not_sync=tuple(dict.fromkeys(filters["not_sync"])),
        tags=tuple(dict.fromkeys(filters["tags"])),
        not_tags=tuple(dict.fromkeys(filters["not_tags"])),
        sites=tuple(dict.fromkeys(filters["sites"])),
        agents=tuple(dict.fromkeys(filters["agents"])),
        expired=flags["expired"],  # type: ignore[arg-type]
        superseded=str(flags["superseded"]),
        dirty=flags["dirty"],  # type: ignore[arg-type]
        pinned=flags["pinned"],  # type: ignore[arg-type]
        times=tuple(filters["times"]),
        any_of=tuple(filters["any_of"]),
        warnings=tuple(warnings),
    )


def _unknown_field(name: str, value: str, warnings: list[str]) -> bool:
    """Note an unknown ``name:value``; True when it looks like a mistyped filter (then ignored),
    False when it is to be searched as words."""
    import difflib

    from .tags import TAG_KINDS

    lower = name.lower()
    if lower in TAG_KINDS:
        warnings.append(f"{name}:{value}: '{name}' is not a filter; searched as words "
                        f"(did you mean tag:{lower}={value}?)")
        return False
    candidates = difflib.get_close_matches(lower, FIELDS, n=3, cutoff=0.6)
    fitting = [c for c in candidates if _fits(c, value)]
    if fitting:
        warnings.append(f"{name}:{value} ignored: '{name}' is not a filter (did you mean {fitting[0]}?)")
        return True
    if candidates:
        warnings.append(f"{name}:{value}: '{name}' is not a filter, so it was searched as words "
                        f"(did you mean {candidates[0]}?)")
        return False
    if _FILTER_VALUE.match(value):  # priority:>=5 — a filter we do not have
        warnings.append(f"{name}:{value} ignored: '{name}' is not a filter (filters are {', '.join(FIELDS)})")
        return True
    return False  # TODO:fix, note:deploy — ordinary text


def _fits(name: str, value: str) -> bool:
    """True when ``value`` is the kind of value field ``name`` takes (a mistyped filter then)."""
    items = [v.strip().lower() for v in value.split(",")]
    if name in ("importance", "health"):
        return bool(_COMPARE.match(value) or _RANGE.match(value))
    if name in TIME_FIELDS:
        return bool(_FILTER_VALUE.match(value))
    if name == "type":
        return all(v in MEMORY_TYPES for v in items)
    if name == "sync":
        return all(v in (*SYNC_STATUSES, "dirty", "local", "local-only") for v in items)
    if name == "is":
        return value.lower() in ("expired", "superseded", "dirty", "pinned", "any", "all")
    if name in ("site", "agent"):
        return bool(re.search(r"[A-Za-z]", value))
    return True  # tag: any value


def _either(options: list[tuple], plain: list, any_of: list) -> None:
    """One option joins the plain (ANDed) filters; several become one either-or filter."""
    if len(options) == 1:
        plain.extend(options[0])
    elif options:
        any_of.append(tuple(options))


def _field(name: str, value: str, negated: bool, filters: dict[str, list], flags: dict[str, object],
           warnings: list[str]) -> None:
    from .tags import TAG_KINDS

    if name in TIME_FIELDS:
        if negated:
            warnings.append(f"-{name}: ignored: write the opposite comparison instead")
            return
        options = []
        for item in filter(None, (v.strip() for v in value.split(","))):
            low, half_open, high = item.partition("..<")  # 1d..<7d: at least 1 day, under 7
            try:
                if half_open:
                    options.append((*time_bounds(name, ">=" + low), *time_bounds(name, "<" + high)))
                else:
                    options.append(tuple(time_bounds(name, item)))
            except InvalidValue:
                warnings.append(f"{name}:{item} ignored: expected {EXAMPLE.format(name=name)}")
        _either(options, filters["times"], filters["any_of"])
    elif name == "type":
        for item in filter(None, (v.strip().lower() for v in value.split(","))):
            if item in MEMORY_TYPES:
                filters["not_types" if negated else "types"].append(item)
            else:
                warnings.append(f"type:{item} ignored: a type is one of {', '.join(MEMORY_TYPES)}")
    elif name in ("importance", "health"):
        if negated:
            warnings.append(f"-{name}: ignored: write the opposite comparison instead")
            return
        column = "importance" if name == "importance" else "health_score"
        options: list[tuple[Bound, ...]] = []
        for item in filter(None, (v.strip() for v in value.split(","))):
            if item.lower() in _NONE:
                options.append(((column, "null", None),))
            elif found := _comparisons(name, item, warnings):
                options.append(tuple((column, op, number) for op, number in found))
        if len(options) == 1 and options[0][0][1] != "null":
            filters[name].extend((op, number) for _, op, number in options[0])
        elif options:
            filters["any_of"].append(tuple(options))
    elif name == "sync":
        for item in filter(None, (v.strip().lower() for v in value.split(","))):
            item = {"local": "local_only", "local-only": "local_only"}.get(item, item)
            if item == "dirty":
                flags["dirty"] = not negated
            elif item in SYNC_STATUSES:
                filters["not_sync" if negated else "sync"].append(item)
            else:
                warnings.append(f"sync:{item} ignored: sync is one of {', '.join(SYNC_STATUSES)} or dirty")
    elif name == "tag":
        kind, sep, tag_value = value.partition("=")
        tag_value = tag_value.strip('"')
        if sep and kind.lower() in TAG_KINDS and tag_value:
            tag = (kind.lower(), tag_value)
        elif sep and not tag_value:
            warnings.append(f"tag:{value} ignored: write tag:kind=value, e.g. tag:error=TypeError")
            return
        elif sep and kind.lower() not in TAG_KINDS:
            warnings.append(f"tag:{value}: '{kind}' is not a tag kind ({', '.join(TAG_KINDS)}); matching any kind")
            tag = (None, value)
        else:
            tag = (None, value)
        filters["not_tags" if negated else "tags"].append(tag)
    elif name == "session":  # the session tag imported conversations carry
        filters["not_tags" if negated else "tags"].append(("session", value.strip('"')))
    elif name in ("site", "agent"):
        if negated:
            warnings.append(f"-{name}: ignored")
            return
        filters[name + "s"].append(value)
    elif name == "is":
        item = value.lower()
        if item == "expired":
            flags["expired"] = not negated
        elif item == "superseded":
            flags["superseded"] = "hide" if negated else "only"
        elif item in ("any", "all"):
            flags["superseded"] = "show"
        elif item == "dirty":
            flags["dirty"] = not negated
        elif item == "pinned":
            flags["pinned"] = not negated
        else:
            warnings.append(f"is:{value} ignored: use is:expired, is:superseded, is:dirty, is:pinned or is:any")
