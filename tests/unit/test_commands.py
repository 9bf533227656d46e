"""Specification of the slash-command grammar (bot/commands/grammar.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from bot.commands.grammar import MAX_COMMANDS, Command, added_commands, closest_command, parse_commands

KNOWN = frozenset({"help", "answer", "label", "retry", "assign"})


def parse(body: str | None) -> list[Command]:
    return parse_commands(body, known=KNOWN)


def names(body: str | None) -> list[str]:
    return [c.name for c in parse(body)]


# --- forms -------------------------------------------------------------------------------------------


def test_canonical_form() -> None:
    assert parse("/steward help") == [Command(name="help", args=(), text="", line=1, canonical=True)]


def test_short_form_for_a_registered_command() -> None:
    assert parse("/retry") == [Command(name="retry", args=(), text="", line=1, canonical=False)]


def test_unknown_short_form_is_not_a_command() -> None:
    assert parse("/frobnicate now") == []
    assert parse("/usr/bin/env python\n/etc/hosts") == []


def test_unknown_canonical_form_is_returned_for_a_did_you_mean_answer() -> None:
    [command] = parse("/steward frobnicate now")
    assert (command.name, command.args, command.canonical) == ("frobnicate", ("now",), True)
    assert closest_command("halp", KNOWN) == "help"
    assert closest_command("zzzzzz", KNOWN) is None
    assert closest_command("", KNOWN) is None


def test_bare_prefix_gives_the_empty_name() -> None:
    assert parse("/steward") == [Command(name="", args=(), text="", line=1, canonical=True)]
    [not_a_name] = parse("/steward !!")
    assert (not_a_name.name, not_a_name.args) == ("", ("!!",))


def test_prefix_is_a_parameter() -> None:
    assert parse_commands("/bot help\n\n/steward retry\n\n/retry", known=KNOWN, prefix="bot") == [
        Command(name="help", args=(), text="", line=1, canonical=True),
        Command(name="retry", args=(), text="", line=5, canonical=False),
    ]


@pytest.mark.parametrize(
    "body",
    ["/STEWARD HELP", "/Steward Help", "/HELP", "/hElP"],
)
def test_names_are_case_insensitive_and_lower_cased(body: str) -> None:
    assert names(body) == ["help"]


def test_known_names_are_case_insensitive_too() -> None:
    assert [c.name for c in parse_commands("/retry", known={"Retry"})] == ["retry"]


@pytest.mark.parametrize(
    "body",
    ["/steward: help", "/stewardship help", "/steward/help", "/help.", "/help,", "text /help", "x\n- /help"],
)
def test_the_slash_word_must_start_the_line_and_stand_alone(body: str) -> None:
    assert parse(body) == []


def test_optional_leading_blanks_are_allowed() -> None:
    assert [c.line for c in parse("   /help\n\u00a0/retry\n\u200b/label x")] == [1, 2, 3]


def test_non_breaking_and_zero_width_spaces_separate_words() -> None:
    [command] = parse("/steward\u00a0label\u00a0bug\u200b \u202fdocs ")
    assert (command.name, command.args) == ("label", ("bug", "docs"))


def test_commands_are_found_on_any_paragraph_line_in_order() -> None:
    body = "Thanks!\n/label bug\nsome words\n/steward assign @me\n"
    assert [(c.name, c.line) for c in parse(body)] == [("label", 2), ("assign", 4)]


def test_a_continuation_line_of_a_list_item_counts_but_not_the_marker_line() -> None:
    assert [(c.name, c.line) for c in parse("- /retry\n- item\n  /help\n")] == [("help", 3)]


# --- arguments ---------------------------------------------------------------------------------------


def test_args_are_split_like_a_shell() -> None:
    [command] = parse("/label \"needs review\" 'good first issue' bug")
    assert command.args == ("needs review", "good first issue", "bug")


def test_quotes_join_adjacent_text_and_backslashes_are_literal() -> None:
    [command] = parse(r'/label area/"x y" C:\tmp "" end')
    assert command.args == ("area/x y", r"C:\tmp", "", "end")


def test_curly_double_quotes_group_words() -> None:
    [command] = parse("/label \u201cneeds review\u201d")
    assert command.args == ("needs review",)


def test_an_unbalanced_quote_falls_back_to_a_whitespace_split() -> None:
    [command] = parse("/label \"needs review bug's")
    assert command.args == ('"needs', "review", "bug's")


def test_tabs_and_trailing_spaces() -> None:
    [command] = parse("/label\tbug\t docs   \t")
    assert command.args == ("bug", "docs")
    assert command.text == "bug\t docs"


# --- text --------------------------------------------------------------------------------------------


def test_text_is_the_rest_of_the_line_and_the_following_lines_up_to_the_next_command() -> None:
    body = "/answer g3 We use Postgres 16,\nnot 15.\n/answer g4 Yes.\n/steward help\n"
    first, second, third = parse(body)
    assert (first.name, first.args, first.text) == (
        "answer",
        ("g3", "We", "use", "Postgres", "16,"),
        "g3 We use Postgres 16,\nnot 15.",
    )
    assert second.text == "g4 Yes."
    assert third.text == ""


def test_text_ends_at_a_blank_line_that_ends_the_block_group() -> None:
    body = "/answer g3 first line\nsecond line\n\nThanks for the PR!"
    [command] = parse(body)
    assert command.text == "g3 first line\nsecond line"


def test_text_runs_into_blocks_that_directly_follow_kept_raw() -> None:
    body = "/answer g3 We need:\n- a\n- b\n```py\nx = 1\n\ny = 2\n```\n\nunrelated"
    [command] = parse(body)
    assert command.text == "g3 We need:\n- a\n- b\n```py\nx = 1\n\ny = 2\n```"


def test_text_of_a_command_in_a_list_stops_at_the_end_of_the_list() -> None:
    body = "- item\n  /answer g1 in the list\n- next\n\n\nafter"
    [command] = parse(body)
    assert command.text == "g1 in the list\n- next"


# --- where commands are not read ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("```\n/steward help\n```", id="backtick-fence"),
        pytest.param("~~~\n/steward help\n~~~", id="tilde-fence"),
        pytest.param("````md\n```\n/steward help\n```\n````", id="nested-fence"),
        pytest.param("```\n/steward help", id="unclosed-fence"),
        pytest.param("- item\n\n  ```\n  /help\n  ```", id="fence-in-list"),
        pytest.param("text\n\n    /steward help", id="indented-code"),
        pytest.param("\t/help", id="tab-indented-code"),
        pytest.param("`/steward help`", id="inline-code"),
        pytest.param("see `this\n/steward help` here", id="inline-code-across-lines"),
        pytest.param("``a ` b\n/help``", id="double-backtick-code-across-lines"),
        pytest.param("> /steward help", id="quote"),
        pytest.param("> > /steward help", id="nested-quote"),
        pytest.param("> - > /help", id="quote-in-list-in-quote"),
        pytest.param("> quoted\n/steward help", id="lazy-quote-continuation"),
        pytest.param("> > quoted\n/help", id="lazy-nested-quote-continuation"),
        pytest.param("<!-- /steward help -->", id="html-comment"),
        pytest.param("<!--\n/steward help\n-->", id="multiline-html-comment"),
        pytest.param("<!--\n\n/steward help\n\n-->", id="html-comment-with-blank-lines"),
        pytest.param("text <!--\n/steward help\n--> more", id="inline-html-comment"),
        pytest.param("<div>\n/steward help\n</div>", id="html-block"),
        pytest.param('text <span title="a\n/help">x</span>', id="inline-html-tag"),
        pytest.param("[a link\n/help](https://example.com)", id="link-text"),
        pytest.param("![alt\n/help](https://example.com/a.png)", id="image-alt"),
        pytest.param("# /steward help", id="heading"),
        pytest.param("/steward help\n---", id="setext-heading"),
        pytest.param("a | b\n--|--\n/help | x", id="table-row"),
    ],
)
def test_commands_are_not_read_from_code_quotes_or_html(body: str) -> None:
    assert parse(body) == []


def test_markdown_paragraphs_inside_html_are_read() -> None:
    # GitHub renders the paragraph inside <details> as markdown text, so it is visible and meant.
    assert names("<details>\n\n/steward help\n\n</details>") == ["help"]


def test_commands_after_excluded_blocks_are_still_read() -> None:
    body = "```\n/retry\n```\n/help\n> /label x\n\n/assign me\n<!-- /retry -->\n`x`\n/label y"
    assert [(c.name, c.line) for c in parse(body)] == [("help", 4), ("assign", 7), ("label", 10)]


# --- line endings and odd input ------------------------------------------------------------------------


def test_windows_line_endings() -> None:
    body = "Hi\r\n/label bug\r\n/answer g3 yes\r\nand more\r\n\r\n```\r\n/help\r\n```\r\n"
    first, second = parse(body)
    assert (first.name, first.args, first.line) == ("label", ("bug",), 2)
    assert (second.text, second.line) == ("g3 yes\nand more", 3)


def test_lone_carriage_returns_end_lines_like_markdown_does() -> None:
    assert [(c.name, c.line) for c in parse("a\r/help\r/retry")] == [("help", 2), ("retry", 3)]


@pytest.mark.parametrize("body", [None, "", "\n\n", "/", "//", "/ help", "\x00/help\x00", "\ufeff"])
def test_empty_and_degenerate_bodies(body: str | None) -> None:
    assert parse(body) == []


def test_at_most_max_commands_are_returned() -> None:
    commands = parse("/retry\n" * 100)
    assert len(commands) == MAX_COMMANDS
    assert [c.line for c in commands] == list(range(1, MAX_COMMANDS + 1))
    assert all(c.text == "" for c in commands)


# --- edited comments ---------------------------------------------------------------------------------


def test_an_edit_runs_only_the_commands_it_adds() -> None:
    old = "/label bug\nThanks"
    new = "/label bug\nThanks, fixed a typo\n/retry"
    assert [(c.name, c.line) for c in added_commands(old, new, known=KNOWN)] == [("retry", 3)]


def test_an_edit_that_changes_nothing_runs_nothing() -> None:
    body = "/label bug\n/retry"
    assert added_commands(body, body + "\n\nedit: typo", known=KNOWN) == []


def test_changed_arguments_make_a_new_command() -> None:
    added = added_commands("/label bug", "/label docs", known=KNOWN)
    assert [(c.name, c.args) for c in added] == [("label", ("docs",))]


def test_a_command_written_once_more_runs_once() -> None:
    added = added_commands("/retry", "/retry\n/retry\n/steward retry", known=KNOWN)
    assert [c.line for c in added] == [2, 3]


def test_short_and_canonical_forms_are_the_same_command_for_edits() -> None:
    assert added_commands("/steward retry", "/retry", known=KNOWN) == []


def test_a_command_moved_out_of_a_code_block_is_new() -> None:
    added = added_commands("```\n/retry\n```", "/retry", known=KNOWN)
    assert [c.name for c in added] == ["retry"]


def test_edits_from_and_to_nothing() -> None:
    assert [c.name for c in added_commands(None, "/help", known=KNOWN)] == ["help"]
    assert added_commands("/help", None, known=KNOWN) == []
    assert added_commands("/help", "", known=KNOWN) == []


# --- properties --------------------------------------------------------------------------------------

FRAGMENTS = [
    "```",
    "~~~",
    "````",
    "`",
    "``",
    "> ",
    ">",
    "<!--",
    "-->",
    "<div>",
    "</div>",
    "<details>",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "    ",
    "\t",
    "- ",
    "1. ",
    "* ",
    "---",
    "===",
    "|",
    "[",
    "](",
    ")",
    "![",
    "<",
    ">",
    '"',
    "'",
    "\\",
    "\u200b",
    "\u00a0",
    "\x00",
    "/steward help",
    "/steward",
    "/help",
    '/label "a b"',
    "/answer g1 text",
    "/nope",
    "/",
    "x",
    " ",
]

markdown_soup = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)
any_text = st.one_of(st.text(max_size=300), markdown_soup)

_ORACLE = MarkdownIt("commonmark")


def _code_lines(body: str) -> set[int]:
    """1-based lines inside fenced or indented code, as an independent full markdown parse sees them."""
    source = body.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    lines: set[int] = set()
    for token in _ORACLE.parse(source):
        if token.type in {"fence", "code_block"} and token.map is not None:
            lines.update(range(token.map[0] + 1, token.map[1] + 1))
    return lines


@settings(max_examples=400)
@given(body=any_text)
def test_parsing_never_raises_and_never_reads_code(body: str) -> None:
    commands = parse(body)
    assert len(commands) <= MAX_COMMANDS
    code = _code_lines(body)
    source_lines = re.split(r"\r\n|\r|\n", body)
    for command in commands:
        assert command.line not in code
        assert source_lines[command.line - 1].lstrip(" \t\u00a0\u200b").startswith("/")
        assert command.name == command.name.lower()
        assert command.text == command.text.strip()
    assert [c.line for c in commands] == sorted({c.line for c in commands})


@settings(max_examples=200)
@given(old=any_text, new=any_text)
def test_added_commands_are_a_sub_multiset_of_the_new_commands(old: str, new: str) -> None:
    added = added_commands(old, new, known=KNOWN)
    new_commands = parse(new)
    assert all(command in new_commands for command in added)
    assert added_commands(new, new, known=KNOWN) == []


# Structured documents: blocks separated by blank lines, so which lines are commands is known exactly.
command_line = st.sampled_from(
    ["/steward help", "/retry", "/label bug", "/steward frobnicate x", "/Answer g1 y"]
)
prose_line = st.builds(
    lambda head, tail: head + tail, st.sampled_from("abxyz"), st.text(alphabet="ab xyz/", max_size=12)
)
fence_marker = st.sampled_from(["```", "~~~", "````", "~~~~~"])


@st.composite
def block(draw: st.DrawFn) -> tuple[list[str], list[bool]]:
    """Lines of one block, and for each whether it is a command line."""
    kind = draw(st.sampled_from(["paragraph", "fence", "quote", "indented", "comment"]))
    body = draw(st.lists(st.one_of(command_line, prose_line), min_size=1, max_size=4))
    if kind == "paragraph":
        return body, [line.startswith("/") for line in body]
    if kind == "fence":
        marker = draw(fence_marker)
        lines = [marker + draw(st.sampled_from(["", "py", "md"])), *body, marker]
    elif kind == "quote":
        lines = [draw(st.sampled_from(["> ", "> > ", ">"])) + body[0], *body[1:]]
    elif kind == "indented":
        lines = ["    " + line for line in body]
    else:
        lines = ["<!--", *body, "-->"]
    return lines, [False] * len(lines)


@settings(max_examples=300)
@given(blocks=st.lists(block(), max_size=8), newline=st.sampled_from(["\n", "\r\n"]))
def test_exactly_the_paragraph_command_lines_are_commands(
    blocks: list[tuple[list[str], list[bool]]], newline: str
) -> None:
    lines: list[str] = []
    expected: list[int] = []
    for block_lines, is_command in blocks:
        if lines:
            lines.append("")
        for line, command in zip(block_lines, is_command, strict=True):
            lines.append(line)
            if command:
                expected.append(len(lines))
    commands = parse(newline.join(lines))
    assert [c.line for c in commands] == expected[:MAX_COMMANDS]


def test_a_two_mebibyte_body_parses() -> None:
    chunk = "Some prose with `code` and a [link](https://example.com).\n/label bug\n```\n/retry\n```\n\n"
    body = chunk * (2 * 1024 * 1024 // len(chunk) + 1)
    assert len(body) >= 2 * 1024 * 1024
    commands = parse(body)
    assert len(commands) == MAX_COMMANDS
    assert {c.name for c in commands} == {"label"}


def test_a_body_of_many_disguised_commands_parses() -> None:
    body = "`\n/steward help\n`\n\n" * (256 * 1024 // 20)
    assert parse(body) == []


# --- cost: busy paragraphs, the parse cache, off-loop parsing (issue 25 §2) ------------------------------

import asyncio  # noqa: E402

import bot.commands.grammar as commands_module  # noqa: E402
from bot.commands.grammar import (  # noqa: E402
    MAX_PARAGRAPH_OPENERS,
    OFFLOAD_CHARS,
    STATS,
    could_hold_command,
    parse_cached,
    parse_commands_async,
)

PATHOLOGICAL = "x " + "![" * 30000 + "\n/decide F1 y](u)"
FORK_KNOWN = frozenset({"decide", "reopen-fork"})

span_pieces = st.sampled_from(
    [
        "/steward help", "/help", "/answer g1 x", "\n", "\n\n", "`", "``", "[", "]", "](u)", "![", "<a ",
        ">", "<!--", "-->", "(", ")", "\\", " ", "x", "\"t\"", "> ", "- ",
    ]
)  # fmt: skip
span_markdown = st.lists(span_pieces, max_size=40).map("".join)


@settings(max_examples=400, suppress_health_check=list(HealthCheck), database=None)
@given(span_markdown, st.integers(0, 12))
def test_the_opener_bound_only_ever_removes_commands_and_changes_nothing_below_it(
    body: str, bound: int
) -> None:
    """The pre-scan's proof obligation: with any bound, the answer is the full parse's minus lines that
    are not the first of their paragraph — never a command the full parse does not find; and a body holding
    no more openers than the bound gets exactly the full parse's answer."""
    full_bound = commands_module.MAX_PARAGRAPH_OPENERS
    try:
        commands_module.MAX_PARAGRAPH_OPENERS = 10**9  # type: ignore[misc]
        full = parse(body)
        commands_module.MAX_PARAGRAPH_OPENERS = bound  # type: ignore[misc]
        bounded = parse(body)
    finally:
        commands_module.MAX_PARAGRAPH_OPENERS = full_bound  # type: ignore[misc]
    full_lines = {c.line: c for c in full}
    assert all(c.line in full_lines and full_lines[c.line].name == c.name for c in bounded)
    openers = sum(body.count(ch) for ch in "`<[!")
    if openers <= bound:
        assert bounded == full


