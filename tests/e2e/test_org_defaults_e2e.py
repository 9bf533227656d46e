"""Organisation-wide defaults (issue 37 §4), on both forges: the Steward file of a repository of the same
owner (GitHub: the owner's `.github` repository by default; Gitea: the one STEWARD_GITEA_ORG_CONFIG_REPO
names) holds the organisation's defaults, and each repository's own file extends it key by key. The test names
a defaults repository of its own: the session's sandbox holds every test's repositories under one owner."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.conftest import Steward

ORG = f"steward-defaults-{uuid.uuid4().hex[:8]}"


def own_file(steward: Steward) -> str:
    return f"{'.gitea' if steward.forge == 'gitea' else '.github'}/steward.yml"


@pytest.mark.settings(github_org_config_repo=ORG, gitea_org_config_repo=ORG)
def test_a_repository_s_file_extends_its_organisation_s_defaults(steward: Steward) -> None:
    m = steward.maintainer
    if m.client.get(f"/repos/maintainer/{ORG}").status_code == 404:  # one for both forges' runs
        m.create_repo(ORG, configured=False)
        org_file = "limits:\n  commands_per_minute: 3\n  stories_per_bug: 4\nmilestones:\n  enabled: false\n"
        m.put_file(f"maintainer/{ORG}", "steward.yml", org_file)
    repo = steward.new_repo()
    m.put_file(repo, own_file(steward), "limits:\n  commands_per_minute: 7\n")
    steward.settle()
    number = m.open_issue(repo, "Settings?", "Which settings apply here?")
    m.comment(repo, number, "/steward config")
    steward.settle()
    [answer] = [c["body"] for c in steward.bot_comments(repo, number)]
    assert f"laid over the organisation's defaults (`steward.yml` in `maintainer/{ORG}`)" in answer
    assert "| `limits.commands_per_minute` | `7` |" in answer, "the repository's own file wins"
    assert "| `limits.stories_per_bug` | `4` |" in answer, "the organisation's default applies"
    assert "| `milestones.enabled` | `false` |" in answer
