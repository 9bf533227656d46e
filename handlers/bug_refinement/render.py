"""What Steward writes on a bug issue: the verdict comment, the short notice that asks the author to act,
and the RA9 template pre-filled with what the author already wrote. Pure: values in, markdown out.

DESIGN §8: the reader's next action first; the machine-readable verdict block and the template folded
into ``<details>``; blocker codes shown after the words that explain them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from bot.records import neutralise
from handlers.bug_refinement import sections
from handlers.bug_refinement.document import (
    BUG_SECTION_NAMES,
    RECIPE_SUBSECTION_NAMES,
    Document,
    find_sections,
    find_subsections,
    strip_html_comments,
)
from handlers.bug_refinement.report import Report, report_of
from handlers.bug_refinement.rules import (
    REPORTER_SECTIONS,
    Blocker,
    BugVerdict,
    StoryVerdict,
    blockers_for,
    document_language,
    render_verdict_block,
    section_of,
)
from handlers.bug_refinement.sections import Language

__all__ = [
    "RESOLVED_TEXT",
    "StoryNote",
    "notice_text",
    "ready_text",
    "render_bug_comment",
    "render_story_comment",
    "resolved_text",
    "template",
    "verdict_notice_line",
]

# The template repeats what the author wrote; bounded so the comment stays far below GitHub's limit.
SECTION_CHARS: Final = 2_000
TEMPLATE_CHARS: Final = 16_000
_BACKTICKS: Final = re.compile(r"`+")


@dataclass(frozen=True)
class StoryNote:
    """A story of the bug: refined (with its verdict) or skipped (with why)."""

    number: int
    verdict: str | None = None
    skipped: str | None = None

    def line(self, language: Language = "en") -> str:
        """The story's line in its bug's verdict: its state as its own comment's heading says it (a story that
        does not check out waits for the maintainers: no ❌), in the verdict's language."""
        if self.number <= 0:  # a summary line ("… and 12 more")
            return f"- {self.skipped}"
        if self.skipped is not None:
            return f"- #{self.number} was not refined as a story: {self.skipped}."
        w = _WORDS[language]
        state = w["story_states"].get(self.verdict or "", self.verdict or "")
        return f"- #{self.number}: {state} ({w['see_story']})"


def _fence(text: str, info: str = "") -> str:
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def _details(summary: str, body: str) -> list[str]:
    # A blank line after <summary> lets the body render (and parse) as markdown.
    return [f"<details><summary>{summary}</summary>", "", body, "", "</details>"]


# With this many sections missing, they are one line, and the template is the quickest way forward.
MANY_MISSING: Final = 3


def _missing_sections(verdict: BugVerdict) -> list[int]:
    """The reporter's sections that are missing altogether (then the template is the quickest way)."""
    return [
        n
        for b in blockers_for(verdict, "reporter")
        if b.code.startswith("MISSING_SECTION_") and (n := section_of(b.code))
    ]


def _blocker_lines(blockers: Sequence[Blocker], language: Language, *, story: bool = False) -> list[str]:
    """Each blocker as what to write and where, its code after the words (a story's sections by its names)."""
    out = []
    missing = [n for b in blockers if b.code.startswith("MISSING_SECTION_") and (n := section_of(b.code))]
    if len(missing) >= MANY_MISSING:
        headings = ", ".join(f"`{sections.heading(n, language)}`" for n in missing)
        codes = ", ".join(f"`MISSING_SECTION_{n}`" for n in missing)
        lead = (
            "**Seções faltando** — acrescente estes títulos de nível 2 e preencha-os"
            if language == "pt"
            else "**Missing sections** — add these level-2 headings and fill them in"
        )
        out.append(f"- {lead}: {headings}. <sub>{codes}</sub>")
    for blocker in blockers:
        if len(missing) >= MANY_MISSING and blocker.code.startswith("MISSING_SECTION_"):
            continue
        n = section_of(blocker.code)
        where = f"**{n}. {sections.name(n, language, story=story)}** — " if n is not None else ""
        out.append(f"- {where}{neutralise.inert(blocker.message)} <sub>`{blocker.code}`</sub>")
    return out


