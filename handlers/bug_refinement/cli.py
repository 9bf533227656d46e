"""`steward refine <bug-id | path> [--non-interactive] [--json]`: the refinement engine on local files.

Compatible with the x-refine-bug skill: same argument forms, JSON result, verdict block and exit codes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from bot.cli.help import epilog

from . import sections
from .document import parse_document
from .render import questions
from .report import report_of
from .rules import (
    BugVerdict,
    StoryVerdict,
    apply_verdict,
    blockers_for,
    format_refined_at,
    is_locked,
    read_verdict_block,
    refine_bug,
    refine_story,
    section_of,
)

__all__ = [
    "EXIT_ARGS_INVALID",
    "EXIT_BUG_FILE_NOT_FOUND",
    "EXIT_BUG_FILE_UNREADABLE",
    "EXIT_BUG_NOT_FOUND",
    "EXIT_NOT_APPROVED",
    "EXIT_WRITE_FAILED",
    "main",
]

EXIT_OK = 0
EXIT_NOT_APPROVED = 1  # --check only: the verdict is not approved
EXIT_ARGS_INVALID = 2
EXIT_BUG_NOT_FOUND = 3
EXIT_BUG_FILE_NOT_FOUND = 4
EXIT_WRITE_FAILED = 5
EXIT_BUG_FILE_UNREADABLE = 6

BUG_ID = re.compile(r"^bug-[0-9]{6}$")
BUGS_DIR = Path(".aikittools") / "bugs"
STORY_FILE = re.compile(r"^story-[0-9]{2}-.*\.md$")

USAGE = "usage: steward refine <bug-id | path> [--check] [--non-interactive] [--json]"
HELP = f"""{USAGE}

Refine a bug report (RA9) on a local file: write its `## Refinement Verdict` block and print the result.

arguments:
  bug-id              a bug id `bug-NNNNNN`, for a project that keeps one folder per bug report in the
                      layout RA9's tools use: the file .aikittools/bugs/<bug-id>/bug.md under this folder
  path                a path to a bug file (ends in .md or contains a /), or a folder holding bug.md

options:
  --check             print the verdict without writing the file; exit 0 when approved, 1 when not
  --json              print only the JSON result (no readable report)
  --non-interactive   never print the readable report, even on a terminal (for scripts and CI)
  -h, --help          show this help and exit

Errors go to stderr as `ABORT [CODE]: <message>`; it reads and writes only the bug file.

