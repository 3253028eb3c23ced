"""Tags extracted from memory content at index time (the research seed's list).

Kinds: ``file`` (paths with an extension), ``command`` (shell commands of common tools, when
run/executed, back-quoted or after a ``$`` prompt), ``function`` (``name(`` calls),
``error`` (``TypeError``, ``ValueException``, ``ENOENT``), ``language`` (code-fence info
strings), ``url``; ``session``, ``project`` and ``model`` (an imported conversation's), and
``topic``: a line ``Tags: react, jwt, file=src/app.ts`` (how imported
topics and tags are written into a memory; a bare value is a topic, ``kind=value`` any kind).
They become facets (counts) and filters (``tag:file=src/app.ts``, ``tag:topic=jwt``).

Extraction runs over every memory when an index is built, so it is written for speed: each
pattern is anchored on a literal character (``.``, ``(``, ``://``, a back-quote …) that the
regular-expression engine can skip to, the text left of the anchor is read by matching the
reversed string, and a pattern runs only when a cheap substring test says it can match.
"""

from __future__ import annotations

import re

# session, project and model: what an imported conversation keeps (written on its "Tags:" line).
TAG_KINDS = ("file", "command", "function", "error", "language", "url", "topic", "session", "project", "model")
MAX_VALUE = 200
MAX_TAGS = 64

TOOLS = ("npm", "npx", "yarn", "pnpm", "git", "docker", "docker-compose", "pip", "pip3", "uv", "poetry",
         "python", "python3", "make", "cargo", "go", "kubectl", "curl", "wget", "brew", "apt", "apt-get",
         "node", "deno", "bun", "pytest", "ruff", "sqlite3")
_TOOL = "|".join(sorted((re.escape(t) for t in TOOLS), key=len, reverse=True))
_ARG = r"[\w.:/=@-]+"

# Anchored on "://": scheme to the left (reversed), address to the right.
_URL_RIGHT = re.compile(r"://[^\s<>\"'`)\]}]+")
_SCHEME_REV = re.compile(r"(?:sptth|ptth|ptf)(?![A-Za-z])")
# Anchored on ".": the extension to the right; the path to the left (reversed).
_DOT_EXT = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,9})(?![\w/-]|\.[A-Za-z0-9])")
_PATH_REV = re.compile(r"[\w@+./~-]*")
# Anchored on "(": the name to the left (reversed).
_NAME_REV = re.compile(r"[\w.]*")
_ERROR = re.compile(r"(?:Error|Exception)\b")
_LETTERS_REV = re.compile(r"[a-zA-Z]*")
# The first character is a literal (the engine skips to it); the boundary is checked after it.
_ERRNO = re.compile(r"E(?<!\wE)[A-Z]{2,}[0-9]*\b")
_TAGS_LINE = re.compile(r"^Tags: (.+)$", re.MULTILINE)
_LANGUAGE = re.compile(r"```[ \t]*([A-Za-z0-9_+#.-]+)")
_CMD_TICK = re.compile(rf"(?<!`)`\s*((?:{_TOOL})\s+{_ARG})")
# Starts with a character set (which the engine scans for), the word boundary checked after it.
_CMD_RUN = re.compile(
    rf"[RrEe](?<![A-Za-z][RrEe])(?:(?<=[Rr])(?:un|unning|an)|(?<=[Ee])(?:xecute|xecuted|xec))"
    rf"\s+((?:{_TOOL})\s+{_ARG})")
_CMD_PROMPT = re.compile(rf"\$\s+((?:{_TOOL})\s+{_ARG})")

_NOT_FUNCTIONS = frozenset({
    "if", "for", "while", "switch", "return", "catch", "function", "def", "and", "or", "not", "in",
    "see", "with", "from", "elif", "else", "typeof", "sizeof", "await", "async", "new",
})
_NOT_ERRORS = frozenset({"EOF", "ETA", "EST", "EDT", "EUR", "EXIF", "END", "EU", "ENV"})
# A bare name (no "/") is a file only with one of these extensions ("res.ok", "e.g." are not).
_EXTENSIONS = """
py pyi ipynb ts tsx js jsx mjs cjs json jsonl yml yaml toml ini cfg conf env lock md rst txt csv tsv
html htm css scss sass less vue svelte go rs java kt kts scala rb php c h cc cpp hpp cs swift m mm dart
lua pl r sql db sqlite sh bash zsh fish ps1 bat tf tfvars hcl proto graphql gql xml svg png jpg jpeg gif
webp ico pdf zip gz tgz tar wasm log dockerfile mk gradle sln csproj properties plist
"""
FILE_EXTENSIONS = frozenset(_EXTENSIONS.split())
# Libraries named like a file ("Node.js", "Vue.js"): a bare one is the library; "src/node.js" stays a file.
_PRODUCT_NAMES = """
node vue next nuxt three d3 express ember backbone chart moment angular react deno p5 alpine solid knockout
meteor nest socket anime lodash underscore jquery preact mithril polymer handlebars mustache pixi babylon
"""
_PRODUCTS = frozenset(_PRODUCT_NAMES.split())
_TRAIL = ".,;:!?)]}'\""