def _things(n: int, language: Language = "en") -> str:
    if language == "pt":
        return f"{n} {'itens' if n != 1 else 'item'}"
    return f"{n} thing{'s' if n != 1 else ''}"


# The reporter is asked in plain words, in the report's language (issue 34 §2): never headings, section
# numbers or codes; a field of their template that they left empty is named.
QUESTIONS: Final[dict[Language, dict[str, str]]] = {
    "en": {
        "1": "What goes wrong, and for whom?",
        "5.1": "Which version were you on, and on which system (operating system, browser or runtime)?",
        "5.2": "What did you do, step by step, to make it happen?",
        "5.3o": "What happened? (an error message, or what you saw)",
        "5.3e": "What did you expect to happen instead?",
        "5.4": "Can you add a screenshot, a log or a link that shows it?",
    },
    "pt": {
        "1": "O que dá errado, e para quem?",
        "5.1": "Em qual versão você estava, e em qual sistema (sistema operacional, navegador ou ambiente)?",
        "5.2": "O que você fez, passo a passo, para que acontecesse?",
        "5.3o": "O que aconteceu? (uma mensagem de erro, ou o que você viu)",
        "5.3e": "O que você esperava que acontecesse?",
        "5.4": "Pode anexar uma captura de tela, um log ou um link que mostre o problema?",
    },
}
_WORDS: Final[dict[Language, dict[str, Any]]] = {
    "en": {
        "field": "(the template's **{label}** field)",
        "waiting": "## Waiting for {who}: {n}",
        "question": "question",
        "questions": "questions",
        "ask": (
            "Thank you for the report. Before work on it can start, please answer "
            "{these} in the issue's description:"
        ),
        "these_one": "this question",
        "these_many": "these questions",
        "again": (
            "Answer in a comment here or in the description: I read both again each time one is saved."
        ),
        "from": "Read from @{who}'s [comment]({url}): {what}.",
        "items": {
            "1": "what goes wrong",
            "5.1": "the version and system",
            "5.2": "the steps",
            "5.3o": "what happened",
            "5.3e": "what was expected",
            "5.4": "a screenshot, log or link",
        },
        "complete": "## Reporter's part complete — waiting for the maintainers",
        "nothing": "Thank you: nothing more is needed from the reporter. Next, the maintainers add theirs.",
        "fold": "For the maintainers: {things} to add before work on this bug starts",
        "fold_after": "For the maintainers: {things} to add once the reporter has answered",
        "worth": "Worth adding (not required)",
        "refined": "## ✅ Refined",
        "locked": (
            "Nothing to do: every RA9 section checks out, so work on this bug can start. The verdict is "
            "locked — later edits to the description do not change it."
        ),
        "the_reporter": "the reporter",
        "template": "An RA9 document built from the report, for the maintainers to paste with their sections",
        "record": "Verdict record (refined at {at}; read by tools and CI)",
        "cut": (
            "This report is {total} characters long: I read only its first {read} (up to the end of a line), "
            "and checked nothing after that. Shorten the description, or move long logs into an attachment "
            "or a linked file."
        ),
        "changed": (
            "The description changed after approval. The approved verdict stands; open a new bug report to "
            "change an approved one."
        ),
        "stories": "Stories",
        "the_maintainers": "the maintainers",
        "story_states": {
            "approved": "✅ approved",
            "rejected": "waiting for the maintainers",
            "pending": "⏳ waiting for its bug",
        },
        "see_story": "see its comment",
        "story_next": (
            "This issue is a story of the approved bug {bug}: before work on it starts, the maintainers add "
            "to its description what the list below names. I check it again each time the description is "
            "edited."
        ),
        "story_fold": "For the maintainers: {things} to add before work on this story starts",
        "story_refined": (
            "Nothing to do: this story of the approved bug {bug} checks out, so work on it can start. "
            "**Status:** Refined."
        ),
        "story_pending": "## ⏳ Story waiting for its bug",
        "story_wait": (
            "Nothing to do here yet: this issue is a story of {bug}, and it is checked once {bug}'s "
            "refinement is approved. Until this story's own verdict is approved, work on it (`/bugfix`, "
            "`/hypothesis`, `/evidence`) waits. **Status:** Pending."
        ),
        "story_released": "## Story released",
        "story_free": (
            "Nothing to do: this issue is no longer a story of {bug} ({why}), so it no longer waits for "
            "{bug}'s refinement. To have it refined as a bug report of its own, add the `{refine}` label."
        ),
        "why_sub-issue": "it was removed from {bug}'s sub-issues",
        "why_unlisted": "{bug} no longer lists it",
        "why_gone": "{bug} no longer has it as a story",
    },
    "pt": {
        "field": "(campo **{label}** do modelo)",
        "waiting": "## Aguardando {who}: {n}",
        "question": "pergunta",
        "questions": "perguntas",
        "ask": ("Obrigado pelo relato. Antes de começarmos, responda {these} na descrição da issue:"),
        "these_one": "esta pergunta",
        "these_many": "estas perguntas",
        "again": "Responda num comentário aqui ou na descrição: eu releio os dois sempre que um é salvo.",
        "from": "Lido no [comentário]({url}) de @{who}: {what}.",
        "items": {
            "1": "o que dá errado",
            "5.1": "a versão e o sistema",
            "5.2": "os passos",
            "5.3o": "o que aconteceu",
            "5.3e": "o que era esperado",
            "5.4": "uma captura de tela, log ou link",
        },
        "complete": "## Parte do relator completa — aguardando os mantenedores",
        "nothing": "Obrigado: não falta nada do relator. Agora os mantenedores acrescentam a parte deles.",
        "fold": "Para os mantenedores: {things} a acrescentar antes de começar o trabalho neste bug",
        "fold_after": "Para os mantenedores: {things} a acrescentar depois da resposta do relator",
        "worth": "Vale acrescentar (não obrigatório)",
        "refined": "## ✅ Refinado",
        "locked": (
            "Nada a fazer: todas as seções RA9 estão completas, o trabalho neste bug pode começar. O "
            "veredito está travado — edições posteriores da descrição não o mudam."
        ),
        "the_reporter": "o relator",
        "template": "Um documento RA9 montado do relato, para os mantenedores colarem com suas seções",
        "record": "Registro do veredito (refinado em {at}; lido por ferramentas e CI)",
        "cut": (
            "Este relato tem {total} caracteres: li só os primeiros {read} (até o fim de uma linha) e não "
            "verifiquei nada depois disso. Encurte a descrição, ou mova logs longos para um anexo ou um link."
        ),
        "changed": (
            "A descrição mudou depois da aprovação. O veredito aprovado continua valendo; abra um novo "
            "relato para mudar um aprovado."
        ),
        "stories": "Histórias",
        "the_maintainers": "os mantenedores",
        "story_states": {
            "approved": "✅ aprovada",
            "rejected": "aguardando os mantenedores",
            "pending": "⏳ aguardando seu bug",
        },
        "see_story": "veja o comentário dela",
        "story_next": (
            "Esta issue é uma história do bug aprovado {bug}: antes de começar o trabalho nela, os "
            "mantenedores acrescentam à descrição o que a lista abaixo indica. Eu a verifico de novo sempre "
            "que a descrição é editada."
        ),
        "story_fold": (
            "Para os mantenedores: {things} a acrescentar antes de começar o trabalho nesta história"
        ),
        "story_refined": (
            "Nada a fazer: esta história do bug aprovado {bug} está completa, o trabalho nela pode começar. "
            "**Status:** Refinada."
        ),
        "story_pending": "## ⏳ História aguardando seu bug",
        "story_wait": (
            "Nada a fazer aqui por enquanto: esta issue é uma história de {bug}, e ela é verificada quando o "
            "refinamento de {bug} for aprovado. Até o veredito desta história ser aprovado, o trabalho nela "
            "(`/bugfix`, `/hypothesis`, `/evidence`) espera. **Status:** Pendente."
        ),
        "story_released": "## História liberada",
        "story_free": (
            "Nada a fazer: esta issue não é mais uma história de {bug} ({why}), então ela não aguarda mais o "
            "refinamento de {bug}. Para refiná-la como um relato de bug próprio, adicione o rótulo "
            "`{refine}`."
        ),
        "why_sub-issue": "foi removida das sub-issues de {bug}",
        "why_unlisted": "{bug} não a lista mais",
        "why_gone": "{bug} não a tem mais como história",
    },
}


