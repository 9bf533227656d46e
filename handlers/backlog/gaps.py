"""Gap detection: which of the seven ledger dimensions an issue already has evidence for.

Pure and deterministic: title and body in, evidence out. HTML comments are removed first (issue
templates are full of them) and fenced code is ignored, except that a Gherkin scenario counts inside a
fence too (people paste them as ```gherkin blocks). A *section* is the text under a heading — an ATX
heading (``## Why``), a line that is only bold (``**Why**``) or a short line ending in a colon
(``Why:``) — up to the next heading of any kind. A *label line* is ``Label: text`` on one line
(optionally bold or a list item). Headings and labels are matched on their folded words (case and
accents ignored, ``Non-goals`` reads ``non goals``) against the keyword table :data:`SECTION_KEYWORDS`,
first dimension first. Section text that is only a placeholder (``TBD``, ``TODO``, ``a definir``) is no
evidence.

The rules, per dimension (English and Portuguese):

* **WHAT** — a WHAT section (What, Description, Summary, Overview, Feature, Proposal, Solution, User
  story, Requirements / O que, Descrição, Resumo, Visão geral, Funcionalidade, Proposta, Solução,
  História de usuário, Requisitos) with text; a user story (``As a … I want …`` / ``Como … quero|preciso|
  gostaria …``); or at least :data:`WHAT_PROSE_WORDS` words of prose outside every other dimension's
  section. The title alone is never evidence.
* **WHY** — a WHY section (Why, Motivation, Rationale, Background, Context, Problem, Goal, Benefit,
  Value / Por que, Motivação, Justificativa, Contexto, Problema, Objetivo, Benefício, Valor) with text,
  or a clause ``so that``, ``because``, ``in order to``, ``so we can`` / ``para que``, ``porque``,
  ``pois``, ``a fim de``, ``de modo que``, ``de forma que``.
* **SCOPE** — a SCOPE section (Scope, In scope, Out of scope, Non-goals / Escopo, Fora do escopo,
  Não objetivos) with text, or an ``In scope:`` / ``Out of scope:`` / ``Non-goals:`` label line.
* **ACCEPTANCE** — a Gherkin triplet (``Given`` → ``When`` → ``Then`` lines, ``And``/``But`` between,
  or all three in one line; ``Dado`` → ``Quando`` → ``Então``); an EARS line (``… THE SYSTEM SHALL …``,
  any ``the <name> shall``; ``QUANDO|ENQUANTO|SE|CASO … O <nome> DEVE …``); or items under an
  ACCEPTANCE section (Acceptance criteria, Definition of done, Done when / Critérios de aceite|aceitação,
  Definição de pronto).
* **CONSTRAINTS** — a CONSTRAINTS section (Constraints, Non-functional, Limitations, Performance,
  Security, Compatibility / Restrições, Limitações, Não funcionais, Desempenho, Segurança,
  Compatibilidade) with text, or a limit phrase: ``must not``, ``must never``, ``must support``,
  ``must be compatible``, ``must work on|with|in|offline``, ``no more than N``, ``at most N``,
  ``at least N``, ``within N``, ``under N ms|s|MB|…`` / ``não deve``, ``nunca deve``, ``deve ser
  compatível``, ``deve funcionar em|com|offline``, ``no máximo N``, ``pelo menos N``, ``no mínimo N``,
  ``em até N``, ``menos de N``.
* **EDGE** — an EDGE section (Edge cases, Corner cases, Error handling, Errors, Failure modes / Casos de
  borda|limite|extremos, Tratamento de erros, Erros) with text, or a phrase ``edge case``,
  ``corner case``, ``on failure``, ``on error``, ``if … fails``, ``when … fails`` / ``caso de borda``,
  ``caso limite``, ``em caso de falha|erro``, ``se … falhar``.
* **DEPS** — ``Blocked by #N`` / ``Depends on #N`` / ``Bloqueado por #N`` / ``Depende de #N`` (several
  numbers may follow); ``Dependencies: none`` (``nenhuma``, ``n/a``, ``nothing``, ``nada``); ``No
  dependencies`` / ``Sem dependências``; or a DEPS section (Dependencies, Depends on, Blocked by /
  Dependências, Depende de, Bloqueado por) with text.

Only the first :data:`MAX_BODY_CHARS` characters of a body are read (cut at the end of a line, as a bug
report is); the interview says so when a body was longer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from handlers.backlog.text import Line, fold, language_of, prose_lines, sentences, strip_item, words
from handlers.bug_refinement.api import MAX_REPORT_CHARS, clip_report

__all__ = [
    "CORE",
    "DIMENSIONS",
    "MAX_BODY_CHARS",
    "SECTION_KEYWORDS",
    "WHAT_PROSE_WORDS",
    "BodyScan",
    "Dimension",
    "Evidence",
    "blocked_by_refs",
    "question_for",
    "scan",
    "scope_item",
]


class Dimension(StrEnum):
    WHAT = "WHAT"
    WHY = "WHY"
    SCOPE = "SCOPE"
    ACCEPTANCE = "ACCEPTANCE"
    CONSTRAINTS = "CONSTRAINTS"
    EDGE = "EDGE"
    DEPS = "DEPS"


DIMENSIONS: Final = tuple(Dimension)
CORE: Final = frozenset({Dimension.WHAT, Dimension.SCOPE, Dimension.ACCEPTANCE})
WHAT_PROSE_WORDS: Final = 15
# How much of an issue's body the gap scan, the dependency references and the spec read: GitHub holds a body
# to 65,536 characters, Gitea holds none. Every reader here is linear; this bound keeps the cost of one body,
# read at every event, small (issue 35 item 4).
MAX_BODY_CHARS: Final = MAX_REPORT_CHARS

# Heading and label keywords (folded words), the more specific dimensions first.
SECTION_KEYWORDS: Final[tuple[tuple[Dimension, tuple[str, ...]], ...]] = (
    (
        Dimension.ACCEPTANCE,
        (
            "acceptance",
            "definition of done",
            "done when",
            "criterios de aceite",
            "criterio de aceite",
            "criterios de aceitacao",
            "criterio de aceitacao",
            "definicao de pronto",
        ),
    ),
    (Dimension.SCOPE, ("scope", "non goals", "nongoals", "escopo", "nao objetivos")),
    (
        Dimension.EDGE,
        (
            "edge case",
            "edge cases",
            "corner case",
            "corner cases",
            "error handling",
            "errors",
            "failure modes",
            "casos de borda",
            "caso de borda",
            "casos limite",
            "casos extremos",
            "tratamento de erros",
            "erros",
        ),
    ),
    (
        Dimension.CONSTRAINTS,
        (
            "constraint",
            "constraints",
            "non functional",
            "limitations",
            "performance",
            "security",
            "compatibility",
            "restricoes",
            "restricao",
            "limitacoes",
            "nao funcionais",
            "nao funcional",
            "desempenho",
            "seguranca",
            "compatibilidade",
        ),
    ),
    (
        Dimension.DEPS,
        (
            "dependencies",
            "dependency",
            "depends on",
            "blocked by",
            "dependencias",
            "dependencia",
            "depende de",
            "bloqueado por",
        ),
    ),
    (
        Dimension.WHY,
        (
            "why",
            "motivation",
            "rationale",
            "background",
            "context",
            "problem",
            "goal",
            "goals",
            "benefit",
            "benefits",
            "value",
            "por que",
            "porque",
            "motivacao",
            "justificativa",
            "contexto",
            "problema",
            "objetivo",
            "objetivos",
            "beneficio",
            "beneficios",
            "valor",
        ),
    ),
    (
        Dimension.WHAT,
        (
            "what",
            "description",
            "summary",
            "overview",
            "feature",
            "proposal",
            "solution",
            "user story",
            "requirements",
            "o que",
            "descricao",
            "resumo",
            "visao geral",
            "funcionalidade",
            "proposta",
            "solucao",
            "historia de usuario",
            "requisitos",
        ),
    ),
)

_PLACEHOLDERS: Final = frozenset({"tbd", "tbc", "tba", "todo", "to do", "a definir", "fill in", "preencher"})

_ATX: Final = re.compile(r"^ {0,3}#{1,6}(?:[ \t]++(.*)|#*+)$")  # the text's closing `#`s: `_closing`
_BOLD_LINE: Final = re.compile(r"^\s*+(\*\*|__)(?P<text>[^*_\n]{1,80}?)\1\s*+:?\s*+$")
_COLON_LINE: Final = re.compile(r"^\s*(?P<text>[^\W\d_][^:\n]{0,40}):\s*$")
_LABEL_LINE: Final = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?P<label>[^\W\d_][^:*_\n]{0,40}?)\s*"
    r"(?:(?:\*\*|__)\s*:|:\s*(?:\*\*|__)?)\s*(?P<rest>\S.*)$"
)

_WHY_CLAUSE: Final = re.compile(
    r"\b(?:so that|because|in order to|so we can|para que|porque|pois|a fim de|de modo que|de forma que)\b"
)
_USER_STORY: Final = re.compile(
    r"\bas an? [^.\n]{1,80}?\bi (?:want|need|would like)\b|\bcomo [^.\n]{1,80}?\b(?:quero|preciso|gostaria)\b"
)
_EARS_EN: Final = re.compile(r"\bthe [a-z0-9 _-]{1,40}? shall\b")
_EARS_PT: Final = re.compile(
    r"\b(?:quando|enquanto|se|caso|onde)\b.{1,200}?\bo [a-z0-9 _-]{1,40}? dever?a?\b"
)
_CONSTRAINT: Final = re.compile(
    r"\b(?:must not|must never|must support|must be compatible|must work (?:on|with|in|offline)"
    r"|no more than \d|at most \d|at least \d|within \d|under \d+ ?(?:ms|s|sec|seconds|minutes|mb|kb|gb|%)"
    r"|nao deve|nunca deve|deve ser compativel|deve funcionar (?:em|com|no|na|offline)"
    r"|no maximo \d|pelo menos \d|no minimo \d|em ate \d|menos de \d)"
)
_EDGE: Final = re.compile(
    r"\b(?:edge cases?|corner cases?|on (?:failure|error)|(?:if|when) [a-z0-9 '_-]{1,40}? fails?"
    r"|casos? (?:de borda|limite|extremos?)|em caso de (?:falha|erro)|se [a-z0-9 _-]{1,40}? falhar)\b"
)
_DEPS_REF: Final = re.compile(
    r"\b(?:blocked by|depends on|bloquead[oa] por|depende de)\s*+:?\s*+"
    r"(?P<refs>#\d{1,9}(?:\s*+(?:,|and|e|&|/)?\s*+#\d{1,9})*+)"
)
_DEPS_NONE: Final = re.compile(
    r"\b(?:dependencies|dependencias|depends on|depende de)\s*:\s*(?:none|nenhuma|nenhum|n/?a|nothing|nada)\b"
    r"|\b(?:no dependencies|sem dependencias|no blockers|sem bloqueios)\b"
)
_GIVEN: Final = ("given ", "dado ", "dada ", "dados ", "dadas ")
_WHEN: Final = ("when ", "quando ")
_THEN: Final = ("then ", "entao ")
_AND: Final = ("and ", "but ", "e ", "mas ")
_ONE_LINE_GHERKIN: Final = re.compile(
    r"^(?:given|dad[oa]s?)\s++(?P<g>.*?\S),?\s++(?:when|quando)\s++(?P<w>.*?\S),?\s++(?:then|ent[aã]o)\s++"
    r"(?P<t>.+)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence: the dimension, the documented rule that matched, and the text."""

    dimension: Dimension
    rule: str
    text: str
    # Sub-kind the spec needs: "in"/"out" for scope, "ears"/"gherkin"/"item" for acceptance.
    kind: str = ""


