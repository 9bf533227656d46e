"""Steward's own results on a commit (every `steward/*` context: `steward/regression-first`,
`steward/config`, `steward/hold`): a commit status on both forges, and on GitHub, when Steward is an App, a
check run of the same name as well.

Why both: a required *status* cannot be pinned to its source — anyone with write access can post a status
of any context, and the forge keeps the latest whoever set it (Steward posts its own again and its ledger
notes it, but there is a window). GitHub's branch protection can pin a required *check* to an App ("expected
source"), and only an App can create a check run (FORGE-FACTS: any other token gets 403 "You must
authenticate via a GitHub App."): pinned to Steward's App, nobody else's result counts. The status stays
beside the check run so that a required status set up before (by its name, any source) keeps passing and
failing as it did. Gitea has commit statuses only (docs/bugfix.md, "Only Steward sets `steward/*`
results")."""

from __future__ import annotations

from contextlib import suppress

from bot.forge import CommitStatus, Forge, NotSupported, PermissionDenied, RepoRef, StatusState


async def set_own_result(
    forge: Forge,
    repo: RepoRef,
    sha: str,
    context: str,
    state: StatusState,
    description: str = "",
    target_url: str = "",
) -> CommitStatus:
    """The commit status, then (GitHub App) the check run; each is written only when it differs."""
    status = await forge.set_commit_status(repo, sha, context, state, description, target_url)
    # A token or Gitea (NotSupported), or an App installed without "Checks: Read & write" (403): the status
    # is Steward's result there.
    with suppress(NotSupported, PermissionDenied):
        await forge.set_check_run(repo, sha, context, state, description, target_url)
    return status