def _lang(verdict: BugVerdict | StoryVerdict, language: Language | None = None) -> Language:
    chosen = language or verdict.language
    return "pt" if chosen == "pt" else "en"


def cut_note(cut: tuple[int, int] | None, language: str = "en") -> list[str]:
    """The note that opens a comment built from a text read only in part (``clip_report``'s second value:
    characters read, characters in all), in English or Portuguese; nothing when nothing was cut. The RA9
    verdict, the design-forks comment and the backlog interview say it alike (issue 35 item 4)."""
    if cut is None:
        return []
    read, total = cut
    words = _WORDS["pt" if language == "pt" else "en"]
    return ["> [!NOTE]", "> " + words["cut"].format(total=f"{total:,}", read=f"{read:,}"), ""]


def questions(verdict: BugVerdict, language: Language | None = None) -> list[str]:
    """What the verdict asks the reporter, one plain question per missing item, in the report's language,
    naming the field of their template they left empty."""
    lang = _lang(verdict, language)
    labels = dict(verdict.labels)
    out = []
    for item in verdict.asks:
        text = QUESTIONS[lang][item]
        if item in labels:
            text += " " + _WORDS[lang]["field"].format(label=neutralise.inert(labels[item]))
        out.append(text)
    return out


def _from_replies(verdict: BugVerdict, language: Language) -> list[str]:
    """One line per reply whose answers were read into the report (issue 34 §1), with a link to it."""
    w = _WORDS[language]
    by_reply: dict[tuple[str, str], list[str]] = {}
    for item, author, url in verdict.sources:
        by_reply.setdefault((author, url), []).append(w["items"][item])
    return (
        [
            "",
            *(
                w["from"].format(who=neutralise.inert(who), url=url, what=", ".join(what))
                for (who, url), what in by_reply.items()
            ),
        ]
        if by_reply
        else []
    )