@dataclass(frozen=True)
class BodyScan:
    evidence: tuple[Evidence, ...]
    blocked_by: tuple[int, ...]
    language: str
    # (characters read, characters in all) when the body was longer than ``MAX_BODY_CHARS``.
    cut: tuple[int, int] | None = None

    def of(self, dimension: Dimension) -> list[Evidence]:
        return [e for e in self.evidence if e.dimension == dimension]

    def has(self, dimension: Dimension) -> bool:
        return any(e.dimension == dimension for e in self.evidence)

    @property
    def present(self) -> list[Dimension]:
        return [d for d in DIMENSIONS if self.has(d)]

    @property
    def missing(self) -> list[Dimension]:
        return [d for d in DIMENSIONS if not self.has(d)]

    def rules(self, dimension: Dimension) -> list[str]:
        return list(dict.fromkeys(e.rule for e in self.of(dimension)))


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def section_dimension(heading: str) -> Dimension | None:
    """The dimension a heading or label names, or None (:data:`SECTION_KEYWORDS`, first match wins)."""
    found = [w for w in words(heading) if not w.isdigit()]
    if not found:
        return None
    for dimension, keywords in SECTION_KEYWORDS:
        if any(_contains(found, keyword.split()) for keyword in keywords):
            return dimension
    return None


