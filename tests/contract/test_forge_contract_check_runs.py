"""``Forge.set_check_run`` with a token, on both adapters (each test runs against GitHubForge and GiteaForge
over HTTP to the sandbox): ``NotSupported`` without asking the forge — only a GitHub App may create a check
run (GitHub answers any other token 403 "You must authenticate via a GitHub App.", FORGE-FACTS) and Gitea
has none. As an App, Steward's check runs are pinned end to end (tests/e2e/test_own_check_run_e2e.py)."""

from __future__ import annotations

import pytest

from bot.forge import Forge, NotSupported
from bot.forge.own_results import set_own_result
from tests.contract.conftest import Site


async def test_a_token_posts_no_check_run_and_the_status_is_steward_s_result(
    forge: Forge, site: Site
) -> None:
    repo = site.new_repo()
    sha = site.head(repo, "main")
    assert sha is not None
    with pytest.raises(NotSupported):
        await forge.set_check_run(repo, sha, "steward/x", "failure", "red")
    assert site.requests_to("POST", site.api_path(repo, "/check-runs")) == []
    status = await set_own_result(forge, repo, sha, "steward/x", "failure", "red")
    assert (status.context, status.state) == ("steward/x", "failure")
    assert [s["context"] for s in site.statuses(repo, sha)] == ["steward/x"]