def _not_ready(
    verdict: BugVerdict, language: Language, template_text: str | None, reporter: str | None
) -> list[str]:
    """A verdict that waits: on the reporter (their questions first, in plain words) or on the maintainers
    (their list folded under one line that says who acts next)."""
    w = _WORDS[language]
    asked = questions(verdict, language) if blockers_for(verdict, "reporter") else []
    maintainers = blockers_for(verdict, "maintainers")
    lines: list[str] = []
    if asked:
        who = f"@{reporter}" if reporter else w["the_reporter"]
        count = f"{len(asked)} {w['question'] if len(asked) == 1 else w['questions']}"
        lines += [w["waiting"].format(who=who, n=count), ""]
        lines += [w["ask"].format(these=w["these_one"] if len(asked) == 1 else w["these_many"]), ""]
        lines += [f"{k}. {neutralise.inert(q)}" for k, q in enumerate(asked, 1)]
        lines += ["", w["again"]]
    else:
        lines += [w["complete"], "", w["nothing"]]
    lines += _from_replies(verdict, language)
    folded = list(_blocker_lines(verdict.blockers, language)) if maintainers or asked else []
    if verdict.warnings:
        folded += ["", f"**{w['worth']}:**", ""]
        folded += [f"- {neutralise.inert(x.message)} <sub>`{x.code}`</sub>" for x in verdict.warnings]
    if folded:
        summary = (w["fold_after"] if asked else w["fold"]).format(things=_things(len(maintainers), language))
        lines += [""]
        lines += _details(summary, "\n".join(folded))
    if template_text:
        lines += [""]
        lines += _details(w["template"], _fence(template_text, "markdown"))
    return lines


def render_bug_comment(
    verdict: BugVerdict,
    *,
    language: Language | None = None,
    template_text: str | None = None,
    changed_after_approval: bool = False,
    stories: Sequence[StoryNote] = (),
    reporter: str | None = None,
) -> str:
    """The sticky verdict comment (without its marker), in the report's language."""
    lang = _lang(verdict, language)
    w = _WORDS[lang]
    lines: list[str] = []
    lines += cut_note(verdict.cut, lang)
    if verdict.verdict == "approved":
        lines += [w["refined"], "", w["locked"]]
        if verdict.warnings:
            lines += [""]
            lines += _details(
                w["worth"],
                "\n".join(f"- {neutralise.inert(x.message)} <sub>`{x.code}`</sub>" for x in verdict.warnings),
            )
    else:
        lines += _not_ready(verdict, lang, template_text, reporter)
    if stories:
        lines += ["", f"### {w['stories']}", ""]
        lines += [note.line(lang) for note in stories]
    if changed_after_approval:
        lines += ["", "> [!NOTE]", "> " + w["changed"]]
    record = render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers)
    lines += [""]
    lines += _details(w["record"].format(at=verdict.refined_at), record)
    return "\n".join(lines)


