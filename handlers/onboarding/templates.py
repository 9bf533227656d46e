"""The issue templates the onboarding pull request proposes. Pure: language and forge in, file text out.

- An RA9 bug report. GitHub: an issue form (``.github/ISSUE_TEMPLATE/bug_report.yml``) with a field per
  section, the recipe's 5.1–5.4 as fields of their own and the regression-test slot; GitHub renders each field
  as ``### <label>``, which RA9 reads through ``handlers.bug_refinement.forms``. Gitea: the same document as a
  markdown template (``.gitea/ISSUE_TEMPLATE/bug_report.md``), because Gitea's form support differs from
  GitHub's.
- A backlog item whose headings are the gap ledger's dimensions (What, Why, Scope, Acceptance criteria,
  Constraints, Edge cases, Dependencies), as markdown on both forges (the ledger reads any heading level).

English by default; Portuguese (RA9's Portuguese section names) when the repository's issues use them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from bot.forge import ForgeKind
from handlers.bug_refinement.api import Language, sections

__all__ = ["proposed_template_paths", "template_files"]

_BUG_LABELS: Final = ("bug", "refine")
_BACKLOG_LABELS: Final = ("refine",)


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# Per section: what to write (English, Portuguese).
_HINTS: Final[Mapping[str, tuple[str, str]]] = {
    "1": ("Who is affected, and what goes wrong for them?", "Quem é afetado e o que dá errado?"),
    "2": ("Who meets the bug, doing what?", "Quem encontra o bug, fazendo o quê?"),
    "3": ("What does fixing it give back to them?", "O que a correção devolve a essa pessoa?"),
    "4": (
        "A scenario with Given / When / Then lines.",
        "Um cenário com linhas Dado / Quando / Então.",
    ),
    "5": ("Optional: a sentence on how to reproduce it.", "Opcional: uma frase sobre como reproduzir."),
    "5.1": ("Version, OS and runtime.", "Versão, sistema operacional e runtime."),
    "5.2": ("At least two numbered steps.", "Pelo menos dois passos numerados."),
    "5.3": ("An Observed: line and an Expected: line.", "Uma linha Observado: e uma linha Esperado:."),
    "5.4": ("A log path, a link, a screenshot or an attachment.", "Um log, link, captura de tela ou anexo."),
    "6": ("What do you suspect is wrong (at least a sentence)?", "O que você suspeita que esteja errado?"),
    "7": (
        "The test file that will reproduce it (such as tests/test_cart.py), or TBD.",
        "O arquivo de teste que vai reproduzir o bug (como tests/test_cart.py), ou TBD.",
    ),
    "8": (
        "Issues this depends on (Blocked by #N), or none.",
        "Issues de que depende (Bloqueado por #N), ou nenhuma.",
    ),
    "9": ("Decisions taken so far, or none yet.", "Decisões tomadas até agora, ou nenhuma ainda."),
}

_PREFILL: Final[Mapping[str, tuple[str, str]]] = {
    "5.2": ("1. \n2. \n", "1. \n2. \n"),
    "5.3": ("Observed: \nExpected: ", "Observado: \nEsperado: "),
}

_WORDS: Final[Mapping[str, tuple[str, str]]] = {
    "bug_name": ("Bug report (RA9)", "Relato de bug (RA9)"),
    "bug_about": (
        "Something is broken. Steward checks the report and tells you what is missing.",
        "Algo está quebrado. O Steward confere o relato e diz o que falta.",
    ),
    "bug_intro": (
        "Tell us what you saw and how to reproduce it. The project's maintainers add their own sections "
        "once they have looked at the bug. Steward (this repository's bot) reads the report when it is "
        "opened and every time it is edited, and asks you in plain words for anything still missing.",
        "Conte o que você viu e como reproduzir. Os mantenedores do projeto acrescentam as seções deles "
        "depois de olharem o bug. O Steward (o bot deste repositório) lê o relato quando ele é aberto e a "
        "cada edição, e pergunta em palavras simples o que ainda faltar.",
    ),
    "maintainers": (
        "For the maintainers (leave empty when reporting): ",
        "Para os mantenedores (deixe em branco ao relatar): ",
    ),
    "status": ("Pending", "Pendente"),
    "status_hint": (
        "Leave it as it is: it becomes Refined once the report is complete.",
        "Deixe como está: passa a Refinada quando o relato estiver completo.",
    ),
    "severity": ("Severity", "Severidade"),
    "scope": ("Scope", "Escopo"),
    "scope_hint": ("Which part of the product?", "Qual parte do produto?"),
    "backlog_name": ("Backlog item", "Item de backlog"),
    "backlog_about": (
        "A change you want. Steward interviews you until the spec is complete.",
        "Uma mudança que você quer. O Steward entrevista você até a especificação ficar completa.",
    ),
}

_SEVERITIES: Final = ("low", "medium", "high", "critical")

_BACKLOG: Final[tuple[tuple[str, str, str, str], ...]] = (
    # (English heading, Portuguese heading, English hint, Portuguese hint)
    ("What", "O que", "What should change, in one or two sentences?",
     "O que deve mudar, em uma ou duas frases?"),
    ("Why", "Por que", "Who benefits, and what happens if we don't do it?",
     "Quem ganha, e o que acontece se não fizermos?"),
    ("Scope", "Escopo", "In: … / Out: …", "Dentro: … / Fora: …"),
    ("Acceptance criteria", "Critérios de aceite", "Given … When … Then …", "Dado … Quando … Então …"),
    ("Constraints", "Restrições", "Limits it must respect (performance, security, compatibility).",
     "Limites a respeitar (desempenho, segurança, compatibilidade)."),
    ("Edge cases", "Casos de borda", "What happens on errors and unusual input?",
     "O que acontece em erros e entradas incomuns?"),
    ("Dependencies", "Dependências", "Blocked by #N, or none.", "Bloqueado por #N, ou nenhuma."),
)  # fmt: skip


def _pick(pair: tuple[str, str], language: Language) -> str:
    return pair[1] if language == "pt" else pair[0]


def _section_label(key: str, language: Language) -> str:
    if "." in key:
        return sections.subsection(key, language).removeprefix("### ")
    return f"{key}. {sections.name(int(key), language)}"


_ORDER: Final = ("1", "2", "3", "4", "5", "5.1", "5.2", "5.3", "5.4", "6", "7", "8", "9")
# The sections a reporter can answer; the others are the maintainers' to write.
_REPORTER_KEYS: Final = frozenset({"1", "5", "5.1", "5.2", "5.3", "5.4"})
# Steward's own templates ask only for those (issue 34 §4): the maintainers add their sections later.
_REPORTER_ORDER: Final = tuple(key for key in _ORDER if key in _REPORTER_KEYS)


def _hint(key: str, language: Language) -> str:
    hint = _pick(_HINTS[key], language)
    return hint if key in _REPORTER_KEYS else _pick(_WORDS["maintainers"], language) + hint


def bug_form(language: Language) -> str:
    """GitHub's issue form (YAML) for an RA9 bug report."""
    lines = [
        f"name: {_q(_pick(_WORDS['bug_name'], language))}",
        f"description: {_q(_pick(_WORDS['bug_about'], language))}",
        'title: "[Bug]: "',
        f"labels: [{', '.join(_q(label) for label in _BUG_LABELS)}]",
        "body:",
        "  - type: markdown",
        "    attributes:",
        f"      value: {_q(_pick(_WORDS['bug_intro'], language))}",
        # No status dropdown (it would have one option): the status line is the maintainers' to add.
        "  - type: dropdown",
        "    id: severity",
        "    attributes:",
        f"      label: {_q(_pick(_WORDS['severity'], language))}",
        f"      options: [{', '.join(_q(s) for s in _SEVERITIES)}]",
        "  - type: input",
        "    id: scope",
        "    attributes:",
        f"      label: {_q(_pick(_WORDS['scope'], language))}",
        f"      placeholder: {_q(_pick(_WORDS['scope_hint'], language))}",
    ]
    for key in _REPORTER_ORDER:
        kind = "textarea"
        lines += [
            f"  - type: {kind}",
            f"    id: section-{key.replace('.', '-')}",
            "    attributes:",
            f"      label: {_q(_section_label(key, language))}",
            f"      description: {_q(_hint(key, language))}",
        ]
        if key in _PREFILL:
            lines.append(f"      value: {_q(_pick(_PREFILL[key], language))}")
        # The reporter is asked only for what they saw and how to reproduce it; the form cannot know whether
        # there is an artifact to attach, so 5.4 is not required (issue 34 §4).
        required = key in _REPORTER_KEYS and key not in ("5", "5.4")
        lines += ["    validations:", f"      required: {'true' if required else 'false'}"]
    return "\n".join(lines) + "\n"


