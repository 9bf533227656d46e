"""What a bug report gives of the reporter's part, read the way a maintainer reads it (issue 34 §1). Pure.

RA9 asks the reporter for six things: what goes wrong (section 1), and the recipe — the environment (5.1), the
steps (5.2), what happened and what was expected (5.3), and a log, link, screenshot or file (5.4). People
write them in every layout: GitHub's default template, issue forms, Bugzilla's fields, Go's or Rust's
questions, a table, a sentence ("I'm on version 2.4.1, Windows 11"), a stack trace under the command that
produced it. ``read`` finds each item wherever it is written:

- a template's own placeholder and example text is never an answer (``strip_placeholders``): `[e.g. iOS]`,
  "A clear and concise description…", `Go to '...'`, a form's default "A bug happened!", Steward's own hints,
  `_No response_`;
- the labels of the common layouts (``formats``) say which part is which; a label whose part is left empty is
  remembered, so the reporter is asked by that label's name;
- what has no label is found where people put it: the description says what happens (GitHub's template has no
  "actual behaviour" field); a version number or an operating system, browser or runtime named in a sentence,
  a `User Agent:` line or an `envinfo` block is the environment; a numbered list, a command in code, or
  sentences joined by "then" are the steps; `Expected:` or "I expected…" inside a line is the expectation;
  a link, an image or a block of log or trace is an artifact.

The report's language is decided by its words (``report_language``), not by the repository's default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from .checks import EXPECTED, OBSERVED, field_value, meaningful
from .document import (
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    Document,
    Section,
    find_sections,
    find_subsections,
    strip_html_comments,
)
from .formats import report_labels
from .placeholders import LIST_MARK, strip_placeholders
from .report import Report, report_of
from .sections import Language, language_of
from .text import fold

__all__ = ["ITEMS", "Reading", "Reply", "read", "report_language", "strip_placeholders"]

ITEMS: Final = ("1", "5.1", "5.2", "5.3o", "5.3e", "5.4")


def _said(text: str) -> bool:
    """Whether ``text`` says something: not only blanks, list markers, labels without a value."""
    for line in meaningful(text).split("\n"):
        bare = LIST_MARK.sub("", line).strip(" \t*_`|-:")
        if bare and not (_LABEL_ONLY.match(line) and len(bare.split()) <= 4) and not _BOLD_ONLY.match(line):
            return True
    return False


_PARENTHESIS: Final = re.compile(r"[ \t]*+\([^()\n]*+\)")
_FIELD_MARK: Final = re.compile(r"^(?:\*\*|__)[^*_\n]{1,120}:(?:\*\*|__)")


def _without_other_fields(part: str) -> str:
    """``part`` without the fields the common formats do not know (``formats`` keeps each one level down, as
    `#### <label>`, where it stood): what follows such a heading is not this item's, up to the next field of
    this item (``formats`` opens it with `**<label>:**`)."""
    if "#### " not in part:
        return part
    out: list[str] = []
    other = False
    for line in part.split("\n"):
        if line.startswith("#### "):
            other = True
        elif other and _FIELD_MARK.match(line):
            other = False
        if not other:
            out.append(line)
    return "\n".join(out)


_BOLD_ONLY: Final = re.compile(r"^[ \t]*+(\*\*|__)[^*_\n]{1,120}\1[ \t]*+:?[ \t]*+$")
_LABEL_ONLY: Final = re.compile(
    r"^[ \t]*+(?:[-*+][ \t]++)?(?:\*\*|__)?[^\W\d_][^:\n]{0,40}:(?:\*\*|__)?[ \t]*+$"
)


# --- what has no label ------------------------------------------------------------------------------------

_OS_OR_RUNTIME: Final = re.compile(
    r"\b(?:windows|macos|mac os|os x|linux|ubuntu|debian|fedora|arch|centos|rhel|android|ios|ipados|chrome|"
    r"chromium|firefox|safari|edge|opera|python|node(?:\.?js)?|java|jdk|ruby|go|rust|docker|kubernetes|"
    r"postgres(?:ql)?|mysql|sqlite|iphone|ipad|pixel|samsung|galaxy)\b"
)
_VERSION: Final = re.compile(
    r"\b(?:v|version|versao|release|build)[ \t:]*+\d++(?:\.\d++)*+\b|\b\d++\.\d++\.\d++\b"
)
_ENV_ROW: Final = re.compile(
    r"^[ \t]*+\|?[ \t]*+\**(?:version|versao|os|browser|navegador|platform|plataforma|runtime|device|"
    r"dispositivo|sistema)\**[ \t]*+\|[ \t]*+[^|\s]",
    re.M,
)
_ENV_FIELD: Final = re.compile(
    r"^[ \t]*+(?:[-*+][ \t]++)?[*_]{0,2}(?:version|versao|os|operating system|sistema operacional|browser|"
    r"navegador|platform|plataforma|runtime|device|dispositivo|environment|ambiente)[*_]{0,2}[ \t]*+:"
    r"[*_]{0,2}[ \t]*+[^\s*_\[]",
    re.M,
)
_USER_AGENT: Final = re.compile(r"^[ \t]*+(?:user[ -]agent|build id)[ \t]*+:", re.I | re.M)
_NUMBERED: Final = re.compile(r"^[ \t]*+\d{1,9}[.)][ \t]++\S", re.M)
_COMMAND: Final = re.compile(
    r"`(?=[^`\n]*? \S)[^`\n]++`|^ {0,3}(?:`{3,}+|~{3,}+)[ \t]*+(?:sh|bash|shell|console|zsh|powershell|cmd)\b"
    r"|^[ \t]*+\$ \S",
    re.M,
)
_THEN: Final = re.compile(r"\b(?:then|and then|after that|depois|então|entao|em seguida)\b", re.I)
_LINK: Final = re.compile(r"https?://\S|!\[|<img\b", re.I)
# 5.4 Artifacts is a reference (issue 36 §4; docs/bug-refinement.md): a link, an image, an attachment (a
# link, or a relative one as Gitea writes `/attachments/…`), a log path, or a code block of output — not any
# text: "none", "nenhum", "n/a" or a sentence about a screenshot are not artifacts.
_REFERENCE: Final = re.compile(
    r"https?://\S|!\[|<img\b|<a\s[^>\n]*?href|\]\([^()\s]++\)|<pre\b"
    r"|(?<![`~])(?:`{3,}+|~{3,}+)[^`~\n]*+\n[ \t]*+[^\s`~]"
    r"|^[ \t]*+[^\s`~][^\n]*+\n {0,3}(?:`{3,}+|~{3,}+)[ \t]*+$",
    re.I | re.M,
)
_TOKEN: Final = re.compile(r"[\w./\\~:-]++")
_ARTIFACT_FILE: Final = re.compile(
    r"[\w-]\.(?:log|txt|out|err|trace|json|har|png|jpe?g|gif|webp|svg|mp4|mov|webm|zip|gz|tgz|pdf|csv|xml"
    r"|ya?ml|dmp|dump)$",
    re.I,
)


def is_reference(text: str) -> bool:
    """Whether ``text`` holds an artifact: a link, an image, an attachment, a log path or a code block."""
    if _REFERENCE.search(text) is not None:
        return True
    return any(_ARTIFACT_FILE.search(token.rstrip(".:")) for token in _TOKEN.findall(text))


_INLINE_EXPECTED: Final = re.compile(
    r"\b(?:i expected|eu esperava|should have|deveria)\b[ \t]++[^\s*_]"
    r"|\b(?:i expected to see this happen|expected(?: result| behaviou?r)?|esperado|what i expected)"
    r"[ \t]*+:[ \t]*+[^\s*_]",
    re.I,
)
_INLINE_OBSERVED: Final = re.compile(
    r"(?:\binstead,? this happened|\bactual(?: result| behaviou?r)?|\bwhat happened(?: instead)?|\batual)"
    r"[ \t]*+:[ \t]*+\S",
    re.I,
)


def _code_text(doc: Document) -> tuple[str, list[str]]:
    """The prose of ``doc`` (code blocks out) and the code blocks' contents."""
    prose = [line for i, line in enumerate(doc.lines) if not doc.is_hidden(i)]
    blocks = [doc.text(b.start, b.end) for b in doc.blocks if b.kind == "fence"]
    return "\n".join(prose), blocks


