"""Who wrote section 7 as the issue has it now (issue 37 §3), from the body's edit history
(``Forge.body_versions``), and what the vouch refusal says of it: the author, a later editor, or that it
cannot be known (no edit history on the forge, a version without its text, a history cut short)."""

from __future__ import annotations

from bot.forge import BodyVersion
from handlers.bugfix.gate import UNTRUSTED_TEST_CODE, GateInput, check_gate
from handlers.bugfix.regression_slot import parse_slot, slot_writer
from tests.bugfix.bodies import python_slot

MINE = python_slot(code="def test_discount_survives_currency_switch():\n    assert total() == 76.5\n")
THEIRS = python_slot(code="def test_discount_survives_currency_switch():\n    assert True\n")
# The same report with a line added after section 7 (in a later section): section 7 is unchanged.
ANNOTATED = MINE + "\nP.S. seen on staging too.\n"


def v(editor: str, body: str | None, at: str = "") -> BodyVersion:
    return BodyVersion(editor=editor, edited_at=at, body=body)


def test_a_body_never_edited_was_written_by_its_author() -> None:
    assert slot_writer("outsider", MINE, []) == "outsider"


def test_the_editor_who_made_section_7_what_it_is_now_wrote_it() -> None:
    versions = [v("outsider", THEIRS), v("maintainer", MINE)]
    assert slot_writer("outsider", MINE, versions) == "maintainer"
    # A later edit elsewhere in the body (a typo in another section) does not make its editor the writer.
    later = [*versions, v("outsider", ANNOTATED)]
    assert slot_writer("outsider", ANNOTATED, later) == "maintainer"


def test_section_7_unchanged_since_the_creation_is_the_authors() -> None:
    versions = [v("outsider", MINE), v("maintainer", ANNOTATED)]
    assert slot_writer("outsider", ANNOTATED, versions) == "outsider"


def test_an_edit_back_to_earlier_code_is_the_editors() -> None:
    versions = [v("maintainer", MINE), v("outsider", THEIRS), v("maintainer", MINE)]
    assert slot_writer("outsider", MINE, versions) == "maintainer"
    versions = [v("outsider", MINE), v("maintainer", THEIRS), v("outsider", MINE)]
    assert slot_writer("outsider", MINE, versions) == "outsider"


def test_what_cannot_be_known_is_not_guessed() -> None:
    assert slot_writer("outsider", MINE, None) is None, "no edit history (Gitea's API)"
    assert slot_writer("outsider", MINE, [v("outsider", THEIRS), v("maintainer", None)]) is None
    assert slot_writer("outsider", MINE, [v("", None), v("maintainer", MINE)]) is None, "history cut short"
    edited_since = [v("outsider", MINE), v("maintainer", THEIRS)]
    assert slot_writer("outsider", MINE, edited_since) is None, "the body changed after the history was read"
    assert slot_writer("outsider", MINE, [v("", THEIRS), v("", MINE)]) is None, "a deleted account"


def _refusal(**changes: object) -> str:
    slot = parse_slot(MINE)
    given = GateInput(
        verdict="approved",
        blockers=(),
        slot=slot,
        test_globs=("tests/**",),
        author="outsider",
        author_can_write=False,
        **changes,  # type: ignore[arg-type]
    )
    result = check_gate(given)
    assert result.codes == (UNTRUSTED_TEST_CODE,), result.codes
    return result.refusals[0].message


def test_the_refusal_names_who_last_wrote_section_7_without_pinging() -> None:
    by_maintainer = _refusal(slot_writer="maintainer", edit_history=True)
    assert "section 7 as it is now was last written by @\u2060maintainer" in by_maintainer
    assert "opened by @\u2060outsider, who has no write access" in by_maintainer
    by_author = _refusal(slot_writer="outsider", edit_history=True)
    assert "the issue's edit history shows they wrote section 7 as it is now" in by_author
    assert "does not tell who last wrote section 7" in _refusal(slot_writer=None, edit_history=True)
    assert "this forge's API keeps no edit history" in _refusal(slot_writer=None, edit_history=False)
