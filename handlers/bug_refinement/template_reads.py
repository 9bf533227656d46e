"""Reading the repository's own issue templates from the forge, cached per repository (issue 34 §1).

Where each forge reads them, from the default branch:

- GitHub: ``.github/ISSUE_TEMPLATE/`` (``.md``, ``.yml``, ``.yaml``); a repository that has none there uses
  its owner's ``.github`` repository's (GitHub's default community health files).
- Gitea/Forgejo: every folder of ``IssueTemplateDirCandidates`` (modules/context/repo.go: ``ISSUE_TEMPLATE``,
  ``issue_template``, ``.gitea/…``, ``.github/…``, ``.gitlab/…``), the files ``template.CouldBe`` accepts.

The fields (``repo_templates.parse_templates``) are kept in Redis under the repository's key
(``bot.forge.repo_key``) for ``CACHE_SECONDS``; a push to the default branch that touches one of those
folders drops the copy (``forget_on_push``), so the next refinement reads the templates again.
"""

from __future__ import annotations

from typing import Final

from bot.commands.context import EventContext
from bot.forge import Forge, ForgeKind, RepoRef, repo_key

from .repo_templates import MAX_FILES, RepoTemplates, could_be_template, parse_templates

__all__ = ["CACHE_SECONDS", "FOLDERS", "cache_key", "forget_on_push", "repo_templates"]

CACHE_SECONDS: Final = 3_600
FOLDERS: Final[dict[str, tuple[str, ...]]] = {
    "github": (".github/ISSUE_TEMPLATE",),
    "gitea": (
        "ISSUE_TEMPLATE",
        "issue_template",
        ".gitea/ISSUE_TEMPLATE",
        ".gitea/issue_template",
        ".github/ISSUE_TEMPLATE",
        ".github/issue_template",
        ".gitlab/ISSUE_TEMPLATE",
        ".gitlab/issue_template",
    ),
}


def _folders(kind: ForgeKind) -> tuple[str, ...]:
    return FOLDERS["github" if kind == "github" else "gitea"]


def cache_key(kind: ForgeKind, repo: RepoRef) -> str:
    return f"steward:bug-templates:{repo_key(kind, repo)}"


async def _files(forge: Forge, repo: RepoRef, folders: tuple[str, ...]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for folder in folders:
        for path in sorted(await forge.list_folder(repo, folder) or ()):
            if len(out) >= MAX_FILES:
                return out
            if could_be_template(path.rsplit("/", 1)[-1]) and (found := await forge.read_file(repo, path)):
                out.append((path, found.content.decode("utf-8", "replace")))
    return out


async def read_templates(forge: Forge, repo: RepoRef) -> RepoTemplates:
    """The repository's templates, read from the forge (see the module docstring)."""
    files = await _files(forge, repo, _folders(forge.kind))
    if not files and forge.kind == "github" and repo.name != ".github":
        files = await _files(forge, RepoRef(repo.owner, ".github"), _folders("github"))
    return parse_templates(files)


async def repo_templates(ctx: EventContext) -> RepoTemplates:
    """The repository's templates: the cached copy, else read and cached."""
    if ctx.memo is None:
        return await read_templates(ctx.forge, ctx.repo)
    redis, key = ctx.memo.redis, cache_key(ctx.forge.kind, ctx.repo)
    cached = await redis.get(key)
    if cached is not None:
        try:
            return RepoTemplates.from_json(cached)
        except (ValueError, TypeError, KeyError):
            pass  # an unreadable copy is read again
    found = await read_templates(ctx.forge, ctx.repo)
    await redis.set(key, found.to_json(), ex=CACHE_SECONDS)
    return found


def touches_templates(kind: ForgeKind, paths: tuple[str, ...]) -> bool:
    folders = tuple(f"{folder}/" for folder in _folders(kind))
    return any(path.startswith(folders) for path in paths)


async def forget_on_push(ctx: EventContext) -> bool:
    """Drop the cached templates when this push to the default branch touched their folders. True when they
    were dropped."""
    if ctx.memo is None or not (ctx.event.ref or "").startswith("refs/heads/"):
        return False
    if not touches_templates(ctx.forge.kind, ctx.event.paths):
        return False
    repo = await ctx.forge.get_repo(ctx.repo)
    if ctx.event.ref != f"refs/heads/{repo.default_branch}":
        return False
    await ctx.memo.redis.delete(cache_key(ctx.forge.kind, ctx.repo))
    return True