def _front_matter(name: str, about: str, title: str, labels: tuple[str, ...]) -> list[str]:
    # GitHub's and Gitea's markdown templates: name, about, title, labels in YAML front matter.
    return [
        "---",
        f"name: {_q(name)}",
        f"about: {_q(about)}",
        f"title: {_q(title)}",
        f"labels: [{', '.join(_q(label) for label in labels)}]",
        "---",
    ]


def bug_markdown(language: Language) -> str:
    """The RA9 bug report as a markdown template (Gitea)."""
    lines = _front_matter(
        _pick(_WORDS["bug_name"], language), _pick(_WORDS["bug_about"], language), "[Bug]: ", _BUG_LABELS
    )
    lines += [
        f"<!-- {_pick(_WORDS['bug_intro'], language)} -->",
        "",
        # A list, so the three lines render as three lines (RA9 reads list-item field lines too).
        f"- **Status:** {_pick(_WORDS['status'], language)}",
        f"- **{_pick(_WORDS['severity'], language)}:** ",
        f"- **{_pick(_WORDS['scope'], language)}:** ",
        "",
    ]
    for key in _REPORTER_ORDER:
        heading = sections.subsection(key, language) if "." in key else sections.heading(int(key), language)
        lines += [heading, f"<!-- {_hint(key, language)} -->"]
        if key in _PREFILL:
            lines.append(_pick(_PREFILL[key], language).rstrip())
        lines.append("")
    return "\n".join(lines)


