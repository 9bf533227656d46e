"""The interview's pure rules: question selection, recording answers, the spec, the level, cycles."""

from __future__ import annotations

import pytest

from handlers.backlog import interview as iv
from handlers.backlog.deps import describe_cycle, find_cycle
from handlers.backlog.gaps import Dimension, scan
from handlers.backlog.ledger import GapLedger, GapRow
from handlers.backlog.level import score
from handlers.backlog.selection import select_questions
from handlers.backlog.spec import SpecRecord, synthesize, to_ac

BODY = "We need people to log in.\n\n## Why\nShoppers lose their carts.\n"


def row(i: int, dimension: Dimension, status: str = "OPEN", source: str = "original") -> GapRow:
    return GapRow(id=f"g{i}", dimension=dimension, status=status, source=source, question=f"q{i}")  # type: ignore[arg-type]


def test_selection_asks_core_first_then_rows_raised_by_the_last_answer() -> None:
    ledger = GapLedger(
        rows=(
            row(1, Dimension.EDGE),
            row(2, Dimension.WHY),
            row(3, Dimension.ACCEPTANCE),
            row(4, Dimension.WHAT, "RESOLVED"),
            row(5, Dimension.SCOPE),
            row(6, Dimension.EDGE, source="raised-by-answer-R1"),
            row(7, Dimension.ACCEPTANCE, source="raised-by-answer-R1"),
        )
    )
    assert [r.id for r in select_questions(ledger, last_round=1)] == ["g7", "g5", "g3", "g6"]
    assert [r.id for r in select_questions(ledger, last_round=None, limit=9)] == ["g5", "g3", "g7", "g2"]
    assert [r.id for r in select_questions(ledger, last_round=1, limit=1)] == ["g7"]
    assert select_questions(GapLedger(), last_round=None) == []


def test_start_opens_a_row_per_missing_dimension_and_asks_at_most_four() -> None:
    interview, gate = iv.start("Add login", BODY, cap=5, limit=4)
    assert gate is None and interview.status == "interviewing" and interview.round == 1
    assert [r.dimension for r in interview.ledger.rows] == [
        Dimension.WHAT,
        Dimension.SCOPE,
        Dimension.ACCEPTANCE,
        Dimension.CONSTRAINTS,
        Dimension.EDGE,
        Dimension.DEPS,
    ]
    assert len(interview.asking) == 4
    assert all(interview.ledger.row(i).asked_in == 1 for i in interview.asking)  # type: ignore[union-attr]
    assert interview.found == ("WHY (section 'Why')",)


def answer(key: str, row_id: str, text: str) -> iv.Answer:
    return iv.Answer(key, row_id, text, "author")


def test_answers_are_recorded_once_and_probed() -> None:
    interview, _ = iv.start("Add login", BODY, cap=5, limit=4)
    answers = [answer("c1:g1", "g1", "Sign in with email; fast."), answer("c1:g2", "g2", "In: web\nOut: app")]
    after, gate = iv.record_answers(interview, answers, title="Add login", body=BODY, cap=5, limit=4)
    assert gate is not None and gate.verdict.label == "CONTINUE"
    assert after.ledger.row("g1").status == "RESOLVED"  # type: ignore[union-attr]
    [raised] = [r for r in after.ledger.rows if r.source == "raised-by-answer-R1"]
    assert raised.dimension == Dimension.WHAT and after.asking[0] == raised.id
    assert after.probes[-1].raised == (raised.id,) and after.round == 2
    again, none = iv.record_answers(after, answers, title="Add login", body=BODY, cap=5, limit=4)
    assert none is None and again == after


def test_a_concrete_answer_says_no_new_gaps_with_the_reason() -> None:
    interview, _ = iv.start("Add login", BODY, cap=5, limit=4)
    after, _ = iv.record_answers(
        interview,
        [answer("c1:g1", "g1", "Email and password sign-in.")],
        title="t",
        body=BODY,
        cap=5,
        limit=4,
    )
    assert after.probes[-1].reason.startswith("No new gaps: the answers to g1")


