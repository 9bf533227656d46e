"""Onboarding end to end, on both forges: `/steward init` (admins only) opens one "Configure Steward" pull
request with the configuration (which `steward check-config` passes) and the issue templates at the forge's
paths; asking again while it is open opens no second one; closing it unmerged gets a closing comment; merging
it creates the labels; an issue opened from its bug template is approved once filled in; a repository that
has a configuration file gets no pull request. (The GitHub App's installation events:
test_onboarding_app.py.)"""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Steward
from tests.e2e.stack import ROOT, ForgeUser
from tests.onboarding.forms import fill_markdown, markdown_template, render_form

BRANCH = "steward/configure"
FILLED_FORM = {
    "section-1": "The cart loses items when a second one is added.",
    "section-2": "A shopper adding two items to the cart.",
    "section-3": "They can buy what they chose.",
    "section-4": "Given a cart with one item\nWhen I add another\nThen the cart has two items",
    "section-5-1": "v1.2 on Linux, Python 3.13",
    "section-5-2": "1. Open the cart\n2. Add an item",
    "section-5-3": "Observed: one item\nExpected: two items",
    "section-5-4": "logs/cart.log",
    "section-6": "The cart is overwritten instead of appended to.",
    "section-7": "tests/test_cart.py",
    "section-8": "none",
    "section-9": "none yet",
    "severity": "high",
    "scope": "checkout",
}
FILLED_MARKDOWN = {
    "1. Vision": FILLED_FORM["section-1"],
    "2. Persona & Usage Scenario": FILLED_FORM["section-2"],
    "3. Value Delivery": FILLED_FORM["section-3"],
    "4. Acceptance Criteria": FILLED_FORM["section-4"],
    "5.1 Environment": FILLED_FORM["section-5-1"],
    "5.2 Steps to Reproduce": FILLED_FORM["section-5-2"],
    "5.3 Observed vs Expected": FILLED_FORM["section-5-3"],
    "5.4 Artifacts": FILLED_FORM["section-5-4"],
    "6. Root-Cause Hypothesis": FILLED_FORM["section-6"],
    "7. Regression Test Slot": FILLED_FORM["section-7"],
}


def pulls(user: ForgeUser, repo: str) -> list[dict[str, Any]]:
    size = "limit" if user.flavor == "gitea" else "per_page"
    found = user.call("GET", f"/repos/{repo}/pulls?state=all&{size}=50")
    return [p for p in found if p["head"]["ref"] == BRANCH]


def read(user: ForgeUser, repo: str, path: str, ref: str = BRANCH) -> str | None:
    response = user.client.get(f"/repos/{repo}/contents/{path}", params={"ref": ref})
    if response.status_code == 404:
        return None
    return base64.b64decode(response.json()["content"]).decode()


def replies(steward: Steward, repo: str, number: int) -> list[str]:
    return [c["body"] for c in steward.bot_comments(repo, number) if "steward:reply:" in c["body"]]