def _scope_kind(heading: str) -> str:
    found = words(heading)
    if _contains(found, ["out"]) or _contains(found, ["non", "goals"]) or "nongoals" in found:
        return "out"
    if _contains(found, ["fora"]) or _contains(found, ["nao", "objetivos"]):
        return "out"
    if _contains(found, ["in", "scope"]) or _contains(found, ["dentro"]):
        return "in"
    return ""


_SCOPE_PREFIX: Final = re.compile(
    r"^(?P<p>in scope|out of scope|non-goals?|in|out|not|dentro do escopo|fora do escopo|dentro|fora)\s*:\s*",
    re.IGNORECASE,
)


_INLINE_SCOPE: Final = re.compile(
    r"[\s.;,]+(?=(?:out of scope|non-goals?|out|fora do escopo|fora)\s*:)", re.IGNORECASE
)


def scope_items(text: str, kind: str = "") -> list[tuple[str, str]]:
    """``scope_item`` for each part of a line that holds both sides: ``In: a, b. Out: c`` is two items."""
    return [scope_item(part.strip(), kind) for part in _INLINE_SCOPE.split(text) if part.strip()]


def is_limit(text: str) -> bool:
    """Whether ``text`` states a limit (``must not``, ``at most 3``, ``within 2 s``…): a constraint."""
    return _CONSTRAINT.search(fold(text)) is not None


