"""`steward refine` on files, run as a subprocess the way a maintainer or a CI job runs it."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from handlers.bug_refinement import cli, read_verdict_block

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
ABORT = re.compile(r"^ABORT \[(?P<code>[A-Z_]+)\]: .+\n$")


def refine(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "handlers.bug_refinement.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, "stdout is exactly one JSON object when it is not a terminal"
    data: dict[str, Any] = json.loads(lines[0])
    return data


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A repository with `.aikittools/bugs/` holding the example bugs."""
    bugs = tmp_path / ".aikittools" / "bugs"
    shutil.copytree(DATA / "bug-000101", bugs / "bug-000101")
    shutil.copytree(DATA / "bug-000102", bugs / "bug-000102")
    (bugs / "bug-000103").mkdir()
    shutil.copy(DATA / "bug-000103.md", bugs / "bug-000103" / "bug.md")
    return tmp_path


def bug_file(workspace: Path, bug_id: str) -> Path:
    return workspace / ".aikittools" / "bugs" / bug_id / "bug.md"


# --- approved ---------------------------------------------------------------------------------------------


def test_a_file_in_english_keeps_its_language_pending_becomes_refined(workspace: Path) -> None:
    path = bug_file(workspace, "bug-000101")
    path.write_text(path.read_text(encoding="utf-8").replace("**Status:** Pendente", "**Status:** Pending"))
    out = result(refine(workspace, "bug-000101", "--non-interactive"))
    assert out["verdict"] == "approved" and out["statusTransition"] == "Pending→Refined"
    text = path.read_text(encoding="utf-8")
    assert "**Status:** Refined" in text and "Refinada" not in text.split("**Status transitions:**")[0]


def test_approves_a_bug_by_id_and_stamps_its_stories(workspace: Path) -> None:
    out = result(refine(workspace, "bug-000101", "--non-interactive"))

    assert out["bugId"] == "bug-000101"
    assert out["verdict"] == "approved"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", out["refinedAt"])
    assert out["verdictHash"] == sha256(f"bug-000101:approved:{out['refinedAt']}\n")
    assert out["blockers"] == [] and out["warnings"] == []
    assert out["statusTransition"] == "Pendente→Refinada"
    assert out["storyVerdicts"] == [
        {
            "story": "story-01-keep-promotions-on-switch",
            "verdict": "approved",
            "blockers": [],
            "statusTransition": None,
        },
        {
            "story": "story-02-regression-test",
            "verdict": "approved",
            "blockers": [],
            "statusTransition": None,
        },
    ]

    text = bug_file(workspace, "bug-000101").read_text(encoding="utf-8")
    assert text.count("## Refinement Verdict") == 1, (
        "the template's pending block is replaced, not duplicated"
    )
    assert "**Status:** Refinada" in text and "**Status:** Pendente" not in text
    recorded = read_verdict_block(text)
    assert recorded is not None
    assert (recorded.status, recorded.verdict_hash, recorded.refined_at) == (
        "approved",
        out["verdictHash"],
        out["refinedAt"],
    )

    folder = bug_file(workspace, "bug-000101").parent
    for name in ("story-01-keep-promotions-on-switch", "story-02-regression-test"):
        story = read_verdict_block((folder / f"{name}.md").read_text(encoding="utf-8"))
        assert story is not None and story.status == "approved"
        assert story.verdict_hash == sha256(f"bug-000101:{name}:approved:{out['refinedAt']}\n")
    assert (folder / "notes.md").read_bytes() == (DATA / "bug-000101" / "notes.md").read_bytes()
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in (DATA / "bug-000101").iterdir())


def test_an_approved_bug_is_locked_and_left_byte_for_byte(workspace: Path) -> None:
    result(refine(workspace, "bug-000101", "--non-interactive"))
    folder = bug_file(workspace, "bug-000101").parent
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    mtimes = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}

    again = result(refine(workspace, "bug-000101", "--non-interactive", "--json"))

    assert again == {"bugId": "bug-000101", "verdict": "approved", "idempotent": True, "storyVerdicts": []}
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == mtimes


def test_an_approved_bug_stays_approved_after_an_edit(workspace: Path) -> None:
    result(refine(workspace, "bug-000101", "--non-interactive"))
    path = bug_file(workspace, "bug-000101")
    edited = path.read_text(encoding="utf-8").replace("## 1. Vision", "## 1. Something else")
    path.write_text(edited, encoding="utf-8")
    assert result(refine(workspace, "bug-000101"))["idempotent"] is True
    assert path.read_text(encoding="utf-8") == edited