def check_config(text: str, tmp: Path, name: str) -> subprocess.CompletedProcess[str]:
    path = tmp / name
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "check-config", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_init_proposes_the_configuration_once_and_a_non_admin_is_refused(
    steward: Steward, tmp_path: Path
) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    crash = m.open_issue(repo, "App crashes on start", "It crashes when I open it.", labels=["bug"])
    here = m.open_issue(repo, "Set Steward up")
    steward.triager.comment(repo, here, "/steward init")
    steward.settle()
    assert pulls(m, repo) == []
    [refusal] = replies(steward, repo, here)
    assert "@triager" in refusal and "`/steward init` can only be run by" in refusal and "admin" in refusal

    m.comment(repo, here, "/steward init")
    steward.settle()
    [pull] = pulls(m, repo)
    assert (pull["title"], pull["state"], pull["base"]["ref"]) == ("Configure Steward", "open", "main")
    assert pull["user"]["login"] == "steward-bot"
    body = pull["body"]
    assert body.startswith("<!-- steward:onboarding -->\n**Next step:**")
    assert "RA9 bug refinement** — on" in body and "| `refinement:approved` | `#0e8a16` |" in body
    assert "| `/steward init [--labels]` |" in body
    # The preview: the verdict Steward would post on the most recent open bug report.
    # Issue 34 §4: what the real verdict would ask the reporter, and nothing of the maintainers' part.
    assert f"On #{crash} (App crashes on start)" in body and "I would ask its author " in body
    assert "Which version were you on" in body and "level-2 heading" not in body
    assert f"I opened #{pull['number']} (Configure Steward)" in replies(steward, repo, here)[-1]
    # One screen (issue 37 §3): the decision, what Steward will do and the preview; every table folded.
    shown = body.split("<details>", 1)[0]
    assert "On #" in shown and "## What Steward will do" in shown and "|" not in shown
    assert len(shown.strip().splitlines()) <= 35, shown
    assert "<summary>The labels Steward will create when this is merged (" in body
    assert "`preset: refine-and-bugfix`: change it to `refine-bugs`" in shown  # the choice, said once

    where = ".gitea" if steward.forge == "gitea" else ".github"
    config = read(m, repo, f"{where}/steward.yml")
    assert config is not None and "\npreset: refine-and-bugfix\n" in config  # the light preset (issue 37 §4)
    assert "# bug_refinement:\n#   # Whether Steward runs RA9 bug refinement" in config
    checked = check_config(config, tmp_path, "steward.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip().endswith(": valid")
    bug_template = "bug_report.md" if steward.forge == "gitea" else "bug_report.yml"
    assert read(m, repo, f"{where}/ISSUE_TEMPLATE/{bug_template}") is not None
    assert read(m, repo, f"{where}/ISSUE_TEMPLATE/backlog_item.md") is not None
    other = ".github" if steward.forge == "gitea" else ".gitea"
    assert read(m, repo, f"{other}/steward.yml") is None
    assert read(m, repo, f"{where}/steward.yml", ref="main") is None, "nothing changes before the merge"

    # Asked again while it is open: no second pull request, a reply that points at it.
    m.comment(repo, here, "/steward init")
    steward.settle()
    assert len(pulls(m, repo)) == 1
    assert f"already open: #{pull['number']}" in replies(steward, repo, here)[-1]


def test_closing_it_is_not_now_and_merging_it_creates_the_labels(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    here = m.open_issue(repo, "Set Steward up")
    m.comment(repo, here, "/steward init")
    steward.settle()
    [first] = pulls(m, repo)
    m.edit_issue(repo, first["number"], state="closed")
    steward.settle()
    [closing] = [c["body"] for c in steward.bot_comments(repo, first["number"])]
    assert "@maintainer: understood — not now" in closing and "`/steward init`" in closing
    assert len(pulls(m, repo)) == 1

    # Only `/steward init` opens it again.
    m.comment(repo, here, "/steward init")
    steward.settle()
    opened = [p for p in pulls(m, repo) if p["state"] == "open"]
    assert len(opened) == 1 and opened[0]["number"] != first["number"]
    before = {label["name"] for label in m.call("GET", f"/repos/{repo}/labels")}
    assert "refinement:approved" not in before
    m.merge_pull(repo, opened[0]["number"])
    steward.settle()
    labels = {label["name"]: label for label in m.call("GET", f"/repos/{repo}/labels")}
    assert labels["refinement:approved"]["color"].lstrip("#") == "0e8a16"
    wanted = {"bug", "refine", "refinement:pending", "refinement:needs-info", "refinement:needs-triage"}
    assert wanted <= set(labels)
    # The proposed preset (refine-and-bugfix) leaves the milestone gate off: no labels of it.
    assert "milestone-dashboard" not in labels and "fieldtest" not in labels

    # Configured now: `/steward init` proposes nothing more.
    m.comment(repo, here, "/steward init")
    steward.settle()
    assert "already has Steward's configuration" in replies(steward, repo, here)[-1]
    assert len([p for p in pulls(m, repo) if p["state"] == "open"]) == 0


def test_an_issue_opened_from_the_bug_template_is_approved_once_its_parts_are_in(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    here = m.open_issue(repo, "Set Steward up")
    m.comment(repo, here, "/steward init")
    steward.settle()
    [pull] = pulls(m, repo)
    m.merge_pull(repo, pull["number"])
    steward.settle()
    if steward.forge == "gitea":
        template = read(m, repo, ".gitea/ISSUE_TEMPLATE/bug_report.md", ref="main")
        assert template is not None
        empty, labels = markdown_template(template)
        blank = empty.replace("1. \n2. ", "").replace("Observed: \nExpected: ", "")
        filled = fill_markdown(blank, FILLED_MARKDOWN)
    else:
        form = read(m, repo, ".github/ISSUE_TEMPLATE/bug_report.yml", ref="main")
        assert form is not None
        empty, labels = render_form(form, {})
        filled, _ = render_form(form, FILLED_FORM)
    number = m.open_issue(repo, "[Bug]: the cart loses items", empty, labels=labels)
    steward.settle()
    assert "refinement:needs-info" in m.labels_of(repo, number)
    m.edit_issue(repo, number, body=filled)
    steward.settle()
    # Issue 34 §4: the template asks the reporter only for their part; the maintainers add theirs below.
    assert "refinement:needs-triage" in m.labels_of(repo, number)
    status = "" if steward.forge == "gitea" else "**Status:** Pending\n\n"
    theirs = [
        ("## 2. Persona & Usage Scenario", "section-2"),
        ("## 3. Value Delivery", "section-3"),
        ("## 4. Acceptance Criteria", "section-4"),
        ("## 6. Root-Cause Hypothesis", "section-6"),
        ("## 7. Regression Test Slot", "section-7"),
        ("## 8. Dependencies", "section-8"),
        ("## 9. Decision History", "section-9"),
    ]
    added = status + "\n\n".join(f"{heading}\n{FILLED_FORM[key]}" for heading, key in theirs)
    m.edit_issue(repo, number, body=f"{filled}\n\n{added}\n")
    steward.settle()
    assert "refinement:approved" in m.labels_of(repo, number)


def test_a_repository_with_a_configuration_file_gets_no_pull_request(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    where = ".gitea" if steward.forge == "gitea" else ".github"
    m.put_file(repo, f"{where}/steward.yml", "milestones:\n  enabled: false\n")
    here = m.open_issue(repo, "Set Steward up")
    m.comment(repo, here, "/steward init")
    steward.settle()
    assert pulls(m, repo) == []
    assert f"already has Steward's configuration (`{where}/steward.yml`)" in replies(steward, repo, here)[-1]
    # --labels creates the labels of what the file switches on, and leaves existing ones alone.
    if steward.forge == "github":  # `bug` is one of the labels GitHub gives a new repository
        m.call("PATCH", f"/repos/{repo}/labels/bug", {"color": "123456"})
    else:
        m.call("POST", f"/repos/{repo}/labels", {"name": "bug", "color": "123456"})
    m.comment(repo, here, "/steward init --labels")
    steward.settle()
    labels = {label["name"]: label for label in m.call("GET", f"/repos/{repo}/labels")}
    assert labels["bug"]["color"].lstrip("#") == "123456"
    assert "refinement:pending" in labels and "milestone-dashboard" not in labels
    assert "existed already and were left as they are" in replies(steward, repo, here)[-1]


def test_a_bot_that_may_not_push_says_so_in_the_thread(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    here = m.open_issue(repo, "Set Steward up")
    steward.faults(
        {
            "method": "POST",
            "path": r"/(git/(blobs|trees|commits|refs)|contents)$",
            "status": 403,
            "body": {"message": "Resource not accessible by integration"},
            "login": "steward-bot",
            "times": 20,
        }
    )
    m.comment(repo, here, "/steward init")
    steward.settle()
    assert pulls(m, repo) == []
    [reply] = replies(steward, repo, here)
    assert "@maintainer: the forge refused to let `steward-bot` push the `steward/configure` branch" in reply
    need = "Administrator" if steward.forge == "gitea" else "write access"
    assert need in reply and "run the command again" in reply


def test_a_repository_whose_bugs_are_written_in_portuguese_gets_the_portuguese_templates(
    steward: Steward,
) -> None:
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    written = "## 1. Visão\nO carrinho perde itens.\n\n## 4. Critérios de Aceite\n"
    m.open_issue(repo, "Carrinho perde itens", written, ["bug"])
    here = m.open_issue(repo, "Configurar o Steward")
    m.comment(repo, here, "/steward init")
    steward.settle()
    [pull] = pulls(m, repo)
    assert ", in Portuguese, as this repository's issues are." in pull["body"]
    where = ".gitea" if steward.forge == "gitea" else ".github"
    name = "bug_report.md" if steward.forge == "gitea" else "bug_report.yml"
    bug = read(m, repo, f"{where}/ISSUE_TEMPLATE/{name}")
    backlog = read(m, repo, f"{where}/ISSUE_TEMPLATE/backlog_item.md")
    assert bug is not None and "1. Visão" in bug and "5.1 Ambiente" in bug
    assert backlog is not None and "## Por que" in backlog


def test_init_after_a_merged_proposal_was_undone_says_how_to_start_over(steward: Steward) -> None:
    """The branch of a merged proposal adds nothing to the default branch, and both forges refuse a pull
    request without changes (GitHub 422 "No commits between …", Gitea 422 "There are no changes …")."""
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    here = m.open_issue(repo, "Set Steward up")
    m.comment(repo, here, "/steward init")
    steward.settle()
    [pull] = pulls(m, repo)
    m.merge_pull(repo, pull["number"])
    steward.settle()
    where = ".gitea" if steward.forge == "gitea" else ".github"
    sha = m.file_sha(repo, f"{where}/steward.yml")
    if steward.forge == "gitea":
        change = {"operation": "delete", "path": f"{where}/steward.yml", "sha": sha}
        m.call("POST", f"/repos/{repo}/contents", {"message": "undo", "files": [change]})
    else:
        m.call("DELETE", f"/repos/{repo}/contents/{where}/steward.yml", {"message": "undo", "sha": sha})
    steward.settle()
    m.comment(repo, here, "/steward init")
    steward.settle()
    assert len(pulls(m, repo)) == 1
    reply = replies(steward, repo, here)[-1]
    assert "Delete the branch, then run `/steward init` again." in reply


def test_the_pull_request_never_overwrites_a_template_the_repository_has(steward: Steward) -> None:
    """Issue 34 §4: the onboarding pull request replaced an existing bug template while its description
    listed it under "adds". Now the repository's template is kept byte for byte, Steward's is added beside
    it under a name of its own, and the description says so (fails before: the file was overwritten)."""
    repo = steward.new_repo(configured=False)
    m = steward.maintainer
    where = ".gitea" if steward.forge == "gitea" else ".github"
    name = "bug_report.md" if steward.forge == "gitea" else "bug_report.yml"
    theirs = f"{where}/ISSUE_TEMPLATE/{name}"
    ours = theirs.rpartition(".")[0] + "-steward." + theirs.rpartition(".")[2]
    original = (
        "name: Bug\ndescription: Our own form\nbody:\n  - type: textarea\n    attributes:\n"
        "      label: What broke?\n"
    )
    m.put_file(repo, theirs, original)
    here = m.open_issue(repo, "Set up")
    m.comment(repo, here, "/steward init")
    steward.settle()
    [pull] = pulls(m, repo)
    assert read(m, repo, theirs) == original, "the repository's template is kept"
    assert read(m, repo, ours) is not None, "Steward's is added beside it"
    body = pull["body"]
    assert f"`{ours}`" in body and "Kept as they are" in body and f"`{theirs}`" in body


def test_the_preview_asks_what_the_verdict_then_asks(steward: Steward) -> None:
    """Issue 34 §4 and §5: the onboarding preview showed every blocker (the maintainers' included) as asks of
    the author — ten where the real verdict asked two. Now its questions are the real verdict's, word for
    word."""
    m = steward.maintainer
    repo = steward.new_repo(configured=False)
    crash = steward.outsider.open_issue(repo, "App crashes on start", "It crashes when I open it.")
    m.add_labels(repo, crash, ["bug"])
    here = m.open_issue(repo, "Set Steward up")
    m.comment(repo, here, "/steward init")
    steward.settle()
    [pull] = pulls(m, repo)
    previewed = [
        line for line in pull["body"].splitlines() if line[:3] in ("1. ", "2. ", "3. ", "4. ", "5. ")
    ]
    assert previewed and not any("MISSING_SECTION" in line or "heading" in line for line in previewed)
    m.merge_pull(repo, pull["number"])
    steward.settle()
    m.add_labels(repo, crash, ["refine"])
    steward.settle()
    [verdict] = [c for c in steward.bot_comments(repo, crash) if "steward:ra9-verdict:" in c["body"]]
    asked = [
        line
        for line in verdict["body"].split("<details>")[0].splitlines()
        if line[:3] in ("1. ", "2. ", "3. ", "4. ", "5. ")
    ]
    assert asked == previewed