def backlog_markdown(language: Language) -> str:
    lines = _front_matter(
        _pick(_WORDS["backlog_name"], language), _pick(_WORDS["backlog_about"], language), "", _BACKLOG_LABELS
    )
    for english, portuguese, hint_en, hint_pt in _BACKLOG:
        lines += [
            f"## {portuguese if language == 'pt' else english}",
            f"<!-- {hint_pt if language == 'pt' else hint_en} -->",
            "",
        ]
    return "\n".join(lines)


def template_dir(kind: ForgeKind) -> str:
    return ".gitea/ISSUE_TEMPLATE" if kind == "gitea" else ".github/ISSUE_TEMPLATE"


def template_files(
    kind: ForgeKind, language: Language, taken: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Path → text of every template for this forge. A path in ``taken`` (a file the repository has) is never
    proposed: Steward's template gets a name of its own beside it (issue 34 §4)."""
    where = template_dir(kind)
    bug = (
        {f"{where}/bug_report.md": bug_markdown(language)}
        if kind == "gitea"
        else {f"{where}/bug_report.yml": bug_form(language)}
    )
    files = {**bug, f"{where}/backlog_item.md": backlog_markdown(language)}
    out: dict[str, str] = {}
    for path, text in files.items():
        if path in taken:
            stem, dot, ext = path.rpartition(".")
            path = f"{stem}-steward{dot}{ext}"
            if path in taken:
                continue
        out[path] = text
    return out


def proposed_template_paths(kind: ForgeKind) -> tuple[str, ...]:
    """The paths ``template_files`` proposes, and the names they would take beside a file of that name."""
    paths = tuple(template_files(kind, "en"))
    return paths + tuple(f"{p.rpartition('.')[0]}-steward.{p.rpartition('.')[2]}" for p in paths)
