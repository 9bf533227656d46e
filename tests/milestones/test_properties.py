"""Properties of the milestone gate's parsers and rules, over arbitrary input."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.forge import Issue
from bot.records import sticky
from bot.records.neutralise import live_parts
from handlers.milestones.gate import GateLabels, evaluate, is_internal
from handlers.milestones.plan import UsageError, dashboard_key, parse_gate
from handlers.milestones.render import plain
from handlers.milestones.state import DashboardData

LABEL_NAMES = ["cycle", "audit:clean", "audit:ratified", "fieldtest", "fieldtest:pass", "finding:bug",
               "finding:friction", "finding:spec-gap", "ratified", "forks:open", "other"]  # fmt: skip

items_strategy = st.lists(
    st.builds(
        lambda n, state, labels, pr: Issue(n, "t", "", state, "a", tuple(labels), 1, pr),
        st.integers(1, 10_000),
        st.sampled_from(["open", "closed"]),
        st.lists(st.sampled_from(LABEL_NAMES), max_size=5),
        st.booleans(),
    ),
    max_size=20,
    unique_by=lambda issue: issue.number,
)


@given(items_strategy, st.booleans())
def test_the_gate_passes_exactly_when_nothing_blocks(items: list[Issue], internal: bool) -> None:
    description = "internal: true" if internal else ""
    result = evaluate(items, description=description, labels=GateLabels(), internal_marker="internal: true")
    assert result.passed == (result.blockers == ())
    if internal:
        assert result.functional == () and result.exempt
    # Every open item that is not a ratified friction or spec-gap finding blocks Complete.
    for issue in items:
        settled = issue.has_label("ratified") and (
            issue.has_label("finding:friction") or issue.has_label("finding:spec-gap")
        )
        if issue.state == "open" and not settled:
            assert any(b.kind == "open-item" and b.number == issue.number for b in result.complete)
    # Adding a closed item without labels changes nothing.
    more = evaluate(
        [*items, Issue(20_000, "t", "", "closed", "a")],
        description=description,
        labels=GateLabels(),
        internal_marker="internal: true",
    )
    assert more == result


@given(st.lists(st.text(max_size=30), max_size=5), st.text(max_size=300))
def test_gate_arguments_never_fail_but_with_a_usage_error(args: list[str], text: str) -> None:
    try:
        request = parse_gate(tuple(args), text)
    except UsageError:
        return
    assert request.action in ("check", "override")
    if request.action == "override":
        assert request.reason and "\n" not in request.reason and len(request.reason) <= 300


@given(st.text(max_size=200), st.integers(0, 10**12))
def test_a_dashboard_marker_reads_back(text: str, key: int) -> None:
    assert dashboard_key(sticky.render("milestone-dashboard", str(key), text, {"v": 1})) == key
    found = dashboard_key(text)
    assert found is None or isinstance(found, int)


@given(st.text(max_size=200), st.text(max_size=200))
def test_the_internal_marker_is_found_on_any_line(before: str, after: str) -> None:
    assert is_internal(f"{before}\n  Internal:  true \n{after}", "internal: true")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


@given(
    st.dictionaries(
        st.sampled_from(
            ["state", "closed_at", "counts", "override", "closure", "reopened", "internal", "gate", "x"]
        ),
        json_values,
    )
    | json_values
)
def test_a_mangled_data_block_never_breaks_a_dashboard(raw: Any) -> None:
    data = DashboardData.from_json(raw, 7)
    assert data.key == 7 and data.state in ("open", "closed")
    assert DashboardData.from_json(data.to_json(), 7) == data
    assert len(sticky.encode_data(data.to_json())) < 2_000


@given(st.text(max_size=500))
def test_someones_text_becomes_one_harmless_cell(text: str) -> None:
    cell = plain(text)
    assert "\n" not in cell and "\r" not in cell and "`" not in cell
    assert not any(live_parts(cell).values())
    assert "|" not in cell.replace("\\|", "")
    assert len(cell) <= 80 * 6
