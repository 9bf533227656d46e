"""The stop gate: every exit code, in process and through `steward ledger verdict` as a subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest

from handlers.backlog.cli import EXIT_DATA, EXIT_USAGE, main
from handlers.backlog.gate import Verdict, verdict
from handlers.backlog.ledger import LedgerError, parse_ledger

CORE_OPEN = [
    {
        "id": "g1",
        "dimension": "WHAT",
        "status": "OPEN",
        "source": "original",
        "question": "q",
        "answer": None,
    },
    {
        "id": "g2",
        "dimension": "EDGE",
        "status": "OPEN",
        "source": "original",
        "question": "q",
        "answer": None,
    },
]
CORE_RESOLVED = [
    {
        "id": "g1",
        "dimension": "WHAT",
        "status": "RESOLVED",
        "source": "original",
        "question": "q",
        "answer": "a",
    },
    {
        "id": "g2",
        "dimension": "EDGE",
        "status": "OPEN",
        "source": "original",
        "question": "q",
        "answer": None,
    },
]
ALL_RESOLVED = [{**row, "status": "RESOLVED", "answer": "a"} for row in CORE_OPEN]

CASES: list[tuple[str, list[dict[str, Any]], list[str], int]] = [
    ("no open row", ALL_RESOLVED, ["--round", "1", "--last-probe", "no_new_gaps"], 0),
    ("empty ledger", [], ["--round", "0", "--last-probe", "no_new_gaps"], 0),
    ("open rows below the cap", CORE_OPEN, ["--round", "1", "--last-probe", "no_new_gaps"], 1),
    ("new gaps not recorded yet", ALL_RESOLVED, ["--round", "1", "--last-probe", "new_gaps"], 1),
    ("cap with a core row open", CORE_OPEN, ["--round", "5", "--last-probe", "new_gaps"], 2),
    ("cap with the core resolved", CORE_RESOLVED, ["--round", "5", "--last-probe", "new_gaps"], 0),
    ("past the cap, core resolved", CORE_RESOLVED, ["--round", "7", "--last-probe", "no_new_gaps"], 0),
    ("custom cap reached", CORE_OPEN, ["--round", "2", "--cap", "2", "--last-probe", "no_new_gaps"], 2),
    ("custom cap not reached", CORE_OPEN, ["--round", "2", "--cap", "3", "--last-probe", "no_new_gaps"], 1),
    ("user enough", CORE_OPEN, ["--round", "1", "--last-probe", "new_gaps", "--user-enough"], 3),
    (
        "user enough beats the cap",
        CORE_OPEN,
        ["--round", "9", "--last-probe", "new_gaps", "--user-enough"],
        3,
    ),
]


@pytest.mark.parametrize(("rows", "args", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_exit_codes_in_process(rows: list[dict[str, Any]], args: list[str], code: int, capsys: Any) -> None:
    assert main(["verdict", *args, "--json"], stdin=io.StringIO(json.dumps(rows))) == code
    out = json.loads(capsys.readouterr().out)
    assert out["exit_code"] == code and out["verdict"] == Verdict(code).label
    assert set(out) >= {"verdict", "open", "core_unresolved", "residual_open"}


@pytest.mark.parametrize(("rows", "args", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_exit_codes_through_the_steward_command(
    rows: list[dict[str, Any]], args: list[str], code: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "ledger", "verdict", *args],
        input=json.dumps({"ledger": rows}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == code, done.stderr
    assert done.stdout.startswith(Verdict(code).label + ":")


def test_the_json_names_what_is_left() -> None:
    result = verdict(parse_ledger(CORE_OPEN), round=5, last_probe="no_new_gaps")
    assert result.to_json() | {"reason": ""} == {
        "verdict": "STOP-DEGRADED",
        "exit_code": 2,
        "open": 2,
        "core_unresolved": ["WHAT"],
        "residual_open": ["g1", "g2"],
        "reason": "",
    }
    going_on = verdict(parse_ledger(CORE_OPEN), round=1, last_probe="no_new_gaps")
    assert going_on.verdict is Verdict.CONTINUE and going_on.residual_open == ()


@pytest.mark.parametrize(
    ("args", "stdin", "code"),
    [
        (["verdict", "--round", "1"], "[]", EXIT_USAGE),
        (["verdict", "--round", "x", "--last-probe", "new_gaps"], "[]", EXIT_USAGE),
        (["verdict", "--round", "-1", "--last-probe", "new_gaps"], "[]", EXIT_USAGE),
        (["verdict", "--round", "1", "--cap", "0", "--last-probe", "new_gaps"], "[]", EXIT_USAGE),
        (["frobnicate"], "[]", EXIT_USAGE),
        (["verdict", "--round", "1", "--last-probe", "new_gaps"], "not json", EXIT_DATA),
        (["verdict", "--round", "1", "--last-probe", "new_gaps"], '{"x": 1}', EXIT_DATA),
        (["verdict", "--round", "1", "--last-probe", "new_gaps"], '[{"id": "g1"}]', EXIT_DATA),
        (
            ["verdict", "--round", "1", "--last-probe", "new_gaps"],
            '[{"id": "g1", "dimension": "HOW"}]',
            EXIT_DATA,
        ),
    ],
)
def test_bad_input_never_passes_for_a_verdict(args: list[str], stdin: str, code: int, capsys: Any) -> None:
    assert main(args, stdin=io.StringIO(stdin)) == code
    assert capsys.readouterr().err


def test_parsing_accepts_the_documented_shapes_in_any_case() -> None:
    rows = [{"id": "g1", "dimension": "scope", "status": "resolved"}]
    for data in (rows, {"ledger": rows}, {"rows": rows}, {"gaps": rows}, {"ledger": {"rows": rows}}):
        [row] = parse_ledger(data).rows
        assert (row.dimension, row.status, row.source, row.answer) == ("SCOPE", "RESOLVED", "original", None)
    with pytest.raises(LedgerError, match="unique"):
        parse_ledger([{"id": "g1", "dimension": "WHAT"}, {"id": "g1", "dimension": "WHY"}])