# --- the reading ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A comment that may answer the verdict's questions: the reporter's own (``effects`` chooses which)."""

    id: int
    author: str
    url: str
    body: str

    @cached_property
    def report(self) -> Report:
        """The reply read as a report, once (the job may ask twice)."""
        return report_of(self.body)


@dataclass(frozen=True)
class Reading:
    """The reporter's items a report gives (``items``: item → the text that gives it) and the template labels
    it left empty (``empty_labels``: item → the label, to ask by its name)."""

    items: Mapping[str, str]
    empty_labels: Mapping[str, str] = field(default_factory=dict)
    language: Language = "en"
    ra9: bool = False  # written as RA9 (sections 1 or 5 under their headings)
    # item → the reply that gave it (when the report itself did not): shown as "from @x's comment"
    sources: Mapping[str, Reply] = field(default_factory=dict)

    def given(self, item: str) -> bool:
        return bool(self.items.get(item))

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(item for item in ITEMS if not self.given(item))


def _sub_text(doc: Document, found: Mapping[int, Section]) -> dict[str, str]:
    """The RA9 document's reporter parts: section 1, and the recipe's sub-sections and 5.3's two fields
    (``found``: its sections)."""
    out: dict[str, str] = {}
    if 1 in found:
        out["1"] = doc.section_text(found[1])
    if 5 in found:
        subs = find_subsections(doc, found[5], RECIPE_SUBSECTION_NAMES)
        for key in ("5.1", "5.2", "5.4"):
            if key in subs:
                out[key] = doc.section_text(subs[key])
        if "5.3" in subs:
            observed = doc.section_text(subs["5.3"])
            out["5.3o"] = observed if field_value(OBSERVED, observed) else ""
            out["5.3e"] = observed if field_value(EXPECTED, observed) else ""
    return out