def scope_item(text: str, kind: str = "") -> tuple[str, str]:
    """``("in"|"out", text)`` for a scope item: an ``In:``/``Out:``/``Fora:`` prefix decides, else ``kind``
    (the section's), else in."""
    match = _SCOPE_PREFIX.match(text)
    if match is not None:
        prefix = fold(match.group("p"))
        rest = text[match.end() :].strip()
        return ("out" if prefix.startswith(("out", "non", "not", "fora")) else "in"), rest
    return (kind or "in"), text


def _closing(text: str) -> str:
    """An ATX heading's text without its closing sequence (blanks, `#`s, blanks)."""
    return text.rstrip(" \t").rstrip("#").rstrip(" \t")


def _heading(line: str) -> str | None:
    for pattern in (_ATX, _BOLD_LINE, _COLON_LINE):
        match = pattern.match(line)
        if match is not None:
            text = _closing(match.group(1) or "") if pattern is _ATX else match.group("text")
            return (text or "").strip()
    return None


def _is_placeholder(text: str) -> bool:
    return not words(text) or " ".join(words(text)) in _PLACEHOLDERS


def clip_body(body: str) -> tuple[str, tuple[int, int] | None]:
    """``body``'s first ``MAX_BODY_CHARS`` characters (at a line's end); (read, in all) when it was cut."""
    return clip_report(body or "", MAX_BODY_CHARS)