def render_story_comment(verdict: StoryVerdict, bug_ref: str, language: Language | None = None) -> str:
    """A story's sticky verdict comment (without its marker), by the bug verdict's rules (issue 34 §2-§3): in
    the story's language (``verdict.language``, by its words); a heading that says who acts next and never ❌
    — a story that does not check out waits for the maintainers, who write its sections (its label says
    `needs-triage`); their list folded under one line, each blocker's code after its words."""
    lang = _lang(verdict, language)
    w = _WORDS[lang]
    if verdict.verdict == "approved":
        lines = [w["refined"], "", w["story_refined"].format(bug=bug_ref)]
    elif verdict.verdict == "pending":
        lines = [w["story_pending"], "", w["story_wait"].format(bug=bug_ref)]
    else:
        things = _things(len(verdict.blockers), lang)
        lines = [
            w["waiting"].format(who=w["the_maintainers"], n=things),
            "",
            w["story_next"].format(bug=bug_ref),
        ]
        lines += [""]
        lines += _details(
            w["story_fold"].format(things=things),
            "\n".join(_blocker_lines(verdict.blockers, lang, story=True)),
        )
    record = render_verdict_block(verdict.verdict, verdict.verdict_hash, verdict.refined_at, verdict.blockers)
    lines += [""]
    lines += _details(w["record"].format(at=verdict.refined_at), record)
    return "\n".join(lines)


Released = Literal["sub-issue", "unlisted", "gone"]


def render_story_released(bug_ref: str, refine_label: str, language: str, why: Released) -> str:
    """What a story's comment becomes when the story leaves its bug (``handlers.bug_refinement.release``):
    ``why``, it was removed from the bug's sub-issues or from its ``## Stories`` list, or it is gone from both
    (how, the catch-up cannot tell)."""
    w = _WORDS["pt" if language == "pt" else "en"]
    reason = w[f"why_{why}"].format(bug=bug_ref)
    free = w["story_free"].format(bug=bug_ref, refine=refine_label, why=reason)
    return "\n".join([w["story_released"], "", free])


def notice_text(author: str, verdict: BugVerdict, link: str) -> str:
    """The short new comment that tells the reporter the verdict has questions for them (an edit notifies
    nobody). Only the reporter's questions are counted: the maintainers' sections are not theirs to write."""
    lang = _lang(verdict)
    if lang == "pt":
        where = f"[no veredito]({link})" if link else "no veredito acima"
    else:
        where = f"in [the refinement verdict]({link})" if link else "in the refinement verdict above"
    return _ask(author, verdict, where)


def verdict_notice_line(author: str, verdict: BugVerdict) -> str:
    """The same ask as ``notice_text``, as the first line of a verdict comment being created: a mention in a
    new comment notifies the person mentioned (on both forges), so a new verdict needs no separate notice."""
    return _ask(author, verdict, "abaixo" if _lang(verdict) == "pt" else "below")


def _ask(author: str, verdict: BugVerdict, where: str) -> str:
    count = len(verdict.asks) if blockers_for(verdict, "reporter") else 0
    if _lang(verdict) == "pt":
        noun = "pergunta" if count == 1 else "perguntas"
        return f"@{author}: obrigado pelo relato — {count} {noun} para você {where}, antes de começarmos."
    noun = "question" if count == 1 else "questions"
    return (
        f"@{author}: thank you for the report — {count} {noun} for you {where}, before work on it can start."
    )


RESOLVED_TEXT: Final = "✅ Resolved: the changes asked for here are in."


def resolved_text(language: Language = "en") -> str:
    """What an earlier notice says once its ask is answered, in the report's language."""
    return "✅ Resolvido: o que foi pedido aqui já está no relato." if language == "pt" else RESOLVED_TEXT


