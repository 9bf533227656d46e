"""Reviewers for bugfix pull requests (issue 39), on both forges: with `bugfix.request_reviewers` on, once
the fix is pushed and the pull request is ready, Steward asks an independent code owner of the changed files
(read with the forge's own CODEOWNERS rules) — never whoever ran `/bugfix` — names the paths nobody eligible
owns, and the ledger says when someone asked to review is excluded by the independence rule."""

from __future__ import annotations

import uuid

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


# --- sensitive paths, files that change, teams ---------------------------------------------------------

# `src/cart/` belongs to @triager, `src/pay/` to @outsider, each forge in its own CODEOWNERS syntax.
SPLIT_OWNERS = {
    "github": (".github/CODEOWNERS", "src/cart/ @triager\nsrc/pay/ @outsider\n"),
    "gitea": ("CODEOWNERS", "src/cart/.* @triager\nsrc/pay/.* @outsider\n"),
}
GROUP_LINE = "Asked @{} to review for the `security` group (`bugfix.sensitive_paths`)."


def requested(steward: Steward, repo: str, pr: int) -> list[str]:
    """Whom the pull request asks for a review, as the forge shows it."""
    return sorted(u["login"] for u in pull(steward, repo, pr)["requested_reviewers"])


def reviewers_note(steward: Steward, repo: str, pr: int) -> str:
    [note] = [
        c["body"] for c in steward.bot_comments(repo, pr) if "<!-- steward:bugfix-reviewers:" in c["body"]
    ]
    return str(note)


def configured(steward: Steward, config: str, owners: tuple[str, str] | None = None) -> str:
    """A repository with CI, Steward's configuration ``config``, CODEOWNERS ``owners`` (path, text), and
    @outsider a collaborator (GitHub asks only collaborators to review)."""
    repo = repo_with_ci(steward)
    steward.maintainer.put_file(repo, TEST_CONFIG_PATHS[steward.forge], config)
    if owners is not None:
        steward.maintainer.put_file(repo, *owners)
    steward.maintainer.add_collaborator(repo, "outsider", "push")
    return repo


def fix_ready(steward: Steward, repo: str) -> tuple[int, int, str]:
    """`/bugfix` on a bug in ``repo``, the draft marked ready with only the test in its diff, then the fix
    pushed to ``src/cart/total.py``: (bug, pull request, branch), settled."""
    bug, pr, branch, _ = opened(steward, repo)
    ready(steward, repo, pr)
    steward.settle()
    push(steward, repo, branch, "src/cart/total.py", FIX)
    steward.settle()
    return bug, pr, branch


def organisation(steward: Steward, teams: dict[str, list[str]], *, bot_member: bool = True) -> str:
    """A new organisation with ``teams``; Steward's account is a member (both forges show a team's members
    only to the organisation's members) unless ``bot_member`` is False."""
    org = f"org-{uuid.uuid4().hex[:8]}"
    members = {"steward-bot": "member"} if bot_member else {}
    body = {"login": org, "members": members, "teams": teams}
    steward.maintainer.call("POST", f"{steward.sandbox.url}/_sandbox/orgs", body)
    return org


SENSITIVE = "  sensitive_paths:\n    security: {{paths: ['src/cart/**'], reviewers: [{}]}}\n"


def test_a_fix_in_a_sensitive_path_also_asks_one_of_the_group_s_reviewers(steward: Steward) -> None:
    """Besides the independent code owner (@triager owns `src/cart/`), a fix touching the `security` group's
    paths asks one of the group's reviewers (@outsider); the note names each and why."""
    config = "bugfix:\n  request_reviewers: true\n" + SENSITIVE.format("outsider")
    repo = configured(steward, config, SPLIT_OWNERS[steward.forge])
    bug, pr, branch, _ = opened(steward, repo)
    ready(steward, repo, pr)  # only the test in the diff: nobody owns it, nobody is asked
    steward.settle()
    assert requested(steward, repo, pr) == []
    push(steward, repo, branch, "src/cart/total.py", FIX)
    steward.settle()
    assert requested(steward, repo, pr) == ["outsider", "triager"]
    note = reviewers_note(steward, repo, pr)
    assert f"Asked @triager to review the fix of #{bug} (code owner of the changed files)." in note
    assert GROUP_LINE.format("outsider") in note


def test_with_no_code_owner_or_pool_the_group_s_reviewer_is_asked_alone(steward: Steward) -> None:
    """No CODEOWNERS and no `bugfix.reviewer_pool`: one of the `security` group's reviewers is asked instead
    — @triager, as @maintainer, the group's other reviewer, ran `/bugfix` — and the note says only that (not
    that nobody could be asked)."""
    config = "bugfix:\n  request_reviewers: true\n" + SENSITIVE.format("maintainer, triager")
    repo = configured(steward, config)
    _, pr, _ = fix_ready(steward, repo)
    assert requested(steward, repo, pr) == ["triager"]
    assert reviewers_note(steward, repo, pr).strip().endswith(GROUP_LINE.format("triager"))
    assert "Nobody could be asked" not in reviewers_note(steward, repo, pr)


