"""The RA9 refinement rules: a bug (or story) document in, a verdict out. Pure: no I/O, no clock.

The caller supplies `refined_at`; the same text, id and time always give the same verdict and hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from . import sections
from .checks import (
    BLOCKED_BY,
    EXPECTED,
    NUMBERED_STEP,
    OBSERVED,
    SCOPE,
    SEVERITY,
    body_field,
    field_value,
    front_matter_value,
    has_content,
    has_gherkin,
    hypothesis_length,
    names_test_path,
    status_before_approval,
    status_value,
)
from .document import (
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    STORY_SECTION_NAMES,
    Document,
    find_sections,
    find_subsections,
    parse_document,
    strip_html_comments,
)
from .reading import ITEMS, Reading, Reply, read, report_language
from .repo_templates import CANONICAL, RepoTemplates
from .report import Report, report_of
from .sections import Language
from .text import fold
from .verdict import (
    VERDICT_HEADING,
    Blocker,
    BugVerdict,
    RecordedVerdict,
    RefinementWarning,
    StoryVerdict,
    Verdict,
    apply_verdict,
    format_refined_at,
    is_locked,
    is_refined,
    next_verdict,
    read_verdict_block,
    render_verdict_block,
    same_outcome,
    story_verdict_hash,
    verdict_hash,
)

__all__ = [
    "BLOCKER_CODES",
    "REPORTER_SECTIONS",
    "STORY_BLOCKER_CODES",
    "VERDICT_HEADING",
    "WARNING_CODES",
    "Audience",
    "Blocker",
    "BugVerdict",
    "RecordedVerdict",
    "RefinementWarning",
    "StoryVerdict",
    "Verdict",
    "apply_verdict",
    "audience",
    "blocker_for",
    "blockers_for",
    "document_language",
    "format_refined_at",
    "is_locked",
    "is_refined",
    "next_verdict",
    "read_verdict_block",
    "refine_bug",
    "refine_story",
    "render_verdict_block",
    "same_outcome",
    "section_of",
    "story_language",
    "story_verdict_hash",
    "verdict_hash",
    "warning_for",
]

# --- blocker and warning codes ----------------------------------------------------------------------------


def _bug_messages(lang: Language) -> dict[str, str]:
    """What each bug blocker asks for, naming sections in the document's language."""
    h = {n: f"`{sections.heading(n, lang)}`" for n in sections.BUG_SECTIONS}
    sub = {key: f"`{sections.subsection(key, lang)}`" for key in sections.RECIPE_SUBSECTIONS}
    f = {key: sections.field(key, lang) for key in sections.FIELDS}
    other: Language = "en" if lang == "pt" else "pt"
    g = {key: sections.field(key, other) for key in ("given", "when", "then")}
    return {
        **{
            f"MISSING_SECTION_{n}": f"Add a level-2 heading {sections.label(n, lang)} and fill it in."
            for n in sections.BUG_SECTIONS
        },
        "VISION_EMPTY": f"Under {h[1]}, write at least one line: who is affected and what goes wrong.",
        "AC_MISSING_GHERKIN": (
            f"Under {h[4]}, write a scenario with a `{f['given']}` line, then a `{f['when']}` line, "
            f"then a `{f['then']}` line (`{g['given']}`/`{g['when']}`/`{g['then']}` work too)."
        ),
        "RECIPE_MISSING_ENV": f"Under {h[5]}, add {sub['5.1']} with the version, OS and runtime.",
        "RECIPE_MISSING_STEPS": (
            f"Under {h[5]}, add {sub['5.2']} with at least two numbered steps (`1.`, `2.`)."
        ),
        "RECIPE_MISSING_OBSERVED_EXPECTED": (
            f"Under {h[5]}, add {sub['5.3']} with an `{f['observed']}:` line and an `{f['expected']}:` "
            "line, both filled in."
        ),
        "RECIPE_MISSING_ARTIFACTS": (
            f"Under {h[5]}, add {sub['5.4']} with a log path, link, screenshot or attachment."
        ),
        "ROOT_CAUSE_TOO_SHORT": f"Under {h[6]}, write at least 10 characters on what you suspect is wrong.",
        "REGRESSION_SLOT_MISSING": (
            f"Under {h[7]}, name the test file (such as `tests/test_cart.py`) or write `TBD`."
        ),
        "STATUS_LINE_MISSING": (
            f"Add a `**Status:** {'Pendente' if lang == 'pt' else 'Pending'}` line near the top of the body."
        ),
        "STATUS_LINE_INVALID": (
            f"Set the status line to `**Status:** {'Pendente' if lang == 'pt' else 'Pending'}`: it is the "
            "only value before approval, and it becomes "
            f"`{'Refinada' if lang == 'pt' else 'Refined'}` when the bug is approved."
        ),
    }


