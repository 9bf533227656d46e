"""The one neutraliser: other people's text made inert before Steward writes it anywhere (DESIGN §3 rule 14).

Steward quotes people's prose into comments, pull request titles and bodies, commit messages and status
descriptions. Written by Steward, that text would still act: a mention notifies, a closing keyword closes an
issue when the pull request (or a commit on the default branch) lands, raw HTML renders, and an image loads
from the author's server whenever someone opens the page. `inert` keeps the text readable and takes every one
of those powers away:

- **mentions and team mentions** (``@name``, ``@org/team``): a word joiner (U+2060, invisible) after the
  ``@``. GitHub and Gitea only read a mention when a login character follows the ``@`` (Gitea:
  ``modules/references/references.go`` ``mentionPattern`` ``@[-\\w]``).
- **closing and reopening keywords** (GitHub: close, closes, closed, fix, fixes, fixed, resolve, resolves,
  resolved, "Linking a pull request to an issue"; Gitea: the same nine by default plus reopen, reopens,
  reopened, ``setting.Repository.PullRequest.CloseKeywords``/``ReopenKeywords``, matched case-insensitively
  with an optional colon, ``modules/references/references.go`` ``makeKeywordsPat``): when one is followed by
  something reference-like (``#N``, ``!N``, ``GH-N``, ``owner/repo#N``, an issue URL), a word joiner after
  the keyword's first letter, so it is no longer a word either forge knows, and one after the ``#``/``!`` of
  a numeric reference, so neither half of the pair acts. "Fixed the parser" is left as written.
- **raw HTML and entities**: a word joiner after a ``<`` that would open a tag, a comment or a declaration
  (CommonMark needs a letter, ``/``, ``!`` or ``?`` right after ``<``), and after an ``&`` that would start an
  entity (``&#64;`` would otherwise render as an ``@``).
- **images**: a word joiner between ``!`` and ``[``, so ``![alt](url)`` renders as the link ``[alt](url)``.
- invisible and bidirectional-control characters the author wrote are removed first, so nothing hidden can
  rejoin a keyword or a mention after the fact.

A word joiner rather than an HTML entity keeps code spans and fences inside people's prose readable: it is
invisible there too. Code that must be reproduced byte for byte (a regression test) is never passed through
here; it goes into a `fence` longer than any backtick run inside it.

The mentions Steward means to make (the author, ``escalate_to``) are written by the renderers around the
quoted text, never carried in from it. The detectors at the bottom are what the property tests check against.
"""

from __future__ import annotations

import re
from typing import Final

JOINER: Final = "\u2060"

CLOSE_KEYWORDS: Final = (
    "close",
    "closes",
    "closed",
    "fix",
    "fixes",
    "fixed",
    "resolve",
    "resolves",
    "resolved",
)
REOPEN_KEYWORDS: Final = ("reopen", "reopens", "reopened")

# Zero-width, bidi-control and other invisible format characters, and the C0/C1 controls except tab and
# line breaks: removed from people's text before anything else.
_HIDDEN = re.compile(
    r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    r"\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]"
)
_LETTER_OR_DIGIT = r"[^\W_]"
# What may follow a keyword and make it act, after separators (spaces, a colon, emphasis, a link's `[`/`(`):
# `#N`/`!N`, `GH-N` (or an external tracker's `ABC-N`), `owner/repo#N`, an issue URL. Wider than what the
# forges accept, so that nothing they accept is missed; a keyword followed by ordinary words stays as written.
_REFERENCE_AHEAD = r"(?=[\s:*_~\[(]*(?:[#!]|\w+-\d|[\w.-]+/[\w.-]+[#!]|https?://|www\.|\Z))"
_KEYWORD = re.compile(
    rf"(?<!{_LETTER_OR_DIGIT})({'|'.join(CLOSE_KEYWORDS + REOPEN_KEYWORDS)})(?!{_LETTER_OR_DIGIT})"
    + _REFERENCE_AHEAD,
    re.IGNORECASE,
)
# A keyword (already broken by the joiner) then its reference: `#N`, `!N` right after separators.
_BROKEN = "|".join(w[0] + JOINER + w[1:] for w in CLOSE_KEYWORDS + REOPEN_KEYWORDS)
_KEYWORD_REF = re.compile(
    rf"(?<!{_LETTER_OR_DIGIT})((?:{_BROKEN})"
    r"[\s:*_~\[(]*(?:[\w.-]+/[\w.-]+)?)([#!])(?=\d)",
    re.IGNORECASE,
)
# Each also at the very end of the text, where whatever Steward writes next could complete it.
_MENTION = re.compile(r"@(?=[\w-]|\Z)")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?]|\Z)")
_ENTITY = re.compile(r"&(?=#[0-9]|#[xX][0-9A-Fa-f]|[A-Za-z][A-Za-z0-9]*;|#?[A-Za-z0-9]*\Z)")
_IMAGE = re.compile(r"!(?=\[|\Z)")


def _break_keyword(match: re.Match[str]) -> str:
    word = match.group(1)
    return word[0] + JOINER + word[1:]


def inert(text: str) -> str:
    """People's prose, line breaks kept, with no live mention, closing keyword, HTML, entity or image."""
    text = _HIDDEN.sub("", text or "")
    text = _KEYWORD.sub(_break_keyword, text)
    text = _KEYWORD_REF.sub(lambda m: m.group(1) + m.group(2) + JOINER, text)
    text = _MENTION.sub("@" + JOINER, text)
    text = _TAG_OPEN.sub("<" + JOINER, text)
    text = _ENTITY.sub("&" + JOINER, text)
    return _IMAGE.sub("!" + JOINER, text)