def test_when_the_fix_s_files_change_their_owners_are_asked_and_nobody_twice(steward: Steward) -> None:
    """`bugfix.reviewers: 2`. The fix first touches `src/cart/` only: its one owner, @triager, is asked. A
    later push touches `src/pay/` too: Steward looks again and asks that path's owner, @outsider — and not
    @triager, who is asked already (the note of that push names @outsider alone)."""
    config = "bugfix:\n  request_reviewers: true\n  reviewers: 2\n"
    repo = configured(steward, config, SPLIT_OWNERS[steward.forge])
    bug, pr, branch = fix_ready(steward, repo)
    assert requested(steward, repo, pr) == ["triager"]
    assert f"Asked @triager to review the fix of #{bug} (code owner of the changed files)." in (
        reviewers_note(steward, repo, pr)
    )
    push(steward, repo, branch, "src/pay/rate.py", "RATE = 0.765\n")
    steward.settle()
    assert requested(steward, repo, pr) == ["outsider", "triager"]
    note = reviewers_note(steward, repo, pr)
    assert f"Asked @outsider to review the fix of #{bug} (code owner of the changed files)." in note
    assert "@triager" not in note


def test_a_team_stands_for_its_members_as_code_owner_and_as_a_group_s_reviewers(steward: Steward) -> None:
    """`@org/cart` owns `src/` and `@org/security` reviews `src/cart/**`: Steward reads each team's members
    from the forge and asks them by login — @triager for the owners (@maintainer, also in the team, ran
    `/bugfix`), @outsider for the group."""
    org = organisation(steward, {"cart": ["maintainer", "triager"], "security": ["outsider"]})
    owners = {
        "github": (".github/CODEOWNERS", f"src/ @{org}/cart\n"),
        "gitea": ("CODEOWNERS", f"src/.* @{org}/cart\n"),
    }
    config = "bugfix:\n  request_reviewers: true\n" + SENSITIVE.format(f"'@{org}/security'")
    repo = configured(steward, config, owners[steward.forge])
    bug, pr, _ = fix_ready(steward, repo)
    assert requested(steward, repo, pr) == ["outsider", "triager"]
    note = reviewers_note(steward, repo, pr)
    assert f"Asked @triager to review the fix of #{bug} (code owner of the changed files)." in note
    assert GROUP_LINE.format("outsider") in note


def team_owners(org: str) -> dict[str, tuple[str, str]]:
    return {
        "github": (".github/CODEOWNERS", f"src/ @{org}/cart\n"),
        "gitea": ("CODEOWNERS", f"src/.* @{org}/cart\n"),
    }


POOL = "bugfix:\n  request_reviewers: true\n  reviewer_pool: [outsider]\n"


def test_a_team_steward_may_not_see_is_named_and_the_pool_asked_instead(steward: Steward) -> None:
    """Steward is outside the organisation, so the forge will not show `@org/cart`'s members (GitHub 404,
    Gitea 403): nobody of the team is asked, the note names the team and why, and the pool is asked. Before,
    the note said only that no code owner who may review owns `src/cart/total.py`."""
    org = organisation(steward, {"cart": ["triager"]}, bot_member=False)
    repo = configured(steward, POOL, team_owners(org)[steward.forge])
    bug, pr, _ = fix_ready(steward, repo)
    assert requested(steward, repo, pr) == ["outsider"]
    note = reviewers_note(steward, repo, pr)
    assert f"Asked @outsider to review the fix of #{bug} (from `bugfix.reviewer_pool`)." in note
    assert f"The members of `{org}/cart` could not be read (the team does not exist" in note


def test_a_team_the_forge_cannot_show_for_a_moment_is_read_again_not_replaced_by_the_pool(
    steward: Steward,
) -> None:
    """The forge answers 502 to every read of `@org/cart`'s members for one whole call (each of its retries):
    the job runs again and asks the team's member, @triager. Before, the error counted the team as nobody,
    the pool's @outsider was asked in its place, and these files were never looked at again."""
    org = organisation(steward, {"cart": ["maintainer", "triager"]})
    repo = configured(steward, POOL, team_owners(org)[steward.forge])
    bug, pr, branch, _ = opened(steward, repo)
    ready(steward, repo, pr)
    steward.settle()
    steward.faults(
        {
            "path": f"/orgs/{org}/teams/",
            "status": 502,
            "times": steward.settings.retry_attempts + 1,
            "login": "steward-bot",
        }
    )
    push(steward, repo, branch, "src/cart/total.py", FIX)
    steward.settle()
    assert requested(steward, repo, pr) == ["triager"]
    note = reviewers_note(steward, repo, pr)
    assert f"Asked @triager to review the fix of #{bug} (code owner of the changed files)." in note
    assert "could not be read" not in note
