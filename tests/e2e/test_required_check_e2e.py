"""What Steward says about the default branch for regression-first bugfix branches, on both forges:

- the onboarding pull request proposes `bugfix.required_contexts` from the CI contexts that reported on the
  default branch's head (commented out in the file, listed in the body), and says so when none did;
- the onboarding pull request and `/steward config` say whether `steward/regression-first` is a required
  check on the default branch: "required" when branch protection (or, on GitHub, a ruleset) lists it, "not
  required" with how to make it required, "could not read" when the forge refuses to show the branch — the
  answer each forge gives a bot without access (GitHub: an App without *Contents* read, 403 "Resource not
  accessible by integration"; Gitea: a token without `read:repository`, 403 "token does not have at least
  one of required scope(s)…", routers/api/v1/api.go tokenRequiresScopes).
"""

from __future__ import annotations

import base64
from typing import Any

from tests.e2e.conftest import Steward

CONTEXT = "steward/regression-first"
BRANCH = "steward/configure"


def play_ci(steward: Steward, repo: str, context: str, outcome: str, kind: str) -> None:
    key = "conclusion" if kind == "check_run" else "state"
    body = {"repo": repo, "ref": "main", "kind": kind, "context": context, key: outcome}
    steward.maintainer.client.post(f"{steward.sandbox.url}/_sandbox/ci", json=body).raise_for_status()


def protect(steward: Steward, repo: str, contexts: list[str], *, ruleset: bool = False) -> None:
    steward.maintainer.client.put(
        f"{steward.sandbox.url}/_sandbox/repos/{repo}/protections/main",
        json={"required_contexts": contexts, "ruleset": ruleset},
    ).raise_for_status()


def refuse_branch(steward: Steward, repo: str) -> None:
    """The forge's answer to a bot that may not read the repository's branches."""
    if steward.forge == "github":
        body: dict[str, Any] = {
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest/branches/branches#get-a-branch",
            "status": "403",
        }
    else:
        body = {
            "message": "token does not have at least one of required scope(s), required=[read:repository], "
            "token scope=write:issue",
            "url": f"{steward.sandbox.url}/api/swagger",
        }
    steward.faults(
        {
            "method": "GET",
            "path": rf"/repos/{repo}/branches/main$",
            "status": 403,
            "body": body,
            "times": 5,
            "login": "steward-bot",
        }
    )


def onboarding_pull(steward: Steward, repo: str) -> dict[str, Any]:
    size = "limit" if steward.forge == "gitea" else "per_page"
    found = steward.maintainer.call("GET", f"/repos/{repo}/pulls?state=all&{size}=50")
    [pull] = [p for p in found if p["head"]["ref"] == BRANCH]
    return pull


def config_file(steward: Steward, repo: str) -> str:
    where = ".gitea" if steward.forge == "gitea" else ".github"
    path = f"/repos/{repo}/contents/{where}/steward.yml"
    answer = steward.maintainer.client.get(path, params={"ref": BRANCH})
    answer.raise_for_status()
    return base64.b64decode(answer.json()["content"]).decode()


def init(steward: Steward, repo: str) -> None:
    number = steward.maintainer.open_issue(repo, "Set Steward up")
    steward.maintainer.comment(repo, number, "/steward init")
    steward.settle()


def config_reply(steward: Steward, repo: str) -> str:
    number = steward.maintainer.open_issue(repo, "What are the settings?")
    steward.outsider.comment(repo, number, "/steward config")
    steward.settle()
    return str(steward.bot_comments(repo, number)[-1]["body"])


def test_onboarding_proposes_the_contexts_seen_on_the_default_branch(steward: Steward) -> None:
    repo = steward.new_repo(configured=False)
    # What CI said on main's head: a status (both forges), and a check run where the forge has them.
    play_ci(steward, repo, "ci/lint", "failure", "status")
    if steward.forge == "github":
        play_ci(steward, repo, "tests (3.13)", "success", "check_run")
    else:
        play_ci(steward, repo, "tests (3.13)", "success", "status")
    play_ci(steward, repo, CONTEXT, "success", "status")  # Steward's own never counts
    protect(steward, repo, ["ci/lint", CONTEXT], ruleset=steward.forge == "github")
    init(steward, repo)

    body = onboarding_pull(steward, repo)["body"]
    assert "CI contexts seen on `main`'s head" in body
    assert "`ci/lint`, `tests (3.13)`." in body, body
    assert f"✅ `{CONTEXT}` is a **required** check on `main`" in body

    text = config_file(steward, repo)
    assert '#   required_contexts: ["ci/lint", "tests (3.13)"]\n' in text, "proposed, commented out"
    assert "Proposed from the CI contexts seen on `main`'s head" in text


def test_onboarding_without_ci_says_what_to_fill_in_and_that_the_check_is_not_required(
    steward: Steward,
) -> None:
    repo = steward.new_repo(configured=False)
    init(steward, repo)

    body = onboarding_pull(steward, repo)["body"]
    assert "No CI had reported on `main`'s head" in body
    assert "list there" in body and "the contexts that run the tests" in body
    assert f"⚠️ `{CONTEXT}` is **not** a required check on `main`" in body
    assert "To make it required:" in body and "/settings/" in body
    text = config_file(steward, repo)
    assert "#   required_contexts: []\n" in text
    assert "No CI had reported on `main`'s head" in text


def test_steward_config_says_whether_the_status_is_required(steward: Steward) -> None:
    repo = steward.new_repo()
    shown = config_reply(steward, repo)
    assert f"⚠️ `{CONTEXT}` is **not** a required check on `main`" in shown, shown
    settings = "Settings → Branches" if steward.forge == "gitea" else "Settings → Rules → Rulesets"
    assert settings in shown

    protect(steward, repo, ["ci/test"])
    assert "is **not** a required check on `main`" in config_reply(steward, repo)

    protect(steward, repo, ["ci/test", CONTEXT])
    shown = config_reply(steward, repo)
    assert f"✅ `{CONTEXT}` is a **required** check on `main`" in shown, shown
    assert f"`{CONTEXT}` is **not** a required" not in shown  # (`steward/hold` has a line of its own)


def test_steward_config_says_it_could_not_read_when_the_forge_refuses(steward: Steward) -> None:
    repo = steward.new_repo()
    protect(steward, repo, [CONTEXT])
    refuse_branch(steward, repo)
    shown = config_reply(steward, repo)
    assert f"❔ I **could not read** whether `{CONTEXT}` is a required check on `main`" in shown, shown
    refusal = "Resource not accessible by integration" if steward.forge == "github" else "read:repository"
    assert refusal in shown
    assert "**required** check" not in shown, "never claimed when it was not read"
    assert "To check:" in shown and "To make it required:" in shown
