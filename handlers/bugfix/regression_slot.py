"""Section 7 of an RA9 bug ("Regression Test Slot"): the test's path and, under it, a fenced code block
with the test. Also what the test code is worth to the rules: its digest (what a maintainer vouches for),
which paths are tests (``bugfix.test_globs``), the names of the test cases in a file (a later commit must
not drop one), and how the test is appended to a file that already exists. Pure: text in, values out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bot.forge import BodyVersion
from handlers.bug_refinement.api import (
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    Document,
    find_sections,
    find_subsections,
    report_of,
    strip_html_comments,
)

DIGEST_LENGTH = 64
# A fence's info string as Steward shows it: a language name and nothing else (a backtick or a space in one
# can end the fence early and hide a line of the code from the person reading it).
_INFO = re.compile(r"[A-Za-z0-9+#-]{1,30}")
# A path: a token with a slash or a dot-extension, in backticks or bare; the first one above the test counts.
_TICKED = re.compile(r"`([^`\s]+)`")
_BARE = re.compile(r"(?<![\w/.-])((?:[\w.-]++/)*[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")
_SAFE_PATH = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.?(?:/|$))[\w@+=,.~/-]{1,300}$")


@dataclass(frozen=True)
class RegressionSlot:
    """What section 7 says: ``path`` (None: no path written) and ``code`` (None: no fenced code under it)."""

    found: bool
    path: str | None = None
    code: str | None = None
    language: str = ""

    @property
    def digest(self) -> str | None:
        if self.path is None or self.code is None:
            return None
        return code_digest(self.path, self.code)


def slot_writer(author: str, body: str, versions: Sequence[BodyVersion] | None) -> str | None:
    """Who wrote section 7 as the issue ``body`` has it now, from the body's ``versions`` (oldest first, the
    creation's first: ``Forge.body_versions``): the author when the body was never edited, else the editor
    of the version that made section 7 (its path and code) what it is now. None when that cannot be known:
    no edit history (``versions`` None), a version whose text the forge did not give, or a newest version
    that is not the body now (edited meanwhile)."""
    if versions is None:
        return None
    now = parse_slot(body)
    if not versions:
        return author

    def same(version: BodyVersion) -> bool | None:
        if version.body is None:
            return None
        slot = parse_slot(version.body)
        return (slot.path, slot.code) == (now.path, now.code)

    if not same(versions[-1]):
        return None
    first = len(versions) - 1
    while first > 0:
        earlier = same(versions[first - 1])
        if earlier is None:
            return None
        if not earlier:
            break
        first -= 1
    return versions[first].editor or None


def code_digest(path: str, code: str) -> str:
    """What a maintainer vouches for: the full SHA-256 (64 hex characters) of the path and the exact code,
    ``path``, a NUL, then ``code`` as UTF-8. Nothing is normalised: the bytes that are hashed are the bytes
    that are committed. (A prefix of the hash would be collidable by whoever writes both tests.)"""
    return hashlib.sha256(path.encode("utf-8") + b"\0" + code.encode("utf-8")).hexdigest()


def fence_info(info: str) -> str:
    """The fence's info string when it is a plain language name (``[A-Za-z0-9+#-]``), else ""."""
    word = info.split(maxsplit=1)[0] if info.strip() else ""
    return word if _INFO.fullmatch(word) else ""


def _path_in(line: str) -> str | None:
    cleaned = strip_html_comments(line)
    for pattern in (_TICKED, _BARE):
        for match in pattern.finditer(cleaned):
            token = match.group(1).strip().rstrip(".,;:").removeprefix("./")
            if ("/" in token or "." in token) and _SAFE_PATH.match(token) and not token.startswith("http"):
                return token
    return None


def _dedent(line: str, indent: int) -> str:
    """A fenced line without the fence's own indentation (CommonMark: up to that many spaces)."""
    cut = len(line) - len(line.lstrip(" "))
    return line[min(cut, indent) :]


def bug_document(body: str | Document | None) -> Document:
    """The bug's description as RA9 reads it (a bug filed through the issue form, a common format): ``body``
    itself when it is a document already (a job reads its bug once and passes it down: the bug as its verdict
    reads it, comment answers in, is ``other_capabilities.bug_read``'s). Section 7 is always read from the
    description (``parse_slot``): test code is never taken from a comment, and what is vouched for is the
    body's."""
    return body if isinstance(body, Document) else report_of(body or "").document


