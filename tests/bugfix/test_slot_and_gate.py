"""Section 7 parsing, the test digest, test globs, test-case names, the gate's refusals and the names
`/bugfix` gives (issue 13)."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.config.settings import BugfixSettings
from handlers.bugfix.gate import (
    BUG_NOT_REFINED,
    FORKS_OPEN,
    REGRESSION_PATH_NOT_A_TEST,
    REGRESSION_TEST_MISSING,
    ROOT_CAUSE_NOT_EVIDENCED,
    STALE_TEST_DIGEST,
    STORY_NOT_REFINED,
    TEST_TOO_LONG,
    UNTRUSTED_TEST_CODE,
    VOUCH_NOT_SHOWN,
    VOUCHER_CANNOT_WRITE,
    GateInput,
    Refusal,
    RootCause,
    ShownCode,
    UsageError,
    branch_name,
    bug_of_branch,
    check_gate,
    parse_bugfix_args,
    red_message,
    slug,
    valid_branch,
)
from handlers.bugfix.regression_slot import (
    RegressionSlot,
    case_names,
    code_digest,
    example_for,
    is_test_path,
    parse_slot,
    removed_cases,
    with_test,
)
from handlers.bugfix.render import fence, refusal_text
from tests.bugfix.bodies import APPROVED, BUG, TEST_CODE, python_slot, with_slot

GLOBS = BugfixSettings().test_globs


# --- section 7 ----------------------------------------------------------------------------------------------


def test_section_7_gives_the_path_and_the_fenced_test_under_it() -> None:
    slot = parse_slot(BUG)
    assert slot == RegressionSlot(True, "tests/test_currency_switch.py", TEST_CODE, "python")
    # The full SHA-256 over the path, a NUL and the exact code (issue 24: a 12-hex prefix collided).
    path = b"tests/test_currency_switch.py"
    assert slot.digest == hashlib.sha256(path + b"\0" + TEST_CODE.encode()).hexdigest()


def test_a_slot_with_a_path_and_no_code_has_no_test() -> None:
    slot = parse_slot(APPROVED)
    assert slot.path == "web/src/cart/__tests__/currency-switch.spec.ts" and slot.code is None


def test_no_section_7_and_no_path() -> None:
    assert parse_slot("# just a title\n\nsome text").found is False
    assert parse_slot(with_slot("We will write one later.")) == RegressionSlot(True)


def test_code_above_the_path_does_not_count_and_comments_hide_paths() -> None:
    body = with_slot("```python\nx = 1\n```\n\n<!-- `tests/hidden.py` -->\nTest: `tests/test_a.py`\n")
    assert parse_slot(body) == RegressionSlot(True, "tests/test_a.py")


def test_a_fence_in_a_list_item_under_the_path_counts() -> None:
    body = with_slot("- Test: `tests/test_b.py`\n\n  ```python\n  def test_b():\n      assert 1\n  ```\n")
    assert parse_slot(body).code == "def test_b():\n    assert 1\n"


def test_unsafe_paths_are_not_paths() -> None:
    assert parse_slot(with_slot("Test: `../etc/passwd.py`\n\n```\nx\n```")).path is None
    assert parse_slot(with_slot("Test: `/abs/test_x.py`\n\n```\nx\n```")).path is None


@given(st.text(max_size=400))
def test_any_section_7_parses_without_raising(text: str) -> None:
    slot = parse_slot(with_slot(text))
    assert slot.found
    if slot.path is not None:
        assert not slot.path.startswith("/") and ".." not in slot.path.split("/")
    if slot.code is not None:
        assert slot.path is not None and slot.code.endswith("\n")


@given(st.text(min_size=1, max_size=200).filter(lambda s: "```" not in s and s.strip()))
def test_the_digest_is_that_of_the_code_as_written(code: str) -> None:
    code = code.replace("\r", "")
    body = python_slot(code=code)
    slot = parse_slot(body)
    if slot.code is not None:
        assert slot.path is not None and slot.digest == code_digest(slot.path, slot.code)
        assert re.fullmatch(r"[0-9a-f]{64}", slot.digest or "")


# --- globs, names, appending --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_a.py", True),
        ("test/a.c", True),
        ("src/pkg/test_a.py", True),
        ("src/pkg/a_test.go", True),
        ("web/src/cart/__tests__/currency-switch.spec.ts", True),
        ("web/a.test.js", True),
        ("spec/models/user_spec.rb", True),
        ("src/app.py", False),
        ("README.md", False),
        ("src/tests.py", False),
        ("contest/x.py", False),
    ],
)
def test_default_test_globs(path: str, is_test: bool) -> None:
    assert is_test_path(path, GLOBS) is is_test


@given(st.lists(st.from_regex(r"[a-z]{1,5}", fullmatch=True), min_size=1, max_size=4))
def test_double_star_crosses_directories_and_star_does_not(parts: list[str]) -> None:
    path = "/".join(parts) + ".py"
    assert is_test_path("tests/" + path, ("tests/**",))
    assert is_test_path(path, ("**/*.py",))
    assert is_test_path(path, ("*.py",)) is (len(parts) == 1)


def test_test_names_by_language() -> None:
    assert case_names(
        "tests/test_a.py", "def test_a():\n  pass\nclass TestB:\n  async def test_c(self): ...\n"
    ) == {
        "test_a",
        "TestB",
        "test_c",
    }
    assert case_names("a_test.go", "func TestA(t *testing.T) {}\nfunc helper() {}\n") == {"TestA"}
    assert case_names("a.spec.ts", "describe('cart', () => { it(\"keeps it\", () => {}) })") == {
        "cart",
        "keeps it",
    }
    assert case_names("x.rs", "#[test]\nfn keeps() {}\nfn other() {}") == {"keeps"}
    java = (
        "@Test void a() {} @Test public void b() { }\n"
        "@ParameterizedTest @ValueSource(ints = 1) void c(int x) {}\n"
        "@Test int x; void helper() {}\n@Testing void d() {}\n@Test @Test void e() {}"
    )
    assert case_names("src/test/CartTest.java", java) == {"a", "b", "c", "e"}
    assert case_names("CartTest.kt", "@Test\nfun keeps() {}\nfun other() {}") == {"keeps"}
    assert case_names("spec/cart_spec.rb", "it 'keeps' do\nend\n  def test_b\nend\n") == {"keeps", "test_b"}
    # Indentation is spaces and tabs: a name on the line after its `def` is not a Python definition.
    assert case_names("tests/test_a.py", "\tdef test_a():\n  def\ntest_b():\n") == {"test_a"}


# The names exclude the one the test adds (`test_new`): a case named so would be kept by the addition.
NAMES = st.from_regex(r"test_[a-z]{1,8}", fullmatch=True).filter(lambda n: n != "test_new")


@given(st.lists(NAMES, unique=True, max_size=6), st.data())
def test_removing_a_case_is_seen_and_adding_is_not(names: list[str], data: st.DataObject) -> None:
    text = "".join(f"def {n}():\n    assert 1\n\n" for n in names)
    before = case_names("tests/test_x.py", text)
    kept = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    after = case_names("tests/test_x.py", "".join(f"def {n}():\n    pass\n" for n in [*kept, "test_new"]))
    assert set(removed_cases(before, after)) == set(names) - set(kept)
    assert removed_cases(before, None) == tuple(sorted(names))


def test_the_test_is_appended_never_replacing_and_only_once() -> None:
    assert with_test(None, TEST_CODE) == TEST_CODE
    existing = "def test_old():\n    assert 1\n"
    once = with_test(existing, TEST_CODE)
    assert once.startswith(existing) and once.endswith(TEST_CODE)
    assert with_test(once, TEST_CODE) == once


def test_examples_follow_the_path_s_language() -> None:
    assert example_for("a_test.go")[0] == "go"
    assert example_for("x.spec.ts")[0] == "ts"
    assert example_for(None)[0] == "python"


# --- the gate -----------------------------------------------------------------------------------------------


def _gate(**changes: object) -> GateInput:
    values: dict[str, object] = {
        "verdict": "approved",
        "blockers": (),
        "slot": parse_slot(BUG),
        "test_globs": GLOBS,
        "author": "marta",
        "author_can_write": True,
    }
    values.update(changes)
    return GateInput(**values)  # type: ignore[arg-type]


def test_an_approved_bug_with_a_test_passes() -> None:
    assert check_gate(_gate()).passed


def test_each_refusal_has_its_code_and_says_what_to_do() -> None:
    result = check_gate(_gate(verdict="rejected", blockers=("VISION_EMPTY",)))
    assert result.codes == (BUG_NOT_REFINED,) and "`VISION_EMPTY`" in result.refusals[0].message
    result = check_gate(_gate(unresolved_forks=("F1", "F3")))
    assert result.codes == (FORKS_OPEN,) and "`F1`, `F3`" in result.refusals[0].message
    result = check_gate(_gate(root_cause=RootCause(False, detail="H1 and H2 are pending.")))
    assert (
        result.codes == (ROOT_CAUSE_NOT_EVIDENCED,) and "H1 and H2 are pending." in result.refusals[0].message
    )
    result = check_gate(_gate(slot=parse_slot(python_slot(path="src/cart.py"))))
    assert result.codes == (REGRESSION_PATH_NOT_A_TEST,)
    assert "`bugfix.test_globs`" in result.refusals[0].message and "`tests/**`" in result.refusals[0].message
    result = check_gate(_gate(slot=parse_slot(APPROVED)))
    assert result.codes == (REGRESSION_TEST_MISSING,)
    assert result.refusals[0].code_info == "ts" and "test(" in result.refusals[0].code_block


def test_a_storys_own_verdict_gates_it_instead_of_a_bug_verdict() -> None:
    """Issue 36 §4: a story has no bug verdict of its own; its story verdict decides (STORY_NOT_REFINED)."""
    refused = check_gate(_gate(verdict=None, is_story=True, story_refusal="a story of #3, not approved"))
    assert refused.codes == (STORY_NOT_REFINED,) and "a story of #3" in refused.refusals[0].message
    assert check_gate(_gate(verdict=None, is_story=True)).passed, "an approved story needs no bug verdict"


def test_a_path_in_a_ci_configuration_directory_is_never_a_test() -> None:
    slot = parse_slot(python_slot(path=".github/workflows/test_x.spec.yml"))
    assert check_gate(_gate(slot=slot, test_globs=("**",))).codes == (REGRESSION_PATH_NOT_A_TEST,)


def test_all_refusals_that_apply_are_given_in_order() -> None:
    result = check_gate(
        _gate(verdict=None, unresolved_forks=("F1",), root_cause=RootCause(False), slot=RegressionSlot(True))
    )
    assert result.codes == (BUG_NOT_REFINED, FORKS_OPEN, ROOT_CAUSE_NOT_EVIDENCED, REGRESSION_TEST_MISSING)


def test_an_outsider_s_test_code_needs_a_maintainer_to_vouch_for_its_digest() -> None:
    slot = parse_slot(BUG)
    digest = slot.digest
    assert digest is not None and slot.path is not None
    shown = ShownCode(slot.path, TEST_CODE, digest)
    refused = check_gate(_gate(author_can_write=False))
    assert refused.codes == (UNTRUSTED_TEST_CODE,)
    # Issue 37 §3: a maintainer may have written section 7 by editing the issue; the refusal does not claim
    # the code "comes from" the author, and names them without pinging them.
    message = refused.refusals[0].message
    assert "comes from" not in message and "cannot tell who last wrote section 7" in message
    assert "opened by @\u2060marta" in message
    assert (
        f"`/steward bugfix --trust-test {digest}`" in refused.refusals[0].message
        and refused.refusals[0].code_block == TEST_CODE
    )
    assert check_gate(_gate(author_can_write=False, trust_digest=digest, shown=shown)).passed
    # A digest no refusal showed code for vouches for nothing.
    unknown = check_gate(_gate(author_can_write=False, trust_digest="0" * 64))
    assert unknown.codes == (VOUCH_NOT_SHOWN,) and digest in unknown.refusals[0].message
    # The code changed after the refusal showed the vouched code: refused, the new code shown.
    other = ShownCode(slot.path, "def test_x():\n    assert 1\n", "1" * 64)
    stale = check_gate(_gate(author_can_write=False, trust_digest="1" * 64, shown=other))
    assert stale.codes == (STALE_TEST_DIGEST,) and digest in stale.refusals[0].message
    assert stale.refusals[0].code_block == TEST_CODE


def test_a_vouch_needs_write_access_whatever_the_configuration_lets_run_bugfix() -> None:
    slot = parse_slot(BUG)
    assert slot.digest is not None and slot.path is not None
    shown = ShownCode(slot.path, TEST_CODE, slot.digest)
    refused = check_gate(
        _gate(author_can_write=False, trust_digest=slot.digest, shown=shown, voucher_can_write=False)
    )
    assert refused.codes == (VOUCHER_CANNOT_WRITE,)


def test_the_digest_covers_the_path() -> None:
    assert code_digest("tests/test_a.py", TEST_CODE) != code_digest("tests/test_b.py", TEST_CODE)
    assert code_digest("tests/a", "b\n") != code_digest("tests/ab", "\n")


def test_test_code_over_the_limit_is_refused_not_cut() -> None:
    long_code = "def test_long():\n" + "    assert 1\n" * 3000
    result = check_gate(_gate(slot=parse_slot(python_slot(code=long_code)), max_test_chars=20_000))
    assert result.codes == (TEST_TOO_LONG,) and "`bugfix.max_test_chars`" in result.refusals[0].message
    assert not result.refusals[0].code_block
    assert BugfixSettings().max_test_chars == 20_000


@pytest.mark.parametrize("info", ["py`thon", "python extra", "py{.x}", "a b`c"])
def test_a_fence_info_string_is_a_plain_language_name_or_nothing(info: str) -> None:
    body = with_slot(f"- Test: `tests/test_x.py`\n\n```{info}\ndef test_x():\n    assert 1\n```\n")
    slot = parse_slot(body)
    assert re.fullmatch(r"[A-Za-z0-9+#-]*", slot.language)
    shown = fence("def test_x():\n    assert 1\n", info)
    assert shown.splitlines()[0] in ("```", "```python", "```py", "```a")
    assert shown.splitlines()[1:3] == ["def test_x():", "    assert 1"]


@given(st.text(min_size=1, max_size=300).filter(lambda s: s.strip()))
def test_code_is_shown_verbatim_in_a_refusal(code: str) -> None:
    """The fence around shown code is longer than any backtick run in it; the code is not neutralised."""
    code = code.replace("\r", "")
    text = refusal_text([Refusal(UNTRUSTED_TEST_CODE, "read it", code_block=code, code_info="py`x")])
    lines = text.split("\n")
    opening = next(i for i, line in enumerate(lines) if line.lstrip().startswith("```"))
    ticks = lines[opening].strip()
    assert ticks.strip("`") == "" and ticks not in code
    inner = "\n".join(line[2:] for line in lines[opening + 1 : -1])
    assert inner == code.rstrip("\n")


def test_bugfix_arguments() -> None:
    assert parse_bugfix_args([]).base is None
    full = "ABCDEF0123456789" * 4
    request = parse_bugfix_args(["H2", "--base", "release/1.x", "--trust-test", full])
    assert (request.hypothesis, request.base, request.trust_digest) == ("H2", "release/1.x", full.lower())
    assert parse_bugfix_args(["--base=dev"]).base == "dev"
    for bad in (
        ["--base"],
        ["--trust-test", "xyz"],
        ["--trust-test", "abcdef012345"],
        ["please"],
        ["--base", "a..b"],
    ):
        with pytest.raises(UsageError):
            parse_bugfix_args(bad)


# --- names --------------------------------------------------------------------------------------------------


def test_branch_names() -> None:
    assert (
        branch_name("bugfix/", 12, "Cart total ignores the discount code!")
        == "bugfix/12-cart-total-ignores-the-discount-code"
    )
    assert slug("Ação rápida — über") == "acao-rapida-uber"
    assert branch_name("bugfix/", 7, "!!!") == "bugfix/7"
    assert bug_of_branch("bugfix/", "bugfix/12-cart") == 12
    assert bug_of_branch("bugfix/", "bugfix/x-12") is None and bug_of_branch("bugfix/", "main") is None


@given(st.text(max_size=200), st.integers(1, 10**6))
def test_every_title_gives_a_valid_branch_that_names_its_bug(title: str, number: int) -> None:
    name = branch_name("bugfix/", number, title)
    assert valid_branch(name) and len(name) <= 60
    assert bug_of_branch("bugfix/", name) == number
    assert re.fullmatch(r"[a-z0-9-]*", slug(title))


def test_the_red_commit_message_carries_the_hypothesis_and_the_reference() -> None:
    message = red_message(12, "recalculate() drops promotions")
    lines = message.splitlines()
    assert lines[0] == "test: regression test for #12 (red)"
    assert "recalculate() drops promotions" in message and lines[-1] == "Refs #12"
