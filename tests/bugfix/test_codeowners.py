"""The CODEOWNERS readers (bot/forge/codeowners.py): each forge's rules, checked against examples from
the forges' documentation and source, against Python's own matchers as oracles (hypothesis), and against
adversarial patterns whose cost a backtracking matcher would make exponential."""

from __future__ import annotations

import fnmatch
import multiprocessing
import re
import time
from collections.abc import Callable, Iterator
from multiprocessing.pool import Pool

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.forge.codeowners import (
    Unsupported,
    compile_gitea,
    github_match,
    parse_gitea,
    parse_github,
    tokenize_gitea,
)

# --- GitHub: docs.github.com "About code owners", example file ---------------------------------------------

GITHUB_EXAMPLE = """\
# These owners will be the default owners for everything in the repo.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
/build/logs/ @doctocat
docs/* docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
"""


def test_github_last_match_wins_as_the_documentation_says() -> None:
    owners = parse_github(GITHUB_EXAMPLE)
    assert owners.owners_of("README.md") == ("global-owner1", "global-owner2")
    assert owners.owners_of("src/app.js") == ("js-owner",)
    assert owners.owners_of("main.go") == ("docs@example.com",)
    assert owners.owners_of("build/logs/today.txt") == ("octocat",)  # `**/logs` is a later line
    assert owners.owners_of("docs/getting-started.md") == ("doctocat",)  # /docs/ comes later
    assert owners.owners_of("deep/logs/x.txt") == ("octocat",)
    assert owners.owners_of("apps/web/index.html") == ("octocat",)
    # "/apps/github" has no owners: the files there are left without any.
    assert owners.owners_of("apps/github/x.py") == ()
    assert owners.owners_of("scripts/run.sh") == ("doctocat", "octocat")


def test_github_pattern_rules() -> None:
    assert github_match("docs/*", "docs/getting-started.md")
    assert not github_match("docs/*", "docs/build-app/troubleshooting.md")
    assert github_match("apps/", "x/apps/y.txt") and not github_match("apps/", "apps")
    assert github_match("/build/logs/", "build/logs/a/b.txt") and not github_match(
        "/build/logs/", "x/build/logs/a"
    )
    assert github_match("*.js", "a/b/c.js") and not github_match("*.js", "a/b/c.jsx")
    assert github_match("src/**/test_*.py", "src/test_a.py") and github_match(
        "src/**/test_*.py", "src/x/y/test_a.py"
    )
    assert github_match("?.md", "a.md") and not github_match("?.md", "ab.md")


def test_github_skips_what_it_does_not_support() -> None:
    owners = parse_github("!*.md @a\n[ab].py @b\n*.py @c\n")
    assert owners.owners_of("a.py") == ("c",)
    assert [line for line, _ in owners.skipped] == [1, 2]


segment = st.text(alphabet="ab.", min_size=1, max_size=4)
glob_segment = st.text(alphabet="ab.*?", min_size=1, max_size=4).filter(
    lambda s: s != "**"
)  # `**` alone: its own test


@settings(max_examples=300)
@given(st.lists(glob_segment, min_size=1, max_size=3), st.lists(segment, min_size=1, max_size=4))
def test_github_anchored_file_patterns_agree_with_a_segmentwise_fnmatch(
    pattern: list[str], path: list[str]
) -> None:
    """An anchored pattern without `**` covers a file exactly when its segments match the path's first
    segments one by one (fnmatch per segment is the oracle: `*` and `?` never cross `/`)."""
    glob = "/" + "/".join(pattern)
    literal_end = not any(c in pattern[-1] for c in "*?")
    expected = (len(path) == len(pattern) or (literal_end and len(path) > len(pattern))) and all(
        fnmatch.fnmatchcase(name, seg) for seg, name in zip(pattern, path, strict=False)
    )
    assert github_match(glob, "/".join(path)) == expected


@settings(max_examples=200)
@given(glob_segment, st.lists(segment, min_size=1, max_size=4))
def test_github_a_pattern_without_a_slash_matches_at_any_depth(name: str, path: list[str]) -> None:
    literal = not any(c in name for c in "*?")
    expected = fnmatch.fnmatchcase(path[-1], name) or (
        literal and any(fnmatch.fnmatchcase(part, name) for part in path[:-1])
    )
    assert github_match(name, "/".join(path)) == expected


# --- Gitea: models/issues/pull.go, and its tests (models/issues/pull_test.go TestParseCodeOwnersLine) -------


def test_gitea_tokenizes_as_gitea_does() -> None:
    assert tokenize_gitea("a.*\\.go @user1 @org1/team1 # comment") == ["a.*.go", "@user1", "@org1/team1"]
    assert tokenize_gitea("docs/(aws|google|azure)/[^/]*\\.(md|txt) @user3") == [
        "docs/(aws|google|azure)/[^/]*.(md|txt)",
        "@user3",
    ]
    assert tokenize_gitea("\\#path @user5") == ["#path", "@user5"]
    assert tokenize_gitea("path\\ with\\ spaces/ @user6") == ["path with spaces/", "@user6"]
    assert tokenize_gitea("\t") == []


def test_gitea_requests_every_matching_rule_and_negation_inverts() -> None:
    owners = parse_gitea(".*\\.go @go-owner\n!.*\\.go @not-go\ndocs/.* @docs org/team\nlonely\n")
    assert owners.owners_of("main.go") == ("go-owner",)
    assert owners.owners_of("docs/a.md") == ("not-go", "docs", "org/team")
    assert owners.skipped == ((4, "incorrect format"),)
    # The whole path must match (`^rule$`): a rule for `docs` is not one for `docs/a.md`.
    assert parse_gitea("docs @d\n").owners_of("docs/a.md") == ()


