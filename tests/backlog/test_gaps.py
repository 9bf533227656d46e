"""The gap rules, from a table of issue bodies in English and Portuguese: which dimensions have evidence."""

from __future__ import annotations

import pytest

from handlers.backlog.gaps import (
    DIMENSIONS,
    Dimension,
    blocked_by_refs,
    question_for,
    scan,
    section_dimension,
)

W, Y, S, A, C, E, D = (
    Dimension.WHAT,
    Dimension.WHY,
    Dimension.SCOPE,
    Dimension.ACCEPTANCE,
    Dimension.CONSTRAINTS,
    Dimension.EDGE,
    Dimension.DEPS,
)

BODIES: list[tuple[str, str, set[Dimension]]] = [
    ("empty", "", set()),
    ("vague one-liner", "Add login. It should be nice.", set()),
    ("placeholder sections", "## Why\nTBD\n\n## Acceptance criteria\n- [ ] TODO\n", set()),
    ("template comments only", "<!-- Describe why -->\n## Why\n<!-- because … -->\n", set()),
    ("why section", "## Why\nShoppers lose their carts.", {Y}),
    ("motivation bold heading", "**Motivation**\nCarts get lost.", {Y}),
    ("so-that clause", "Add login so that carts persist.", {Y}),
    ("because clause", "We need login because carts get lost.", {Y}),
    ("user story", "As a shopper I want to sign in so that my cart is kept.", {W, Y}),
    (
        "prose of 15 words",
        "Shoppers should be able to sign in with an email address and a password from any page.",
        {W},
    ),
    ("description section", "## Description\nEmail sign-in.", {W}),
    ("in scope label", "In scope: email sign-in", {S}),
    ("out of scope heading", "### Out of scope\n- social login", {S}),
    ("non-goals label", "Non-goals: SSO", {S}),
    ("scope colon heading", "Scope:\n- only the web app", {S}),
    ("EARS line", "WHEN a shopper signs in THE SYSTEM SHALL restore the cart.", {A}),
    ("Gherkin triplet", "Given a shopper\nWhen they sign in\nAnd wait\nThen the cart is restored", {A}),
    ("Gherkin in a fence", "```gherkin\nGiven a shopper\nWhen they sign in\nThen the cart is back\n```", {A}),
    ("Gherkin out of order", "When they sign in\nGiven a shopper\nThen the cart is back", set()),
    ("checklist under AC", "## Acceptance criteria\n- [ ] cart restored\n- [x] error shown", {A}),
    ("definition of done", "## Definition of done\n- docs updated", {A}),
    ("constraints section", "## Constraints\nRuns on Python 3.13.", {C}),
    ("limit phrase", "Sign-in must not take more than 2 s.", {C}),
    ("within N", "Respond within 200 ms.", {C}),
    ("edge cases section", "## Edge cases\n- wrong password", {E}),
    ("if-fails phrase", "If the payment fails we retry.", {E}),
    ("blocked by", "Blocked by #12", {D}),
    ("depends on several", "Depends on #3, #4 and #5.", {D}),
    ("dependencies none", "Dependencies: none", {D}),
    ("no dependencies", "There are no dependencies.", {D}),
    ("EARS in code is no evidence", "```\nWHEN x THE SYSTEM SHALL y\n```", set()),
    ("why in an HTML comment", "<!-- so that carts persist -->", set()),
    # Portuguese
    ("pt: por que", "## Por que\nOs clientes perdem o carrinho.", {Y}),
    ("pt: para que", "Adicionar login para que o carrinho fique salvo.", {Y}),
    ("pt: história de usuário", "Como cliente, quero entrar com e-mail.", {W}),
    ("pt: descrição", "## Descrição\nLogin por e-mail.", {W}),
    ("pt: fora do escopo", "Fora do escopo: login social", {S}),
    ("pt: escopo heading", "## Escopo\n- apenas web", {S}),
    ("pt: critérios de aceite", "## Critérios de aceite\n- [ ] carrinho restaurado", {A}),
    ("pt: Gherkin", "Dado um cliente\nQuando ele entra\nEntão o carrinho volta", {A}),
    ("pt: EARS", "QUANDO o cliente entrar O SISTEMA DEVE restaurar o carrinho.", {A}),
    ("pt: restrições", "## Restrições\nSó navegadores modernos.", {C}),
    ("pt: no máximo", "O login deve levar no máximo 2 segundos.", {C}),
    ("pt: casos de borda", "## Casos de borda\n- senha errada", {E}),
    ("pt: em caso de falha", "Em caso de falha, tentar de novo.", {E}),
    ("pt: bloqueado por", "Bloqueado por #7", {D}),
    ("pt: dependências nenhuma", "Dependências: nenhuma", {D}),
    ("pt: sem dependências", "Sem dependências.", {D}),
]


@pytest.mark.parametrize(("body", "present"), [(b, p) for _, b, p in BODIES], ids=[n for n, _, _ in BODIES])
def test_evidence_per_dimension(body: str, present: set[Dimension]) -> None:
    found = scan("Add login", body)
    assert set(found.present) == present
    assert found.missing == [d for d in DIMENSIONS if d not in present]


def test_a_full_feature_description_has_every_dimension() -> None:
    body = """As a shopper I want to sign in so that my cart is kept.

In scope: email sign-in
Out of scope: social login

## Acceptance criteria
- [ ] WHEN a shopper signs in THE SYSTEM SHALL restore the cart

## Constraints
Must work on mobile browsers.

## Edge cases
Wrong password.

Blocked by #3
"""
    found = scan("Sign in", body)
    assert found.missing == []
    assert found.blocked_by == (3,)
    assert [e.kind for e in found.of(Dimension.SCOPE)] == ["in", "out"]


def test_the_title_alone_is_never_evidence() -> None:
    assert scan("As a shopper I want login so that carts persist because reasons", "").present == []


def test_language_follows_the_text() -> None:
    assert (
        scan("Adicionar login", "Como cliente, quero entrar para que o carrinho não se perca.").language
        == "pt"
    )
    assert scan("Add login", "As a shopper I want to sign in.").language == "en"
    assert question_for(Dimension.SCOPE, "pt").startswith("O que está no escopo")


@pytest.mark.parametrize(
    ("heading", "dimension"),
    [
        ("Acceptance Criteria", Dimension.ACCEPTANCE),
        ("1. Critérios de Aceitação", Dimension.ACCEPTANCE),
        ("Out of scope", Dimension.SCOPE),
        ("Non-functional requirements", Dimension.CONSTRAINTS),
        ("Requirements", Dimension.WHAT),
        ("Edge cases and errors", Dimension.EDGE),
        ("Motivação", Dimension.WHY),
        ("Notes", None),
    ],
)
def test_headings_map_to_dimensions(heading: str, dimension: Dimension | None) -> None:
    assert section_dimension(heading) == dimension


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Blocked by #3", [3]),
        ("depends on #3, #4 and #5", [3, 4, 5]),
        ("Bloqueada por #9 e #10", [9, 10]),
        ("Depende de: #2", [2]),
        ("See #4", []),
        ("blocked by 4", []),
    ],
)
def test_blocked_by_references(text: str, numbers: list[int]) -> None:
    assert blocked_by_refs(text) == numbers