def test_the_cap_stops_clean_with_the_core_resolved_and_degraded_without() -> None:
    interview, _ = iv.start("Add login", BODY, cap=1, limit=4)
    core = [answer(f"c1:{i}", i, "Concrete.") for i in ("g1", "g2", "g3")]
    clean, gate = iv.record_answers(interview, core, title="t", body=BODY, cap=1, limit=4)
    assert gate is not None and gate.verdict.label == "STOP-CLEAN" and clean.status == "stopped"
    assert set(gate.residual_open) == {"g4", "g5", "g6"}
    degraded, gate = iv.record_answers(
        interview, [answer("c1:g4", "g4", "Python 3.13.")], title="t", body=BODY, cap=1, limit=4
    )
    assert gate is not None and gate.verdict.label == "STOP-DEGRADED" and degraded.gate == "STOP-DEGRADED"


def test_enough_and_reopen() -> None:
    interview, _ = iv.start("Add login", BODY, cap=5, limit=4)
    stopped, gate = iv.enough(interview, cap=5)
    assert gate.verdict.label == "STOP-ENOUGH" and stopped.status == "stopped" and stopped.asking == ()
    reopened = iv.reopen(stopped, title="Add login", body=BODY, limit=4)
    assert reopened.status == "interviewing" and reopened.cycle == 2
    assert reopened.round == reopened.cycle_start == 2 and reopened.asking


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("g3 Only admins", ("g3", "Only admins")),
        ("G3: Only admins\nand owners", ("g3", "Only admins\nand owners")),
        ("g3\nOn the next line", ("g3", "On the next line")),
        ("g3", None),
        ("", None),
        ("!! nope", None),
    ],
)
def test_parse_answer(text: str, parsed: tuple[str, str] | None) -> None:
    assert iv.parse_answer(text) == parsed


@pytest.mark.parametrize(
    ("line", "ac"),
    [
        (
            "WHEN a shopper signs in THE SYSTEM SHALL restore the cart.",
            "AC: WHEN a shopper signs in THE SYSTEM SHALL restore the cart",
        ),
        (
            "The system shall log every sign-in",
            "AC: WHEN the feature is used THE SYSTEM SHALL log every sign-in",
        ),
        (
            "Given a shopper / When they sign in / Then the cart is back",
            "AC: WHEN they sign in, given a shopper, THE SYSTEM SHALL the cart is back",
        ),
        (
            "QUANDO o cliente entrar O SISTEMA DEVE restaurar o carrinho",
            "AC: WHEN o cliente entrar THE SYSTEM SHALL restaurar o carrinho",
        ),
        ("- [ ] error shown", "AC: WHEN the change is delivered THE SYSTEM SHALL satisfy: error shown"),
    ],
)
def test_acceptance_lines_become_ears(line: str, ac: str) -> None:
    kind = "gherkin" if " / " in line else ""
    assert to_ac(line, kind) == ac


def test_the_spec_takes_requirements_from_the_issue_and_answers_and_only_real_links() -> None:
    body = BODY + "\nIn scope: web\nSee https://example.com/mock.png.\n<!-- https://hidden.example -->\n"
    ledger = GapLedger(
        rows=(
            GapRow(id="g1", dimension=Dimension.WHAT, status="RESOLVED", answer="Email sign-in.", asked_in=1),
            GapRow(
                id="g2", dimension=Dimension.SCOPE, status="RESOLVED", answer="Out: social login", asked_in=1
            ),
            GapRow(id="g3", dimension=Dimension.ACCEPTANCE, status="OPEN", asked_in=1, question="How?"),
            GapRow(id="g4", dimension=Dimension.DEPS, status="RESOLVED", answer="none", asked_in=1),
            GapRow(id="g5", dimension=Dimension.EDGE, status="OPEN", question="Edges?"),
        )
    )
    spec = synthesize(
        title="Add login", body=body, found=scan("Add login", body), ledger=ledger,
        verdict="STOP-ENOUGH", version=1, origin="o",
    )  # fmt: skip
    assert spec.goal == "Email sign-in. Shoppers lose their carts."
    assert spec.requirements == (
        "REQ: Email sign-in",
        "SCOPE(IN): web",
        "SCOPE(OUT): social login",
        "SOURCE: https://example.com/mock.png",
    )
    assert [(q.id, q.answer) for q in spec.qa] == [
        ("g1", "Email sign-in."),
        ("g2", "Out: social login"),
        ("g3", None),
        ("g4", "none"),
    ]
    assert [q.id for q in spec.open_questions] == ["g3", "g5"]
    assert spec.authored().keys() == {"version", "goal", "requirements", "qa"}