def blocked_by_refs(text: str) -> list[int]:
    """Issue numbers named after ``Blocked by`` / ``Depends on`` (and Portuguese) in ``text``'s first
    ``MAX_BODY_CHARS`` characters, in order."""
    found: list[int] = []
    for match in _DEPS_REF.finditer(fold(clip_body(text)[0])):
        for number in re.findall(r"#(\d{1,9})", match.group("refs")):
            if int(number) not in found:
                found.append(int(number))
    return found


def _gherkin(lines: Iterable[Line]) -> list[str]:
    found: list[str] = []
    parts: dict[str, str] = {}
    state = ""
    for line in lines:
        text = strip_item(line.text)
        folded = fold(text)
        if not folded:
            continue
        one = _ONE_LINE_GHERKIN.match(text)
        if one is not None:
            found.append(f"Given {one.group('g')}, when {one.group('w')}, then {one.group('t')}")
            state, parts = "", {}
            continue
        if folded.startswith(_GIVEN):
            state, parts = "G", {"G": text}
        elif folded.startswith(_WHEN) and state == "G":
            state, parts["W"] = "W", text
        elif folded.startswith(_THEN) and state == "W":
            found.append(f"{parts['G']} / {parts['W']} / {text}")
            state, parts = "", {}
        elif folded.startswith(_AND) and state:
            continue
        elif folded.startswith(("scenario", "cenario", "feature:", "funcionalidade:", "```", "~~~")):
            state, parts = "", {}
        else:
            state, parts = "", {}
    return found


def clause_evidence(text: str) -> list[Evidence]:
    """Evidence from the phrase rules on one line or answer (WHY clause, user story, EARS, limits, edge
    phrases, dependencies)."""
    folded = fold(text)
    out: list[Evidence] = []
    if _USER_STORY.search(folded):
        out.append(Evidence(Dimension.WHAT, "user story", text))
    if _WHY_CLAUSE.search(folded):
        out.append(Evidence(Dimension.WHY, "'so that'/'because' clause", text))
    if _EARS_EN.search(folded) or _EARS_PT.search(folded):
        out.append(Evidence(Dimension.ACCEPTANCE, "EARS line", text, "ears"))
    if _CONSTRAINT.search(folded):
        out.append(Evidence(Dimension.CONSTRAINTS, "limit phrase", text))
    if _EDGE.search(folded):
        out.append(Evidence(Dimension.EDGE, "edge-case phrase", text))
    if _DEPS_REF.search(folded):
        out.append(Evidence(Dimension.DEPS, "'Blocked by #N'", text))
    elif _DEPS_NONE.search(folded):
        out.append(Evidence(Dimension.DEPS, "'Dependencies: none'", text))
    return out


