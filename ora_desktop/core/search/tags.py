"""Tags extracted from memory content at index time (the research seed's list).

Kinds: ``file`` (paths with an extension), ``command`` (shell commands of common tools, when
run/executed, back-quoted or after a ``$`` prompt), ``function`` (``name(`` calls),
``error`` (``TypeError``, ``ValueException``, ``ENOENT``), ``language`` (code-fence info
strings) and ``url``. They become facets (counts) and filters (``tag:file=src/app.ts``).
Extraction is plain regular expressions: fast, predictable, no dependencies.
"""

from __future__ import annotations

import re

TAG_KINDS = ("file", "command", "function", "error", "language", "url")
MAX_VALUE = 200
MAX_TAGS = 64

_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`)\]}]+", re.IGNORECASE)
_FILE = re.compile(
    r"(?:^|(?<=[\s(\[`'\"=]))((?:~|\.{1,2})?/?(?:[\w@+-]+/)*[\w@+-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9})"
    r"(?=$|[\s:)\],;`'\"!?]|\.(?:\s|$))"
)
_COMMAND = re.compile(
    r"(?:\b(?:run|running|ran|execute|executed|exec)\s+`?|(?<!`)`|^\s*\$\s+|\n\s*\$\s+)"
    r"((?:npm|npx|yarn|pnpm|git|docker|docker-compose|pip|pip3|uv|poetry|python|python3|make|cargo|go"
    r"|kubectl|curl|wget|brew|apt|apt-get|node|deno|bun|pytest|ruff|sqlite3)\s+[\w.:/=@-]+)",
    re.IGNORECASE,
)
_FUNCTION = re.compile(r"(?<![\w.$])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\((?!\s*[A-Z][a-z]+\s)")
_ERROR = re.compile(r"\b([A-Z][a-zA-Z]*(?:Error|Exception)|E[A-Z]{2,}[0-9]*)\b")
_LANGUAGE = re.compile(r"```[ \t]*([A-Za-z0-9_+#.-]+)")
# Words that look like calls in prose or code but say nothing about the memory.
_NOT_FUNCTIONS = frozenset({
    "if", "for", "while", "switch", "return", "catch", "function", "def", "and", "or", "not", "in",
    "e.g", "i.e", "see", "with", "from", "print", "elif", "else", "typeof", "sizeof",
})
_NOT_ERRORS = frozenset({"EOF", "ETA", "EST", "EDT", "EUR", "EXIF", "END"})
# Bare names that pass the file pattern but are not files.
_NOT_FILE_EXT = frozenset({"e", "g", "i", "etc", "vs", "al", "co", "com", "org", "net", "io"})


def _add(tags: list[tuple[str, str]], seen: set[tuple[str, str]], kind: str, value: str) -> None:
    value = value.strip()[:MAX_VALUE]
    if not value or len(tags) >= MAX_TAGS:
        return
    key = (kind, value.lower())
    if key not in seen:
        seen.add(key)
        tags.append((kind, value))


def extract_tags(content: str) -> list[tuple[str, str]]:
    """(kind, value) pairs found in ``content``, deduplicated (case-insensitively), in order."""
    if not content:
        return []
    tags: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    text = content
    if "://" in text:
        for match in _URL.finditer(text):
            _add(tags, seen, "url", match.group(0).rstrip(".,;:!?"))
        text = _URL.sub(" ", text)
    if "." in text:
        for match in _FILE.finditer(text):
            value = match.group(1)
            ext = value.rsplit(".", 1)[-1].lower()
            if ext in _NOT_FILE_EXT and "/" not in value:
                continue
            if re.fullmatch(r"[\d.]+[A-Za-z]?", value):  # version numbers such as 3.11b
                continue
            _add(tags, seen, "file", value)
    if "`" in text or "$" in text or "un " in text or "xec" in text:
        for match in _COMMAND.finditer(text):
            _add(tags, seen, "command", " ".join(match.group(1).split()))
    if "(" in text:
        for match in _FUNCTION.finditer(text):
            name = match.group(1)
            if name.lower() not in _NOT_FUNCTIONS and len(name) > 1:
                _add(tags, seen, "function", name)
    for match in _ERROR.finditer(text):
        if match.group(1) not in _NOT_ERRORS:
            _add(tags, seen, "error", match.group(1))
    if "```" in text:
        for match in _LANGUAGE.finditer(text):
            _add(tags, seen, "language", match.group(1).lower())
    return tags