def test_versions_keep_their_history() -> None:
    ledger = GapLedger()
    first = synthesize(
        title="t", body="", found=scan("t", ""), ledger=ledger, verdict="STOP-CLEAN", version=1, origin="a"
    )
    record = SpecRecord().with_new(first)
    second = first.model_copy(update={"version": 2, "origin": "b"})
    record = record.with_new(second)
    assert record.current == second and [s.status for s in record.history] == ["superseded"]
    assert record.last_version == 2
    discarded = record.discard()
    assert discarded.current is None and discarded.history[-1].status == "discarded"
    assert discarded.last_version == 2


@pytest.mark.parametrize(
    ("title", "requirements", "level"),
    [
        ("Fix typo in README", ["REQ: fix the typo"], "L1"),
        ("Renomear botão", ["REQ: renomear o texto do botão"], "L1"),
        ("Add sign-in page", ["REQ: a sign-in form", "AC: WHEN x THE SYSTEM SHALL y"], "L2"),
        ("Sign-in", ["REQ: a sign-in page", "REQ: a new endpoint on the API"], "L3"),
        ("Sign-in", ["REQ: move sessions to a new service"], "L3"),
        ("Sign-in", ["REQ: a database migration"], "L3"),
        ("Sign-in", [f"REQ: item {i}" for i in range(8)], "L3"),
    ],
)
def test_level_scoring(title: str, requirements: list[str], level: str) -> None:
    assert score(title, "", requirements).level == level


def test_dependency_cycles_are_found_and_spelled_out() -> None:
    graph = {7: [6], 6: [5], 9: []}
    cycle = find_cycle(graph, 5, 7)
    assert cycle == [5, 7, 6, 5]
    assert describe_cycle(cycle) == "#5 is blocked by #7, which is blocked by #6, which is blocked by #5"
    assert find_cycle(graph, 5, 9) is None
    assert find_cycle(graph, 5, 5) == [5, 5]
    assert find_cycle({1: [2], 2: [1]}, 3, 1) is None


def _answered(i: int, dimension: Dimension, answer: str, source: str = "original", when: int = 1) -> GapRow:
    return GapRow(
        id=f"g{i}", dimension=dimension, status="RESOLVED", answer=answer, source=source,
        asked_in=when, answered_in=when, question=f"q{i}",
    )  # fmt: skip


def test_a_follow_up_under_why_keeps_the_reason_and_adds_its_limit_as_a_constraint() -> None:
    """ "What, then why" keeps the original motivation; a follow-up WHY answer that states a limit is a
    constraint, not a new reason."""
    ledger = GapLedger(
        rows=(
            _answered(1, Dimension.WHAT, "Shoppers sign in with email."),
            _answered(2, Dimension.WHY, "Carts are lost when the browser closes."),
            _answered(3, Dimension.WHY, "It must not take more than 2 seconds.", "raised-by-answer-R1", 2),
        )
    )
    spec = synthesize(
        title="Login", body="", found=scan("Login", ""), ledger=ledger,
        verdict="STOP-CLEAN", version=1, origin="o",
    )  # fmt: skip
    assert spec.goal == "Shoppers sign in with email. Carts are lost when the browser closes."
    assert "CONSTRAINT: It must not take more than 2 seconds" in spec.requirements