def ready_text(author: str, verdict: BugVerdict | None, language: Language | None = None) -> str:
    """The one new comment that tells the reporter their part is done (``verdict`` None: approved and
    locked), in the report's language."""
    pt = (language or (_lang(verdict) if verdict is not None else "en")) == "pt"
    if verdict is None or verdict.verdict == "approved":
        if pt:
            return (
                f"@{author}: obrigado — este relato está completo e aprovado; o trabalho nele pode começar."
            )
        return f"@{author}: thank you — this bug report is complete and approved; work on it can start."
    if pt:
        return (
            f"@{author}: obrigado — a reprodução está completa; não falta nada seu. Os mantenedores "
            "acrescentam a parte deles antes de começar."
        )
    return (
        f"@{author}: thank you — the reproduction is complete; nothing more is needed from you. The "
        "maintainers add their sections before work on it starts."
    )


# --- the template ---------------------------------------------------------------------------------------

_HINTS: Final[dict[int, str]] = {
    1: "What goes wrong, and for whom?",
    2: "Who runs into this, and while doing what?",
    3: "What is worth it once this is fixed?",
    4: "{given} …\n{when} …\n{then} …",
    6: "What do you suspect is wrong, and where?",
    7: "tests/test_<area>.py — or TBD",
    8: "**Blocked By:** —",
    9: "- (date) what was decided, and why",
}
_RECIPE_HINTS: Final[dict[str, str]] = {
    "5.1": "Version, operating system, browser or runtime.",
    "5.2": "1. \n2. ",
    "5.3": "{observed}: \n{expected}: ",
    "5.4": "A log path, a link, a screenshot or an attachment.",
}


def _clip(text: str, limit: int = SECTION_CHARS) -> str:
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + "\n… (cut here: the rest is in your description)"


def _text(doc: Document, start: int, end: int) -> str:
    return strip_html_comments(doc.text(start, end)).strip("\n")


def _hint(text: str, language: Language) -> str:
    return text.format(**{key: sections.field(key, language) for key in sections.FIELDS})


def template(body: Report | Document | str, title: str = "") -> str:
    """An RA9 bug report with every section, pre-filled with what ``body`` already has: its RA9 sections
    (and recipe sub-sections) as written, and any text outside them under 1. Vision. Empty sections carry
    a short hint. Headings follow the document's language (English for a casual report). ``body``: the
    report, its text, or the bug as its verdict reads it (``merged``: with the reporter's comment answers)."""
    if isinstance(body, Document):
        doc = body
    else:
        doc = (body if isinstance(body, Report) else report_of(body)).document
    language = document_language(doc)
    found = find_sections(doc, BUG_SECTION_NAMES)
    first = min((s.heading_line for s in found.values()), default=len(doc.lines))
    loose = _text(doc, doc.body_start, first)
    out = [f"**Status:** {'Pendente' if language == 'pt' else 'Pending'}", ""]
    for n in sections.BUG_SECTIONS:
        out.append(sections.heading(n, language))
        section = found.get(n)
        if n == 5:
            subs = find_subsections(doc, section, RECIPE_SUBSECTION_NAMES) if section else {}
            for key in sections.RECIPE_SUBSECTIONS:
                out.append(sections.subsection(key, language))
                sub = subs.get(key)
                written = _text(doc, sub.start, sub.end) if sub else ""
                out.append(_clip(written) if written else _hint(_RECIPE_HINTS[key], language))
            out.append("")
            continue
        written = _text(doc, section.start, section.end) if section else ""
        if n == 1 and loose:
            written = "\n\n".join(part for part in (written, loose) if part)
        if n == 1 and not written and title:
            written = title
        hint = _hint(_HINTS[n], language)
        if n not in REPORTER_SECTIONS:
            hint = f"For the maintainers: {hint}"
        out.append(_clip(written) if written else f"<!-- {hint} -->")
        out.append("")
    text = "\n".join(out).rstrip() + "\n"
    if len(text) > TEMPLATE_CHARS:
        text = text[:TEMPLATE_CHARS].rstrip() + "\n… (cut: the template is longer than a comment can hold)\n"
    return text
