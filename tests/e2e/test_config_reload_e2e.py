"""`steward config reload --repo R` (issue 40 item 5), end to end on both forges.

Steward keeps a repository's configuration for five minutes and drops it on every push it hears of. A push it
missed (its receiver down) left the old settings in force for the rest of those minutes — 273 s in the
operator trial — with no way to say "read it again". Now `steward config reload --repo R` drops the cached
copy, and the next event reads the file.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.e2e.conftest import Steward
from tests.e2e.stack import ROOT, TEST_CONFIG_PATHS, wait_for
from tests.e2e.test_reconcile_e2e import _steward_down


def _config_reply(steward: Steward, repo: str, number: int, count: int) -> str:
    def replies() -> list[str]:
        return [c["body"] for c in steward.bot_comments(repo, number) if "Steward's settings" in c["body"]]

    return wait_for(lambda: (r := replies()) and len(r) >= count and r[-1], what=f"config reply {count}")


def test_a_missed_push_is_read_after_config_reload(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    number = m.open_issue(repo, "what are the settings?")
    m.comment(repo, number, "/steward config")
    assert "commands_per_minute" not in _config_reply(steward, repo, number, 1).split("<details>")[0]
    # Every job done before the push: a job still reading the file (the opened issue's, on a loaded machine)
    # could read it after the push and cache the new copy, and no copy would be stale.
    steward.settle()
    with _steward_down(steward):
        m.put_file(repo, TEST_CONFIG_PATHS[steward.forge], "limits:\n  commands_per_minute: 7\n")
        wait_for(
            lambda: m.call("GET", f"{steward.sandbox.url}/_sandbox/deliveries/idle").get("idle"),
            what="the sandbox's deliveries",
        )
    m.comment(repo, number, "/steward config")
    stale = _config_reply(steward, repo, number, 2).split("<details>")[0]
    assert "commands_per_minute" not in stale, "the push was missed: the cached settings still apply"

    env = {k: v for k, v in os.environ.items() if not k.startswith("STEWARD_")}
    env.update(
        STEWARD_REDIS_URL=steward.redis_url,
        STEWARD_GITHUB_API_URL=steward.settings.github_api_url,
        STEWARD_GITHUB_TOKEN="tok-bot",
        STEWARD_GITEA_URL=str(steward.settings.gitea_url),
        STEWARD_GITEA_TOKEN="tok-bot",
    )
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "config", "reload", "--repo", f"{steward.forge}:{repo}"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the cached configuration is dropped" in done.stdout

    m.comment(repo, number, "/steward config")
    fresh = _config_reply(steward, repo, number, 3).split("<details>")[0]
    assert "`limits.commands_per_minute`" in fresh and "`7`" in fresh, fresh