def line(text: str, limit: int = 200) -> str:
    """People's text as one inert line (a title, a commit summary, a status description): whitespace
    collapsed, at most ``limit`` characters in all ("…" marks the cut). Any prefix of inert text is inert
    (a cut can only separate a character from the joiner after it), so the cut comes last."""
    return _cut(inert(" ".join(_HIDDEN.sub("", text or "").split())), limit)


def name(login: str, limit: int = 60) -> str:
    """``@login`` shown, never a mention (safe in a table cell too): where Steward names people it does not
    ask to act — a board's log, a dashboard, a ledger's entries — an edit of that comment notifies nobody."""
    return cell(f"@{login}", limit)


def cell(text: str, limit: int = 200) -> str:
    """People's text as one inert markdown table cell: `line` with the pipes escaped, ``limit`` in all."""
    return _cut(inert(" ".join(_HIDDEN.sub("", text or "").split())).replace("|", "\\|"), limit)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    kept = text[: max(limit - 1, 0)].rstrip()
    if kept.endswith("\\") and not kept.endswith("\\\\"):
        kept = kept[:-1]  # half of an escaped pipe
    return kept + "…"


def code(text: str, limit: int = 200, *, in_table: bool = False) -> str:
    """People's text as one inline code span (a key, a value, a path): delimited by a backtick run longer
    than any inside, so the text cannot close it early; its content is made inert all the same."""
    flat = line(text, limit)
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    body = f"{ticks}{pad}{flat}{pad}{ticks}"
    return body.replace("|", "\\|") if in_table else body


def quote(text: str) -> str:
    """People's prose as an inert block quote: whatever markdown it holds (an unclosed fence, say) ends
    with the quote and cannot swallow what Steward writes after it."""
    return "\n".join(f"> {row}".rstrip() for row in inert(text).splitlines() or [""])


def fence(code: str, info: str = "") -> str:
    """Code shown verbatim: a backtick fence longer than any backtick run inside, so no line of the code
    can close it (CommonMark: the closing fence must be at least as long as the opening one)."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{_info(info)}\n{code.rstrip()}\n{ticks}"


def _info(info: str) -> str:
    # An info string may not hold a backtick (CommonMark 4.5) nor a line break.
    return " ".join(info.replace("`", "").split())


# --- Steward's own text ----------------------------------------------------------------------------------

# The tags Steward writes on purpose; any other `<word …>` in its own Markdown is a placeholder (`<n>`,
# `<reason>`, `<comment link>`) that GitHub and Gitea would take for an HTML tag and drop from the page.
OWN_TAGS: Final = frozenset({"details", "summary", "br", "sub", "sup", "kbd"})
# A code span opens at a whole run of backticks (possessive: a run never gives back a backtick, which made
# `"`" * n` cubic) and closes at a run of the same length (tests/unit/test_regex_structure.py).
_CODE_SPAN = re.compile(r"(?<!`)(`++)[\s\S]*?(?<!`)\1(?!`)")
_PLACEHOLDER = re.compile(r"(?<!\\)<(?=([A-Za-z][\w .:/|-]*)>)")


def _escape_placeholders(text: str) -> str:
    return _PLACEHOLDER.sub(
        lambda m: m.group(0) if m.group(1).split()[0].lower() in OWN_TAGS else "\\<", text
    )


def placeholders(text: str) -> str:
    """Steward's own Markdown (a command's help, a usage line, a template) with every ``<n>``-style
    placeholder outside code escaped (``\\<n>``), so the page shows it instead of swallowing it as an
    unknown HTML tag (GitHub: "add a hypothesis H<n>" read "add a hypothesis H"). Code spans are kept as
    written; the tags in ``OWN_TAGS`` stay tags. Idempotent."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [_escape_placeholders(text[at : span.start()]), span.group(0)]
        at = span.end()
    out.append(_escape_placeholders(text[at:]))
    return "".join(out)


# --- detectors: what would act, used by the property tests (and by anyone checking a rendering) -------

# GitHub logins are letters, digits and single hyphens; Gitea adds `_` and `.` ( `@[-\w][-.\w]*`).
LIVE_MENTION: Final = re.compile(r"(?<![\w`@/])@[-\w][-.\w]*(?:/[-\w][-.\w]*)?")
CLOSING_REFERENCE: Final = re.compile(
    rf"(?<!{_LETTER_OR_DIGIT})(?:{'|'.join(CLOSE_KEYWORDS + REOPEN_KEYWORDS)})(?!{_LETTER_OR_DIGIT})"
    r"[\s:*_~]*(?:[#!]\d|GH-\d|[\w.-]+/[\w.-]+[#!]\d|https?://)",
    re.IGNORECASE,
)
HTML_TAG: Final = re.compile(r"<[A-Za-z/!?]|&(?:#[0-9]|#[xX][0-9A-Fa-f]|[A-Za-z][A-Za-z0-9]*;)")
IMAGE: Final = re.compile(r"!\[")


def live_parts(text: str) -> dict[str, list[str]]:
    """Everything in ``text`` that would act, by kind (mentions, closing references, HTML, images)."""
    return {
        "mention": LIVE_MENTION.findall(text),
        "closing": [m.lower() for m in CLOSING_REFERENCE.findall(text)],
        "html": HTML_TAG.findall(text),
        "image": IMAGE.findall(text),
    }
