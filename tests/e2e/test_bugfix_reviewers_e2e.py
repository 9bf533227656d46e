"""Reviewers for bugfix pull requests (issue 39), on both forges: with `bugfix.request_reviewers` on, once
the fix is pushed and the pull request is ready, Steward asks an independent code owner of the changed files
(read with the forge's own CODEOWNERS rules) — never whoever ran `/bugfix` — names the paths nobody eligible
owns, and the ledger says when someone asked to review is excluded by the independence rule."""

from __future__ import annotations

from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS
from tests.e2e.test_bugfix_e2e import FIX, opened, pull, push, repo_with_ci

CODEOWNERS = {
    # GitHub: gitignore-style, the last match wins (`src/` covers everything under src/).
    "github": (".github/CODEOWNERS", "* @nobody-eligible\nsrc/ @maintainer @triager\ntests/\n"),
    # Gitea: Go regular expressions against the whole path; every matching line counts.
    "gitea": ("CODEOWNERS", "src/.* @maintainer @triager\n"),
}


READY = (
    "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { clientMutationId } }"
)


def ready(steward: Steward, repo: str, pr: int) -> None:
    """The maintainer marks the draft ready: GitHub through GraphQL (its REST API cannot), Gitea by taking
    the WIP prefix off the title."""
    found = pull(steward, repo, pr)
    if steward.forge == "github":
        answer = steward.maintainer.call(
            "POST", "/graphql", {"query": READY, "variables": {"id": found["node_id"]}}
        )
        assert "errors" not in answer, answer
    else:
        steward.maintainer.call(
            "PATCH", f"/repos/{repo}/pulls/{pr}", {"title": found["title"].removeprefix("WIP: ")}
        )
    assert pull(steward, repo, pr)["draft"] is False


def test_an_independent_code_owner_is_asked_once_the_fix_is_pushed(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    steward.maintainer.put_file(
        repo, TEST_CONFIG_PATHS[steward.forge], "bugfix:\n  request_reviewers: true\n"
    )
    path, text = CODEOWNERS[steward.forge]
    steward.maintainer.put_file(repo, path, text)
    if (
        steward.forge == "github"
    ):  # the pull request opens ready ("[WIP]" in its title) rather than as a draft
        steward.maintainer.client.patch(
            f"{steward.sandbox.url}/_sandbox/repos/{repo}", json={"drafts": False}
        )
    bug, pr, branch, _ = opened(steward, repo)
    assert pull(steward, repo, pr)["requested_reviewers"] == []  # only the test so far: nobody asked
    if steward.forge == "gitea":  # ready: the WIP prefix comes off
        title = pull(steward, repo, pr)["title"].removeprefix("WIP: ")
        steward.maintainer.call("PATCH", f"/repos/{repo}/pulls/{pr}", {"title": title})
    # Someone asks the person who ran /bugfix to review: the ledger says their review will not count.
    steward.triager.call(
        "POST", f"/repos/{repo}/pulls/{pr}/requested_reviewers", {"reviewers": ["maintainer"]}
    )
    push(steward, repo, branch, "src/cart/total.py", FIX)
    steward.settle()
    asked = [u["login"] for u in pull(steward, repo, pr)["requested_reviewers"]]
    assert asked == ["maintainer", "triager"]
    [note] = [
        c["body"] for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-reviewers:" in c["body"]
    ]
    assert f"Asked @triager to review the fix of #{bug} (code owner of the changed files)." in note
    assert "No code owner who may review this fix owns `tests/test_currency_switch.py`" in note
    [ledger] = [
        c["body"] for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-ledger:" in c["body"]
    ]
    assert (
        "@maintainer is asked to review this pull request, but ran `/bugfix`: their review will not count."
        in (ledger)
    )
    # The same files again: nobody is asked twice.
    steward.maintainer.comment(repo, pr, "/steward refresh")
    steward.settle()
    assert [u["login"] for u in pull(steward, repo, pr)["requested_reviewers"]] == ["maintainer", "triager"]


def test_without_code_owners_the_pool_is_asked_leaving_out_whoever_ran_bugfix(steward: Steward) -> None:
    repo = repo_with_ci(steward)
    config = "bugfix:\n  request_reviewers: true\n  reviewer_pool: [maintainer, triager]\n"
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], config)
    bug, pr, branch, _ = opened(steward, repo)
    # The fix first, while still a draft: nobody is asked until the pull request is marked ready.
    push(steward, repo, branch, "src/cart/total.py", FIX)
    steward.settle()
    assert pull(steward, repo, pr)["requested_reviewers"] == []
    ready(steward, repo, pr)
    steward.settle()
    assert [u["login"] for u in pull(steward, repo, pr)["requested_reviewers"]] == ["triager"]
    [note] = [
        c["body"] for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-reviewers:" in c["body"]
    ]
    assert note.strip().endswith(f"Asked @triager to review the fix of #{bug} (from `bugfix.reviewer_pool`).")


def test_when_the_forge_itself_asks_an_excluded_code_owner_the_ledger_says_it_will_not_count(
    steward: Steward,
) -> None:
    """Marked ready after the fix, the forge requests every code owner of the changed files itself — here
    @maintainer too, who ran `/bugfix`: the ledger says that review will not count, and Steward asks nobody
    more (@triager, an independent owner, is asked already)."""
    repo = repo_with_ci(steward)
    steward.maintainer.put_file(
        repo, TEST_CONFIG_PATHS[steward.forge], "bugfix:\n  request_reviewers: true\n"
    )
    path, text = CODEOWNERS[steward.forge]
    steward.maintainer.put_file(repo, path, text)
    _, pr, branch, _ = opened(steward, repo)
    push(steward, repo, branch, "src/cart/total.py", FIX)
    steward.settle()
    ready(steward, repo, pr)
    steward.settle()
    assert [u["login"] for u in pull(steward, repo, pr)["requested_reviewers"]] == ["maintainer", "triager"]
    [ledger] = [
        c["body"] for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-ledger:" in c["body"]
    ]
    assert (
        "@maintainer is asked to review this pull request, but ran `/bugfix`: their review will not count."
        in (ledger)
    )
    notes = [
        c["body"] for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-reviewers:" in c["body"]
    ]
    assert not any("Asked @" in note for note in notes)