def scan(title: str, body: str) -> BodyScan:
    """Which dimensions ``body`` has evidence for, by the rules in the module docstring (its first
    ``MAX_BODY_CHARS`` characters)."""
    body, cut = clip_body(body)
    lines = prose_lines(body)
    evidence: list[Evidence] = []
    prose: list[str] = []
    section: Dimension | None = None
    section_name = ""
    scope_kind = ""
    for line in lines:
        if line.in_code:
            continue
        heading = _heading(line.text)
        if heading is not None:
            section = section_dimension(heading)
            section_name = heading
            scope_kind = _scope_kind(heading) if section == Dimension.SCOPE else ""
            continue
        stripped = line.text.strip()
        if not stripped:
            continue
        item = strip_item(stripped)
        label = _LABEL_LINE.match(stripped)
        label_dimension = section_dimension(label.group("label")) if label is not None else None
        if label is not None and label_dimension is not None and len(words(label.group("label"))) <= 5:
            # A label line is a statement of its own: it also ends the section above it.
            section, section_name, scope_kind = None, "", ""
            rest = label.group("rest").strip()
            if not _is_placeholder(rest):
                kind = _scope_kind(label.group("label")) if label_dimension == Dimension.SCOPE else ""
                if label_dimension == Dimension.ACCEPTANCE:
                    kind = "item"
                evidence.append(
                    Evidence(label_dimension, f"'{label.group('label').strip()}:' line", rest, kind)
                )
        elif section is not None:
            if not _is_placeholder(item):
                kind = scope_kind if section == Dimension.SCOPE else ""
                if section == Dimension.ACCEPTANCE:
                    kind = "item"
                evidence.append(Evidence(section, f"section '{section_name}'", item, kind))
        else:
            prose.append(item)
        for sentence in sentences(item):
            evidence.extend(
                e for e in clause_evidence(sentence) if not (e.dimension == section and e.kind != "ears")
            )
    for scenario in _gherkin(line for line in lines):
        evidence.append(Evidence(Dimension.ACCEPTANCE, "Gherkin scenario", scenario, "gherkin"))
    prose_text = " ".join(prose)
    if len(words(prose_text)) >= WHAT_PROSE_WORDS:
        for sentence in sentences(prose_text)[:3]:
            evidence.append(Evidence(Dimension.WHAT, f"prose of {WHAT_PROSE_WORDS}+ words", sentence))
    return BodyScan(
        evidence=tuple(_dedupe(evidence)),
        blocked_by=tuple(blocked_by_refs("\n".join(line.text for line in lines if not line.in_code))),
        # The title is never evidence, but it helps tell the language.
        language=language_of(f"{title}\n{body}"),
        cut=cut,
    )


def _dedupe(evidence: list[Evidence]) -> list[Evidence]:
    seen: set[tuple[Dimension, str, str]] = set()
    out: list[Evidence] = []
    for item in evidence:
        key = (item.dimension, item.kind, item.text)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


_QUESTIONS: Final[dict[Dimension, tuple[str, str]]] = {
    Dimension.WHAT: (
        "What exactly should change? Describe the behaviour you want in one or two sentences.",
        "O que exatamente deve mudar? Descreva o comportamento desejado em uma ou duas frases.",
    ),
    Dimension.WHY: (
        "Why is this needed — who benefits, and what happens if we don't do it?",
        "Por que isso é necessário — quem se beneficia e o que acontece se não fizermos?",
    ),
    Dimension.SCOPE: (
        "What is in scope, and what is explicitly out of scope? (lines like `In: …` and `Out: …`)",
        "O que está no escopo e o que fica explicitamente fora? (linhas como `Dentro: …` e `Fora: …`)",
    ),
    Dimension.ACCEPTANCE: (
        "How will we know it is done? Give acceptance criteria, ideally as "
        "`WHEN <trigger> THE SYSTEM SHALL <response>` lines.",
        "Como saberemos que está pronto? Dê critérios de aceite, de preferência como linhas "
        "`WHEN <gatilho> THE SYSTEM SHALL <resposta>`.",
    ),
    Dimension.CONSTRAINTS: (
        "Which constraints apply — performance, compatibility, security, platforms, deadlines?",
        "Quais restrições se aplicam — desempenho, compatibilidade, segurança, plataformas, prazos?",
    ),
    Dimension.EDGE: (
        "Which edge cases and failures must be handled (empty or invalid input, errors, limits)?",
        "Quais casos de borda e falhas devem ser tratados (entrada vazia ou inválida, erros, limites)?",
    ),
    Dimension.DEPS: (
        "Does this depend on other work? Answer `Blocked by #N` for each issue, or `none`.",
        "Isso depende de outro trabalho? Responda `Bloqueado por #N` para cada issue, ou `nenhuma`.",
    ),
}


def question_for(dimension: Dimension, language: str = "en") -> str:
    english, portuguese = _QUESTIONS[dimension]
    return portuguese if language == "pt" else english