def test_gitea_patterns_it_cannot_read_are_said_not_guessed() -> None:
    owners = parse_gitea("(?i)readme @a\n\\bword @b\n[[:alpha:]]+ @c\n*.go @d\n.* @e\n")
    # Gitea's tokenizer takes `\\b` as `b`: the second line is the rule `bword`.
    assert [line for line, _ in owners.skipped] == [1, 3, 4]
    assert owners.owners_of("x") == ("e",) and owners.owners_of("bword") == ("b", "e")


# Regular expressions in the common syntax, as a grammar (Python's `re` reads them the same way).
atom = st.sampled_from(["a", "b", ".", "\\.", "[ab]", "[^a]", "\\d", "/", "x"])


@st.composite
def regexes(draw: st.DrawFn, depth: int = 2) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if depth > 0 and draw(st.booleans()):
            inner = draw(regexes(depth - 1))
            alt = draw(regexes(depth - 1)) if draw(st.booleans()) else None
            piece = f"(?:{inner}|{alt})" if alt is not None else f"({inner})"
        else:
            piece = draw(atom)
        piece += draw(st.sampled_from(["", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "*?"]))
        parts.append(piece)
    return "".join(parts)


def _python_fullmatch(pattern: str, path: str) -> bool:
    return re.fullmatch(f"(?:{pattern})", path) is not None


Oracle = Callable[[str, str], "bool | None"]


# The longest a new reference process may take to start (a spawned Python imports this module): a deadline for
# a process that never starts, not a measure of speed.
STARTUP_SECONDS = 120


@pytest.fixture(scope="module")
def python_re() -> Iterator[Oracle]:
    """Python's `re` as the reference, run in a process of its own: it backtracks, and some patterns of this
    grammar take it exponential time on eight characters (e.g. `(?:/*|(?:[^a]?|[^a]*a*){0,2}(b?)*\\.*)*?\\d`
    on `ba1ax1.x` ran for minutes and stalled a whole `make test`). An answer not given within two seconds is
    no answer: the process is replaced and the example left out. The matcher under test never backtracks.

    The two seconds count from a process that is up (it has answered a first question), not from its start.
    When they counted its start, a new process on a loaded machine took longer than that to start, so every
    answer timed out, each replacement's too, and hypothesis failed the property test for filtering out every
    input."""
    pools: list[Pool] = []

    def ask(pattern: str, path: str) -> bool | None:
        if not pools:
            pools.append(multiprocessing.get_context("spawn").Pool(1))
            pools[0].apply_async(_python_fullmatch, ("", "")).get(timeout=STARTUP_SECONDS)
        try:
            return bool(pools[0].apply_async(_python_fullmatch, (pattern, path)).get(timeout=2))
        except multiprocessing.TimeoutError:
            pools.pop().terminate()
            return None

    yield ask
    for pool in pools:
        pool.terminate()


@settings(max_examples=500)
@given(pattern=regexes(), path=st.text(alphabet="ab./x1", max_size=8))
def test_gitea_matcher_agrees_with_pythons_re_on_the_common_syntax(
    python_re: Oracle, pattern: str, path: str
) -> None:
    expected = python_re(pattern, path)
    assume(expected is not None)
    assert compile_gitea(pattern).fullmatch(path) == expected


def test_the_reference_gives_up_where_python_re_backtracks_for_minutes(python_re: Oracle) -> None:
    """The pattern that stalled a `make test`: our matcher answers at once; the reference does not."""
    pattern, path = r"(?:/*|(?:[^a]?|[^a]*a*){0,2}(b?)*\.*)*?\d", "ba1ax1.x"
    assert compile_gitea(pattern).fullmatch(path) is False
    assert python_re(pattern, path) is None
    assert python_re("a*", "aa") is True, "a new process answers after the stuck one is replaced"


def test_gitea_refuses_what_go_refuses() -> None:
    for bad in ("a**", "(", "[z-a]", "a{1001}", "*a"):
        try:
            compile_gitea(bad)
        except Unsupported:
            continue
        raise AssertionError(f"{bad!r} was read")


# --- cost -------------------------------------------------------------------------------------------------


def test_adversarial_patterns_cost_time_linear_in_the_path() -> None:
    """Patterns that make a backtracking matcher exponential (nested and overlapping repetition) or
    polynomial of a high degree run in well under a second on long paths here. Counted in this process's CPU
    seconds, not the clock's: on a loaded machine other processes' work is not the matcher's."""
    long_path = "a" * 4000
    started = time.process_time()
    for pattern in ("(a*)*b", "(a|a)*b", "(a|aa)+b", "a*a*a*a*a*a*a*a*a*a*b", "(.*){10}b", ".*.*.*.*.*x"):
        assert compile_gitea(pattern).fullmatch(long_path) is False
    gitea_seconds = time.process_time() - started
    started = time.process_time()
    name = "a" * 250
    deep = "/".join([name] * 16)
    for pattern in ("*a*a*a*a*a*a*a*a*a*a*b", "**/**/**/**/**/**/*b", "/**/a*a*a*a*a*b/**"):
        assert github_match(pattern, deep) is False
    github_seconds = time.process_time() - started
    assert gitea_seconds < 5 and github_seconds < 2, (gitea_seconds, github_seconds)


@settings(max_examples=100)
@given(st.text(max_size=60), st.text(max_size=60))
def test_no_input_breaks_the_readers(text: str, path: str) -> None:
    """Any CODEOWNERS text and any path: an answer, never an exception."""
    for owners in (parse_github(text), parse_gitea(text)):
        assert isinstance(owners.owners_of(path), tuple)
