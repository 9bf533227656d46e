"""The Forge port: what handlers may ask of a forge, in the domain's words.

Adapters (``bot.forge.github``, ``bot.forge.gitea``) translate these calls into a
forge's API; handlers never see a payload dict or a URL. Everything here is a small
frozen value so results can be cached and compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

ForgeKind = Literal["github", "gitea"]
PermissionLevel = Literal["none", "read", "triage", "write", "maintain", "admin"]
ReactionContent = Literal["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]

PERMISSION_ORDER: tuple[PermissionLevel, ...] = ("none", "read", "triage", "write", "maintain", "admin")


@dataclass(frozen=True, order=True)
class RepoRef:
    owner: str
    name: str

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @classmethod
    def parse(cls, full_name: str) -> RepoRef:
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"not an owner/name repository reference: {full_name!r}")
        return cls(owner, name)

    def __str__(self) -> str:
        return self.full_name


@dataclass(frozen=True)
class User:
    login: str
    id: int = 0
    is_bot: bool = False


@dataclass(frozen=True)
class Repo:
    ref: RepoRef
    default_branch: str
    private: bool = False
    html_url: str = ""


@dataclass(frozen=True)
class Label:
    name: str
    color: str = ""
    description: str = ""


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    state: Literal["open", "closed"]
    author: str
    labels: tuple[str, ...] = ()
    milestone: int | None = None
    is_pull_request: bool = False
    html_url: str = ""
    # The forge's global id (GitHub's dependency API wants it rather than the number).
    id: int = 0

    def has_label(self, name: str) -> bool:
        wanted = name.casefold()
        return any(label.casefold() == wanted for label in self.labels)


@dataclass(frozen=True)
class Comment:
    id: int
    author: str
    body: str
    created_at: str = ""
    updated_at: str = ""
    html_url: str = ""


@dataclass(frozen=True)
class Milestone:
    number: int
    title: str
    state: Literal["open", "closed"]
    description: str = ""
    open_issues: int = 0
    closed_issues: int = 0


@dataclass(frozen=True)
class FileContent:
    path: str
    content: bytes
    sha: str = ""


# --- errors -------------------------------------------------------------------------------------


class ForgeError(Exception):
    """A forge call failed. Messages never contain secrets."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class NotFound(ForgeError):
    """The thing asked for does not exist (or the bot cannot see it)."""


class PermissionDenied(ForgeError):
    """The forge refused the bot (401/403 that is not a rate limit)."""


class ValidationFailed(ForgeError):
    """The forge rejected the request's content (422)."""


class ForgeUnavailable(ForgeError):
    """The forge kept failing (5xx, timeouts, transport errors) after every retry."""


class RateLimited(ForgeError):
    """The forge's rate limit is spent; try again after ``retry_after`` seconds."""

    def __init__(self, message: str, *, retry_after: float, status: int | None = None) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


# --- the port -----------------------------------------------------------------------------------


@runtime_checkable
class Forge(Protocol):
    """Everything a handler may ask of a forge. All methods are idempotent reads or single writes."""

    kind: ForgeKind

    async def whoami(self) -> User: ...

    async def get_repo(self, repo: RepoRef) -> Repo: ...

    async def get_issue(self, repo: RepoRef, number: int) -> Issue: ...

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]: ...

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment: ...

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment: ...

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: ReactionContent) -> None: ...

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]: ...

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "ededed", description: str = ""
    ) -> Label: ...

    async def set_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]: ...

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]: ...

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None: ...

    async def permission_of(self, repo: RepoRef, login: str) -> PermissionLevel: ...

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None: ...

    # Issue relations. A forge without sub-issues answers []; dependencies exist on both forges.
    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]: ...

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]: ...

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None: ...


def permission_at_least(have: PermissionLevel, need: PermissionLevel) -> bool:
    return PERMISSION_ORDER.index(have) >= PERMISSION_ORDER.index(need)