def test_portuguese_bug_without_stories(workspace: Path) -> None:
    out = result(refine(workspace, "bug-000102", "--non-interactive"))
    assert out["verdict"] == "approved" and out["storyVerdicts"] == []
    assert out["statusTransition"] == "Pendente→Refinada"
    text = bug_file(workspace, "bug-000102").read_text(encoding="utf-8")
    assert text.endswith("blockers: []\n```\n")
    assert "**Status:** Refinada" in text


def test_a_rejected_story_is_reported(workspace: Path) -> None:
    folder = bug_file(workspace, "bug-000101").parent
    (folder / "story-03-docs.md").write_text("# Story 03\n\n## 1. Vision\n\nDocument it.\n", encoding="utf-8")
    out = result(refine(workspace, "bug-000101", "--non-interactive"))
    assert out["storyVerdicts"][2] == {
        "story": "story-03-docs",
        "verdict": "rejected",
        "blockers": ["STORY_AC_MISSING_GHERKIN", "STORY_RECIPE_INCOMPLETE", "STORY_DEPS_MISSING"],
        "statusTransition": None,
    }
    story = read_verdict_block((folder / "story-03-docs.md").read_text(encoding="utf-8"))
    assert story is not None and story.status == "rejected"
    assert story.blockers == ("STORY_AC_MISSING_GHERKIN", "STORY_RECIPE_INCOMPLETE", "STORY_DEPS_MISSING")


def test_an_approved_storys_status_line_changes_as_the_bugs_does(workspace: Path) -> None:
    """Issue 36 §4: a story file's `**Status:** Pendente` becomes `Refinada` when it is approved (`Pending`
    becomes `Refined`); a story whose status is anything else is not approved, and keeps its line."""
    folder = bug_file(workspace, "bug-000101").parent
    one, two = folder / "story-01-keep-promotions-on-switch.md", folder / "story-02-regression-test.md"
    one.write_text(one.read_text(encoding="utf-8").replace("## 1.", "**Status:** Pendente\n\n## 1.", 1))
    other = "**Status:** Em Investigação\n\n## 1."
    two.write_text(two.read_text(encoding="utf-8").replace("## 1.", other, 1))
    out = result(refine(workspace, "bug-000101", "--non-interactive"))
    first, second = out["storyVerdicts"]
    assert first["verdict"] == "approved" and first["statusTransition"] == "Pendente→Refinada"
    assert "**Status:** Refinada" in one.read_text(encoding="utf-8")
    assert second == {
        "story": "story-02-regression-test",
        "verdict": "rejected",
        "blockers": ["STORY_STATUS_INVALID"],
        "statusTransition": None,
    }
    assert "**Status:** Em Investigação" in two.read_text(encoding="utf-8")


# --- rejected ---------------------------------------------------------------------------------------------


def test_rejects_by_path_then_approves_once_fixed(workspace: Path) -> None:
    path = bug_file(workspace, "bug-000103")
    folder = path.parent
    (folder / "story-01-unrelated.md").write_text("# a story\n", encoding="utf-8")

    out = result(refine(workspace, ".aikittools/bugs/bug-000103/bug.md", "--non-interactive"))
    assert out["bugId"] == "bug-000103"
    assert out["verdict"] == "rejected"
    assert out["verdictHash"] == sha256(f"bug-000103:rejected:{out['refinedAt']}\n")
    assert out["blockers"][0] == "VISION_EMPTY" and "MISSING_SECTION_8" in out["blockers"]
    assert out["warnings"] == ["SEVERITY_MISSING", "SCOPE_MISSING"]
    assert out["statusTransition"] is None
    assert out["storyVerdicts"] == []
    text = path.read_text(encoding="utf-8")
    assert text.startswith((DATA / "bug-000103.md").read_text(encoding="utf-8").rstrip("\n"))
    assert "**Status:** Pendente" in text
    assert (folder / "story-01-unrelated.md").read_text(encoding="utf-8") == "# a story\n", "untouched"

    again = result(refine(workspace, ".aikittools/bugs/bug-000103/bug.md", "--non-interactive"))
    assert again["verdict"] == "rejected"
    assert path.read_text(encoding="utf-8").count("## Refinement Verdict") == 1

    fixed = (DATA / "bug-000102" / "bug.md").read_text(encoding="utf-8")
    path.write_text(
        fixed + "\n## Refinement Verdict\n\n```yaml\nstatus: rejected\nblockers:\n  - VISION_EMPTY\n```\n",
        encoding="utf-8",
    )
    approved = result(refine(workspace, "bug-000103", "--non-interactive"))
    assert approved["verdict"] == "approved"
    assert approved["statusTransition"] == "Pendente→Refinada"
    assert path.read_text(encoding="utf-8").count("## Refinement Verdict") == 1


