"""The Forge port's pins as one contract both adapters keep (each test runs against GitHubForge and
GiteaForge over HTTP to the sandbox): ``pin_issue`` is True when the issue is pinned afterwards and writes
nothing when it already was, False — never an exception — when the repository's pins are full or the forge
has none, and raises as usual otherwise; ``unpin_issue`` frees the place a closed issue keeps.

GitHub wants write access to pin (the bot is a Write collaborator here), Gitea repository admin.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.forge import Forge, NotFound, PermissionDenied, RepoRef
from tests.contract.conftest import Site


def _repo(site: Site, issues: int) -> tuple[RepoRef, list[int]]:
    """A repository where the bot may pin (GitHub: write, Gitea: admin), with `issues` open issues."""
    repo = site.new_repo()
    if site.kind == "gitea":
        site.add_collaborator(repo, "steward-bot", "admin")
    return repo, [site.open_issue(repo, f"issue {i}") for i in range(issues)]


def _pin_writes(site: Site, repo: RepoRef) -> int:
    """The bot's writes to pins: Gitea's POST and DELETE …/pin, GitHub's GraphQL mutations (the sandbox's
    request log names each GraphQL operation)."""
    log = [r for r in site.admin.get("/_sandbox/requests").json() if r["login"] == "steward-bot"]
    if site.kind == "gitea":
        prefix = site.api_path(repo, "/issues/")
        return sum(
            1
            for r in log
            if r["method"] in ("POST", "DELETE")
            and r["path"].startswith(prefix)
            and r["path"].endswith("/pin")
        )
    return sum(1 for r in log if r["path"] == "/graphql" and r.get("graphql", "").startswith("mutation"))


@pytest.fixture
def restore_limits(site: Site) -> Iterator[None]:
    yield
    site.limits(gitea_max_pinned=3)


async def test_an_issue_is_pinned_and_pinning_it_again_writes_nothing(forge: Forge, site: Site) -> None:
    repo, [number] = _repo(site, 1)
    assert await forge.pin_issue(repo, number) is True
    assert site.pinned(repo) == [number]
    assert _pin_writes(site, repo) == 1
    site.admin.delete("/_sandbox/requests")
    assert await forge.pin_issue(repo, number) is True
    assert site.pinned(repo) == [number]
    assert _pin_writes(site, repo) == 0, "read first: nothing is written"


async def test_past_the_limit_the_pin_is_refused_with_false_not_an_exception(
    forge: Forge, site: Site
) -> None:
    """Three pins fill a repository on both forges (GitHub always; Gitea's MAX_PINNED default). A pinned
    issue of a full repository is still True: GitHub checks its limit before "pinned already", so the
    adapter must read first."""
    repo, numbers = _repo(site, 4)
    for number in numbers[:3]:
        site.pin(repo, number)
    assert await forge.pin_issue(repo, numbers[3]) is False
    assert await forge.pin_issue(repo, numbers[3]) is False, "and again, quietly"
    assert await forge.pin_issue(repo, numbers[0]) is True
    assert site.pinned(repo) == numbers[:3]


async def test_a_closed_pinned_issue_keeps_its_place_until_it_is_unpinned(forge: Forge, site: Site) -> None:
    repo, numbers = _repo(site, 4)
    for number in numbers[:3]:
        site.pin(repo, number)
    site.close_issue(repo, numbers[0])
    assert await forge.pin_issue(repo, numbers[3]) is False, "closing frees no place"
    await forge.unpin_issue(repo, numbers[0])
    assert site.pinned(repo) == numbers[1:3]
    site.admin.delete("/_sandbox/requests")
    await forge.unpin_issue(repo, numbers[0])
    assert _pin_writes(site, repo) == 0, "not pinned: nothing written"
    assert await forge.pin_issue(repo, numbers[3]) is True
    assert site.pinned(repo) == [*numbers[1:3], numbers[3]]


async def test_without_the_permission_to_pin_the_forge_refuses(forge: Forge, site: Site) -> None:
    """GitHub: write access (a triage collaborator is refused FORBIDDEN); Gitea: repository admin (a Write
    collaborator is refused 403)."""
    repo, [number] = _repo(site, 1)
    site.add_collaborator(repo, "steward-bot", "triage")
    with pytest.raises(PermissionDenied):
        await forge.pin_issue(repo, number)
    assert site.pinned(repo) == []


async def test_an_issue_that_does_not_exist_is_not_found(forge: Forge, site: Site) -> None:
    repo, _ = _repo(site, 1)
    with pytest.raises(NotFound):
        await forge.pin_issue(repo, 99)
    with pytest.raises(NotFound):
        await forge.pin_issue(RepoRef("owner", "no-such-repo"), 1)


async def test_a_pin_applied_but_answered_502_or_dropped_is_found_not_failed(
    forge: Forge, site: Site
) -> None:
    """FORGE-FACTS "Writes that fail": the pin was made although the forge answered 502 (or dropped the
    connection); pinning is resendable, and the adapter looks again before it decides."""
    repo, numbers = _repo(site, 2)
    pin_path = site.api_path(repo, r"/issues/\d+/pin$") if site.kind == "gitea" else "^/graphql$"
    # GitHub reads (a POST /graphql too) before it writes: let the read through.
    skip = 0 if site.kind == "gitea" else 1
    site.admin.delete("/_sandbox/requests")
    site.fault(method="POST", path=pin_path, status=502, apply=True, skip=skip)
    assert await forge.pin_issue(repo, numbers[0]) is True
    site.fault(method="POST", path=pin_path, drop=True, skip=skip)
    assert await forge.pin_issue(repo, numbers[1]) is True
    assert site.pinned(repo) == numbers
    faulted = [r for r in site.admin.get("/_sandbox/requests").json() if r.get("fault")]
    assert [r["status"] for r in faulted] == [502, "dropped"], "each pin was applied, then went unconfirmed"
    assert all(r["applied"] < 300 for r in faulted)


async def test_a_forge_without_pins_answers_false(forge: Forge, site: Site, restore_limits: None) -> None:
    """Gitea before 1.21 has no pin routes (its /issues/pinned reads as the issue "pinned": 404), and a Gitea
    with MAX_PINNED = 0 allows none; a GitHub without the pinIssue mutation answers undefinedField."""
    repo, [number] = _repo(site, 1)
    if site.kind == "gitea":
        site.fault(method="GET", path=site.api_path(repo, "/issues/pinned$"), status=404)
        assert await forge.pin_issue(repo, number) is False
        site.limits(gitea_max_pinned=0)
        assert await forge.pin_issue(repo, number) is False
    else:
        undefined = {
            "errors": [
                {
                    "path": ["query", "repository", "issue", "isPinned"],
                    "extensions": {"code": "undefinedField", "typeName": "Issue", "fieldName": "isPinned"},
                    "locations": [{"line": 2, "column": 62}],
                    "message": "Field 'isPinned' doesn't exist on type 'Issue'",
                }
            ]
        }
        site.fault(method="POST", path="^/graphql$", status=200, body=undefined)
        assert await forge.pin_issue(repo, number) is False
    assert site.pinned(repo) == []
    await forge.unpin_issue(repo, number)


async def test_pins_filled_between_the_look_and_the_write_answer_false(forge: Forge, site: Site) -> None:
    """Another hand pinned the last place after the adapter looked: GitHub refuses the mutation with its
    limit error, Gitea answers 500 (its ErrIssueMaxPinReached) and then says no new pin is allowed. The
    adapter looks again and answers False, as when the pins were full from the start."""
    repo, [number] = _repo(site, 1)
    if site.kind == "gitea":
        site.fault(method="POST", path=site.api_path(repo, r"/issues/\d+/pin$"), status=500, times=5)
        full = {"issues": False, "pull_requests": True}
        site.fault(method="GET", path=site.api_path(repo, "/new_pin_allowed$"), status=200, body=full, skip=1)
    else:
        refused = {
            "data": {"pinIssue": None},
            "errors": [
                {
                    "type": "UNPROCESSABLE",
                    "path": ["pinIssue"],
                    "locations": [{"line": 1, "column": 24}],
                    "message": "Maximum 3 pinned issues per repository",
                }
            ],
        }
        site.fault(method="POST", path="^/graphql$", status=200, body=refused, skip=1)
    assert await forge.pin_issue(repo, number) is False
    assert site.pinned(repo) == []
