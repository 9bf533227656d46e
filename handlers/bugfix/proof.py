"""Whether the proof still stands at the head (issue 24 §3): pure checks over the regression test file's text
at the red commit and at the head, the vouched code, and what CI reported at the head.

What is compared, exactly:

- **The red commit holds the vouched code.** The test file at the red commit contains the code `/bugfix`
  committed (``Record.code``: for an outsider's test, the code a refusal showed and a writer vouched for),
  character for character, ignoring only blank lines at its ends. A force-push that rewrote the first commit's
  test fails here.
- **The regression test cases are not skipped at the head.** The cases are those the vouched code defines
  (``slot.case_names``). For each, its *block* at the head — the decorators/attributes/annotations written
  right above it and its body — must not carry a skip or expected-failure marker of its language (``SKIPS``,
  a table per language), nor may the file skip every test at once (``FILE_SKIPS``).
- **Its body has not lost assertions.** Every assertion line of the case's body at the red commit (a line
  holding one of ``ASSERTIONS`` of its language, whitespace collapsed) is still a line of its body at the
  head. Adding assertions is fine; rewording, weakening or deleting one is not. This is conservative: a
  refactor that moves an assertion into a helper fails too, and says which line went missing.
- **CI at the head.** A check run's output or a status's description that names a regression test case on a
  line that says it was skipped, expected to fail or deselected fails the proof; one that names it on a line
  saying it passed confirms it. Where CI names it nowhere, the status says that the head's CI did not report
  the regression test's result (configuration such as ``conftest.py``, ``addopts`` or a workflow edit could
  then skip it unseen).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.forge import CIReport
from handlers.bugfix.regression_slot import case_names, language_of

# Markers that skip a test or expect it to fail, per language, as they appear in a test's block.
SKIPS: dict[str, tuple[str, ...]] = {
    "python": (
        r"@pytest\.mark\.(?:skip|skipif|xfail)\b",
        r"@(?:unittest\.)?(?:skip|skipIf|skipUnless|expectedFailure)\b",
        r"\bpytest\.(?:skip|xfail)\s*\(",
        r"\bself\.skipTest\s*\(",
        r"\braise\s+(?:unittest\.)?SkipTest\b",
    ),
    "javascript": (
        r"\b(?:it|test|describe)\.(?:skip|todo|failing)\b",
        r"\bx(?:it|test|describe)\s*\(",
        r"\bthis\.skip\s*\(",
    ),
    "go": (r"\bt\.(?:Skip|SkipNow|Skipf)\s*\(",),
    "rust": (r"#\[ignore\b",),
    "java": (r"@(?:Disabled|Ignore)\b", r"\bAssumptions\.assume", r"\bassume(?:True|False|That)\s*\("),
    "ruby": (r"\b(?:skip|pending|xit)\b",),
}
SKIPS["typescript"] = SKIPS["javascript"]
SKIPS["kotlin"] = SKIPS["java"]
FILE_SKIPS: dict[str, tuple[str, ...]] = {
    "python": (r"^pytestmark\s*=.*\b(?:skip|skipif|xfail)\b", r"allow_module_level\s*=\s*True"),
    "javascript": (r"^\s*(?:describe|test|it)\.only\b",),
}
FILE_SKIPS["typescript"] = FILE_SKIPS["javascript"]
# What counts as an assertion line, per language.
ASSERTIONS: dict[str, str] = {
    "python": r"\bassert\b|\bself\.assert\w*\s*\(|\bpytest\.raises\s*\(|\bself\.fail\s*\(",
    "javascript": r"\bexpect\s*\(|\bassert\w*[.(]",
    "go": r"\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\b(?:require|assert)\.\w+\s*\(",
    "rust": r"\b(?:assert|assert_eq|assert_ne|debug_assert\w*|panic)!",
    "java": r"\bassert\w*\s*\(|\bfail\s*\(",
    "ruby": r"\bexpect\b|\bassert\w*\b|\bmust_\w+|\bshould\b",
}
ASSERTIONS["typescript"] = ASSERTIONS["javascript"]
ASSERTIONS["kotlin"] = ASSERTIONS["java"]
_SKIP_WORDS = re.compile(r"\b(?:skip(?:ped)?|xfail(?:ed)?|deselected|ignored|disabled|pending)\b", re.I)
_PASS_WORDS = re.compile(r"\b(?:passed|pass|ok|success(?:ful)?)\b", re.I)


@dataclass(frozen=True)
class ProofProblem:
    code: str
    description: str  # the status's description (≤140 after the status cuts it)
    detail: str


@dataclass(frozen=True)
class HeadReport:
    """What CI at the head said of the regression test: ``passed`` (named on a passing line), ``skipped``,
    or ``silent`` (named nowhere)."""

    verdict: str
    where: str = ""


def _language(path: str) -> str:
    return language_of(path) or "python"


def case_block(path: str, text: str, name: str) -> str | None:
    """The lines of test case ``name`` in ``text``: the decorator/attribute/annotation lines right above its
    definition, the definition, and its body (None when it is not there)."""
    lines = text.split("\n")
    language = _language(path)
    escaped = re.escape(name)
    starts = {
        "python": rf"^\s*(?:async\s+)?def\s+{escaped}\s*\(|^\s*class\s+{escaped}\b",
        "go": rf"^func\s+{escaped}\s*\(",
        "rust": rf"^\s*(?:pub\s+)?(?:async\s+)?fn\s+{escaped}\s*\(",
        "java": rf"\b(?:void|fun)\s+{escaped}\s*\(",
        "ruby": rf"^\s*(?:it|test|describe|context)\s+(['\"]){escaped}\1|^\s*def\s+{escaped}\b",
    }
    js = rf"\b\w*(?:it|test|describe)(?:\.\w+)?\s*\(\s*(['\"`]){escaped}\1"
    pattern = re.compile(starts.get(language, js))
    start = next((i for i, line in enumerate(lines) if pattern.search(line)), None)
    if start is None:
        return None
    top = start
    while top > 0 and re.match(r"^\s*(?:@|#\[)", lines[top - 1]):
        top -= 1
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    if language == "python":
        while end < len(lines) and (
            not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
        ):
            end += 1
    else:
        depth = 0
        seen = False
        for i in range(start, len(lines)):
            depth += lines[i].count("{") + lines[i].count("(") - lines[i].count("}") - lines[i].count(")")
            seen = seen or "{" in lines[i] or "(" in lines[i]
            end = i + 1
            if seen and depth <= 0 and i > start:
                break
            if language == "ruby" and i > start and lines[i].strip() == "end":
                break
    return "\n".join(lines[top:end])


def assertion_lines(path: str, block: str) -> list[str]:
    """The assertion lines of a case's block, whitespace collapsed."""
    pattern = re.compile(ASSERTIONS[_language(path)])
    return [" ".join(line.split()) for line in block.split("\n") if pattern.search(line)]


