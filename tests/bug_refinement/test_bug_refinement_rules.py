"""The RA9 rules as a table of cases: every blocker and warning code, in English and Portuguese."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from handlers.bug_refinement import (
    BLOCKER_CODES,
    STORY_BLOCKER_CODES,
    WARNING_CODES,
    RecordedVerdict,
    apply_verdict,
    is_locked,
    is_refined,
    next_verdict,
    read_verdict_block,
    refine_bug,
    refine_story,
    render_verdict_block,
    same_outcome,
    story_verdict_hash,
    verdict_hash,
)

DATA = Path(__file__).parent / "data"
AT = datetime(2025, 3, 2, 14, 5, 9, tzinfo=UTC)

# --- a valid English bug, built section by section so each case changes one thing --------------------------

HEADER = """# Bug: CSV export drops the last row

**Status:** Pendente
**Severity:** high
**Scope:** reports
"""

SECTIONS: dict[int, tuple[str, str]] = {
    1: ("## 1. Vision", "As an accountant I lose the last invoice of every export."),
    2: ("## 2. Persona & Usage Scenario", "An accountant closing the month."),
    3: ("## 3. Value Delivery", "Exports are complete."),
    4: (
        "## 4. Acceptance Criteria",
        "```gherkin\nGiven 3 invoices in March\nWhen I export March as CSV\nThen the file has 3 rows\n```",
    ),
    5: (
        "## 5. Reproduction Recipe",
        "### 5.1 Environment\n\nreports-api 2.7.0 on Linux\n\n"
        "### 5.2 Steps to Reproduce\n\n1. Create 3 invoices.\n2. Export the month.\n\n"
        "### 5.3 Observed vs Expected\n\nObserved: 2 rows.\nExpected: 3 rows.\n\n"
        "### 5.4 Artifacts\n\n- logs/export.log",
    ),
    6: ("## 6. Root-Cause Hypothesis", "The writer skips the final flush of its buffer."),
    7: ("## 7. Regression Test Slot", "`tests/reports/test_csv_export.py`"),
    8: ("## 8. Dependencies", "None."),
    9: ("## 9. Decision History", "- 2025-03-02: opened."),
}


def bug(
    *,
    header: str = HEADER,
    front_matter: str | None = None,
    replace: dict[int, tuple[str, str] | str | None] | None = None,
    after: str = "",
) -> str:
    """The valid bug with some sections replaced: a (heading, body) pair, a body (str), or None to drop it."""
    parts = []
    if front_matter is not None:
        parts.append(f"---\n{front_matter}\n---\n")
    parts.append(header)
    for n, (heading, body) in SECTIONS.items():
        new = (replace or {}).get(n, (heading, body))
        if new is None:
            continue
        if isinstance(new, str):
            new = (heading, new)
        parts.append(f"{new[0]}\n\n{new[1]}\n")
    parts.append(after)
    return "\n".join(parts)


def recipe(
    env: str | None = "Linux",
    steps: str | None = "1. a\n2. b",
    obs: str | None = None,
    art: str | None = "x.log",
) -> str:
    obs = "Observed: 2.\nExpected: 3." if obs is None else obs
    out = []
    for title, body in (
        ("### 5.1 Environment", env),
        ("### 5.2 Steps to Reproduce", steps),
        ("### 5.3 Observed vs Expected", obs),
        ("### 5.4 Artifacts", art),
    ):
        if body is not None:
            out.append(f"{title}\n\n{body}\n")
    return "\n".join(out)


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    blockers: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def gherkin(body: str) -> dict[int, tuple[str, str] | str | None]:
    return {4: body}


CASES: list[Case] = [
    Case("valid English bug", bug()),
    # --- section headings ---
    *(Case(f"section {n} missing", bug(replace={n: None}), (f"MISSING_SECTION_{n}",)) for n in range(1, 10)),
    Case(
        "Portuguese headings with parenthesised translations",
        bug(
            replace={
                1: ("## 1. Visão (Vision)", SECTIONS[1][1]),
                2: ("## 2. Persona & Cenário de Uso (Persona & Usage Scenario)", "Contadora."),
                3: ("## 3. Entrega de Valor", "Exportação completa."),
                4: ("## 4. Critérios de Aceite (Acceptance Criteria)", "Dado X\nQuando Y\nEntão Z"),
                5: ("## 5. Receita de Reprodução", recipe(env="Linux")),
                6: ("## 6. Hipótese de Causa Raiz", "O buffer não é esvaziado no fim."),
                7: ("## 7. Slot de Teste de Regressão", "TBD"),
                8: ("## 8. Dependências (Dependencies)", "Nenhuma."),
                9: ("## 9. Histórico de Decisão", "Aberto."),
            }
        ),
    ),
    Case(
        "names compared ignoring case and accents",
        bug(replace={1: ("## 1. VISAO", "Texto."), 9: ("## 9. historico de decisao", "x")}),
    ),
    Case("an unnumbered heading is matched by its name", bug(replace={1: ("## Vision", "Text.")})),
    Case(
        "a heading with another number is not the section",
        bug(replace={1: ("## 3. Vision", "Text.")}),
        ("MISSING_SECTION_1",),
    ),
    Case(
        "a level-3 heading is not a section",
        bug(replace={8: ("### 8. Dependencies", "None.")}),
        ("MISSING_SECTION_8",),
    ),
    Case(
        "a heading inside a fence is not a heading",
        bug(replace={8: None}, after="```markdown\n## 8. Dependencies\n\nNone.\n```\n"),
        ("MISSING_SECTION_8",),
    ),
    Case(
        "a heading inside a tilde fence is not a heading",
        bug(replace={8: None}, after="~~~\n## 8. Dependencies\n~~~\n"),
        ("MISSING_SECTION_8",),
    ),
    Case(
        "a heading inside indented code is not a heading",
        bug(replace={8: None}, after="Example:\n\n    ## 8. Dependencies\n"),
        ("MISSING_SECTION_8",),
    ),
    Case(
        "a heading inside a block quote is not a heading",
        bug(replace={8: None}, after="> ## 8. Dependencies\n> None.\n"),
        ("MISSING_SECTION_8",),
    ),
    Case(
        "a heading inside an HTML comment is not a heading",
        bug(replace={8: None}, after="<!--\n## 8. Dependencies\n-->\n"),
        ("MISSING_SECTION_8",),
    ),
    Case(
        "a section ends at the next level-1 heading",
        bug(replace={1: "# Appendix\n\nThis text is not in the vision."}),
        ("VISION_EMPTY",),
    ),
    Case(
        "a setext level-2 heading is a section heading",
        bug(replace={8: ("Dependencies\n------------", "None.")}),
    ),
    Case(
        "`8. Dependencies` underlined is a list item, not a heading",
        bug(replace={8: ("8. Dependencies\n---------------", "None.")}),
        ("MISSING_SECTION_8",),
    ),
    # --- 1. Vision ---
    Case("vision empty", bug(replace={1: ""}), ("VISION_EMPTY",)),
    Case(
        "vision holding only HTML comments",
        bug(replace={1: "<!-- who is affected? -->\n<!-- what breaks? -->"}),
        ("VISION_EMPTY",),
    ),
    Case(
        "vision holding a multi-line comment and a separator",
        bug(replace={1: "<!--\nDescribe the impact.\n-->\n\n---"}),
        ("VISION_EMPTY",),
    ),
    Case("vision with text beside a comment", bug(replace={1: "<!-- hint --> Users lose data."})),
    # --- 4. Acceptance Criteria ---
    Case(
        "gherkin out of order",
        bug(replace=gherkin("Then it works\nGiven a user\nWhen they log in")),
        ("AC_MISSING_GHERKIN",),
    ),
    Case(
        "gherkin without Then",
        bug(replace=gherkin("Given a user\nWhen they log in\nAnd nothing else")),
        ("AC_MISSING_GHERKIN",),
    ),
    Case(
        "gherkin on one line does not count",
        bug(replace=gherkin("Given a user, when they log in, then it works")),
        ("AC_MISSING_GHERKIN",),
    ),
    Case(
        "gherkin only inside a comment",
        bug(replace=gherkin("<!--\nGiven a\nWhen b\nThen c\n-->")),
        ("AC_MISSING_GHERKIN",),
    ),
    Case(
        "criteria in prose",
        bug(replace=gherkin("The export must include every row.")),
        ("AC_MISSING_GHERKIN",),
    ),
    Case("gherkin outside a fence", bug(replace=gherkin("Given a\nWhen b\nThen c"))),
    Case(
        "gherkin with And/But lines between",
        bug(replace=gherkin("Given a\nAnd b\nBut c\nWhen d\nAnd e\nThen f")),
    ),
    Case(
        "gherkin with bold keywords",
        bug(replace=gherkin("- **Given** a cart\n- **When** I pay\n- **Then** I am charged")),
    ),
    Case(
        "gherkin with bold keyword and colon",
        bug(replace=gherkin("**Given:** a cart\n**When:** I pay\n**Then:** charged")),
    ),
    Case(
        "gherkin in a numbered list",
        bug(replace=gherkin("1. Given a cart\n2. When I pay\n3) Then I am charged")),
    ),
    Case("gherkin keywords in lower case", bug(replace=gherkin("given a\nwhen b\nthen c"))),
    Case(
        "gherkin in Portuguese",
        bug(replace=gherkin("```gherkin\nDado um carrinho\nQuando eu pago\nEntão sou cobrado\n```")),
    ),
    Case(
        "gherkin in Portuguese without accents",
        bug(replace=gherkin("DADO um carrinho\nQUANDO eu pago\nENTAO sou cobrado")),
    ),
    Case(
        "gherkin with several scenarios, one complete",
        bug(replace=gherkin("Given a\nThen b\n\nGiven c\nWhen d\nThen e")),
    ),
    # --- 5. Reproduction Recipe ---
    Case("recipe without 5.1", bug(replace={5: recipe(env=None)}), ("RECIPE_MISSING_ENV",)),
    Case(
        "recipe with 5.1 holding a comment only",
        bug(replace={5: recipe(env="<!-- OS, version -->")}),
        ("RECIPE_MISSING_ENV",),
    ),
    Case(
        "sub-sections found by name",
        bug(
            replace={
                5: "### Environment\n\nLinux\n\n### Steps to Reproduce\n\n1. a\n2. b\n\n"
                "### Observed vs Expected\n\nObserved: x\nExpected: y\n\n### Artifacts\n\nx.log\n"
            }
        ),
    ),
    Case(
        "sub-sections found by Portuguese name",
        bug(
            replace={
                5: "### Ambiente\n\nLinux\n\n### Passos para Reproduzir\n\n1) a\n2) b\n\n"
                "### Observado vs Esperado\n\n**Observado:** x\n**Esperado:** y\n\n### Artefatos\n\nx.log\n"
            }
        ),
    ),
    Case(
        "sub-section inside a fence does not count",
        bug(replace={5: "```\n### 5.1 Environment\nLinux\n```\n\n" + recipe(env=None)}),
        ("RECIPE_MISSING_ENV",),
    ),
    Case("one step only", bug(replace={5: recipe(steps="1. Click save.")}), ("RECIPE_MISSING_STEPS",)),
    Case("steps as bullets", bug(replace={5: recipe(steps="- Click.\n- Save.")}), ("RECIPE_MISSING_STEPS",)),
    Case("steps with `1)` markers", bug(replace={5: recipe(steps="1) Click.\n2) Save.")})),
    Case("steps inside a fence", bug(replace={5: recipe(steps="```\n1. Click.\n2. Save.\n```")})),
    Case("no 5.2", bug(replace={5: recipe(steps=None)}), ("RECIPE_MISSING_STEPS",)),
    Case(
        "expected without a value",
        bug(replace={5: recipe(obs="Observed: 2 rows.\nExpected:")}),
        ("RECIPE_MISSING_OBSERVED_EXPECTED",),
    ),
    Case(
        "observed missing",
        bug(replace={5: recipe(obs="Expected: 3 rows.")}),
        ("RECIPE_MISSING_OBSERVED_EXPECTED",),
    ),
    Case(
        "observed and expected in prose",
        bug(replace={5: recipe(obs="It shows 2 rows instead of 3.")}),
        ("RECIPE_MISSING_OBSERVED_EXPECTED",),
    ),
    Case(
        "no 5.3",
        bug(replace={5: recipe(obs="")}).replace("### 5.3 Observed vs Expected\n", ""),
        ("RECIPE_MISSING_OBSERVED_EXPECTED",),
    ),
    Case("bold labels", bug(replace={5: recipe(obs="**Observed:** 2 rows\n**Expected**: 3 rows")})),
    Case("labels in a list", bug(replace={5: recipe(obs="- **Observed:** 2 rows\n- **Expected:** 3 rows")})),
    Case(
        "labels in a table",
        bug(
            replace={
                5: recipe(
                    obs="| | Behaviour |\n|--|--|\n| **Observed** | 2 rows |\n| **Expected** | 3 rows |"
                )
            }
        ),
    ),
    Case(
        "value on the line after the label",
        bug(replace={5: recipe(obs="**Observed:**\n2 rows\n\n**Expected:**\n3 rows")}),
    ),
    Case(
        "empty label followed by the next label",
        bug(replace={5: recipe(obs="Observed:\nExpected: 3 rows")}),
        ("RECIPE_MISSING_OBSERVED_EXPECTED",),
    ),
    Case("no 5.4", bug(replace={5: recipe(art=None)}), ("RECIPE_MISSING_ARTIFACTS",)),
    Case(
        "5.4 with a comment only",
        bug(replace={5: recipe(art="<!-- attach logs -->")}),
        ("RECIPE_MISSING_ARTIFACTS",),
    ),
    Case("5.4 with an image", bug(replace={5: recipe(art="![screenshot](shot.png)")})),
    # Issue 36 §4: 5.4 is a reference (a link, an image, an attachment, a log path, a code block of output).
    Case("5.4 saying none", bug(replace={5: recipe(art="none")}), ("RECIPE_MISSING_ARTIFACTS",)),
    Case("5.4 saying nenhum", bug(replace={5: recipe(art="Nenhum.")}), ("RECIPE_MISSING_ARTIFACTS",)),
    Case(
        "5.4 describing a screenshot it does not attach",
        bug(replace={5: recipe(art="I took a screenshot of the error dialog")}),
        ("RECIPE_MISSING_ARTIFACTS",),
    ),
    Case("5.4 with a link", bug(replace={5: recipe(art="See https://ci.example.org/runs/12")})),
    Case("5.4 with an attachment", bug(replace={5: recipe(art="[trace](/attachments/1f2e3d)")})),
    Case("5.4 with a log path", bug(replace={5: recipe(art="The log is at /var/log/shop/error.log")})),
    Case("5.4 with output", bug(replace={5: recipe(art="```\nTypeError: total is None\n```")})),
    Case(
        "empty recipe",
        bug(replace={5: ""}),
        (
            "RECIPE_MISSING_ENV",
            "RECIPE_MISSING_STEPS",
            "RECIPE_MISSING_OBSERVED_EXPECTED",
            "RECIPE_MISSING_ARTIFACTS",
        ),
    ),
    # --- 6. Root-Cause Hypothesis ---
    Case("hypothesis too short", bug(replace={6: "Unknown."}), ("ROOT_CAUSE_TOO_SHORT",)),
    Case("hypothesis of exactly 10 characters", bug(replace={6: "Null  ptr  car"})),
    Case("hypothesis of 9 characters", bug(replace={6: "Null  ptr  ca"}), ("ROOT_CAUSE_TOO_SHORT",)),
    Case(
        "hypothesis whitespace does not count",
        bug(replace={6: "a b c d e f g h i"}),
        ("ROOT_CAUSE_TOO_SHORT",),
    ),
    Case(
        "hypothesis in a comment does not count",
        bug(replace={6: "<!-- Complete during the investigation of the bug. -->"}),
        ("ROOT_CAUSE_TOO_SHORT",),
    ),
    Case(
        "hypothesis sub-heading does not count",
        bug(replace={6: "### 6.1 Hypothesis\n\nTBD"}),
        ("ROOT_CAUSE_TOO_SHORT",),
    ),
    # --- 7. Regression Test Slot ---
    Case("slot in prose", bug(replace={7: "We will write one later."}), ("REGRESSION_SLOT_MISSING",)),
    Case("slot says TBD", bug(replace={7: "TBD"})),
    Case("slot names a Java test class file", bug(replace={7: "`CartServiceTest.java`"})),
    Case("slot names a spec file", bug(replace={7: "- spec/models/cart_spec.rb"})),
    Case("slot names a file in a tests folder", bug(replace={7: "tests/reports/csv.py::test_last_row"})),
    Case(
        "slot path without an extension",
        bug(replace={7: "tests/reports/csv_export"}),
        ("REGRESSION_SLOT_MISSING",),
    ),
    Case(
        "slot test method without a file",
        bug(replace={7: "CsvExportTest::testLastRow"}),
        ("REGRESSION_SLOT_MISSING",),
    ),
    Case(
        "slot path only in a comment",
        bug(replace={7: "<!-- tests/test_x.py -->"}),
        ("REGRESSION_SLOT_MISSING",),
    ),
    # --- Status, severity, scope ---
    Case(
        "no status line",
        bug(header="# Bug\n\n**Severity:** high\n**Scope:** reports\n"),
        ("STATUS_LINE_MISSING",),
    ),
    Case(
        "status line without a value",
        bug(header="**Status:**\n**Severity:** high\n**Scope:** x\n"),
        ("STATUS_LINE_MISSING",),
    ),
    Case(
        "status line in code",
        bug(header="```\n**Status:** Pendente\n```\n**Severity:** high\n**Scope:** x\n"),
        ("STATUS_LINE_MISSING",),
    ),
    Case(
        "status in plain text is not the status line",
        bug(header="Status: Pendente\n**Severity:** high\n**Scope:** x\n"),
        ("STATUS_LINE_MISSING",),
    ),
    Case(
        "status line in a list item",
        bug(header="- **Status:** Pendente\n- **Severity:** high\n- **Scope:** x\n"),
    ),
    # Issue 36 §4: only Pendente / Pending before approval (the approval itself writes Refinada / Refined).
    Case("status Pending", bug(header="**Status:** Pending\n**Severity:** high\n**Scope:** x\n")),
    Case(
        "status Em Investigação",
        bug(header="**Status:** Em Investigação\n**Severity:** high\n**Scope:** x\n"),
        ("STATUS_LINE_INVALID",),
    ),
    Case(
        "status Refinada before approval",
        bug(header="**Status:** Refinada\n**Severity:** high\n**Scope:** x\n"),
        ("STATUS_LINE_INVALID",),
    ),
    Case(
        "severity and scope missing",
        bug(header="**Status:** Pendente\n"),
        (),
        ("SEVERITY_MISSING", "SCOPE_MISSING"),
    ),
    Case("scope missing", bug(header="**Status:** Pendente\n**Severity:** low\n"), (), ("SCOPE_MISSING",)),
    Case(
        "severity and scope from front matter",
        bug(header="**Status:** Pendente\n", front_matter="severity: high\nscope: reports"),
    ),
    Case(
        "empty front matter values warn",
        bug(header="**Status:** Pendente\n", front_matter="severity:\nscope: ''"),
        (),
        ("SEVERITY_MISSING", "SCOPE_MISSING"),
    ),
    Case(
        "Portuguese severity and scope labels",
        bug(header="**Status:** Pendente\n**Severidade:** Alta\n**Escopo:** relatórios\n"),
    ),
    Case(
        "severity only in a code block",
        bug(header="**Status:** Pendente\n**Scope:** x\n\n```\n**Severity:** high\n```\n"),
        (),
        ("SEVERITY_MISSING",),
    ),
    Case(
        "invalid front matter is ignored",
        bug(header="**Status:** Pendente\n", front_matter="severity: [unclosed"),
        (),
        ("SEVERITY_MISSING", "SCOPE_MISSING"),
    ),
    Case(
        "empty document",
        "",
        (*(f"MISSING_SECTION_{n}" for n in range(1, 10)), "STATUS_LINE_MISSING"),
        ("SEVERITY_MISSING", "SCOPE_MISSING"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bug_rules(case: Case) -> None:
    verdict = refine_bug(case.text, bug_id="bug-000001", refined_at=AT)
    assert verdict.blocker_codes == case.blockers
    assert verdict.warning_codes == case.warnings
    assert verdict.verdict == ("rejected" if case.blockers else "approved")
    assert all(b.message and "\n" not in b.message for b in verdict.blockers)


def test_the_table_covers_every_bug_code() -> None:
    produced = {code for case in CASES for code in case.blockers}
    warned = {code for case in CASES for code in case.warnings}
    assert produced == set(BLOCKER_CODES)
    assert warned == set(WARNING_CODES)


@pytest.mark.parametrize(
    ("path", "blockers", "warnings"),
    [
        ("bug-000101/bug.md", (), ()),
        ("bug-000102/bug.md", (), ()),
        (
            "bug-000103.md",
            (
                "VISION_EMPTY",
                "AC_MISSING_GHERKIN",
                "RECIPE_MISSING_STEPS",
                "RECIPE_MISSING_OBSERVED_EXPECTED",
                "RECIPE_MISSING_ARTIFACTS",
                "ROOT_CAUSE_TOO_SHORT",
                "REGRESSION_SLOT_MISSING",
                "MISSING_SECTION_8",
            ),
            ("SEVERITY_MISSING", "SCOPE_MISSING"),
        ),
    ],
)
def test_example_documents(path: str, blockers: tuple[str, ...], warnings: tuple[str, ...]) -> None:
    verdict = refine_bug((DATA / path).read_text(encoding="utf-8"), bug_id="bug-000101", refined_at=AT)
    assert verdict.blocker_codes == blockers
    assert verdict.warning_codes == warnings


# --- stories ----------------------------------------------------------------------------------------------

STORY = """# Story 01

