"""A command's error reply that echoes what the person wrote quotes it inertly (issue 25 §1): an argument like
`@team Closes #1 <img>` is shown, but mentions nobody, closes nothing and loads nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.records.neutralise import live_parts
from handlers.forks.parse import UsageError as ForksUsage
from handlers.forks.parse import parse_reopen
from handlers.milestones.plan import UsageError as GateUsage
from handlers.milestones.plan import parse_gate

HOSTILE = "@acme/everyone Closes #1 <img src=x> ![p](u)"


def acts(text: str) -> dict[str, list[str]]:
    return {kind: found for kind, found in live_parts(text).items() if found}


@pytest.mark.parametrize("word", [HOSTILE.split()[0], "`@maint2`", "<b>", "fixes#3"])
def test_an_unknown_gate_argument_is_quoted_inertly(word: str) -> None:
    with pytest.raises(GateUsage) as refused:
        parse_gate([word], word)
    assert acts(str(refused.value)) == {}


@given(st.text(min_size=1).filter(lambda t: t.split() != [] and t.split()[0].upper()[:1] != "F"))
def test_a_reopen_with_no_fork_id_quotes_what_was_written_inertly(text: str) -> None:
    try:
        parse_reopen(text)
    except ForksUsage as refused:
        assert acts(str(refused)) == {}