{epilog("refine")}
"""


class Abort(Exception):
    def __init__(self, code: str, exit_code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.exit_code = exit_code
        self.message = message


@dataclass(frozen=True)
class Options:
    target: str
    interactive: bool
    json_only: bool
    check: bool = False  # print the verdict, write nothing; the exit code says whether it is approved


def parse_args(argv: list[str]) -> Options | None:
    """The options, or None when help was asked for. Raises Abort(ARGS_INVALID) on anything else."""
    target: str | None = None
    interactive, json_only, check = True, False, False
    for arg in argv:
        if arg in ("-h", "--help"):
            return None
        if arg == "--check":
            check = True
        elif arg == "--non-interactive":
            interactive = False
        elif arg == "--json":
            json_only = True
        elif arg.startswith("-") and arg != "-":
            raise Abort("ARGS_INVALID", EXIT_ARGS_INVALID, f"Unknown option {arg!r}. {USAGE}")
        elif target is not None:
            raise Abort("ARGS_INVALID", EXIT_ARGS_INVALID, f"Give one bug id or path, not several. {USAGE}")
        else:
            target = arg
    if target is None:
        raise Abort(
            "ARGS_INVALID",
            EXIT_ARGS_INVALID,
            "Say which bug to refine: a path to its file (`steward refine docs/bugs/crash.md`), a folder "
            "holding bug.md, or a bug id such as bug-000101 (for .aikittools/bugs/bug-000101/bug.md). "
            f"{USAGE}",
        )
    return Options(target, interactive, json_only, check)


def resolve(target: str, cwd: Path) -> tuple[str, Path]:
    """(bug id, bug file) for a bug id or a path, as the x-refine-bug skill resolves them."""
    if target.endswith(".md") or "/" in target or os.sep in target:
        path = Path(target)
        if not path.is_absolute():
            path = cwd / path
        if path.is_dir() and (path / "bug.md").is_file():
            path = path / "bug.md"
        if not path.is_file():
            if path.is_dir():
                folder = target.rstrip("/")
                why = f"{target} has no bug.md: pass the bug's own file (`steward refine {folder}/NAME.md`)"
            else:
                why = f"{target} does not exist: pass the path of the bug's Markdown file"
            raise Abort(
                "BUG_FILE_NOT_FOUND", EXIT_BUG_FILE_NOT_FOUND, f"{why}, or a folder that holds bug.md."
            )
        folder = path.resolve().parent.name
        return (folder if BUG_ID.match(folder) else path.stem), path
    if not BUG_ID.match(target):
        raise Abort(
            "ARGS_INVALID",
            EXIT_ARGS_INVALID,
            f"{target!r} is neither a path nor a bug id: pass the bug's file (a path ending in .md, or "
            "containing /), its folder (`./bug-folder/`), or a bug id of six digits such as bug-000101.",
        )
    path = cwd / BUGS_DIR / target / "bug.md"
    if not path.is_file():
        raise Abort(
            "BUG_NOT_FOUND",
            EXIT_BUG_NOT_FOUND,
            f"No {BUGS_DIR / target / 'bug.md'} under {cwd}: run it from the project's top folder, or pass "
            "the bug file's path instead of its id.",
        )
    return target, path


# --- files ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedText:
    text: str
    crlf: bool  # the file used CRLF newlines: written back the same way
    bom: bool


def load(path: Path) -> LoadedText:
    raw = path.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw.decode("utf-8-sig" if bom else "utf-8")
    return LoadedText(text, "\r\n" in text, bom)


def encode(new_text: str, like: LoadedText) -> bytes:
    if like.crlf:
        new_text = new_text.replace("\n", "\r\n")
    return (b"\xef\xbb\xbf" if like.bom else b"") + new_text.encode("utf-8")


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data` through a temporary file in the same folder and a rename."""
    target = path.resolve()
    mode = target.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _unreadable(path: Path, exc: Exception) -> Abort:
    why = (
        "it is not UTF-8 text"
        if isinstance(exc, UnicodeDecodeError)
        else str(getattr(exc, "strerror", "") or exc)
    )
    return Abort("BUG_FILE_UNREADABLE", EXIT_BUG_FILE_UNREADABLE, f"Cannot read {path}: {why}")


def _write_failed(path: Path, exc: OSError) -> Abort:
    return Abort("WRITE_FAILED", EXIT_WRITE_FAILED, f"Write failed: {path}: {exc.strerror or exc}")


# --- the run ----------------------------------------------------------------------------------------------