def _story_messages(lang: Language) -> dict[str, str]:
    h = {n: f"`{sections.heading(n, lang, story=True)}`" for n in sections.STORY_SECTIONS}
    f = {key: sections.field(key, lang) for key in sections.FIELDS}
    return {
        "STORY_VISION_EMPTY": f"In the story, add {h[1]} with at least one line on what the story delivers.",
        "STORY_AC_MISSING_GHERKIN": (
            f"In the story, add {h[4]} with a `{f['given']}` line, then a `{f['when']}` line, "
            f"then a `{f['then']}` line."
        ),
        "STORY_RECIPE_INCOMPLETE": (
            f"In the story, add {h[5]} with the sub-sections `{sections.subsection('5.1', lang)}` "
            f"and `{sections.subsection('5.3', lang)}`."
        ),
        "STORY_DEPS_MISSING": (
            f"In the story, add {h[7]} with a `**Blocked By:**` line naming the blocker, or `—` for none."
        ),
        "STORY_STATUS_INVALID": (
            f"In the story, set the status line to `**Status:** {'Pendente' if lang == 'pt' else 'Pending'}`"
            f" (it becomes `{'Refinada' if lang == 'pt' else 'Refined'}` when the story is approved)."
        ),
    }


def _story_messages_pt() -> dict[str, str]:
    """The same, in Portuguese: a story's verdict speaks its language as a bug's does (issue 34 §2)."""
    h = {n: f"`{sections.heading(n, 'pt', story=True)}`" for n in sections.STORY_SECTIONS}
    return {
        "STORY_VISION_EMPTY": (
            f"Na história, acrescente {h[1]} com ao menos uma linha sobre o que ela entrega."
        ),
        "STORY_AC_MISSING_GHERKIN": (
            f"Na história, acrescente {h[4]} com uma linha `Dado`, depois uma `Quando`, depois uma `Então`."
        ),
        "STORY_RECIPE_INCOMPLETE": (
            f"Na história, acrescente {h[5]} com as subseções `{sections.subsection('5.1', 'pt')}` "
            f"e `{sections.subsection('5.3', 'pt')}`."
        ),
        "STORY_DEPS_MISSING": (
            f"Na história, acrescente {h[7]} com uma linha `**Bloqueado Por:**` que nomeie o bloqueio, "
            "ou `—` se não houver."
        ),
        "STORY_STATUS_INVALID": (
            "Na história, deixe a linha de status como `**Status:** Pendente` (ela passa a `Refinada` quando "
            "a história é aprovada)."
        ),
    }


def _bug_messages_pt() -> dict[str, str]:
    """The same, in Portuguese: one language per verdict (issue 34 §2)."""
    h = {n: f"`{sections.heading(n, 'pt')}`" for n in sections.BUG_SECTIONS}
    sub = {key: f"`{sections.subsection(key, 'pt')}`" for key in sections.RECIPE_SUBSECTIONS}
    return {
        **{
            f"MISSING_SECTION_{n}": f"Acrescente um título de nível 2 {sections.label(n, 'pt')} e preencha-o."
            for n in sections.BUG_SECTIONS
        },
        "VISION_EMPTY": f"Em {h[1]}, escreva ao menos uma linha: quem é afetado e o que dá errado.",
        "AC_MISSING_GHERKIN": (
            f"Em {h[4]}, escreva um cenário com uma linha `Dado`, depois uma `Quando`, depois uma `Então` "
            "(`Given`/`When`/`Then` também servem)."
        ),
        "RECIPE_MISSING_ENV": f"Em {h[5]}, acrescente {sub['5.1']} com a versão, o sistema e o ambiente.",
        "RECIPE_MISSING_STEPS": f"Em {h[5]}, acrescente {sub['5.2']} com ao menos dois passos numerados.",
        "RECIPE_MISSING_OBSERVED_EXPECTED": (
            f"Em {h[5]}, acrescente {sub['5.3']} com uma linha `Observado:` e uma `Esperado:`, "
            "ambas preenchidas."
        ),
        "RECIPE_MISSING_ARTIFACTS": (
            f"Em {h[5]}, acrescente {sub['5.4']} com um caminho de log, um link, uma captura de tela "
            "ou um anexo."
        ),
        "ROOT_CAUSE_TOO_SHORT": f"Em {h[6]}, escreva ao menos 10 caracteres sobre o que você suspeita.",
        "REGRESSION_SLOT_MISSING": (
            f"Em {h[7]}, indique o arquivo de teste (como `tests/test_cart.py`) ou escreva `TBD`."
        ),
        "STATUS_LINE_MISSING": "Acrescente uma linha `**Status:** Pendente` perto do início da descrição.",
        "STATUS_LINE_INVALID": (
            "Deixe a linha de status como `**Status:** Pendente`: é o único valor antes da aprovação, e ela "
            "passa a `Refinada` quando o bug é aprovado."
        ),
    }