def test_bug_id_from_a_path_outside_a_bug_folder(tmp_path: Path) -> None:
    shutil.copy(DATA / "bug-000103.md", tmp_path / "login-safari.md")
    out = result(refine(tmp_path, "login-safari.md", "--non-interactive"))
    assert out["bugId"] == "login-safari"
    assert out["verdictHash"] == sha256(f"login-safari:rejected:{out['refinedAt']}\n")


def test_crlf_file_keeps_its_newlines(tmp_path: Path) -> None:
    crlf = (DATA / "bug-000102" / "bug.md").read_text(encoding="utf-8").replace("\n", "\r\n")
    (tmp_path / "bug-000102").mkdir()
    path = tmp_path / "bug-000102" / "bug.md"
    path.write_bytes(crlf.encode())
    result(refine(tmp_path, "bug-000102/bug.md", "--non-interactive"))
    data = path.read_bytes()
    assert b"\r\n## Refinement Verdict\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


# --- errors -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "exit_code", "code"),
    [
        (["bug-12"], 2, "ARGS_INVALID"),
        (["BUG-000101"], 2, "ARGS_INVALID"),
        (["bug-0001011"], 2, "ARGS_INVALID"),
        ([], 2, "ARGS_INVALID"),
        (["bug-000101", "--frobnicate"], 2, "ARGS_INVALID"),
        (["bug-000101", "bug-000102"], 2, "ARGS_INVALID"),
        (["bug-999999"], 3, "BUG_NOT_FOUND"),
        (["missing/bug.md"], 4, "BUG_FILE_NOT_FOUND"),
        (["nowhere.md"], 4, "BUG_FILE_NOT_FOUND"),
        ([".aikittools/bugs/bug-999999/"], 4, "BUG_FILE_NOT_FOUND"),
    ],
)
def test_errors(workspace: Path, args: list[str], exit_code: int, code: str) -> None:
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    proc = refine(workspace, *args, "--non-interactive")
    assert proc.returncode == exit_code
    assert proc.stdout == ""
    m = ABORT.match(proc.stderr)
    assert m is not None and m.group("code") == code, proc.stderr
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before


