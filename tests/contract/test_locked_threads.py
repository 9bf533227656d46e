"""Locked conversations, as each adapter meets them (docs/forge-port.md, "Locked conversations").

GitHub refuses a GitHub App's comments in a locked conversation whatever the App's permission (403 "Unable to
create comment because issue is locked.", probot/stale#25, renovatebot/renovate#6215) and takes no reaction
from anyone there (docs.github.com "Locking conversations"); labels are not part of the conversation. Gitea
lets whoever may write its issues comment on a locked one (routers/api/v1/repo/issue_comment.go)."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.forge import ThreadLocked
from bot.forge.gitea import GiteaForge
from bot.forge.github import GitHubForges
from bot.forge.github_transport import SharedSession
from bot.forge.retry import RetryPolicy
from bot.sandbox.server import SandboxServer
from tests.contract.conftest import USERS, Site

APP_ID = 7311


async def test_a_github_app_meets_thread_locked_for_comments_and_reactions_but_labels_still_work(
    sandbox: SandboxServer,
) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    site = Site("github", sandbox.url, USERS["owner"])
    http = SharedSession(timeout=10)
    try:
        site.admin.post(
            "/_sandbox/apps", json={"app_id": APP_ID, "slug": "locked-out", "public_key_pem": public}
        ).raise_for_status()
        repo = site.new_repo()
        install = site.admin.post(
            f"/_sandbox/apps/{APP_ID}/installations", json={"owner": "owner", "repos": [repo.name]}
        ).json()
        number = site.open_issue(repo, "Heated")
        forges = GitHubForges(
            http,
            base_url=sandbox.url,
            policy=RetryPolicy(attempts=3, base_delay=0.01),
            budget=None,
            app_id=str(APP_ID),
            private_key=private,
        )
        forge = await forges.for_event(int(install["id"]), repo)
        said = await forge.create_comment(repo, number, "before the lock")
        assert (await forge.get_issue(repo, number)).locked is False
        site.call("PUT", f"/repos/{repo}/issues/{number}/lock", {"lock_reason": "too heated"})
        assert (await forge.get_issue(repo, number)).locked is True
        site.admin.delete("/_sandbox/requests")
        with pytest.raises(ThreadLocked, match="locked"):
            await forge.create_comment(repo, number, "after the lock")
        with pytest.raises(ThreadLocked):
            await forge.edit_comment(repo, said.id, "edited after the lock")
        with pytest.raises(ThreadLocked):
            await forge.add_reaction(repo, said.id, "eyes")
        assert await forge.add_labels(repo, number, ["bug"]) == ("bug",)
        posts = [r for r in site.admin.get("/_sandbox/requests").json() if r["path"].endswith("/comments")]
        assert [r["status"] for r in posts] == [403], "a refusal is permanent: asked once, not retried"
    finally:
        await http.aclose()
        site.close()


async def test_gitea_lets_a_writer_bot_comment_on_a_locked_issue_and_keeps_readers_out(
    sandbox: SandboxServer,
) -> None:
    site = Site("gitea", sandbox.url, USERS["owner"])
    try:
        repo = site.new_repo()  # steward-bot writes, reader reads
        number = site.open_issue(repo, "Heated")
        site.call("PUT", f"/repos/{repo}/issues/{number}/lock", {"lock_reason": "Too heated"})
        bot = GiteaForge(sandbox.url, USERS["steward-bot"], policy=RetryPolicy(attempts=2, base_delay=0.01))
        reader = GiteaForge(sandbox.url, USERS["reader"], policy=RetryPolicy(attempts=2, base_delay=0.01))
        try:
            assert (await bot.get_issue(repo, number)).locked is True
            assert (await bot.create_comment(repo, number, "a writer may")).id > 0
            with pytest.raises(ThreadLocked, match="locked issue"):
                await reader.create_comment(repo, number, "a reader may not")
        finally:
            bot.close()
            reader.close()
    finally:
        site.close()