_BUG_MESSAGES: dict[Language, dict[str, str]] = {"en": _bug_messages("en"), "pt": _bug_messages_pt()}
_STORY_MESSAGES: dict[Language, dict[str, str]] = {"en": _story_messages("en"), "pt": _story_messages_pt()}

_WARNING_MESSAGES: dict[str, str] = {
    "SEVERITY_MISSING": "Set `severity:` in the front matter or add a `**Severity:**` line (not required).",
    "SCOPE_MISSING": "Set `scope:` in the front matter or add a `**Scope:**` line (not required).",
}
_WARNING_MESSAGES_PT: dict[str, str] = {
    "SEVERITY_MISSING": "Defina `severity:` no front matter ou acrescente uma linha `**Severidade:**`.",
    "SCOPE_MISSING": "Defina `scope:` no front matter ou acrescente uma linha `**Escopo:**`.",
}

BLOCKER_CODES: tuple[str, ...] = tuple(_BUG_MESSAGES["en"])
STORY_BLOCKER_CODES: tuple[str, ...] = tuple(_STORY_MESSAGES["en"])
WARNING_CODES: tuple[str, ...] = tuple(_WARNING_MESSAGES)

_SECTION_OF: dict[str, int] = {
    **{f"MISSING_SECTION_{n}": n for n in BUG_SECTION_NAMES},
    "VISION_EMPTY": 1,
    "AC_MISSING_GHERKIN": 4,
    "RECIPE_MISSING_ENV": 5,
    "RECIPE_MISSING_STEPS": 5,
    "RECIPE_MISSING_OBSERVED_EXPECTED": 5,
    "RECIPE_MISSING_ARTIFACTS": 5,
    "ROOT_CAUSE_TOO_SHORT": 6,
    "REGRESSION_SLOT_MISSING": 7,
    "STORY_VISION_EMPTY": 1,
    "STORY_AC_MISSING_GHERKIN": 4,
    "STORY_RECIPE_INCOMPLETE": 5,
    "STORY_DEPS_MISSING": 7,
}


# What the reporter's blockers ask, in the words of the common format they wrote in (the labels of GitHub's
# default template), for a report read through ``formats``: they never wrote RA9's headings, nor need to.
_COMMON_MESSAGES: dict[str, str] = {
    "MISSING_SECTION_1": "Describe the bug under **Describe the bug**: who is affected, and what goes wrong.",
    "VISION_EMPTY": "Describe the bug under **Describe the bug**: who is affected, and what goes wrong.",
    "MISSING_SECTION_5": (
        "Say how to reproduce it: **To Reproduce** with numbered steps, **Expected behavior**, **Actual "
        "behavior**, the environment (version, OS, browser or runtime) and a screenshot, log or link."
    ),
    "RECIPE_MISSING_ENV": (
        "Add where it happens under **Environment**: the version, the OS, the browser or runtime."
    ),
    "RECIPE_MISSING_STEPS": "Under **To Reproduce**, write the steps as a numbered list (`1.`, `2.`, …).",
    "RECIPE_MISSING_OBSERVED_EXPECTED": (
        "Say what happened and what you expected, each under its own label: **Actual behavior** and "
        "**Expected behavior** (or `Actual:` and `Expected:` lines)."
    ),
    "RECIPE_MISSING_ARTIFACTS": "Add a screenshot, a log or a link under **Screenshots** or **Logs**.",
}


def blocker_for(code: str, language: Language = "en", *, common_format: bool = False) -> Blocker:
    """The blocker with `code` and its standard message (also for codes read back from a verdict block),
    naming sections in `language`; for a report in a common format (in English), the reporter's blockers
    name that format's labels instead."""
    if common_format and language == "en" and code in _COMMON_MESSAGES:
        return Blocker(code, _COMMON_MESSAGES[code])
    message = _BUG_MESSAGES[language].get(code) or _STORY_MESSAGES[language].get(code) or f"Fix `{code}`."
    return Blocker(code, message)