def read(report: Report | str, replies: tuple[Reply, ...] = ()) -> Reading:
    """The reporter's items in ``report`` (see the module docstring), completed by ``replies``: what a reply
    gives that the report lacks is read into it, the first reply that gives an item wins."""
    reading = _read(report if isinstance(report, Report) else report_of(report), reply=False)
    if not replies or not reading.missing:
        return reading
    items = dict(reading.items)
    sources: dict[str, Reply] = {}
    for reply in replies:
        answered = _read(reply.report, reply=True)
        for item in ITEMS:
            if not items.get(item) and answered.items.get(item):
                items[item] = answered.items[item]
                sources[item] = reply
    empty = {k: v for k, v in reading.empty_labels.items() if not items.get(k)}
    return Reading(items, empty, reading.language, reading.ra9, sources)


def _read(report: Report, *, reply: bool) -> Reading:
    """One text's items; a reply (``reply``) gives only what it says outright: its words are not taken for
    the description, and a template field it does not have does not stop a sentence from answering."""
    form, mapped = report.form.source, report.document.source
    found = find_sections(report.document, BUG_SECTION_NAMES)
    ra9 = mapped == form and bool(set(found) & {1, 5})
    parts = _sub_text(report.document, found)
    language = report_language(report.text, language_of(section.title for section in found.values()))
    items: dict[str, str] = {}
    for item in ITEMS:
        part = strip_html_comments(parts.get(item, ""))
        if not ra9:
            # A heading the common formats do not know is another field of the form (`formats` keeps it one
            # level down): what follows it is not this item's.
            part = _without_other_fields(part)
        if item == "5.2" and ra9:
            # RA9's own rule for a document written as RA9: at least two numbered steps.
            items[item] = part if len(_NUMBERED.findall(part)) >= 2 else ""
        elif item == "5.4":
            items[item] = part if _said(part) and is_reference(part) else ""
        else:
            items[item] = part if _said(part) else ""
    empty: dict[str, str] = {}
    if not ra9:
        for label in report_labels(report.form):
            target = {"1+": "1"}.get(label.target, label.target)
            if target in ITEMS and not items.get(target) and target not in empty:
                empty[target] = _PARENTHESIS.sub("", label.text).rstrip(": ").strip()
        prose, code = _code_text(report.uncommented)
        whole = strip_html_comments(form)
        if not reply and not items["1"] and mapped == form and _said(prose) and not _only_links(prose):
            items["1"] = prose.strip()
        if not reply and not items["5.3o"] and items["1"]:
            items["5.3o"] = items["1"]  # the description says what happens
        if not reply and not items["1"] and items["5.3o"]:
            items["1"] = items["5.3o"]  # and what happened says what goes wrong
        if reply:
            empty = {}
        if not items["5.3o"] and (m := _INLINE_OBSERVED.search(prose)):
            items["5.3o"] = m.group()
        # What has no label is looked for only where the report has no field for it: a template's field left
        # empty is asked for by its name, even when a version turns up in the steps.
        if not items["5.3e"] and "5.3e" not in empty and (m := _INLINE_EXPECTED.search(prose)):
            items["5.3e"] = m.group()
        if not items["5.1"] and "5.1" not in empty:
            folded = fold(whole)
            if (
                _USER_AGENT.search(whole)
                or _ENV_ROW.search(folded)
                or _ENV_FIELD.search(folded)
                or (_VERSION.search(folded) and _OS_OR_RUNTIME.search(folded))
            ):
                items["5.1"] = "(in the report)"
        if (
            not items["5.2"]
            and "5.2" not in empty
            and (
                len(_NUMBERED.findall(prose)) >= 2 or _COMMAND.search(whole) or len(_THEN.findall(prose)) >= 1
            )
        ):
            items["5.2"] = "(in the report)"
        if (
            not items["5.4"]
            and "5.4" not in empty
            and (_LINK.search(whole) or any(b.count("\n") >= 3 for b in code))
        ):
            items["5.4"] = "(in the report)"
    return Reading(items, {k: v for k, v in empty.items() if not items.get(k)}, language, ra9)


