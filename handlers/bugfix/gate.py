"""`/bugfix`'s gate and the names it gives: pure rules over what the caller read from the forge.

Each refusal has a code (stable, for tests and scripts) and a message that says what to do. The root-cause
and open-forks inputs come from other capabilities (``handlers.bugfix.other_capabilities`` computes them); the
gate only judges them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.records import neutralise
from handlers.bugfix.regression_slot import RegressionSlot, example_for, is_test_path

BUG_NOT_REFINED = "BUG_NOT_REFINED"
STORY_NOT_REFINED = "STORY_NOT_REFINED"
FORKS_OPEN = "FORKS_OPEN"
ROOT_CAUSE_NOT_EVIDENCED = "ROOT_CAUSE_NOT_EVIDENCED"
HYPOTHESES_PENDING = "HYPOTHESES_PENDING"
REGRESSION_PATH_NOT_A_TEST = "REGRESSION_PATH_NOT_A_TEST"
REGRESSION_TEST_MISSING = "REGRESSION_TEST_MISSING"
UNTRUSTED_TEST_CODE = "UNTRUSTED_TEST_CODE"
STALE_TEST_DIGEST = "STALE_TEST_DIGEST"
VOUCH_NOT_SHOWN = "VOUCH_NOT_SHOWN"
TEST_TOO_LONG = "TEST_TOO_LONG"
VOUCHER_CANNOT_WRITE = "VOUCHER_CANNOT_WRITE"
TEST_HIDDEN_CHARACTERS = "TEST_HIDDEN_CHARACTERS"
# Refusals that show the test code: Steward keeps the exact path and code it showed with them.
SHOWS_CODE = frozenset({"UNTRUSTED_TEST_CODE", "STALE_TEST_DIGEST", "VOUCH_NOT_SHOWN"})
REFUSAL_CODES = (
    BUG_NOT_REFINED,
    STORY_NOT_REFINED,
    FORKS_OPEN,
    ROOT_CAUSE_NOT_EVIDENCED,
    HYPOTHESES_PENDING,
    REGRESSION_PATH_NOT_A_TEST,
    REGRESSION_TEST_MISSING,
    UNTRUSTED_TEST_CODE,
    STALE_TEST_DIGEST,
    VOUCH_NOT_SHOWN,
    TEST_TOO_LONG,
    VOUCHER_CANNOT_WRITE,
    TEST_HIDDEN_CHARACTERS,
)
SLUG_LENGTH = 40
_HYPOTHESIS = re.compile(r"^H\d{1,3}$", re.IGNORECASE)
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
# CI configuration lives here: a file under them is never a "test", whatever the globs say, because the code
# committed there would run in CI with the repository's secrets as a workflow, not as a test.
CI_CONFIG_DIRS = (".github/", ".gitea/", ".forgejo/", ".circleci/", ".woodpecker/", ".buildkite/")


@dataclass(frozen=True)
class RootCause:
    """What the root-cause discipline says of the bug. ``evidenced`` False refuses with ``detail``;
    ``hypothesis`` is the text the red commit and the PR quote (the chosen hypothesis, else section 6)."""

    evidenced: bool = True
    hypothesis: str = ""
    detail: str = ""
    # The files the confirmed hypothesis's evidence names: what the fix may touch (None: not known — the
    # hypotheses board is switched off — and the fix's scope is not checked).
    files: tuple[str, ...] | None = None
    # Hypotheses still pending on the board: `/bugfix` waits for them (``HYPOTHESES_PENDING``).
    pending: tuple[str, ...] = ()
    # The hypotheses the investigation refuted ("H2 Title — why"), for the closing summary.
    refuted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str
    # Shown in a fence under the message (the untrusted code, an example test).
    code_block: str = ""
    code_info: str = ""


@dataclass(frozen=True)
class ShownCode:
    """Test code a refusal of Steward's showed: the exact path and code, and their digest."""

    path: str
    code: str
    digest: str


@dataclass(frozen=True)
class GateInput:
    verdict: str | None  # the RA9 verdict recorded on the bug: approved, rejected, pending, or None
    blockers: tuple[str, ...]
    slot: RegressionSlot
    test_globs: tuple[str, ...]
    author: str
    author_can_write: bool
    trust_digest: str | None = None
    unresolved_forks: Sequence[str] = ()
    root_cause: RootCause = field(default_factory=RootCause)
    prefix: str = "steward"
    # The code a refusal of Steward's showed with ``trust_digest`` (None: no refusal showed code with it).
    shown: ShownCode | None = None
    # Whether the person vouching (``trust_digest``) has write access or more.
    voucher_can_write: bool = True
    max_test_chars: int = 20_000
    # The issue is a story of a bug (issue 36 §4): its own verdict gates it instead of a bug verdict.
    # ``story_refusal``: why it is refused (its verdict, or its bug's, is not approved); None: it may go on.
    is_story: bool = False
    story_refusal: str | None = None
    # Who wrote section 7 as it is now (``regression_slot.slot_writer``; None: not known), and whether the
    # forge's API has an edit history to tell (GitHub's GraphQL has; Gitea's API has none).
    slot_writer: str | None = None
    edit_history: bool = False


