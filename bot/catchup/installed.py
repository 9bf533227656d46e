"""What the catch-up walks: every repository Steward is installed on, read from the forge (issue 40 item 1).

The repositories that sent an event lately (``bot.queue.deferred.SeenRepositories``, kept in Redis) are not
enough: a quiet repository (an App on 200 repositories has many) sends none for weeks, and after Redis comes
back empty the list is empty. So each catch-up also asks the forge what Steward may act on — with a token,
the token's repositories (GitHub and Gitea ``GET /user/repos``, each with the token's permissions there); as
a GitHub App, its installations and their repositories — and covers those where it may write. On GitHub
the listings keep their ETags across runs (``bot.forge.etag_store``): an unchanged page is a 304, which
costs no quota. Repositories heard from lately come first (most likely to have missed something); the
others follow in the forge's order, within the run's time and quota budget like any other (a stopped run
goes on from where it stopped).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.catchup.reconcile import seen_repos
from bot.forge import ForgeKind, RepoRef, repo_key
from bot.forge.etag_store import catching_up
from bot.queue.jobs import REDIS_ERRORS
from bot.telemetry import logs, metrics

log = logs.get("steward.reconcile")

# The access Steward needs on a repository to act there (to comment, label, set statuses).
WRITES = frozenset({"write", "maintain", "admin"})


async def installed_repos(runtime: Any, kinds: Sequence[ForgeKind]) -> list[tuple[ForgeKind, RepoRef]]:
    """The repositories each forge says Steward is installed on and may write to. A forge that cannot be
    asked (down, a revoked token) is logged and left out: the repositories heard from still count."""
    found: list[tuple[ForgeKind, RepoRef]] = []
    for kind in kinds:
        source = runtime.github if kind == "github" else runtime.gitea
        if source is None:
            continue
        try:
            with catching_up():
                listed = await source.installed_repos()
        except REDIS_ERRORS:
            raise
        except Exception as exc:
            log.warning(
                "catch-up: could not list the repositories Steward is installed on; only those heard from "
                "lately are caught up",
                forge=kind,
                error=f"{type(exc).__name__}: {exc}"[:300],
            )
            continue
        mine = [(kind, repo) for repo, level in listed if level in WRITES]
        metrics.INSTALLED_REPOS.labels(forge=kind).set(len(mine))
        found += mine
    return found


async def repos_to_catch_up(runtime: Any, kinds: Sequence[ForgeKind]) -> list[tuple[ForgeKind, RepoRef]]:
    """The repositories heard from lately, then every other one Steward is installed on (each once)."""
    seen = await seen_repos(runtime.seen, kinds)
    out = list(seen)
    if not getattr(runtime.settings, "reconcile_installed", True):
        return out
    # One entry per repository, by its id (``repo_key``): a repository renamed since its last event (Gitea
    # sends no webhook for a rename) is listed by the forge under its new name, which is the one used.
    known = {repo_key(k, r): n for n, (k, r) in enumerate(out)}
    for kind, repo in await installed_repos(runtime, kinds):
        key = repo_key(kind, repo)
        if key in known:
            out[known[key]] = (kind, repo)
            continue
        known[key] = len(out)
        out.append((kind, repo))
    return out