def document_language(doc: Document) -> Language:
    """The language the document's RA9 headings are written in (English when it has none)."""
    found = find_sections(doc, BUG_SECTION_NAMES)
    return sections.language_of(section.title for section in found.values())


def story_language(doc: Document) -> Language:
    """The language of a story, by its words as a bug report's (``reading.report_language``), its RA9
    headings' language breaking a tie."""
    return report_language(doc.source, document_language(doc))


def section_of(code: str) -> int | None:
    """The section a blocker code is about; None for codes about the whole document."""
    return _SECTION_OF.get(code)


# Who can supply what a blocker asks for: the reporter knows what they saw and how to reproduce it (sections
# 1 and 5); the other sections, and the status line, are the maintainers' to write.
REPORTER_SECTIONS: frozenset[int] = frozenset({1, 5})
Audience = Literal["reporter", "maintainers"]


def audience(code: str) -> Audience:
    """Who is asked for what blocker `code` needs: the reporter or the maintainers."""
    return "reporter" if section_of(code) in REPORTER_SECTIONS else "maintainers"


def blockers_for(verdict: BugVerdict, who: Audience) -> tuple[Blocker, ...]:
    """The blockers of `verdict` that `who` is asked to fix, in order."""
    return tuple(b for b in verdict.blockers if audience(b.code) == who)


def warning_for(code: str, language: Language = "en") -> RefinementWarning:
    """The warning with `code` and its message (also for codes read back from a verdict comment)."""
    table = _WARNING_MESSAGES_PT if language == "pt" else _WARNING_MESSAGES
    return RefinementWarning(code, table.get(code, f"Consider `{code}`."))


# --- the bug ----------------------------------------------------------------------------------------------


def _reporter_codes(n: int, present: bool, reading: Reading) -> list[str]:
    """Seed 000's codes for the reporter's sections (1 and 5), from what the report gives (``reading``): a
    report gives an item however it is written, and a placeholder gives none."""
    if n == 1:
        if reading.given("1"):
            return []
        return ["VISION_EMPTY" if present else "MISSING_SECTION_1"]
    recipe = ("5.1", "5.2", "5.3o", "5.3e", "5.4")
    if not present and not any(reading.given(item) for item in recipe):
        return ["MISSING_SECTION_5"]
    codes = []
    if not reading.given("5.1"):
        codes.append("RECIPE_MISSING_ENV")
    if not reading.given("5.2"):
        codes.append("RECIPE_MISSING_STEPS")
    if not (reading.given("5.3o") and reading.given("5.3e")):
        codes.append("RECIPE_MISSING_OBSERVED_EXPECTED")
    if not reading.given("5.4"):
        codes.append("RECIPE_MISSING_ARTIFACTS")
    return codes


def _bug_blockers(doc: Document, reading: Reading) -> list[str]:
    sections = find_sections(doc, BUG_SECTION_NAMES)
    codes: list[str] = []
    for n in BUG_SECTION_NAMES:
        section = sections.get(n)
        if n in REPORTER_SECTIONS:
            codes += _reporter_codes(n, section is not None, reading)
            continue
        if section is None:
            codes.append(f"MISSING_SECTION_{n}")
            continue
        text = doc.section_text(section)
        if n == 1 and not has_content(text):
            codes.append("VISION_EMPTY")
        elif n == 4 and not has_gherkin(text):
            codes.append("AC_MISSING_GHERKIN")
        elif n == 5:
            subs = find_subsections(doc, section, RECIPE_SUBSECTION_NAMES)
            env, steps, obs, art = (subs.get(k) for k in ("5.1", "5.2", "5.3", "5.4"))
            if env is None or not has_content(doc.section_text(env)):
                codes.append("RECIPE_MISSING_ENV")
            if steps is None or len(NUMBERED_STEP.findall(strip_html_comments(doc.section_text(steps)))) < 2:
                codes.append("RECIPE_MISSING_STEPS")
            if obs is None or not (
                field_value(OBSERVED, doc.section_text(obs)) and field_value(EXPECTED, doc.section_text(obs))
            ):
                codes.append("RECIPE_MISSING_OBSERVED_EXPECTED")
            if art is None or not has_content(doc.section_text(art)):
                codes.append("RECIPE_MISSING_ARTIFACTS")
        elif n == 6 and hypothesis_length(doc, section) < 10:
            codes.append("ROOT_CAUSE_TOO_SHORT")
        elif n == 7 and not names_test_path(text):
            codes.append("REGRESSION_SLOT_MISSING")
    status = status_value(doc)
    if status is None:
        codes.append("STATUS_LINE_MISSING")
    elif not status_before_approval(status):
        codes.append("STATUS_LINE_INVALID")
    return codes