@dataclass(frozen=True)
class GateResult:
    refusals: tuple[Refusal, ...]

    @property
    def passed(self) -> bool:
        return not self.refusals

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(r.code for r in self.refusals)


def check_gate(given: GateInput) -> GateResult:
    """Every refusal that applies, in order: refinement, forks, root cause, test slot, trust."""
    p = given.prefix
    refusals: list[Refusal] = []
    if given.story_refusal is not None:
        refusals.append(Refusal(STORY_NOT_REFINED, given.story_refusal))
    elif not given.is_story and given.verdict != "approved":
        state = f"is `{given.verdict}`" if given.verdict else "has not been given yet"
        blockers = ", ".join(f"`{b}`" for b in given.blockers[:12]) or "none recorded"
        refusals.append(
            Refusal(
                BUG_NOT_REFINED,
                f"the bug's refinement verdict {state} (blockers: {blockers}). Fix what the verdict comment "
                f"lists, then `/{p} refine`; run `/{p} bugfix` again once it is approved.",
            )
        )
    if given.unresolved_forks:
        names = ", ".join(f"`{f}`" for f in given.unresolved_forks[:12])
        more = f" and {len(given.unresolved_forks) - 12} more" if len(given.unresolved_forks) > 12 else ""
        refusals.append(
            Refusal(
                FORKS_OPEN,
                f"design forks are still open: {names}{more}. Resolve them (`/{p} decide …`) before a fix "
                "is started.",
            )
        )
    if not given.root_cause.evidenced:
        refusals.append(
            Refusal(
                ROOT_CAUSE_NOT_EVIDENCED,
                (given.root_cause.detail or "the root cause has no evidence yet.")
                + " Record the evidence on the hypotheses board, or name the confirmed one: "
                + f"`/{p} bugfix H2`.",
            )
        )
    elif given.root_cause.pending:
        pending = given.root_cause.pending
        names = ", ".join(pending[:12]) + (f" and {len(pending) - 12} more" if len(pending) > 12 else "")
        refusals.append(
            Refusal(
                HYPOTHESES_PENDING,
                f"the investigation is not finished: {names} {'is' if len(pending) == 1 else 'are'} still "
                "pending on the hypotheses board, and the fix waits until every hypothesis is decided (the "
                f"wave order). Settle each: `/{p} confirm {pending[0]} <path:line evidence>`, "
                f"`/{p} refute {pending[0]} <evidence>` or `/{p} inconclusive {pending[0]} <why>`; one "
                "pending longer than `debug.pending_timeout_hours` counts as inconclusive.",
            )
        )
    slot = given.slot
    if slot.path is not None and (
        not is_test_path(slot.path, given.test_globs) or slot.path.lower().startswith(CI_CONFIG_DIRS)
    ):
        globs = ", ".join(f"`{g}`" for g in given.test_globs) or "(none)"
        refusals.append(
            Refusal(
                REGRESSION_PATH_NOT_A_TEST,
                f"the regression test path `{slot.path}` in section 7 is not a test file: a test matches "
                f"one of the test globs {globs} and is not in a CI configuration directory. Put the test "
                "under one of them, or add a glob to `bugfix.test_globs` in the repository's Steward "
                "configuration.",
            )
        )
    if slot.path is None or slot.code is None:
        info, example = example_for(slot.path)
        path = slot.path or "tests/test_regression.py"
        missing = "a path" if slot.path is None else "a fenced code block with the test under the path"
        refusals.append(
            Refusal(
                REGRESSION_TEST_MISSING,
                f"section 7 (`## 7. Regression Test Slot`) has no regression test: it needs {missing}. "
                f"Write the path (e.g. `{path}`) and, under it, the test in a fence, like this:",
                code_block=example,
                code_info=info,
            )
        )
    elif len(slot.code) > given.max_test_chars:
        refusals.append(
            Refusal(
                TEST_TOO_LONG,
                f"the test code for `{slot.path}` is {len(slot.code):,} characters long, more than the "
                f"{given.max_test_chars:,} I show and commit (`bugfix.max_test_chars`). I never cut test "
                "code: a reviewer must be able to read all of what is committed. Shorten the test in "
                "section 7 (a regression test needs one case), then run the command again.",
            )
        )
    elif hidden := hidden_lines(slot.code):
        refusals.append(
            Refusal(
                TEST_HIDDEN_CHARACTERS,
                f"the test code for `{slot.path}` holds characters a reader cannot see or that reorder what "
                "they see (bidirectional controls, zero-width or other invisible characters: the Trojan "
                "Source attack), so what a reviewer reads is not what would run. I commit none of it. Here "
                "are the lines, each such character written as its escape; remove them from section 7, "
                "then run the command again:",
                code_block="\n".join(hidden),
            )
        )
    elif not given.author_can_write:
        refusals += _trust_refusals(given, slot)
    return GateResult(tuple(refusals))