def skip_marker(path: str, block: str, text: str) -> str | None:
    """The skip or expected-failure marker in the case's block (or one that skips the whole file)."""
    language = _language(path)
    for marker in SKIPS.get(language, ()):
        found = re.search(marker, block, re.M)
        if found:
            return found.group(0).strip()
    for marker in FILE_SKIPS.get(language, ()):
        found = re.search(marker, text, re.M)
        if found:
            return found.group(0).strip()
    return None


def red_not_vouched() -> ProofProblem:
    return ProofProblem(
        "RED_NOT_VOUCHED_CODE",
        "the first commit's test is no longer the code /bugfix committed (and was vouched for)",
        "The first commit must add the regression test exactly as `/bugfix` committed it. Restore it "
        "(rebase so the original test-only commit stays first, then force-push).",
    )


def check_proof(
    *, path: str, vouched: str, red_text: str | None, head_text: str | None
) -> ProofProblem | None:
    """The first way the proof no longer stands (None: it stands, as far as these checks see)."""
    if vouched and (red_text is None or vouched.strip("\n") not in red_text):
        return red_not_vouched()
    if head_text is None or not vouched:
        return None
    for name in sorted(case_names(path, vouched)):
        head_block = case_block(path, head_text, name)
        if head_block is None:
            continue  # a removed case is the status's TEST_CASES_REMOVED
        marker = skip_marker(path, head_block, head_text)
        if marker is not None:
            return ProofProblem(
                "REGRESSION_TEST_SKIPPED",
                # Without its `@`: a status description is one inert line, where `@pytest` reads as a mention.
                f"the regression test {name} is skipped or expected to fail at the head "
                f"({marker.lstrip('@')})"[:140],
                f"`{marker}` skips `{name}` or expects it to fail: the fix must make the test pass, not "
                "switch it off. Remove the marker.",
            )
        red_block = case_block(path, red_text or "", name) or ""
        kept = set(assertion_lines(path, head_block))
        lost = [line for line in assertion_lines(path, red_block) if line not in kept]
        if lost:
            return ProofProblem(
                "REGRESSION_TEST_WEAKENED",
                f"the regression test {name} lost assertions since the red commit: {lost[0]}"[:140],
                "Every assertion line of the test at the red commit must still be in its body at the head "
                "(adding assertions is fine). Missing: " + ", ".join(f"`{line[:120]}`" for line in lost[:5]),
            )
    return None


def head_report(reports: Sequence[CIReport], names: Sequence[str]) -> HeadReport:
    """What CI at the head said of the regression test cases (by name, line by line)."""
    passed = ""
    for report in reports:
        texts = [report.title, report.summary, report.text, *(a.message for a in report.annotations)]
        for line in "\n".join(texts).split("\n"):
            if not any(name and name in line for name in names):
                continue
            if _SKIP_WORDS.search(line):
                return HeadReport("skipped", report.context)
            if _PASS_WORDS.search(line):
                passed = passed or report.context
    return HeadReport("passed", passed) if passed else HeadReport("silent")


def red_names_test(failing: Sequence[CIReport], names: Sequence[str], test_path: str = "") -> bool:
    """Whether a failing report on the red commit names a regression test case (in its title, summary, text
    or an annotation's message or title), or — ``test_path``, given when the test file holds only the
    regression test — puts an annotation on the test file."""
    for report in failing:
        texts = [report.title, report.summary, report.text]
        texts += [f"{a.title}\n{a.message}" for a in report.annotations]
        if any(name and name in text for name in names for text in texts):
            return True
        if test_path and any(a.path == test_path for a in report.annotations):
            return True
    return False
