"""Fork sections and the commands' arguments, as pure rules (with property tests for the parser)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handlers.forks.parse import (
    MAX_BODY_CHARS,
    Fork,
    UsageError,
    normalise,
    parse_decide,
    parse_forks,
    parse_reopen,
)

HEADINGS = ("Open forks", "Forks", "Design forks", "Decisões em aberto")


def test_forks_are_task_items_under_a_forks_heading() -> None:
    body = (
        "Intro\n\n## Open forks\n\n- [ ] F1: Postgres or SQLite?\n- [x] F2: REST or gRPC? — resolved: REST\n"
        "- plain item\n- [ ] not a fork id\n\n## Other\n\n- [ ] F3: not in the section\n"
    )
    found = parse_forks(body, HEADINGS)
    assert found.forks == (
        Fork("F1", "Postgres or SQLite?"),
        Fork("F2", "REST or gRPC?", checked=True, claimed="REST"),
    )


@pytest.mark.parametrize("heading", ["Forks", "Design forks", "Decisões em aberto", "open FORKS", "Forks:"])
def test_every_heading_counts_case_insensitively(heading: str) -> None:
    assert parse_forks(f"## {heading}\n- [ ] F7: q\n", HEADINGS).ids == ("F7",)


def test_level_three_headings_stay_inside_the_section_and_fences_do_not_count() -> None:
    body = (
        "## Forks\n### Storage\n- [ ] F1: a\n```\n- [ ] F2: in a fence\n```\n- [X] f03: b\n# Top\n"
        "- [ ] F4: c\n"
    )
    found = parse_forks(body, HEADINGS)
    assert found.ids == ("F1", "F3")
    assert found.get("F3") == Fork("F3", "b", checked=True)


def test_a_repeated_id_is_reported_and_the_first_counts() -> None:
    found = parse_forks("## Forks\n- [ ] F1: first\n- [x] F1: second\n", HEADINGS)
    assert found.forks == (Fork("F1", "first"),)
    assert found.duplicates == ("F1",)


def test_no_section_no_forks() -> None:
    assert parse_forks("- [ ] F1: a\n", HEADINGS).forks == ()
    assert parse_forks(None, HEADINGS).forks == ()


def test_decide_arguments() -> None:
    assert parse_decide("F1 use Postgres").resolution == "use Postgres"
    args = parse_decide("f2 REST over HTTP --source https://forge/o/r/issues/3#issuecomment-9\nbecause…")
    assert (args.fork, args.resolution, args.source) == (
        "F2",
        "REST over HTTP",
        "https://forge/o/r/issues/3#issuecomment-9",
    )
    with pytest.raises(UsageError, match="not a fork id"):
        parse_decide("postgres")
    with pytest.raises(UsageError, match="say what was decided"):
        parse_decide("F1")
    with pytest.raises(UsageError, match="needs the link"):
        parse_decide("F1 x --source")


def test_reopen_arguments() -> None:
    assert parse_reopen("F3 the benchmark changed") == ("F3", "the benchmark changed")
    with pytest.raises(UsageError, match="say why"):
        parse_reopen("F3")


def test_normalise_folds_case_and_whitespace() -> None:
    assert normalise("  Use\n\tPOSTGRES  ") == "use postgres"


# --- properties ---------------------------------------------------------------------------------------------

_LINE_BREAKS = "\r\n\x85\u2028\u2029"
_question = (
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters=_LINE_BREAKS
        ),
        max_size=40,
    )
    .map(lambda s: " ".join(s.split()))
    .filter(lambda s: "resol" not in s.casefold() and "decided" not in s.casefold())
)


@given(st.lists(st.tuples(st.integers(1, 999), _question, st.booleans()), max_size=12))
def test_listed_forks_read_back(items: list[tuple[int, str, bool]]) -> None:
    lines = [f"- [{'x' if checked else ' '}] F{n}: {q}" for n, q, checked in items]
    found = parse_forks("Text\n\n## Open forks\n\n" + "\n".join(lines) + "\n", HEADINGS)
    expected: dict[str, Fork] = {}
    for n, q, checked in items:
        expected.setdefault(f"F{n}", Fork(f"F{n}", q.strip(), checked))
    assert found.forks == tuple(expected.values())
    assert len(set(found.ids)) == len(found.ids)


@given(st.text(max_size=400))
def test_any_body_parses_without_error_and_ids_are_unique(body: str) -> None:
    found = parse_forks(body, HEADINGS)
    assert len(set(found.ids)) == len(found.ids)
    assert all(f.id.startswith("F") and f.id[1:].isdigit() for f in found.forks)


@given(st.text(max_size=200))
def test_decide_never_fails_otherwise_than_with_a_usage_error(text: str) -> None:
    try:
        args = parse_decide(text)
    except UsageError:
        return
    assert args.resolution and args.fork.startswith("F")


def test_a_body_is_read_only_up_to_its_cap_and_the_cut_is_reported() -> None:
    """GitHub holds a body to 65,536 characters, Gitea to none: a fork listed past the cap is not read,
    and the fork list says how much was read of how much (the reconciliation comment tells the reader)."""
    head = "## Open forks\n- [ ] F1: Postgres or SQLite?\n"
    padding = ("padding " * 9 + "\n") * (MAX_BODY_CHARS // 73 + 1)
    body = head + padding + "- [ ] F2: REST or gRPC?\n"
    assert len(body) > MAX_BODY_CHARS
    found = parse_forks(body, HEADINGS)
    assert found.ids == ("F1",)
    assert found.cut is not None
    read, total = found.cut
    assert total == len(body) and read <= MAX_BODY_CHARS and body[read] == "\n"
    short = parse_forks(head + "- [ ] F2: REST or gRPC?\n", HEADINGS)
    assert short.ids == ("F1", "F2") and short.cut is None
