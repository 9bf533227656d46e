"""The owner's `.github` repository's issue templates (issue 34 §1), end to end on both forges.

GitHub reads a repository's issue templates from its own `.github/ISSUE_TEMPLATE/` and, when it has none
there, from its owner's public `.github` repository (GitHub's default community health files), so a report
filled through the owner's form is read with that form's field names and defaults. Gitea has no such
fallback: it parses templates only from the repository's own default branch (go-gitea/gitea
services/issue/template.go `ParseTemplatesFromDefaultBranch`), so on Gitea the owner's form is never read —
the report is read as the common formats read any report, and the form's names never appear in a verdict.

Each test makes an organisation of its own: the session's sandbox keeps every test's repositories under one
owner, whose `.github` repository would otherwise change what every other test reads."""

from __future__ import annotations

import uuid

import httpx2

from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG, TEST_CONFIG_PATHS
from tests.e2e.test_bug_refinement_e2e import verdict_comments
from tests.e2e.test_bug_repo_templates_e2e import FORM, report

FOLDER = ".github/ISSUE_TEMPLATE"  # one of Gitea's IssueTemplateDirCandidates too
ASKED_BY_ITS_NAME = "(the template's **How can we see it?** field)"  # the question, not the quoted report


def org_repo(steward: Steward, org: str, name: str) -> str:
    """A repository of organisation ``org`` that Steward works on, as ``Steward.new_repo`` makes one."""
    m = steward.maintainer
    repo = str(m.call("POST", f"/orgs/{org}/repos", {"name": name})["full_name"])
    m.put_file(repo, TEST_CONFIG_PATHS[steward.forge], TEST_CONFIG)
    m.add_collaborator(repo, "steward-bot", "admin" if steward.forge == "gitea" else "push")
    m.add_collaborator(repo, "triager", "triage")
    m.add_hook(repo, f"{steward.receiver.url}{m.webhook_path}")
    return repo


def verdict_text(steward: Steward, repo: str, number: int) -> str:
    [comment] = verdict_comments(steward, repo, number)
    return str(comment["body"])


def report_left_at_the_default(steward: Steward, repo: str, title: str) -> str:
    number = steward.outsider.open_issue(repo, title, report("How can we see it?", "1. Open the app\n2. ..."))
    steward.maintainer.add_labels(repo, number, ["bug", "refine"])
    steward.settle()
    return verdict_text(steward, repo, number)


def test_the_owners_github_repository_gives_the_templates_where_the_forge_reads_them(
    steward: Steward,
) -> None:
    org = f"tpl-{uuid.uuid4().hex[:8]}"
    made = httpx2.post(
        f"{steward.sandbox.url}/_sandbox/orgs", json={"login": org, "members": {"maintainer": "admin"}}
    )
    assert made.status_code == 201, made.text
    m = steward.maintainer
    defaults = str(m.call("POST", f"/orgs/{org}/repos", {"name": ".github"})["full_name"])
    m.put_file(defaults, f"{FOLDER}/bug.yml", FORM.format(steps="How can we see it?"))
    repo = org_repo(steward, org, f"app-{uuid.uuid4().hex[:6]}")
    steward.settle()

    verdict = report_left_at_the_default(steward, repo, "Draft closes")
    if steward.forge == "github":
        assert "RECIPE_MISSING_STEPS" in verdict, "the owner's form: its default value is no answer"
        assert ASKED_BY_ITS_NAME in verdict, "asked by the owner's form's own name for the field"
    else:
        assert ASKED_BY_ITS_NAME not in verdict, "Gitea offers no owner's templates: Steward reads none"
        assert "RECIPE_MISSING_STEPS" not in verdict, "the default is read as the reporter's numbered steps"

    if steward.forge == "github":
        # The repository's own templates replace its owner's (GitHub reads the owner's only when there are
        # none): a push that adds one drops the cached copy, and the owner's form is no longer read.
        m.put_file(repo, f"{FOLDER}/bug.yml", FORM.format(steps="Steps to reproduce"))
        steward.settle()
        later = report_left_at_the_default(steward, repo, "Draft closes again")
        assert ASKED_BY_ITS_NAME not in later, "the repository's own form, not its owner's"