def test_write_failed_leaves_the_file_and_no_temporary(tmp_path: Path) -> None:
    # A name so long that the temporary file beside it cannot be created, even for root.
    name = "b" * (255 - len(".md")) + ".md"
    path = tmp_path / name
    path.write_bytes((DATA / "bug-000103.md").read_bytes())
    proc = refine(tmp_path, name)
    assert proc.returncode == 5
    m = ABORT.match(proc.stderr)
    assert m is not None and m.group("code") == "WRITE_FAILED"
    assert proc.stdout == ""
    assert path.read_bytes() == (DATA / "bug-000103.md").read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_help_lists_every_option_and_exit_code(tmp_path: Path) -> None:
    proc = refine(tmp_path, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: steward refine")
    for option in ("--json", "--non-interactive", "--help"):
        assert re.search(rf"^  (?:-h, )?{option}\s+\S", proc.stdout, re.M), option
    for exit_code, code in ((2, "ARGS_INVALID"), (3, "BUG_NOT_FOUND"), (4, "BUG_FILE_NOT_FOUND"),
                            (5, "WRITE_FAILED"), (6, "BUG_FILE_UNREADABLE")):  # fmt: skip
        assert re.search(rf"^  {exit_code}  {code}\b", proc.stdout, re.M), code


def test_argument_errors_say_what_to_pass(workspace: Path) -> None:
    """Issue 37: "Bug ID must match bug-NNNNNN." for no argument at all, and "Bug file not found: d/" for a
    folder without bug.md, did not say what to pass."""
    (workspace / "notes").mkdir()
    said = {
        name: refine(workspace, *args, "--non-interactive").stderr
        for name, args in (("none", []), ("folder", ["notes/"]), ("id", ["bug-12"]), ("gone", ["bug-999999"]))
    }
    assert "Say which bug to refine: a path to its file" in said["none"] and "bug-000101" in said["none"]
    assert "Bug ID must match" not in said["none"]
    assert "notes/ has no bug.md: pass the bug's own file (`steward refine notes/NAME.md`)" in said["folder"]
    assert "'bug-12' is neither a path nor a bug id: pass the bug's file" in said["id"]
    assert "run it from the project's top folder, or pass the bug file's path" in said["gone"]


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8 \x80", None], ids=["not-utf8", "unreadable"])
def test_an_existing_file_that_cannot_be_read_is_unreadable_not_missing(
    tmp_path: Path, content: bytes | None
) -> None:
    path = tmp_path / "bug.md"
    if content is None:
        # A regular file that exists but whose reading fails (EIO), even for root.
        path.symlink_to("/proc/self/mem")
    else:
        path.write_bytes(content)
    proc = refine(tmp_path, "bug.md")
    assert proc.returncode == 6, proc.stderr
    m = ABORT.match(proc.stderr)
    assert m is not None and m.group("code") == "BUG_FILE_UNREADABLE"
    assert proc.stdout == ""


def test_refining_a_file_loads_no_service_of_the_bot() -> None:
    """A file on disk needs the rules, not Redis, the forge clients or the settings: a CI job that runs
    `python -m handlers.bug_refinement.cli` on every bug file starts in a fraction of what the bot does."""
    modules = ("redis", "bot.config.settings", "bot.forge", "bot.commands.registry", "structlog")
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, handlers.bug_refinement.cli; "
            f"print(' '.join(m for m in {modules!r} if m in sys.modules))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert loaded == []


def test_steward_version_and_every_option_has_help() -> None:
    import argparse

    from bot.cli.main import build_parser
    from bot.version import steward_version

    proc = subprocess.run([sys.executable, "-m", "bot.cli", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == f"steward {steward_version()}"

    def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        found = [parser]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    found += parsers(child)
        return found

    for parser in parsers(build_parser()):
        for action in parser._actions:
            if action.option_strings or action.dest not in ("command", "dead_command"):
                assert action.help, f"{parser.prog} {action.option_strings or action.dest} has no help"


# --- the report on a terminal -----------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("flags", "report"), [([], True), (["--non-interactive"], False), (["--json"], False)]
)
def test_report_only_when_interactive_on_a_terminal(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], report: bool
) -> None:
    monkeypatch.chdir(workspace)
    out = Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["bug-000103", *flags]) == 0
    text = out.getvalue()
    json_line = text.rstrip("\n").rsplit("\n", 1)[-1]
    assert json.loads(json_line)["verdict"] == "rejected"
    if report:
        assert "✗ 1. Vision" in text and "VISION_EMPTY: Under `## 1. Vision`" in text
        assert "✓ 2. Persona & Usage Scenario" in text
        assert "! SEVERITY_MISSING" in text
        assert text.index("Verdict: rejected") < text.index(json_line)
    else:
        assert text == json_line + "\n"


def test_main_accepts_the_refine_word(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["refine", "bug-000102", "--non-interactive"]) == 0
    assert json.loads(out.getvalue())["bugId"] == "bug-000102"


# --- --check (issue 34 §4) ---------------------------------------------------------------------------------


def test_check_prints_the_verdict_writes_nothing_and_exits_by_the_verdict(tmp_path: Path) -> None:
    shutil.copy(DATA / "bug-000103.md", tmp_path / "login.md")
    before = (tmp_path / "login.md").read_bytes()
    rejected = refine(tmp_path, "login.md", "--check", "--non-interactive")
    assert rejected.returncode == cli.EXIT_NOT_APPROVED == 1, rejected.stderr
    assert json.loads(rejected.stdout)["verdict"] == "rejected"
    assert (tmp_path / "login.md").read_bytes() == before, "--check never rewrites the file"
    shutil.copy(DATA / "bug-000101" / "bug.md", tmp_path / "cart.md")
    before = (tmp_path / "cart.md").read_bytes()
    approved = refine(tmp_path, "cart.md", "--check", "--non-interactive")
    assert approved.returncode == 0 and json.loads(approved.stdout)["verdict"] == "approved"
    assert (tmp_path / "cart.md").read_bytes() == before
    assert refine(tmp_path, "login.md").returncode == 0, "the writing mode keeps exit 0"
    assert read_verdict_block((tmp_path / "login.md").read_text()) is not None


def test_the_readable_report_puts_the_reporters_questions_before_the_maintainers_list() -> None:
    verdict = cli.refine_bug("App crashes when I open it", bug_id="x", refined_at="2026-01-01T00:00:00Z")
    text = cli.render_report(verdict, None, [])
    assert text.index("Questions for the reporter:") < text.index("Sections (for the maintainers):")
    assert "  1. Which version were you on" in text
