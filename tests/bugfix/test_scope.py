"""The fix stays in scope (issue 36 §2): which changed files need a maintainer's `/scope`, how the status
waits for it, and the acceptance as a ledger event — without any I/O."""

from __future__ import annotations

from bot.config.settings import BugfixSettings
from handlers.bugfix.ledger import Ledger, event_from_json, event_to_json, fold
from handlers.bugfix.render import ledger_text
from handlers.bugfix.scope import (
    ScopeAcceptance,
    ScopeCheck,
    changed_lines,
    check_scope,
    item_words,
    regression_test_edited,
)
from handlers.bugfix.status import evaluate
from tests.bugfix.test_status_and_ledger import GLOBS, RED, commit, given_status

SENSITIVE = BugfixSettings().scope_globs
TEST = "tests/test_cart.py"


def scope(*files: str, named: tuple[str, ...] = ("src/cart.py",), edited: bool = False) -> ScopeCheck:
    return check_scope(
        files, named, test_globs=GLOBS, scope_globs=SENSITIVE, test_path=TEST, test_edited=edited
    )


def test_files_the_evidence_names_and_tests_are_in_scope() -> None:
    assert scope("src/cart.py", "tests/test_new.py", "src/cart_test.go").items() == ()
    assert scope("/src/cart.py").items() == ()


def test_other_files_and_a_fix_touching_none_of_the_evidence_are_out() -> None:
    assert scope("src/cart.py", "src/rates.py").outside == ("src/rates.py",)
    assert scope("README.md").outside == ("README.md",), "a fix that touches none of the named files"
    assert scope("src/rates.py", named=()).outside == ("src/rates.py",)


def test_sensitive_files_need_acceptance_even_when_named() -> None:
    paths = [".github/workflows/ci.yml", "poetry.lock", "web/package-lock.json", "go.sum", "api_pb2.py"]
    paths += [".env", "config/.env.local", "deploy/tls.pem", "src/secrets.py", "gen/generated/x.py"]
    for path in paths:
        found = scope(path, named=(path,))
        assert found.sensitive == (path,) and found.outside == (), path
    assert scope("src/cart.py", named=("src/cart.py",)).sensitive == ()


def test_the_regression_test_edited_in_place_is_an_item_new_tests_are_not() -> None:
    code = "def test_a():\n    assert f() == 1\n"
    assert regression_test_edited(code, "import x\n\n" + code + "\n\ndef test_b():\n    assert 1\n") is False
    assert regression_test_edited(code, code.replace("    assert", "    y = 2\n    assert")) is True
    assert regression_test_edited(code, None) is False, "a deleted file is the status's own failure"
    assert regression_test_edited("", "anything") is False
    assert scope("src/cart.py", edited=True).items() == (TEST,)


def test_the_status_waits_for_acceptance_of_what_it_names() -> None:
    waiting = scope("src/cart.py", "src/rates.py", "poetry.lock")
    given = given_status(
        commits=[RED, commit("f", "src/cart.py", "src/rates.py", "poetry.lock")], scope=waiting
    )
    status = evaluate(given)
    assert (status.state, status.code) == ("pending", "FIX_OUT_OF_SCOPE")
    assert status.description == (
        "fix out of scope: files the evidence does not name: src/rates.py; sensitive files: poetry.lock"
    )
    assert "`/scope` followed by the reason" in status.detail and "extend the evidence" in status.detail

    partly = fold(given.ledger.budgets, [ScopeAcceptance(9, "lead", "rates too", ("src/rates.py",))])
    status = evaluate(given_status(commits=given.commits, scope=waiting, ledger=partly))
    assert status.description == "fix out of scope: sensitive files: poetry.lock", "covers what it named only"
    both = partly.apply(ScopeAcceptance(10, "lead", "lock too", ("poetry.lock",)))
    assert (
        evaluate(given_status(commits=given.commits, scope=waiting, ledger=both)).code != "FIX_OUT_OF_SCOPE"
    )
    assert evaluate(given_status(scope=None)).code != "FIX_OUT_OF_SCOPE", "board off: not checked"

    shas = {"red_sha": "r" * 40, "head_sha": "h" * 40, "red_ci": "red", "head_ci": "green"}
    text = ledger_text(number=1, status=status, ledger=both, **shas)
    assert "**Scope accepted**" in text and "- `src/rates.py`: rates too — @lead" in text


def test_an_acceptance_round_trips_as_a_ledger_event() -> None:
    event = ScopeAcceptance(7, "lead", "why", ("a.py", "b.lock"))
    assert event_from_json(event_to_json(event)) == event
    assert event_from_json({"type": "scope", "comment": 7, "actor": "x", "files": "a.py"}) == ScopeAcceptance(
        7, "x", "", ()
    )
    assert Ledger().apply(event).scope_accepted == frozenset({"a.py", "b.lock"})


def test_the_fix_size_is_counted_and_an_accepted_size_covers_smaller_ones() -> None:
    assert changed_lines("a\nb\nc\n", "a\nB\nc\nd\n") == 3
    assert changed_lines(None, "a\nb\n") == 2 and changed_lines("a\n", None) == 1
    assert changed_lines("x\n" * 15_000, "y\n" * 15_000) == 30_000, "too long to compare: all lines count"
    assert ScopeCheck(oversize=0).items() == ()
    sized = {"test_globs": GLOBS, "scope_globs": SENSITIVE, "test_path": TEST, "test_edited": False}
    big = check_scope(["src/cart.py"], ["src/cart.py"], lines=450, max_lines=400, **sized)  # type: ignore[arg-type]
    assert big.items() == ("size:450",) and big.describe() == "450 changed lines (at most 400)"
    assert item_words("size:450") == "the fix's size (450 changed lines)" and item_words("a.py") == "`a.py`"
    assert big.waiting({"size:500"}).items() == () and big.waiting({"size:300"}).items() == ("size:450",)
    within = check_scope(["src/cart.py"], ["src/cart.py"], lines=400, max_lines=400, **sized)  # type: ignore[arg-type]
    assert within.items() == ()
