"""The repository's own issue form says which field is which (issue 34 §1), end to end on both forges: a
form that renames the steps field ("How can we see it?", id `steps`) and gives it a default value. A report
filled through it is not asked for the steps; one left at the default is, by the form's own name for the
field; a push to the default branch that changes the form is read at the next refinement (the cached copy
is dropped). The form lives where each forge reads it: `.github/ISSUE_TEMPLATE/` on GitHub,
`.gitea/ISSUE_TEMPLATE/` (one of Gitea's IssueTemplateDirCandidates) on Gitea."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.test_bug_refinement_e2e import verdict_comments

FORM = """\
name: Bug
description: Something broke
body:
  - type: textarea
    id: what
    attributes:
      label: What went wrong?
  - type: input
    id: version
    attributes:
      label: Which build?
      placeholder: e.g. 3.2.0 on Linux
  - type: textarea
    id: steps
    attributes:
      label: {steps}
      value: |
        1. Open the app
        2. ...
  - type: textarea
    id: result
    attributes:
      label: What did you expect, and what did you get?
"""


def report(steps_label: str, steps: str) -> str:
    # As the forge renders a filled form: `### <label>`, a blank line, the answer.
    return (
        "### What went wrong?\n\nSaving a draft closes the editor.\n\n"
        "### Which build?\n\n3.2.1 on Windows 11\n\n"
        f"### {steps_label}\n\n{steps}\n\n"
        "### What did you expect, and what did you get?\n\n"
        "Expected: the draft is saved\nActual: the editor closes, https://example.com/log.txt\n"
    )


def asked_for_steps(steward: Steward, repo: str, number: int) -> str | None:
    [comment] = verdict_comments(steward, repo, number)
    body = str(comment["body"])
    return body if "RECIPE_MISSING_STEPS" in body else None


def test_a_renamed_field_with_a_default_is_read_by_the_repositorys_own_form(steward: Steward) -> None:
    repo = steward.new_repo()
    folder = ".github/ISSUE_TEMPLATE" if steward.forge == "github" else ".gitea/ISSUE_TEMPLATE"
    steward.maintainer.put_file(repo, f"{folder}/bug.yml", FORM.format(steps="How can we see it?"))
    steward.settle()
    filled = steward.outsider.open_issue(
        repo, "Draft closes", report("How can we see it?", "Open a draft and press Ctrl+S.")
    )
    default = steward.outsider.open_issue(
        repo, "Draft closes too", report("How can we see it?", "1. Open the app\n2. ...")
    )
    for number in (filled, default):
        steward.maintainer.add_labels(repo, number, ["bug", "refine"])
    steward.settle()
    assert asked_for_steps(steward, repo, filled) is None, "the renamed field is the steps"
    asked = asked_for_steps(steward, repo, default)
    assert asked is not None, "the form's default value is no answer"
    assert "How can we see it?" in asked, "asked by the form's own name"

    # The form renames the field again: a push to the default branch drops the cached copy.
    steward.maintainer.put_file(repo, f"{folder}/bug.yml", FORM.format(steps="Show us"))
    steward.settle()
    later = steward.outsider.open_issue(
        repo, "Draft closes again", report("Show us", "Open a draft, press Ctrl+S.")
    )
    steward.maintainer.add_labels(repo, later, ["bug", "refine"])
    steward.settle()
    assert asked_for_steps(steward, repo, later) is None, "the changed form is read"