# Characters that change what a reader sees of code without showing themselves (CVE-2021-42574, "Trojan
# Source"): the bidirectional embeddings, overrides and isolates, the implicit marks, and every other
# invisible format character (Unicode category Cf: zero-width space and joiners, word joiner, BOM, soft
# hyphen, tag characters ...). Tab, line feed and carriage return are the only controls code may hold.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
MAX_HIDDEN_LINES = 20


def _hidden(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return char in _BIDI or unicodedata.category(char) in ("Cf", "Cc", "Co", "Cs", "Zl", "Zp")


def hidden_lines(code: str) -> list[str]:
    """The lines of ``code`` that hold a hidden character, numbered, each such character written as its
    ``\\uXXXX`` escape (at most ``MAX_HIDDEN_LINES``); [] when there is none."""
    out: list[str] = []
    for number, line in enumerate(code.split("\n"), start=1):
        if any(_hidden(char) for char in line):
            shown = "".join(
                f"\\u{ord(c):04x}"
                if _hidden(c) and ord(c) <= 0xFFFF
                else (f"\\U{ord(c):08x}" if _hidden(c) else c)
                for c in line
            )
            out.append(f"{number}: {shown}")
            if len(out) >= MAX_HIDDEN_LINES:
                break
    return out


def _who_wrote_it(given: GateInput) -> str:
    """Who wrote section 7 as it is now, in the refusal's words (named, not pinged)."""
    writer = given.slot_writer
    if writer is not None and writer.casefold() == given.author.casefold():
        return "the issue's edit history shows they wrote section 7 as it is now"
    if writer is not None:
        who = neutralise.line("@" + writer, 60)
        return (
            f"section 7 as it is now was last written by {who} (from the issue's edit history), but code "
            "from the report may remain in it"
        )
    if given.edit_history:
        return (
            "the issue's edit history does not tell who last wrote section 7 as it is now, so the code "
            "counts as theirs"
        )
    return (
        "this forge's API keeps no edit history, so Steward cannot tell who last wrote section 7: the code "
        "counts as theirs"
    )


def _trust_refusals(given: GateInput, slot: RegressionSlot) -> list[Refusal]:
    """Code from someone without write access is committed only when a writer vouches for exactly the code
    a refusal of Steward's showed, by its full digest, and the issue still holds that code."""
    p = given.prefix
    digest = slot.digest or ""
    info = slot.language or example_for(slot.path)[0]
    code = slot.code or ""
    command = f"/{p} bugfix --trust-test {digest}"
    author = neutralise.line(
        "@" + given.author, 60
    )  # named, not pinged: the reply is for whoever ran /bugfix
    copyable = (
        "Read the code below; to vouch for exactly this code (path and code, byte for byte), someone with "
        f"write access runs `{command}`"
    )
    if given.trust_digest is None:
        return [
            Refusal(
                UNTRUSTED_TEST_CODE,
                f"the test code for `{slot.path}` is in an issue opened by {author}, who has no write "
                f"access, and {_who_wrote_it(given)}: CI on a branch of this repository runs with its "
                f"secrets. {copyable}",
                code_block=code,
                code_info=info,
            )
        ]
    if not given.voucher_can_write:
        return [
            Refusal(
                VOUCHER_CANNOT_WRITE,
                "vouching for test code needs write access or more, whatever the repository's configuration "
                "lets run `/bugfix`: the code is committed where CI runs with the repository's secrets. Ask "
                "someone with write access to read it and vouch.",
            )
        ]
    if given.shown is None:
        return [
            Refusal(
                VOUCH_NOT_SHOWN,
                f"no refusal of mine showed test code with the digest `{given.trust_digest}`: a vouch names "
                f"code I showed, in full. This is the code in the issue now. {copyable}",
                code_block=code,
                code_info=info,
            )
        ]
    if given.shown.digest != digest:
        return [
            Refusal(
                STALE_TEST_DIGEST,
                f"the test code in the issue changed after I showed the code `--trust-test "
                f"{given.trust_digest[:12]}…` vouches for: I commit nothing someone changed after it was "
                f"read. This is the code in the issue now (digest `{digest}`). {copyable}",
                code_block=code,
                code_info=info,
            )
        ]
    return []


# --- the command's arguments ------------------------------------------------------------------------------


class UsageError(ValueError):
    pass


@dataclass(frozen=True)
class BugfixRequest:
    base: str | None = None
    trust_digest: str | None = None
    hypothesis: str | None = None


def parse_bugfix_args(args: Sequence[str]) -> BugfixRequest:
    """``[H<n>] [--base BRANCH] [--trust-test DIGEST]``, in any order."""
    base = digest = hypothesis = None
    items = list(args)
    i = 0
    while i < len(items):
        word = items[i]
        key, eq, value = word.partition("=")
        if key in ("--base", "--trust-test"):
            if not eq:
                if i + 1 >= len(items):
                    raise UsageError(f"{neutralise.code(key, 40)} needs a value")
                value = items[i + 1]
                i += 1
            if key == "--base":
                if not value or not valid_branch(value):
                    raise UsageError(f"{neutralise.code(value, 100)} is not a branch name")
                base = value
            else:
                if not _DIGEST.match(value.lower()):
                    raise UsageError(
                        f"{neutralise.code(value, 80)} is not a test digest: copy the full 64 hex characters "
                        "from my refusal"
                    )
                digest = value.lower()
        elif _HYPOTHESIS.match(word):
            hypothesis = word.upper()
        else:
            raise UsageError(f"I don't understand {neutralise.code(word, 40)}")
        i += 1
    return BugfixRequest(base, digest, hypothesis)


# --- names ------------------------------------------------------------------------------------------------

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_BAD_REF = re.compile(r"(?:^[-/.]|[/.]$|\.\.|//|@\{|[\x00-\x20~^:?*\[\\\x7f]|\.lock(?:/|$)|/\.)")


def slug(title: str, limit: int = SLUG_LENGTH) -> str:
    """The title in lower-case ASCII words joined by ``-``, at most ``limit`` characters, cut at a word."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    words = _NOT_SLUG.sub("-", ascii_text).strip("-")
    if len(words) <= limit:
        return words
    cut = words[: limit + 1]
    return (cut[: cut.rfind("-")] if "-" in cut else cut[:limit]).strip("-")


def valid_branch(name: str) -> bool:
    """Whether git accepts ``name`` as a branch (``git check-ref-format``'s rules, roughly)."""
    return 0 < len(name) <= 200 and _BAD_REF.search(name) is None


def branch_name(prefix: str, number: int, title: str) -> str:
    words = slug(title)
    name = f"{prefix}{number}-{words}" if words else f"{prefix}{number}"
    return name if valid_branch(name) else f"bugfix/{number}"


def bug_of_branch(prefix: str, branch: str) -> int | None:
    """The bug a bugfix branch names (``bugfix/42-…`` → 42)."""
    if not branch.startswith(prefix):
        return None
    match = re.match(r"(\d{1,9})(?:-|$)", branch[len(prefix) :])
    return int(match.group(1)) if match else None


# A bug title's own kind prefix (`[Bug]: …`, `[bug] …`, `Bug: …`, as issue templates write them), repeated or
# not: the pull request's title keeps one prefix, Steward's.
_TITLE_PREFIX = re.compile(r"^\s*(?:\[\s*bug\s*\]\s*[:\-–—]?|bug\s*[:\-–—])\s*", re.IGNORECASE)


# ``pull_title``'s shape, read back (on Gitea behind a draft's WIP prefix): which bug a pull request fixes.
_PULL_TITLE = re.compile(r"^\s*(?:(?:WIP:|\[WIP\])\s*)?Bugfix for #(\d{1,9}):", re.IGNORECASE)


def bug_of_pull_title(title: str) -> int | None:
    """The bug a pull request titled by ``pull_title`` fixes (the caller checks Steward opened it)."""
    found = _PULL_TITLE.match(title or "")
    return int(found.group(1)) if found else None


def pull_title(number: int, title: str) -> str:
    # No closing keyword ("Fix #1" in the merge commit's message closes #1 on both forges): the bug is closed
    # by Steward, and only when the completion is honest (completion.py).
    bare = title
    while (match := _TITLE_PREFIX.match(bare)) and match.end() < len(bare.rstrip()):
        bare = bare[match.end() :]
    return f"Bugfix for #{number}: {neutralise.line(bare, 230)}"


def red_message(number: int, hypothesis: str) -> str:
    lines = [f"test: regression test for #{number} (red)", ""]
    if hypothesis.strip():
        lines += ["Root-cause hypothesis:", *_wrapped(neutralise.inert(hypothesis.strip()[:1500])), ""]
    lines.append(f"Refs #{number}")
    return "\n".join(lines)


def _wrapped(text: str, width: int = 72) -> list[str]:
    out: list[str] = []
    for paragraph in text.splitlines():
        line = ""
        for word in paragraph.split():
            if line and len(line) + 1 + len(word) > width:
                out.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        out.append(line)
    return out