@pytest.mark.parametrize(
    ("answer", "wanted"),
    [
        ("In: email login. Out: social login", ["SCOPE(IN): email login", "SCOPE(OUT): social login"]),
        ("In: web; Out of scope: mobile", ["SCOPE(IN): web", "SCOPE(OUT): mobile"]),
        ("Dentro: web, Fora: app", ["SCOPE(IN): web", "SCOPE(OUT): app"]),
        ("Only the checkout page", ["SCOPE(IN): Only the checkout page"]),
    ],
)
def test_a_one_line_in_and_out_scope_answer_is_split(answer: str, wanted: list[str]) -> None:
    ledger = GapLedger(rows=(_answered(1, Dimension.SCOPE, answer),))
    spec = synthesize(
        title="t", body="", found=scan("t", ""), ledger=ledger, verdict="STOP-CLEAN", version=1, origin="o"
    )
    assert [r for r in spec.requirements if r.startswith("SCOPE")] == wanted


def _padded(head: str, tail: str) -> str:
    from handlers.backlog.gaps import MAX_BODY_CHARS

    return head + ("Lorem ipsum dolor sit amet consectetur.\n" * (MAX_BODY_CHARS // 40 + 1)) + tail


def test_a_body_is_read_only_up_to_its_cap_and_the_interview_says_so() -> None:
    """GitHub holds a body to 65,536 characters, Gitea to none: the scan, the dependency references and
    the spec read the first ``MAX_BODY_CHARS``; the interview opens with the bug verdict's note."""
    from handlers.backlog.gaps import MAX_BODY_CHARS, blocked_by_refs
    from handlers.backlog.render import render_interview

    tail = "## Why\n\nSo that people can sign in.\n\nBlocked by #7\n"
    body = _padded("## What\n\nA login form for the app.\n\n", tail)
    found = scan("Add login", body)
    assert found.cut is not None and found.cut[1] == len(body) and found.cut[0] <= MAX_BODY_CHARS
    assert not found.has(Dimension.WHY) and not found.has(Dimension.DEPS) and found.blocked_by == ()
    assert blocked_by_refs(body) == [] and blocked_by_refs(tail) == [7]
    interview, _ = iv.start("Add login", body, cap=5, limit=4)
    assert interview.cut == found.cut
    text = render_interview(interview, author="alice", cap=5, spec_version=0)
    read, total = found.cut
    assert text.startswith(
        f"> [!NOTE]\n> This report is {total:,} characters long: I read only its first {read:,} "
    )
    spec = synthesize(
        title="Add login", body=body + "https://example.com/late\n", found=found,
        ledger=interview.ledger, verdict="STOP-CLEAN", version=1, origin="c1r1",
    )  # fmt: skip
    assert not any("example.com/late" in line for line in spec.requirements)
    short, _ = iv.start("Add login", "## What\n\nA login form.\n\n" + tail, cap=5, limit=4)
    assert short.cut is None
    assert not render_interview(short, author="alice", cap=5, spec_version=0).startswith("> [!NOTE]")


def test_a_portuguese_body_read_in_part_is_told_in_portuguese() -> None:
    from handlers.backlog.render import render_interview

    body = _padded(
        "## O que\n\nUm formulário de login para o aplicativo, porque os usuários precisam.\n\n", ""
    )
    body = body.replace("Lorem ipsum dolor sit amet consectetur.", "Os usuários precisam entrar no sistema.")
    interview, _ = iv.start("Adicionar login", body, cap=5, limit=4)
    assert interview.language == "pt" and interview.cut is not None
    text = render_interview(interview, author="alice", cap=5, spec_version=0)
    assert text.startswith(f"> [!NOTE]\n> Este relato tem {len(body):,} caracteres: li só os primeiros ")