def refine_stories(bug_id: str, folder: Path, refined_at: str) -> list[StoryVerdict]:
    """Stamp each story file beside an approved bug; an approved story's `**Status:** Pendente` becomes
    `Refinada` as the bug's does (``StoryVerdict.status_transition``)."""
    verdicts: list[StoryVerdict] = []
    for path in sorted(p for p in folder.iterdir() if STORY_FILE.match(p.name) and p.is_file()):
        try:
            loaded = load(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise _unreadable(path, exc) from exc
        doc = parse_document(loaded.text)  # once: the verdict block, the rules, the new verdict
        recorded = read_verdict_block(doc)
        name = path.name[:-3]
        if is_locked(recorded):
            assert recorded is not None
            verdicts.append(
                StoryVerdict(bug_id, name, "approved", recorded.verdict_hash, recorded.refined_at, ())
            )
            continue
        verdict = refine_story(doc, bug_id=bug_id, story=name, refined_at=refined_at)
        new_text, transition = apply_verdict(doc, verdict)
        verdict = replace(verdict, status_transition=transition)
        data = encode(new_text, loaded)
        if data != encode(loaded.text, loaded):
            try:
                write_atomically(path, data)
            except OSError as exc:
                raise _write_failed(path, exc) from exc
        verdicts.append(verdict)
    return verdicts


def result_json(
    verdict: BugVerdict, transition: str | None, stories: list[StoryVerdict]
) -> dict[str, object]:
    return {
        "bugId": verdict.bug_id,
        "verdict": verdict.verdict,
        "verdictHash": verdict.verdict_hash,
        "refinedAt": verdict.refined_at,
        "blockers": list(verdict.blocker_codes),
        "warnings": list(verdict.warning_codes),
        "statusTransition": transition,
        "storyVerdicts": [
            {
                "story": s.story,
                "verdict": s.verdict,
                "blockers": list(s.blocker_codes),
                "statusTransition": s.status_transition,
            }
            for s in stories
        ],
    }


def _language(verdict: BugVerdict) -> sections.Language:
    return "pt" if verdict.language == "pt" else "en"


def render_report(
    verdict: BugVerdict,
    transition: str | None,
    stories: list[StoryVerdict],
    language: sections.Language = "en",
) -> str:
    """The readable report shown on a terminal: the reporter's questions first (issue 34 §4), then each
    section ✓ or ✗ with what to fix — the maintainers' list — sections named in the document's language."""
    by_section: dict[int | None, list[str]] = {}
    for b in verdict.blockers:
        by_section.setdefault(section_of(b.code), []).append(f"{b.code}: {b.message}")
    out = [f"Refining {verdict.bug_id}", ""]
    asked = questions(verdict, language) if blockers_for(verdict, "reporter") else []
    if asked:
        out.append("Questions for the reporter:")
        out.extend(f"  {k}. {q}" for k, q in enumerate(asked, 1))
        out.append("")
    out.append("Sections (for the maintainers):" if asked else "Sections:")
    for n in sections.BUG_SECTIONS:
        problems = by_section.get(n, [])
        mark = "✗" if problems else "✓"
        out.append(f"  {mark} {n}. {sections.name(n, language)}")
        out.extend(f"      {p}" for p in problems)
    for p in by_section.get(None, []):
        out.append(f"  ✗ {p}")
    for w in verdict.warnings:
        out.append(f"  ! {w.code}: {w.message}")
    out.append("")
    out.append(f"Verdict: {verdict.verdict}" + (f" (Status {transition})" if transition else ""))
    for s in stories:
        status = f" (Status {s.status_transition})" if s.status_transition else ""
        out.append(f"  {'✓' if s.verdict == 'approved' else '✗'} {s.story}: {s.verdict}{status}")
        out.extend(f"      {b.code}: {b.message}" for b in s.blockers)
    out.append("")
    return "\n".join(out)


def _emit(obj: dict[str, object], out: TextIO) -> None:
    encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    out.write(json.dumps(obj, ensure_ascii=encoding != "utf8") + "\n")
    out.flush()


def run(options: Options, cwd: Path, now: datetime, out: TextIO) -> int:
    bug_id, path = resolve(options.target, cwd)
    try:
        loaded = load(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise _unreadable(path, exc) from exc

    doc = parse_document(loaded.text)  # once: the verdict block, the rules, the new verdict
    if is_locked(read_verdict_block(doc)):
        _emit({"bugId": bug_id, "verdict": "approved", "idempotent": True, "storyVerdicts": []}, out)
        return EXIT_OK

    refined_at = format_refined_at(now)
    verdict = refine_bug(report_of(loaded.text, parsed=doc), bug_id=bug_id, refined_at=refined_at)
    if options.check:
        if options.interactive and not options.json_only and out.isatty():
            out.write(render_report(verdict, None, [], _language(verdict)))
        _emit(result_json(verdict, None, []), out)
        return EXIT_OK if verdict.verdict == "approved" else EXIT_NOT_APPROVED
    new_text, transition = apply_verdict(doc, verdict)
    try:
        write_atomically(path, encode(new_text, loaded))
    except OSError as exc:
        raise _write_failed(path, exc) from exc

    stories = (
        refine_stories(bug_id, path.resolve().parent, refined_at) if verdict.verdict == "approved" else []
    )
    if options.interactive and not options.json_only and out.isatty():
        out.write(render_report(verdict, transition, stories, _language(verdict)))
    _emit(result_json(verdict, transition, stories), out)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Run `steward refine`; returns the exit code (0, 2 ARGS_INVALID, 3 BUG_NOT_FOUND, 4 BUG_FILE_NOT_FOUND,
    5 WRITE_FAILED, 6 BUG_FILE_UNREADABLE). Errors go to stderr as `ABORT [CODE]: <message>`."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["refine"]:
        args = args[1:]  # also accept the full `steward refine …` form
    try:
        options = parse_args(args)
        if options is None:
            sys.stdout.write(HELP)
            return EXIT_OK
        return run(options, Path.cwd(), datetime.now(UTC), sys.stdout)
    except Abort as abort:
        sys.stderr.write(f"ABORT [{abort.code}]: {abort.message}\n")
        return abort.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