def parse_slot(body: str | Document) -> RegressionSlot:
    """Section 7 of the bug: the first path written in it (outside code) and the first fenced code block
    after that path. A path inside the code does not count; the code must come after the path."""
    doc = bug_document(body)
    section = find_sections(doc, BUG_SECTION_NAMES).get(7)
    if section is None:
        return RegressionSlot(found=False)
    path: str | None = None
    path_line = -1
    for i in range(section.start, section.end):
        if doc.is_hidden(i):
            continue
        path = _path_in(doc.lines[i])
        if path is not None:
            path_line = i
            break
    if path is None:
        return RegressionSlot(found=True)
    for block in doc.blocks:
        if block.kind != "fence" or block.start <= path_line or block.start >= section.end:
            continue
        last = block.end - 1
        closed = last > block.start and doc.lines[last].strip().startswith(("```", "~~~"))
        inner = doc.lines[block.start + 1 : last if closed else block.end]
        indent = len(doc.lines[block.start]) - len(doc.lines[block.start].lstrip())
        code = "\n".join(_dedent(line, indent) for line in inner)
        if not code.strip():
            continue
        return RegressionSlot(True, path, code.rstrip("\n") + "\n", fence_info(block.info or ""))
    return RegressionSlot(True, path)


# --- which paths are tests --------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """A glob as git and most CI tools read it: ``*`` and ``?`` stay within one path segment, ``**`` crosses
    them (``**/`` also matches no directory at all), ``[...]`` is a character class."""
    out: list[str] = []
    i = 0
    g = glob.strip().lstrip("/")
    while i < len(g):
        c = g[i]
        if g.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif g.startswith("**", i):
            out.append(r".*")
            i += 2
        elif c == "*":
            out.append(r"[^/]*")
            i += 1
        elif c == "?":
            out.append(r"[^/]")
            i += 1
        elif c == "[":
            end = g.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = g[i + 1 : end].replace("\\", "\\\\")
                out.append(f"[{'^' + body[1:] if body.startswith('!') else body}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def is_test_path(path: str, globs: Iterable[str]) -> bool:
    clean = path.strip().lstrip("/")
    return any(_glob_regex(glob).match(clean) for glob in globs if glob.strip())


# --- test case names --------------------------------------------------------------------------------------

# Indentation is ``[ \t]*``, never ``\s*``: after ``^`` a repetition that takes line breaks re-reads every
# blank line below each line start (a test padded with 19,800 blank lines took 13 s to read).
_PY = re.compile(
    r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)[ \t]*\(|^[ \t]*class[ \t]+(Test\w*)\b", re.MULTILINE
)
_GO = re.compile(r"^func\s+(Test\w+|Benchmark\w+|Fuzz\w+)\s*\(", re.MULTILINE)
_JS = re.compile(r"\b(?:it|test|describe)(?:\.\w+)?\s*\(\s*(['\"`])(.+?)\1")
_RUST = re.compile(r"#\[(?:\w+::)?test\]\s*+(?:#\[[^\]]*+\]\s*+)*+(?:pub\s+)?(?:async\s+)?fn\s+(\w+)")
# A Java or Kotlin case: an annotation, then the first `void name(` / `fun name(` before a `;` or `{`
# (``_java_cases``).
_JAVA_TEST = re.compile(r"@(?:Test|ParameterizedTest)\b")
_JAVA_NAME = re.compile(r"\b(?:void|fun)\s+(\w+)\s*\(")
_RUBY = re.compile(
    r"^[ \t]*(?:it|test|describe|context)[ \t]+(['\"])(.+?)\1|^[ \t]*def[ \t]+(test_\w+)", re.MULTILINE
)

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".go": "go",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".rb": "ruby",
}


def language_of(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:].lower(), "") if dot >= 0 else ""


def case_names(path: str, text: str) -> frozenset[str]:
    """The names of the test functions and cases in a test file, by the language its path suggests (any
    language's forms when it suggests none)."""
    language = language_of(path)
    names: set[str] = set()

    def py() -> None:
        names.update(a or b for a, b in _PY.findall(text))

    def js() -> None:
        names.update(m.group(2) for m in _JS.finditer(text))

    def ruby() -> None:
        names.update(m.group(2) or m.group(3) for m in _RUBY.finditer(text))

    finders = {
        "python": [py],
        "go": [lambda: names.update(_GO.findall(text))],
        "javascript": [js],
        "typescript": [js],
        "rust": [lambda: names.update(_RUST.findall(text))],
        "java": [lambda: names.update(_java_cases(text))],
        "kotlin": [lambda: names.update(_java_cases(text))],
        "ruby": [ruby],
    }
    for find in finders.get(language) or [py, js, lambda: names.update(_GO.findall(text))]:
        find()
    return frozenset(name for name in names if name)


def _java_cases(text: str) -> list[str]:
    """Each annotation's case, read one statement at a time (the text split at `;` and `{`): one expression
    scanning from every annotation to the statement's end read a text of repeated annotations once per
    annotation (40,000 characters of `@Test ` took about 15 s)."""
    names: list[str] = []
    for part in re.split(r"[;{]", text):
        at = 0
        while (annotation := _JAVA_TEST.search(part, at)) is not None:
            name = _JAVA_NAME.search(part, annotation.end())
            if name is None:
                break
            names.append(name.group(1))
            at = name.end()
    return names


def removed_cases(before: frozenset[str], after: frozenset[str] | None) -> tuple[str, ...]:
    """The test cases of ``before`` missing from ``after`` (None: the file is gone: all of them)."""
    return tuple(sorted(before if after is None else before - after))


# --- the red commit's content -----------------------------------------------------------------------------


def with_test(existing: str | None, code: str) -> str:
    """The test file after the red commit: the code alone for a new file; for a file that exists, the code
    appended after what is there (never replacing a test). Appending twice changes nothing."""
    code = code.rstrip("\n") + "\n"
    if existing is None or not existing.strip():
        return code
    if code.strip() in existing:
        return existing
    return existing.rstrip("\n") + "\n\n\n" + code


EXAMPLES: dict[str, tuple[str, str]] = {
    "python": ("python", "def test_total_is_not_negative():\n    assert total([-1]) == 0\n"),
    "go": (
        "go",
        "func TestTotalIsNotNegative(t *testing.T) {\n\tif Total([]int{-1}) != 0 {\n"
        "\t\tt.Fatal(\"negative\")\n\t}\n}\n",
    ),
    "javascript": ("js", "test('total is not negative', () => {\n  expect(total([-1])).toBe(0);\n});\n"),
    "typescript": ("ts", "test('total is not negative', () => {\n  expect(total([-1])).toBe(0);\n});\n"),
    "rust": ("rust", "#[test]\nfn total_is_not_negative() {\n    assert_eq!(total(&[-1]), 0);\n}\n"),
    "java": ("java", "@Test\nvoid totalIsNotNegative() {\n    assertEquals(0, total(-1));\n}\n"),
    "kotlin": ("kotlin", "@Test\nfun totalIsNotNegative() {\n    assertEquals(0, total(-1))\n}\n"),
    "ruby": ("ruby", "it 'keeps the total non-negative' do\n  expect(total([-1])).to eq(0)\nend\n"),
}  # fmt: skip


def example_for(path: str | None) -> tuple[str, str]:
    """(fence info, example test) for the language ``path`` suggests (Python when it suggests none)."""
    return EXAMPLES.get(language_of(path or ""), EXAMPLES["python"])


def recipe_part(body: str | Document, key: str, limit: int = 1500) -> str:
    """A part of the bug's reproduction recipe (``"5.2"`` steps, ``"5.3"`` observed vs expected) as written,
    without HTML comments or rules, at most ``limit`` characters ("" when the bug has none)."""
    doc = bug_document(body)
    recipe = find_sections(doc, BUG_SECTION_NAMES).get(5)
    if recipe is None:
        return ""
    part = find_subsections(doc, recipe, RECIPE_SUBSECTION_NAMES).get(key)
    if part is None:
        return ""
    text = strip_html_comments(doc.section_text(part))
    lines = [line for line in text.splitlines() if line.strip() not in ("", "---")]
    out = "\n".join(lines).strip()
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"