class _Tags:
    __slots__ = ("items", "seen")

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []
        self.seen: set[tuple[str, str]] = set()

    def add(self, kind: str, value: str) -> None:
        value = value[:MAX_VALUE]
        key = (kind, value.lower())
        if value and key not in self.seen and len(self.items) < MAX_TAGS:
            self.seen.add(key)
            self.items.append((kind, value))


def extract_tags(content: str) -> list[tuple[str, str]]:
    """(kind, value) pairs found in ``content``, deduplicated (case-insensitively)."""
    if not content:
        return []
    text = content
    tags = _Tags()
    reverse = text[::-1]
    size = len(text)
    if "://" in text:
        urls = []
        for match in _URL_RIGHT.finditer(text):
            scheme = _SCHEME_REV.match(reverse, size - match.start())
            if scheme:
                urls.append(text[match.start() - len(scheme.group(0)):match.end()].rstrip(_TRAIL))
        for url in urls:
            tags.add("url", url)
            text = text.replace(url, " " * len(url))  # same offsets; a URL is not a file
        if urls:
            reverse = text[::-1]
    if "." in text:
        for match in _DOT_EXT.finditer(text):
            start = match.start()
            left = _PATH_REV.match(reverse, size - start).group(0)[::-1].lstrip("./") if start else ""
            ext = match.group(1)
            if not left or ("/" not in left and ext.lower() not in FILE_EXTENSIONS):
                continue
            head = left.rsplit("/", 1)[-1]
            if "/" not in left and ext.lower() == "js" and head.lower() in _PRODUCTS:
                continue
            if not any(c.isalpha() for c in head) or head.endswith(".") or ".." in left:
                continue
            begin = start - len(left)
            if begin > 0 and text[begin - 1] in "./":  # "./x.py" and "../x.py": keep the prefix
                dots = _PATH_REV.match(reverse, size - begin).group(0)[::-1]
                left = dots + left
            tags.add("file", left + "." + ext)
    if "`" in text:
        for match in _CMD_TICK.finditer(text):
            tags.add("command", " ".join(match.group(1).split()))
    if "un " in text or "an " in text or "xec" in text:
        for match in _CMD_RUN.finditer(text):
            tags.add("command", " ".join(match.group(1).split()))
    if "$" in text:
        for match in _CMD_PROMPT.finditer(text):
            tags.add("command", " ".join(match.group(1).split()))
    if "(" in text:
        position = text.find("(")
        while position > 0:
            name = _NAME_REV.match(reverse, size - position).group(0)[::-1].strip(".")
            if (len(name) > 1 and (name[0].isalpha() or name[0] == "_") and name.lower() not in _NOT_FUNCTIONS
                    and not name.endswith(("Error", "Exception"))
                    and (position - len(name) == 0 or text[position - len(name) - 1] not in "$@")):
                tags.add("function", name)
            position = text.find("(", position + 1)
    if "Error" in text or "Exception" in text:
        for match in _ERROR.finditer(text):
            head = _LETTERS_REV.match(reverse, size - match.start()).group(0)[::-1]
            if head and head[0].isupper():
                tags.add("error", head + match.group(0))
    if "E" in text:
        for match in _ERRNO.finditer(text):
            if match.group(0) not in _NOT_ERRORS:
                tags.add("error", match.group(0))
    if "```" in text:
        for match in _LANGUAGE.finditer(text):
            tags.add("language", match.group(1).lower())
    if "Tags: " in text:
        for match in _TAGS_LINE.finditer(text):
            for item in match.group(1).split(","):
                kind, sep, value = item.strip().partition("=")
                if sep and kind in TAG_KINDS and value.strip():
                    tags.add(kind, value.strip())
                elif item.strip():
                    tags.add("topic", item.strip())
    return tags.items
