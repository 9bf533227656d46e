"""The repository's own issue templates, read as a maintainer reads a report filled through them (issue 34
§1). Pure: template files in, a ``RepoTemplates`` out; a report in, the report as the common formats read it.

A project names its fields as it likes ("How can we see it?" for the steps) and leaves example text in them
(a form field's ``placeholder:`` and ``value:`` default, a markdown template's hint lines). An issue form's
answer comes back as ``### <label>`` and the answer (GitHub; Gitea writes the same, with ``_No response_``
for an empty field and a fence around a textarea that has ``render:``), a markdown template's as its own
headings or bold labels. So the templates say which field is which RA9 reporter item — by the field's label
when the common formats know it, else by its ``id``, else by the words of the label — and what counts as
unfilled: ``apply`` gives each of the repository's renamed fields the name the common formats read
(``### Steps to reproduce``), takes out the lines a field's placeholder or default left as they were, and
says which of the project's own labels it renamed, so the reporter is asked by that name.

Reading is capped: at most ``MAX_FILES`` files of at most ``MAX_FILE_CHARS`` characters, ``MAX_FIELDS``
fields, each example text cut to ``MAX_EMPTY_CHARS``; ``apply`` is one pass over the report's lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from .formats import _target
from .placeholders import LIST_MARK
from .text import fold

__all__ = [
    "CANONICAL",
    "MAX_FILES",
    "RepoTemplates",
    "TemplateField",
    "could_be_template",
    "parse_templates",
]

MAX_FILES: Final = 20
MAX_FILE_CHARS: Final = 65_536
MAX_FIELDS: Final = 200
MAX_EMPTY_CHARS: Final = 2_000

# The label the common formats read for each item (``formats._LABELS``): a renamed field is given it.
CANONICAL: Final[Mapping[str, str]] = {
    "1": "Describe the bug",
    "1+": "Additional context",
    "5.1": "Environment",
    "5.2": "Steps to reproduce",
    "5.3o": "Actual behavior",
    "5.3e": "Expected behavior",
    "5.4": "Logs",
}
# The words of a label or an id the common formats do not know, in the order they are tried.
_WORDS: Final = (
    ("5.3e", ("expect", "should happen", "esperad", "esperava")),
    ("5.2", ("reproduc", "steps", "repro", "passos", "how can we see", "how do we see", "what did you do")),
    ("5.3o", ("actual", "happened", "instead", "observ", "aconteceu", "current behav")),
    ("5.1", ("version", "environment", "browser", "operating system", "platform", "ambiente", "versao")),
    ("5.4", ("log", "screenshot", "trace", "captura", "attachment", "anexo")),
    ("1", ("describe", "description", "what went wrong", "what goes wrong", "descricao", "problem")),
)
_HEADING: Final = re.compile(r"^ {0,3}(#{1,6})[ \t]++([^\n]*+)$")
_BOLD: Final = re.compile(r"^ {0,3}(\*\*|__)([^*_\n]{1,120})\1[ \t]*+:?[ \t]*+$")
_NUMBERED_LABEL: Final = re.compile(r"^[ \t]*+\d{1,2}(?:\.\d{1,2})?[.)]?[ \t]")
_FENCE: Final = re.compile(r"^ {0,3}(?:`{3,}+|~{3,}+)")
_COMMENT: Final = re.compile(r"<!--.*?-->", re.S)
_FRONT_MATTER: Final = re.compile(r"\A---[ \t]*+\n(?:[^\n]*+\n){0,60}?---[ \t]*+(?:\n|\Z)")


def could_be_template(name: str) -> bool:
    """A file a forge shows as an issue template (Gitea's ``template.CouldBe``: ``.md``, ``.yaml``,
    ``.yml``; GitHub reads the same three in ``.github/ISSUE_TEMPLATE``), ``config.yml`` excepted."""
    lower = name.casefold()
    return lower.endswith((".md", ".yml", ".yaml")) and lower not in ("config.yml", "config.yaml")


def _key(label: str) -> str:
    return " ".join(re.sub(r"[^\w]++", " ", fold(label)).split())


def _empty_line(line: str) -> str:
    return fold(LIST_MARK.sub("", line)).strip(" \t.:!*_`")


def target_of(label: str, ident: str = "") -> str | None:
    """The RA9 reporter item a field is (``CANONICAL``'s keys), by its label, its id, or their words. A
    field numbered as RA9 numbers its sections (`5.1 Environment`, Steward's own form) is RA9's: ``forms``
    reads it, so it is not renamed."""
    if _NUMBERED_LABEL.match(label):
        return None
    for text in (label, ident.replace("_", " ").replace("-", " ")):
        if text and (found := _target(text, exact=False)) is not None:
            return found
    words = f" {_key(label)} {_key(ident.replace('_', ' ').replace('-', ' '))} "
    for target, stems in _WORDS:
        if any(stem in words for stem in stems):
            return target
    return None


@dataclass(frozen=True)
class TemplateField:
    label: str  # as the template spells it
    target: str | None  # the item it is, when one
    empty: tuple[str, ...] = ()  # its placeholder and default lines, as ``_empty_line`` gives them


@dataclass(frozen=True)
class RepoTemplates:
    """The fields of a repository's issue templates (``parse_templates``)."""

    fields: tuple[TemplateField, ...] = ()
    sources: tuple[str, ...] = ()  # the files read, for the record
    _by_label: dict[str, TemplateField] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for f in self.fields:
            self._by_label.setdefault(_key(f.label), f)

    def to_json(self) -> str:
        return json.dumps(
            {
                "fields": [[f.label, f.target, list(f.empty)] for f in self.fields],
                "sources": list(self.sources),
            }
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> RepoTemplates:
        data = json.loads(text)
        fields = tuple(
            TemplateField(str(label), None if target is None else str(target), tuple(map(str, empty)))
            for label, target, empty in data.get("fields", ())[:MAX_FIELDS]
        )
        return cls(fields, tuple(map(str, data.get("sources", ()))))

    def apply(self, text: str) -> tuple[str, dict[str, str]]:
        """``text`` with the repository's renamed fields under the labels the common formats read and the
        lines its placeholders and defaults left taken out; and item → the project's own label, for each
        field renamed (to ask by it)."""
        if not self.fields:
            return text, {}
        out: list[str] = []
        renamed: dict[str, str] = {}
        current: TemplateField | None = None
        fenced = False
        for line in text.split("\n"):
            if _FENCE.match(line):
                fenced = not fenced
                if fenced or not out or not _FENCE.match(out[-1]):
                    out.append(line)
                else:
                    out.pop()  # a fence left with nothing in it (Gitea fences a `render:` textarea)
                continue
            if not fenced and (m := _HEADING.match(line) or _BOLD.match(line)) is not None:
                label = m.group(2).rstrip(" \t#").strip()
                current = self._by_label.get(_key(label))
                target = current.target if current is not None else None
                if target is not None and _target(label, exact=False) != target:
                    renamed.setdefault(target, label)
                    mark = m.group(1)
                    line = (
                        f"{mark} {CANONICAL[target]}"
                        if mark.startswith("#")
                        else f"{mark}{CANONICAL[target]}{mark}"
                    )
                out.append(line)
                continue
            if current is not None and current.empty and line.strip():
                bare = _empty_line(line)
                if not bare or bare in current.empty:
                    continue  # the field's example left as it was (`2. ...` says nothing either)
            out.append(line)
        return "\n".join(out), renamed


def _text(value: Any) -> str:
    return value[:MAX_EMPTY_CHARS] if isinstance(value, str) else ""


def _empties(*texts: str) -> tuple[str, ...]:
    found: list[str] = []
    for text in texts:
        for line in text.split("\n"):
            if (bare := _empty_line(line)) and bare not in found:
                found.append(bare)
    return tuple(found)


def _form_fields(text: str) -> list[TemplateField]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    body = data.get("body") if isinstance(data, dict) else None
    if not isinstance(body, list):
        return []
    out: list[TemplateField] = []
    for item in body[:MAX_FIELDS]:
        if not isinstance(item, dict) or item.get("type") not in (
            "textarea",
            "input",
            "dropdown",
            "checkboxes",
        ):
            continue
        attributes = item.get("attributes")
        if not isinstance(attributes, dict) or not (label := _text(attributes.get("label")).strip()):
            continue
        ident = _text(item.get("id"))
        out.append(TemplateField(label, target_of(label, ident), _unanswered(item["type"], attributes)))
    return out


def _unanswered(kind: str, attributes: dict[Any, Any]) -> tuple[str, ...]:
    """What a field says when the reporter left it as the form showed it. A text field: its placeholder and
    its ``value:`` default. A dropdown: the option its ``default:`` index preselects, and "None", the choice
    GitHub offers for a dropdown that is not required (reserved: a form with a default may not have it).
    Checkboxes: each option unticked (``- [ ] <label>``; a ticked one, ``[x]`` or ``[X]``, is an answer;
    Gitea's modules/issue/template/template.go ``WriteTo``). Both forges write a dropdown's chosen options on
    one line joined by ", " (github/issue-parser's fixtures; Gitea's ``WriteTo``): the default alone is no
    answer, the default among others is one."""
    raw = attributes.get("options")
    listed: list[Any] = raw[:MAX_FIELDS] if isinstance(raw, list) else []
    if kind == "dropdown":
        options = [o for o in listed if isinstance(o, str)]
        default = attributes.get("default")
        preselected = (
            [options[default]]
            if isinstance(default, int) and not isinstance(default, bool) and 0 <= default < len(options)
            else []
        )
        return _empties("None", *preselected)
    if kind == "checkboxes":
        boxes = [o.get("label") for o in listed if isinstance(o, dict)]
        return _empties(*(f"[ ] {_text(label)}" for label in boxes if _text(label).strip()))
    return _empties(_text(attributes.get("placeholder")), _text(attributes.get("value")))


def _markdown_fields(text: str) -> list[TemplateField]:
    text = _FRONT_MATTER.sub("", text, count=1)
    out: list[TemplateField] = []
    label: str | None = None
    hints: list[str] = []
    fenced = False

    def close() -> None:
        if label is not None and len(out) < MAX_FIELDS:
            out.append(TemplateField(label, target_of(label), _empties("\n".join(hints))))

    for line in _COMMENT.sub("", text).split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and (m := _HEADING.match(line) or _BOLD.match(line)) is not None:
            close()
            label, hints = m.group(2).strip(), []
        elif label is not None and len("\n".join(hints)) < MAX_EMPTY_CHARS:
            hints.append(line)
    close()
    return out


def parse_templates(files: Iterable[tuple[str, str]]) -> RepoTemplates:
    """The fields of the template files (path, text): issue forms (``.yml``/``.yaml``) and markdown
    templates (``.md``, their front matter skipped); the first file that names a label wins."""
    fields: list[TemplateField] = []
    sources: list[str] = []
    for path, text in list(files)[:MAX_FILES]:
        text = text[:MAX_FILE_CHARS]
        found = _markdown_fields(text) if path.casefold().endswith(".md") else _form_fields(text)
        fields.extend(found[: MAX_FIELDS - len(fields)])
        sources.append(path)
    return RepoTemplates(tuple(fields), tuple(sources))
