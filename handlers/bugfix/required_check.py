"""Two things a maintainer needs to know before trusting `steward/regression-first`, as the forge shows them
to Steward — said for the onboarding pull request and `/steward config`, never more than was read:

- ``requirement``: whether the status is a **required** check on a branch (GitHub: the branch's protection
  summary and the rulesets that apply, ``GET /branches/{b}`` and ``GET /rules/branches/{b}``; Gitea: the
  branch's ``status_check_contexts``, glob patterns, when ``enable_status_check`` is on). Three answers:
  required; not required, with how to make it required; could not read, with the reason and how to check.
  A refusal or a missing summary is "could not read", never "not required" and never "required".
- ``seen_contexts``: the CI contexts that reported on a commit (a default branch's head), Steward's own
  ``steward/*`` left out — what ``bugfix.required_contexts`` can be chosen from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from bot.forge import Branch, Forge, ForgeKind, PermissionDenied, RepoRef
from bot.forge.ci import is_own
from bot.forge.records import CIReport
from bot.records import neutralise
from handlers.bugfix.status import CONTEXT

__all__ = ["Requirement", "read_requirement", "requirement", "requirement_lines", "seen_contexts"]

Answer = Literal["required", "not_required", "unread"]


@dataclass(frozen=True)
class Requirement:
    answer: Answer
    branch: str
    reason: str = ""  # "unread": why, in a maintainer's words


def _matches(pattern: str, kind: ForgeKind, context: str) -> bool:
    # GitHub compares context names exactly; Gitea compiles each entry as a glob (services/pull/
    # commit_status.go, MergeRequiredContextsCommitStatus: glob.Compile). fnmatch covers `*`, `?` and `[…]`;
    # a pattern with `{a,b}` alternatives is compared as written.
    return pattern == context or (kind == "gitea" and fnmatchcase(context, pattern))


def requirement(
    name: str, found: Branch | None, kind: ForgeKind, *, refused: str = "", context: str = CONTEXT
) -> Requirement:
    """The answer for branch ``name`` from what ``read_branch`` returned (``refused``: why the forge
    would not show the branch at all), for status ``context`` (`steward/regression-first` unless said)."""
    if refused:
        return Requirement("unread", name, refused)
    if found is None:
        return Requirement("unread", name, f"the forge says there is no branch `{name}`")
    if found.required_contexts is None:
        why = found.unread or "the forge did not show which checks the branch requires"
        return Requirement("unread", name, why)
    if any(_matches(pattern, kind, context) for pattern in found.required_contexts):
        return Requirement("required", name)
    return Requirement("not_required", name)


def _settings_pages(kind: ForgeKind, html_url: str) -> tuple[str, str]:
    """(Where branch protection is set, where rulesets are — GitHub only, else ""), as links when known."""

    def page(label: str, path: str) -> str:
        return f"[{label}]({html_url}/settings/{path})" if html_url else label

    if kind == "gitea":
        return page("Settings → Branches", "branches"), ""
    return page("Settings → Branches", "branches"), page("Settings → Rules → Rulesets", "rules")


def _how_to_require(branch: str, kind: ForgeKind, html_url: str) -> str:
    classic, rules = _settings_pages(kind, html_url)
    if kind == "gitea":
        return (
            f"{classic}: add (or edit) a protection rule for `{branch}`, tick *Enable Status Check* and add "
            f"`{CONTEXT}` to the status check patterns."
        )
    return (
        f"{rules}: a branch ruleset targeting `{branch}` with *Require status checks to pass* and "
        f"`{CONTEXT}` in its list — or {classic}: a protection rule for `{branch}` with *Require status "
        "checks to pass before merging*."
    )


def requirement_lines(found: Requirement, kind: ForgeKind, html_url: str = "") -> list[str]:
    """What the onboarding pull request and `/steward config` say (markdown)."""
    branch = found.branch
    caveat = (
        f"A required check applies to **every** pull request into `{branch}`, and Steward sets "
        f"`{CONTEXT}` on bugfix pull requests only: other pull requests into it would wait for it, so "
        "require it only where fixes land through bugfix branches."
    )
    if found.answer == "required":
        return [
            f"✅ `{CONTEXT}` is a **required** check on `{branch}` (read from the forge's branch protection"
            + (" and rulesets" if kind == "github" else "")
            + "): the forge holds a bugfix pull request into it until the status is success — unless the "
            "rule lets admins bypass it.",
        ]
    how = _how_to_require(branch, kind, html_url)
    if found.answer == "not_required":
        return [
            f"⚠️ `{CONTEXT}` is **not** a required check on `{branch}`: the forge does not wait for it before "
            "merging a bugfix pull request (merged without the proof, the bug stays open, labelled "
            "`bugfix:merged-unproven`, with what was missing).",
            "",
            f"To make it required: {how} {caveat}",
        ]
    reason = neutralise.line(found.reason, 300)
    access = (
        "read access to the repository's branches (a GitHub App: *Contents* and *Metadata: Read*)"
        if kind == "github"
        else "read access to the repository (a token with the `read:repository` scope)"
    )
    return [
        f"❔ I **could not read** whether `{CONTEXT}` is a required check on `{branch}`: {reason}. I assume "
        "nothing: treat it as not required until someone checks.",
        "",
        f"To check: look at {' and '.join(p for p in _settings_pages(kind, html_url) if p)}, or give Steward "
        f"{access} and run `/steward config`. To make it required: {how} {caveat}",
    ]


def seen_contexts(reports: Sequence[CIReport]) -> list[str]:
    """The contexts that reported (each once, sorted), without Steward's own."""
    return sorted({r.context for r in reports if not is_own(r.context)})


async def read_requirement(
    forge: Forge, repo: RepoRef, name: str, kind: ForgeKind
) -> tuple[Requirement, Branch | None]:
    """Read branch ``name`` and answer; a refusal (401/403) is "could not read" with the forge's words."""
    try:
        found = await forge.read_branch(repo, name)
    except PermissionDenied as exc:
        return requirement(name, None, kind, refused=f"the forge refused to show me the branch ({exc})"), None
    return requirement(name, found, kind), found