def _only_links(text: str) -> bool:
    return not re.sub(r"!?\[[^\[\]\n]*+\]\([^()\n]*+\)|https?://\S++", "", text).strip()


# --- language ---------------------------------------------------------------------------------------------

_WORD: Final = re.compile(r"[^\W\d_]++")
_URL: Final = re.compile(r"\bhttps?://\S++")
_CODE: Final = re.compile(r"^ {0,3}(`{3,}+|~{3,}+)[^\n]*+\n(?:(?! {0,3}\1)[^\n]*+\n)*+|`[^`\n]++`", re.M)
_PT: Final = frozenset(
    (
        "não", "nao", "é", "uma", "um", "para", "está", "estou", "esta", "quando", "depois", "aparece",
        "deveria", "os", "as", "do", "da", "dos", "das", "no", "na", "nos", "nas", "em", "que", "você",
        "voce", "ele", "ela", "isso", "este", "tela", "clique", "salvar", "arquivo", "erro", "versão",
        "versao", "também", "tambem", "mas", "foi", "são", "sao", "ao", "pelo", "pela", "sempre", "nunca",
        "ainda", "aqui", "agora", "de", "o", "seu", "sua", "meu", "minha", "botão", "botao", "usuário",
        "usuario", "nada", "fecha", "abre"
    )
)  # fmt: skip
_EN: Final = frozenset(
    (
        "the", "is", "are", "to", "and", "of", "it", "when", "after", "with", "not", "should", "i", "i'm",
        "im", "my", "we", "our", "this", "that", "there", "on", "for", "was", "were", "be", "can",
        "cannot", "doesn't", "does", "do", "did", "what", "which", "have", "has", "from", "at", "by",
        "an", "every", "any"
    )
)  # fmt: skip


def report_language(text: str, fallback: Language = "en") -> Language:
    """Portuguese when more of the report's words are Portuguese than English ones (labels included);
    ``fallback`` when they are as many."""
    pt = en = 0
    prose = _URL.sub(" ", _CODE.sub(" ", text[:20_000])).casefold()
    for word in _WORD.findall(prose):
        if word in _PT:
            pt += 1
        elif word in _EN:
            en += 1
    return "pt" if pt > en else "en" if en > pt else fallback
