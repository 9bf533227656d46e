"""Pure rules of what Steward says about a default branch for bugfix branches
(handlers/bugfix/required_check.py, handlers/onboarding/plan.py): whether `steward/regression-first` is
required — three answers, never "required" unless it was read — and the `bugfix.required_contexts` the
onboarding file proposes."""

from __future__ import annotations

import pytest

from bot.config.repo_file import parse
from bot.config.settings import HandlerSettings
from bot.forge import Branch
from bot.forge.records import CIReport
from handlers import build_registry
from handlers.bugfix.required_check import Requirement, requirement, requirement_lines, seen_contexts
from handlers.onboarding.plan import BranchFacts, proposal

CONTEXT = "steward/regression-first"
registry = build_registry()


def test_required_only_when_the_branch_lists_it() -> None:
    listed = Branch("main", "a" * 40, True, ("ci/test", CONTEXT))
    assert requirement("main", listed, "github").answer == "required"
    other = Branch("main", "a" * 40, True, ("ci/test",))
    assert requirement("main", other, "github").answer == "not_required"
    assert requirement("main", Branch("main", "a" * 40), "gitea").answer == "not_required"


def test_gitea_entries_are_glob_patterns_github_names_are_exact() -> None:
    pattern = Branch("main", "a" * 40, True, ("steward/*",))
    assert requirement("main", pattern, "gitea").answer == "required"
    assert requirement("main", pattern, "github").answer == "not_required"


@pytest.mark.parametrize(
    ("found", "refused", "why"),
    [
        (None, "the forge refused to show me the branch (403 …)", "the forge refused to show me the branch"),
        (None, "", "there is no branch `main`"),
        (Branch("main", "a" * 40, True, None, "rulesets refused"), "", "rulesets refused"),
        (Branch("main", "a" * 40, True, None), "", "did not show which checks"),
    ],
)
def test_what_was_not_read_is_never_required(found: Branch | None, refused: str, why: str) -> None:
    answer = requirement("main", found, "github", refused=refused)
    assert answer.answer == "unread" and why in answer.reason
    for kind in ("github", "gitea"):
        text = "\n".join(requirement_lines(answer, kind, "https://forge/o/r"))  # type: ignore[arg-type]
        assert "could not read" in text and "**required** check" not in text
        assert "To check:" in text and "To make it required:" in text
        assert "(https://forge/o/r/settings/branches)" in text


def test_not_required_says_how_per_forge_and_what_requiring_it_costs() -> None:
    github = "\n".join(requirement_lines(Requirement("not_required", "main"), "github", "https://g/o/r"))
    gitea = "\n".join(requirement_lines(Requirement("not_required", "main"), "gitea", "https://t/o/r"))
    assert "https://g/o/r/settings/rules" in github and "*Require status checks to pass*" in github
    assert "https://t/o/r/settings/branches" in gitea and "*Enable Status Check*" in gitea
    for text in (github, gitea):
        assert "**every** pull request into `main`" in text


def test_seen_contexts_leave_out_stewards_own() -> None:
    reports = [
        CIReport("tests", "check_run", "success"),
        CIReport(CONTEXT, "status", "success"),
        CIReport("ci/lint", "status", "failure"),
        CIReport("tests", "status", "success"),
    ]
    assert seen_contexts(reports) == ["ci/lint", "tests"]


def _config(facts: BranchFacts) -> str:
    return proposal("github", registry, HandlerSettings(), "en", facts).files[".github/steward.yml"]


def test_the_file_proposes_the_seen_contexts_commented_out_and_uncommenting_them_validates() -> None:
    facts = BranchFacts("main", Requirement("not_required", "main"), "b" * 40, ("ci/lint", "tests"))
    text = _config(facts)
    # The file's sections are commented out (the preset line chooses what runs): choosing the contexts means
    # uncommenting the section's header and the proposed line.
    line = '#   required_contexts: ["ci/lint", "tests"]'
    assert line in text.splitlines() and "# bugfix:" in text.splitlines()
    assert "Proposed from the CI contexts seen on `main`'s head (`bbbbbbbbbb`)" in text
    as_is = parse(text, registry.configurable)
    assert as_is.data is not None and "required_contexts" not in as_is.data.get("bugfix", {})
    edited = text.replace("\n# bugfix:\n", "\nbugfix:\n").replace(line, '  required_contexts: ["tests"]')
    chosen = parse(edited, registry.configurable)
    assert chosen.data is not None and chosen.data["bugfix"]["required_contexts"] == ["tests"]


def test_the_file_says_what_to_fill_in_when_no_ci_reported() -> None:
    text = _config(BranchFacts("main", Requirement("not_required", "main"), "b" * 40, ()))
    assert "#   required_contexts: []" in text.splitlines()
    assert "No CI had reported on `main`'s head" in text


def test_the_file_proposes_reviewers_for_bugfixes_where_the_repository_has_code_owners() -> None:
    """Issue 39: off by default, proposed (still commented out) when the forge finds a CODEOWNERS file."""
    without = _config(BranchFacts("main", Requirement("not_required", "main"), "b" * 40, ()))
    assert "#   request_reviewers: false" in without.splitlines()
    facts = BranchFacts(
        "main", Requirement("not_required", "main"), "b" * 40, (), codeowners=".github/CODEOWNERS"
    )
    text = _config(facts)
    assert "#   request_reviewers: true" in text.splitlines()
    assert "Proposed: `.github/CODEOWNERS` names code owners" in text
    edited = text.replace("\n# bugfix:\n", "\nbugfix:\n").replace(
        "#   request_reviewers: true", "  request_reviewers: true"
    )
    chosen = parse(edited, registry.configurable)
    assert chosen.data is not None and chosen.data["bugfix"]["request_reviewers"] is True