def test_the_pathological_comment_needs_no_inline_parse_and_is_not_a_command() -> None:
    STATS.reset()
    assert parse_commands(PATHOLOGICAL, known=FORK_KNOWN) == []
    assert (STATS.block_parses, STATS.inline_parses) == (1, 0)
    # Below the bound the same shape is still parsed fully, and still answered right (the line is inside
    # the image's alt text).
    small = "x " + "![" * (MAX_PARAGRAPH_OPENERS // 2 - 2) + "\n/decide F1 y](u)"
    assert parse_commands(small, known=FORK_KNOWN) == []
    assert STATS.inline_parses == 1
    # A command written after ordinary prose, or starting a paragraph, is still read in a busy comment.
    busy = "x " + "![" * 30000 + "\n\n/decide F1 y"
    assert [c.text for c in parse_commands(busy, known=FORK_KNOWN)] == ["F1 y"]
    assert [c.text for c in parse_commands("see [a](u) and `b`\n/decide F1 y", known=FORK_KNOWN)] == ["F1 y"]
    # Many busy paragraphs: the inline work is bounded per body, not only per paragraph.
    STATS.reset()
    unit = "x " + "![" * 200 + "\n/decide F1 y](u)\n\n"
    assert parse_commands(unit * 300, known=FORK_KNOWN) == []
    assert STATS.inline_parses == 1


def test_could_hold_command_is_false_only_when_the_parser_finds_nothing() -> None:
    assert not could_hold_command("just text", known=FORK_KNOWN)
    assert not could_hold_command("see /decide F1", known=FORK_KNOWN)
    assert could_hold_command(PATHOLOGICAL, known=FORK_KNOWN)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), database=None)
