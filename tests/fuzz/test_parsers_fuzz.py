"""Property tests over what reads untrusted text: the command grammar, the configuration loader and the
markdown readers of bug reports. None of them ever raises on any input; commands are never read from code,
quotes or HTML comments; and each reads a MiB in bounded time, growing no faster than linearly — measured
as a property (the time for 4× the input is under 8× the time), with generous absolute bounds, not as a
timed assertion that flakes on a busy machine (the figures themselves are in docs/reliability.md)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.commands.grammar import (
    MAX_COMMANDS,
    MAX_PARAGRAPH_OPENERS,
    MAX_SCAN_CHARS,
    STATS,
    added_commands,
    parse_commands,
)
from bot.config.repo_file import parse as parse_config
from bot.demo.texts import APPROVED_BUG
from handlers.backlog.ledger import LedgerError, parse_ledger_text
from handlers.bug_refinement.document import parse_document
from handlers.bug_refinement.rules import refine_bug

KNOWN = {"ping", "help", "answer", "gate", "refresh"}
FUZZ = settings(max_examples=300, suppress_health_check=list(HealthCheck), database=None)

# Markdown built from the pieces that change how a line is read, and the command lines themselves.
pieces = st.sampled_from(
    [
        "/steward ping", "/ping", "/steward answer g1 \"a b\"", "/steward help", "/steward", "/",
        "```", "~~~", "    ", "> ", ">> ", "<!--", "-->", "`", "``", "<details>", "</details>",
        "- ", "1. ", "# ", "| a | b |", "|---|---|", "\n", "\n\n", "\r\n", "\r", "\0", "\u200b", "\ufeff",
        "[x](", ")", "<a href='", "'>", "*", "_", "\\", "\t", "é", "\ud7ff",
    ]
)  # fmt: skip
markdownish = st.lists(pieces | st.text(max_size=12), max_size=60).map("".join)


@FUZZ
@given(markdownish)
def test_the_command_grammar_never_raises_and_caps_its_answer(body: str) -> None:
    commands = parse_commands(body, known=KNOWN)
    assert len(commands) <= MAX_COMMANDS
    for command in commands:
        # The short form only for commands Steward knows; the canonical form for any name, even none, so
        # that the caller can answer "unknown command, did you mean …".
        assert command.canonical or command.name in KNOWN
        assert command.name == command.name.lower() and command.line >= 1


@FUZZ
@given(markdownish, markdownish)
def test_added_commands_never_raises(old: str, new: str) -> None:
    assert len(added_commands(old, new, known=KNOWN)) <= MAX_COMMANDS


prose = st.text(st.characters(exclude_characters="`~<>-\r\n/\\\0"), max_size=40)


@FUZZ
@given(prose, st.sampled_from(["```\n{}\n```", "~~~\n{}\n~~~", "> {}", "<!--\n{}\n-->", "`` {} ``"]))
def test_a_command_inside_code_a_quote_or_a_comment_is_never_read(words: str, wrapper: str) -> None:
    hidden = [wrapper.format(words + " /steward ping"), wrapper.format("/steward ping")]
    body = words + "\n\n" + "\n\n".join(hidden)
    assert parse_commands(body, known=KNOWN) == []


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=15,
)
sections = st.sampled_from(
    ["commands", "limits", "bug_refinement", "backlog", "forks", "milestones", "bugfix", "debug", "enabled"]
)
configs = st.dictionaries(sections | st.text(max_size=10), yaml_values, max_size=5)


@FUZZ
@given(configs, st.sampled_from([(), ("ping", "help")]))
def test_the_configuration_loader_answers_every_mapping_with_settings_or_errors(
    data: dict[str, object], commands: tuple[str, ...]
) -> None:
    parsed = parse_config(yaml.safe_dump(data), commands)
    assert (parsed.data is not None) != bool(parsed.errors) or parsed.data is None
    assert all(str(error) for error in parsed.errors)


@FUZZ
@given(st.binary(max_size=400) | st.text(max_size=400) | markdownish)
def test_the_configuration_loader_never_raises_on_any_bytes(raw: bytes | str) -> None:
    parsed = parse_config(raw)
    assert parsed.valid or parsed.errors or parsed.data == {}


def test_the_configuration_loader_refuses_a_billion_laughs_quickly() -> None:
    """YAML aliases that would expand to 10⁹ items: answered at once, not by walking every expansion."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        previous = "abcdefgh"[i]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    lines.append("limits: *i")
    started = time.process_time()  # this process's CPU seconds: other processes' work is not the loader's
    parsed = parse_config("\n".join(lines))
    assert time.process_time() - started < 5.0
    assert parsed.errors


