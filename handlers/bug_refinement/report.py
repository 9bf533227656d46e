"""A bug report read once per job (issue 34 §1, DESIGN §2): its text and every document the readers need,
each parsed once and passed down. Pure.

A report is read in steps, each of which may rewrite it: the repository's own templates' fields under the
labels the common formats read (``repo_templates``), an issue form's fields as RA9's sections (``forms``), a
template's placeholders out (``placeholders``), a common format's sections as RA9's (``formats``). Each text
that differs from the one before is parsed once, here; a step that changes nothing reuses the document it was
given. The verdict (``rules``), the reading of the reporter's items (``reading``), the pasteable template
(``render``), the bugfix pull request and the hypotheses board (``api.report_of``) all read these documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from .document import Document, clip_report, parse_document, strip_html_comments
from .formats import common_format_text
from .forms import from_issue_form
from .placeholders import strip_placeholders
from .repo_templates import RepoTemplates

__all__ = ["Report", "report_of"]


@dataclass(frozen=True)
class Report:
    text: str  # the report as read: cut to ``MAX_REPORT_CHARS``, the repository's renamed fields renamed
    cut: tuple[int, int] | None  # (characters read, characters in all) when it was cut
    form: Document  # its form's fields as RA9's sections, its template's placeholders out
    document: Document  # as RA9 reads it: the common format's sections as RA9's (``formats``)
    renamed: Mapping[str, str] = field(default_factory=dict)  # item → the project's own label

    @cached_property
    def uncommented(self) -> Document:
        """``form`` without its HTML comments (a comment may open or close a block), parsed once."""
        return _then(self.form, strip_html_comments(self.form.source))

    @property
    def mapped(self) -> bool:
        """Whether the report was rewritten on its way to RA9 (a form, placeholders, a common format)."""
        return self.document.source != self.text


def _then(doc: Document, text: str) -> Document:
    """``text`` parsed — ``doc`` itself when ``text`` is its text."""
    return doc if text == doc.source else parse_document(text)


def report_of(text: str, templates: RepoTemplates | None = None, *, parsed: Document | None = None) -> Report:
    """``text`` read as a bug report (the module docstring): one parse, two when the report is in a common
    format (three for a form numbered as RA9's sections); none more when ``parsed`` is ``text`` parsed and
    no step changes it."""
    text, cut = clip_report(text)
    renamed: dict[str, str] = {}
    if templates is not None:
        text, renamed = templates.apply(text)
    # ``from_issue_form`` parses ``text`` only for a form numbered as RA9 numbers its sections; ``parsed``
    # (``text`` parsed already, as `steward refine` parses it for its verdict block) is used where it is.
    known = parsed if parsed is not None and parsed.source == text else None
    form_text = strip_placeholders(from_issue_form(text, known))
    form = known if known is not None and form_text == text else parse_document(form_text)
    return Report(text, cut, form, _then(form, common_format_text(form)), renamed)
