"""The probe-scan, from a table of answers in English and Portuguese."""

from __future__ import annotations

import pytest

from handlers.backlog.probe import VAGUE_TERMS, probe_answer, undefined_references, vague_terms

ANSWERS: list[tuple[str, list[str]]] = [
    ("Sign-in completes within 2 seconds for 95% of attempts.", []),
    ("It should be fast.", ["fast"]),
    ("A user-friendly form, etc.", ["user-friendly", "etc"]),
    ("Some users, TBD.", ["some", "tbd"]),
    ("Retry as needed.", ["as needed"]),
    ("A robust and intuitive screen with appropriate errors.", ["robust", "intuitive", "appropriate"]),
    ("Something awesome happens somewhere.", []),  # "some" only as a whole word
    ("Use `fast` mode from the config.", []),  # code spans are not prose
    ("Deve ser rápido.", ["rapido"]),
    ("Uma tela amigável, etc.", ["amigavel", "etc"]),
    ("Alguns usuários, a definir.", ["alguns", "a definir"]),
    ("Tentar novamente conforme necessário.", ["conforme necessario"]),
    ("Uma tela robusta, intuitiva e adequada.", ["robusta", "intuitiva", "adequada"]),
    ("Em até 2 segundos para 95% das tentativas.", []),
]


@pytest.mark.parametrize(("answer", "terms"), ANSWERS, ids=[a for a, _ in ANSWERS])
def test_vague_terms(answer: str, terms: list[str]) -> None:
    assert vague_terms(answer) == terms


def test_the_documented_list_holds_the_issues_terms() -> None:
    required = [
        "fast",
        "user-friendly",
        "etc",
        "some",
        "tbd",
        "as needed",
        "robust",
        "intuitive",
        "appropriate",
    ]
    assert all(term in VAGUE_TERMS for term in required)


REFERENCES: list[tuple[str, str, list[str]]] = [
    ("Same behaviour as discussed.", "", ["as discussed"]),
    ("Como combinado na reunião.", "", ["como combinado"]),
    ("Ver acima.", "", ["ver acima"]),
    ("Sign in through SSO.", "", ["SSO"]),
    ("Sign in through SSO.", "Our SSO provider is Okta.", []),
    ("Sign in through SSO (single sign-on).", "", []),
    ("Use single sign-on (SSO).", "", []),
    ("Call the API over HTTPS and return JSON.", "", []),
    ("WHEN a shopper signs in THE SYSTEM SHALL restore the cart.", "", []),
    ("QUANDO o cliente entrar O SISTEMA DEVE restaurar o carrinho.", "", []),
    ("Store it in the `KV` table.", "", []),
]


@pytest.mark.parametrize(
    ("answer", "context", "found"), REFERENCES, ids=[a + "|" + c for a, c, _ in REFERENCES]
)
def test_undefined_references(answer: str, context: str, found: list[str]) -> None:
    assert undefined_references(answer, context) == found


def test_a_vague_answer_raises_one_finding_per_rule_with_the_words_quoted() -> None:
    findings = probe_answer("g3", "Fast, via SSO, etc.", "", "en")
    assert [f.rule for f in findings] == ["vague", "undefined"]
    assert "“fast”, “etc”" in findings[0].question and "g3" in findings[0].question
    assert "“SSO”" in findings[1].question


def test_a_concrete_answer_raises_nothing_and_questions_follow_the_language() -> None:
    assert probe_answer("g1", "Within 2 s for 95% of attempts.", "", "en") == []
    [finding] = probe_answer("g1", "Deve ser rápido.", "", "pt")
    assert finding.question.startswith("A resposta a g1 usa “rapido”")