@FUZZ
@given(markdownish)
def test_the_bug_report_readers_never_raise(text: str) -> None:
    parse_document(text)
    refine_bug(text, bug_id="1", refined_at="2026-01-01T00:00:00Z")
    with contextlib.suppress(LedgerError):  # its one documented refusal
        parse_ledger_text(text)


HOSTILE_BLOCK = (
    "## Steps\n1. click `x`\n> quote /steward ping\n```\ncode\n```\n<!-- c -->\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n/steward ping\n- item *em* **strong** [l](http://x)\n"
)


def _body(size: int) -> str:
    unit = APPROVED_BUG + HOSTILE_BLOCK * 50
    return (unit * (size // len(unit) + 1))[:size]


def _seconds(read: Callable[[str], object], text: str) -> float:
    """This process's CPU seconds (not the clock's: on a busy machine, other processes' work is not the
    parser's), the least of three runs (a garbage collection mid-run is not the parser's either)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        read(text)
        best = min(best, time.process_time() - started)
    return best


READERS: dict[str, Callable[[str], object]] = {
    "commands": lambda text: parse_commands(text, known=KNOWN),
    "document": parse_document,
    "refine": lambda text: refine_bug(text, bug_id="1", refined_at="2026-01-01T00:00:00Z"),
}


def test_each_reader_takes_a_mib_in_bounded_time_growing_at_most_linearly() -> None:
    mib = 1024 * 1024
    for name, read in READERS.items():
        quarter = _seconds(read, _body(mib // 4))
        whole = _seconds(read, _body(mib))
        per_mib = whole
        assert whole < 8 * quarter + 0.05, f"{name}: {whole:.3f}s for 1 MiB, {quarter:.3f}s for 256 KiB"
        assert per_mib < 10.0, f"{name}: {per_mib:.2f}s per MiB"
    # Commands are read from the first 128 KiB only: a bigger body costs no more.
    head = _seconds(READERS["commands"], _body(MAX_SCAN_CHARS))
    assert _seconds(READERS["commands"], _body(4 * mib)) < 2 * head + 0.05


@settings(max_examples=5, suppress_health_check=list(HealthCheck), database=None)
@given(st.integers(0, 40), st.sampled_from(["`\n/steward help\n`\n\n", "``\n/steward help x\n``\n\n"]))
def test_the_scan_limit_never_cuts_code_open_into_a_command(shift: int, unit: str) -> None:
    """Past the limit the body is cut at a blank line: a cut inside a code span would leave it unclosed and
    turn the code into a command (found by this fuzzing, with the limit moved into the parser)."""
    body = "x" * shift + "\n\n" + unit * (2 * MAX_SCAN_CHARS // len(unit))
    assert parse_commands(body, known=KNOWN) == []


# The pathological comment of issue 25 and its relatives: long runs of span openers before (and after) a
# command line, in one paragraph or many.
PATHOLOGICAL = "x " + "![" * 30000 + "\n/decide F1 y](u)"
opener_runs = st.tuples(
    st.sampled_from(["![", "[", "`", "<a ", "``", "<!--"]),
    st.integers(1, 4000),
    st.sampled_from(["\n/steward ping](u)", "\n/steward ping`", "\n/steward ping>", "\n/ping"]),
    st.sampled_from(["", "\n\n"]),
).map(lambda t: "x " + t[0] * t[1] + t[2] + t[3])


@FUZZ
@given(st.lists(opener_runs, min_size=1, max_size=8).map("".join))
def test_the_span_search_reads_a_bounded_number_of_openers_per_body(body: str) -> None:
    STATS.reset()
    parse_commands(body, known=KNOWN)
    assert STATS.inline_openers <= MAX_PARAGRAPH_OPENERS
    assert STATS.block_parses <= 1


def test_the_pathological_comment_costs_one_block_parse_and_no_span_search() -> None:
    STATS.reset()
    assert parse_commands(PATHOLOGICAL, known={"decide"}) == []
    assert (STATS.block_parses, STATS.inline_parses, STATS.inline_openers) == (1, 0, 0)