@given(span_markdown)
def test_could_hold_command_never_hides_a_command(body: str) -> None:
    if parse(body):
        assert could_hold_command(body, known=KNOWN)


def test_parses_are_cached_by_key_and_body() -> None:
    STATS.reset()
    body = "/decide F1 Postgres"
    first = parse_cached(body, known=FORK_KNOWN, key=(901, "2026-01-01T00:00:00Z"))
    again = parse_cached(body, known=FORK_KNOWN, key=(901, "2026-01-01T00:00:00Z"))
    assert first == again and [c.text for c in first] == ["F1 Postgres"]
    assert (STATS.block_parses, STATS.cache_hits) == (1, 1)
    # Edited within the same second: the body's digest keeps the entries apart.
    edited = parse_cached("/decide F1 SQLite", known=FORK_KNOWN, key=(901, "2026-01-01T00:00:00Z"))
    assert [c.text for c in edited] == ["F1 SQLite"]
    assert STATS.block_parses == 2
    # A body that cannot hold a command is answered without any parse.
    assert parse_cached("no commands here", known=FORK_KNOWN, key=(902, "")) == []
    assert STATS.block_parses == 2


def test_a_long_body_is_parsed_off_the_event_loop() -> None:
    body = "/decide F1 y\n\n" + "word " * (OFFLOAD_CHARS // 5 + 10)
    threads: list[bool] = []

    async def main() -> list[Command]:
        import threading

        loop_thread = threading.get_ident()
        original = commands_module.parse_commands

        def spy(*args: object, **kwargs: object) -> list[Command]:
            threads.append(threading.get_ident() != loop_thread)
            return original(*args, **kwargs)  # type: ignore[arg-type]

        commands_module.parse_commands = spy  # type: ignore[assignment]
        try:
            short = await parse_commands_async("/decide F1 z", known=FORK_KNOWN)
            long = await parse_commands_async(body, known=FORK_KNOWN, key=("long", 1))
        finally:
            commands_module.parse_commands = original  # type: ignore[assignment]
        return short + long

    found = asyncio.run(main())
    assert [c.text for c in found] == ["F1 z", "F1 y"]
    assert threads == [False, True]