## 1. Vision

Keep promotions on a currency switch.

## 4. Acceptance Criteria

Given a cart with a code
When the currency changes
Then the code still applies

## 5. Reproduction Recipe

### 5.1 Environment

shop-web 4.18

### 5.3 Observed vs Expected

Observed: dropped. Expected: kept.

## 7. Dependencies

- **Blocked By:** —
"""


@pytest.mark.parametrize(
    ("name", "text", "blockers"),
    [
        ("valid story", STORY, ()),
        (
            "Portuguese story",
            STORY.replace("Vision", "Visão")
            .replace("7. Dependencies", "7. Dependências")
            .replace("Acceptance Criteria", "Critérios de Aceite"),
            (),
        ),
        (
            "story numbered sections with other names",
            STORY.replace("5. Reproduction Recipe", "5. Recipe"),
            (),
        ),
        ("blocked by a story", STORY.replace("—", "story-01-other"), ()),
        ("blocked by in Portuguese", STORY.replace("Blocked By", "Bloqueado por"), ()),
        ("vision missing", STORY.replace("## 1. Vision", "## 1. Summary"), ("STORY_VISION_EMPTY",)),
        (
            "vision empty",
            STORY.replace("Keep promotions on a currency switch.", "<!-- todo -->"),
            ("STORY_VISION_EMPTY",),
        ),
        ("gherkin missing", STORY.replace("Given a cart", "A cart"), ("STORY_AC_MISSING_GHERKIN",)),
        (
            "criteria missing",
            STORY.replace("## 4. Acceptance Criteria", "## 4"),
            ("STORY_AC_MISSING_GHERKIN",),
        ),
        (
            "5.3 missing",
            STORY.replace("### 5.3 Observed vs Expected", "### Notes"),
            ("STORY_RECIPE_INCOMPLETE",),
        ),
        (
            "5.1 missing",
            STORY.replace("### 5.1 Environment", "#### 5.1 Environment"),
            ("STORY_RECIPE_INCOMPLETE",),
        ),
        (
            "recipe missing",
            STORY.replace("## 5. Reproduction Recipe", "## Recipe notes"),
            ("STORY_RECIPE_INCOMPLETE",),
        ),
        (
            "blocked by empty",
            STORY.replace("- **Blocked By:** —", "- **Blocked By:**"),
            ("STORY_DEPS_MISSING",),
        ),
        (
            "blocked by missing",
            STORY.replace("- **Blocked By:** —", "- **Blocks:** story-02"),
            ("STORY_DEPS_MISSING",),
        ),
        (
            "dependencies section missing",
            STORY.replace("## 7. Dependencies", "## 7. Notes"),
            ("STORY_DEPS_MISSING",),
        ),
        (
            "empty story",
            "",
            (
                "STORY_VISION_EMPTY",
                "STORY_AC_MISSING_GHERKIN",
                "STORY_RECIPE_INCOMPLETE",
                "STORY_DEPS_MISSING",
            ),
        ),
    ],
)
def test_story_rules(name: str, text: str, blockers: tuple[str, ...]) -> None:
    verdict = refine_story(text, bug_id="bug-000101", story="story-01-x.md", refined_at=AT)
    assert verdict.story == "story-01-x"
    assert verdict.blocker_codes == blockers
    assert verdict.verdict == ("rejected" if blockers else "approved")
    assert set(blockers) <= set(STORY_BLOCKER_CODES)


def test_example_stories_are_approved() -> None:
    for path in sorted((DATA / "bug-000101").glob("story-*.md")):
        verdict = refine_story(
            path.read_text(encoding="utf-8"), bug_id="bug-000101", story=path.name, refined_at=AT
        )
        assert verdict.blocker_codes == (), path.name


# --- hashes -----------------------------------------------------------------------------------------------


def test_verdict_hash_is_sha256_of_the_line_echo_would_print() -> None:
    expected = hashlib.sha256(b"bug-000001:approved:2025-03-02T14:05:09Z\n").hexdigest()
    assert verdict_hash("bug-000001", "approved", AT) == expected
    assert refine_bug(bug(), bug_id="bug-000001", refined_at=AT).verdict_hash == expected


def test_refined_at_is_utc_to_the_second() -> None:
    local = datetime(2025, 3, 2, 16, 5, 9, 999_999, tzinfo=timezone(timedelta(hours=2)))
    verdict = refine_bug(bug(), bug_id="bug-000001", refined_at=local)
    assert verdict.refined_at == "2025-03-02T14:05:09Z"
    assert verdict.verdict_hash == verdict_hash("bug-000001", "approved", "2025-03-02T14:05:09Z")


def test_story_hash() -> None:
    expected = hashlib.sha256(b"bug-000101:story-01-x:approved:2025-03-02T14:05:09Z\n").hexdigest()
    assert story_verdict_hash("bug-000101", "story-01-x.md", "approved", AT) == expected
    assert (
        refine_story(STORY, bug_id="bug-000101", story="story-01-x.md", refined_at=AT).verdict_hash
        == expected
    )


# --- the verdict block ------------------------------------------------------------------------------------


def test_render_approved_block() -> None:
    assert render_verdict_block("approved", "ab12", AT, []) == (
        '## Refinement Verdict\n\n```yaml\nstatus: approved\nverdictHash: "ab12"\n'
        'refinedAt: "2025-03-02T14:05:09Z"\nblockers: []\n```'
    )


def test_render_and_read_back_a_rejected_block() -> None:
    block = render_verdict_block("rejected", "cd34", AT, ["AC_MISSING_GHERKIN", "RECIPE_MISSING_STEPS"])
    assert "blockers:\n  - AC_MISSING_GHERKIN\n  - RECIPE_MISSING_STEPS\n```" in block
    assert read_verdict_block("# Bug\n\n" + block) == RecordedVerdict(
        "rejected", "cd34", "2025-03-02T14:05:09Z", ("AC_MISSING_GHERKIN", "RECIPE_MISSING_STEPS")
    )


def test_read_a_block_from_a_bot_comment() -> None:
    comment = (
        "<!-- steward:refinement:bug -->\n**Verdict: approved**\n\n"
        + render_verdict_block("approved", "ef56", AT, [])
        + "\n\n<sub>refined by steward</sub>\n"
    )
    recorded = read_verdict_block(comment)
    assert recorded is not None and recorded.status == "approved" and recorded.verdict_hash == "ef56"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# Bug\n\nNo verdict here.",
        "## Refinement Verdict\n\nNo fence.",
        "## Refinement Verdict\n\n```yaml\nstatus: maybe\n```",
        "## Refinement Verdict\n\n```yaml\n: [\n```",
        "```\n## Refinement Verdict\n\n    status: approved\n```",
        "> ## Refinement Verdict\n>\n> ```yaml\n> status: approved\n> ```",
    ],
)
def test_no_recorded_verdict(text: str) -> None:
    assert read_verdict_block(text) is None


def test_read_the_pending_template_block() -> None:
    recorded = read_verdict_block((DATA / "bug-000101" / "bug.md").read_text(encoding="utf-8"))
    assert recorded == RecordedVerdict("pending", "", "", ())


def test_apply_replaces_the_block_and_transitions_the_status() -> None:
    text = (DATA / "bug-000101" / "bug.md").read_text(encoding="utf-8")
    verdict = refine_bug(text, bug_id="bug-000101", refined_at=AT)
    new, transition = apply_verdict(text, verdict)
    assert transition == "Pendente→Refinada"
    assert new.count("## Refinement Verdict") == 1
    assert "**Status:** Refinada" in new and "**Status:** Pendente" not in new
    assert "refinedBy" not in new  # the whole old block was replaced
    assert new.endswith("blockers: []\n```\n")
    assert read_verdict_block(new) == RecordedVerdict(
        "approved", verdict.verdict_hash, verdict.refined_at, ()
    )
    # everything before the block is untouched except the status line
    before = text[: text.index("## Refinement Verdict")].replace(
        "**Status:** Pendente", "**Status:** Refinada"
    )
    assert new.startswith(before)


def test_apply_appends_a_block_and_keeps_the_status_when_rejected() -> None:
    text = (DATA / "bug-000103.md").read_text(encoding="utf-8")
    verdict = refine_bug(text, bug_id="bug-000103", refined_at=AT)
    new, transition = apply_verdict(text, verdict)
    assert transition is None
    assert new.startswith(text.rstrip("\n") + "\n\n## Refinement Verdict\n")
    assert "**Status:** Pendente" in new
    again, _ = apply_verdict(new, refine_bug(new, bug_id="bug-000103", refined_at=AT + timedelta(hours=1)))
    assert again.count("## Refinement Verdict") == 1
    assert read_verdict_block(again) is not None


def test_apply_keeps_content_after_the_block() -> None:
    text = bug(after="## Refinement Verdict\n\n```yaml\nstatus: rejected\n```\n\nNotes kept.\n")
    new, _ = apply_verdict(text, refine_bug(text, bug_id="b", refined_at=AT))
    assert new.count("## Refinement Verdict") == 1
    assert new.rstrip().endswith("Notes kept.")


def test_only_pendente_transitions() -> None:
    """Any other status value blocks the approval (issue 36 §4), so it is never turned into Refinada."""
    text = bug(header="**Status:** Em Investigação\n**Severity:** x\n**Scope:** y\n")
    verdict = refine_bug(text, bug_id="b", refined_at=AT)
    assert verdict.blocker_codes == ("STATUS_LINE_INVALID",)
    assert "`**Status:** Pending`" in verdict.blockers[0].message  # the document is in English
    new, transition = apply_verdict(text, verdict)
    assert transition is None and "**Status:** Em Investigação" in new


# --- lifecycle --------------------------------------------------------------------------------------------


def recorded(status: str) -> RecordedVerdict:
    return RecordedVerdict(status, "h", "2025-03-02T14:05:09Z", ())  # type: ignore[arg-type]


def test_lifecycle() -> None:
    assert next_verdict(None, "rejected") == "rejected"
    assert next_verdict("pending", "approved") == "approved"
    assert next_verdict("rejected", "approved") == "approved"
    assert next_verdict("rejected", "rejected") == "rejected"
    assert next_verdict("approved", "rejected") == "approved"
    assert is_locked(recorded("approved")) and not is_locked(recorded("rejected")) and not is_locked(None)


def test_is_refined() -> None:
    assert is_refined(recorded("approved"))
    assert is_refined(recorded("approved"), recorded("approved"))
    assert not is_refined(recorded("approved"), None)
    assert not is_refined(recorded("approved"), recorded("rejected"))
    assert not is_refined(recorded("pending"))
    assert not is_refined(None)
    assert not is_refined()


def test_same_outcome() -> None:
    verdict = refine_bug(bug(replace={1: ""}), bug_id="b", refined_at=AT)
    assert same_outcome(RecordedVerdict("rejected", "old", "older", ("VISION_EMPTY",)), verdict)
    assert not same_outcome(RecordedVerdict("rejected", "old", "older", ("AC_MISSING_GHERKIN",)), verdict)
    assert not same_outcome(None, verdict)