def _bug_warnings(doc: Document) -> list[str]:
    codes: list[str] = []
    if not (front_matter_value(doc, "severity") or body_field(doc, SEVERITY)):
        codes.append("SEVERITY_MISSING")
    if not (front_matter_value(doc, "scope") or body_field(doc, SCOPE)):
        codes.append("SCOPE_MISSING")
    return codes


def _asked_label(item: str, label: str, renamed: Mapping[str, str]) -> str:
    """The label a field left empty is asked by: the project's own, where ``repo_templates`` renamed it to
    the common formats' (another field of the same item may have kept its name: that one is asked by it)."""
    return renamed.get(item, label) if fold(label) == fold(CANONICAL.get(item, "")) else label


def refine_bug(
    report: Report | str,
    *,
    bug_id: str,
    refined_at: datetime | str,
    replies: tuple[Reply, ...] = (),
    templates: RepoTemplates | None = None,
) -> BugVerdict:
    """Check a bug document against the RA9 rules: `approved` when nothing blocks it, else `rejected`.
    The reporter's part (sections 1 and 5) is what the report gives, however it is written (``reading``);
    the maintainers' sections are read from the RA9 document the report spells (``formats.read_report``).
    ``asks``: the reporter's items still missing, in order, and the labels their template gave them.
    ``replies``: the reporter's comments, whose answers count (``reading.read``; never for section 7).
    ``templates``: the repository's own issue templates, whose field names and example text say which field
    is which and what is unfilled (``repo_templates``); a field it renamed is asked for by its own name.
    ``report``: the report as its job read it once (``report.report_of``, with the templates), or its text."""
    if not isinstance(report, Report):
        report = report_of(report, templates)
    cut, renamed = report.cut, report.renamed
    reading = read(report, replies)
    doc = report.document
    language = reading.language
    common = not reading.ra9 and report.mapped
    blockers = tuple(
        blocker_for(code, language, common_format=common) for code in _bug_blockers(doc, reading)
    )
    warnings = tuple(warning_for(code, language) for code in _bug_warnings(doc))
    verdict: Verdict = "rejected" if blockers else "approved"
    at = format_refined_at(refined_at)
    asks = tuple(item for item in ITEMS if not reading.given(item))
    return BugVerdict(
        bug_id,
        verdict,
        verdict_hash(bug_id, verdict, at),
        at,
        blockers,
        warnings,
        cut,
        asks,
        tuple(
            sorted((item, _asked_label(item, label, renamed)) for item, label in reading.empty_labels.items())
        ),
        language,
        tuple((item, r.author, r.url) for item, r in sorted(reading.sources.items())),
    )


# --- stories ----------------------------------------------------------------------------------------------


def refine_story(
    text: str | Document, *, bug_id: str, story: str, refined_at: datetime | str
) -> StoryVerdict:
    """Check one story of an approved bug; `story` is its name (a file name's `.md` is dropped); ``text``
    parsed already, or its text."""
    name = story[:-3] if story.endswith(".md") else story
    doc = text if isinstance(text, Document) else parse_document(text)
    sections = find_sections(doc, STORY_SECTION_NAMES, number_suffices=frozenset({4, 5}))
    codes: list[str] = []
    vision = sections.get(1)
    if vision is None or not has_content(doc.section_text(vision)):
        codes.append("STORY_VISION_EMPTY")
    criteria = sections.get(4)
    if criteria is None or not has_gherkin(doc.section_text(criteria)):
        codes.append("STORY_AC_MISSING_GHERKIN")
    recipe = sections.get(5)
    subs = find_subsections(doc, recipe, RECIPE_SUBSECTION_NAMES) if recipe is not None else {}
    if "5.1" not in subs or "5.3" not in subs:
        codes.append("STORY_RECIPE_INCOMPLETE")
    deps = sections.get(7)
    if deps is None or not field_value(BLOCKED_BY, doc.section_text(deps)):
        codes.append("STORY_DEPS_MISSING")
    status = status_value(doc)  # optional in a story; when there, seed 000's values only (issue 36 §4)
    if status is not None and not status_before_approval(status):
        codes.append("STORY_STATUS_INVALID")
    verdict: Verdict = "rejected" if codes else "approved"
    at = format_refined_at(refined_at)
    language = story_language(doc)
    return StoryVerdict(
        bug_id,
        name,
        verdict,
        story_verdict_hash(bug_id, name, verdict, at),
        at,
        tuple(blocker_for(code, language) for code in codes),
        language=language,
    )
