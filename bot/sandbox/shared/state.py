"""The sandbox's forge-neutral data model and its persistence.

Everything a forge remembers lives here as plain pydantic models, so one state can be served as GitHub's
REST API, Gitea's, or both. Shapes (what a forge returns) belong to the forge modules, not to this one.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Flavor = Literal["github", "gitea"]
Role = Literal["pull", "triage", "push", "maintain", "admin"]
ROLE_ORDER: tuple[Role, ...] = ("pull", "triage", "push", "maintain", "admin")
REACTIONS: tuple[str, ...] = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class User(BaseModel):
    id: int
    login: str
    type: Literal["User", "Bot", "Organization"] = "User"
    name: str | None = None
    email: str | None = None
    created_at: str = Field(default_factory=now_iso)
    # An organisation's people and their role in it ("admin": its owners; "member"); empty for a user.
    members: dict[str, Literal["admin", "member"]] = Field(default_factory=dict)
    # An organisation's teams by slug (lowercased name, spaces as `-`): [id, name, members' logins].
    teams: dict[str, tuple[int, str, list[str]]] = Field(default_factory=dict)
    # Gitea's "hide activity" (`PATCH /user/settings` `hide_activity`, the user's KeepActivityPrivate): their
    # actions leave every activity feed but their own (models/activities/action.go ActivityQueryCondition).
    hide_activity: bool = False


class Token(BaseModel):
    token: str
    login: str
    installation_id: int | None = None
    expires_at: str | None = None


class Label(BaseModel):
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None
    default: bool = False
    # Gitea's exclusive (scoped) labels: one label of a `scope/` on an issue at a time.
    exclusive: bool = False


class Milestone(BaseModel):
    id: int
    number: int
    title: str
    description: str | None = None
    state: Literal["open", "closed"] = "open"
    due_on: str | None = None
    creator: str
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)
    closed_at: str | None = None


class Reaction(BaseModel):
    id: int
    user: str
    content: str
    created_at: str = Field(default_factory=now_iso)


class IssueEvent(BaseModel):
    """A label put on or taken off an issue, or its milestone changed, and who did it: GitHub's issue events
    (``labeled``/``unlabeled`` with ``actor``; ``demilestoned`` then ``milestoned``), Gitea's timeline
    comments (``type: "label"``, ``user``, body ``"1"``/``""``; ``type: "milestone"`` with the milestone left
    and the one joined). A milestone change is one event here (``event: "milestone"``, from
    ``old_milestone`` to ``milestone``, by number) that each forge's API shows in its own form."""

    id: int
    event: Literal["labeled", "unlabeled", "milestone"]
    actor: str
    label: str = ""
    color: str = "ededed"
    label_id: int = 0
    created_at: str = Field(default_factory=now_iso)
    via_app: int | None = None
    # A milestone change: the numbers left and joined (None: none), their titles then (GitHub's events keep
    # the title a milestone had: "milestoned-issue-event" `milestone: {title}`), and the id GitHub's second
    # event of the pair (the `milestoned` after a `demilestoned`) is listed under.
    old_milestone: int | None = None
    milestone: int | None = None
    old_title: str = ""
    title: str = ""
    pair_id: int = 0


ReviewState = Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED", "PENDING", "DISMISSED"]


class Review(BaseModel):
    """A pull request review, in GitHub's words (Gitea's are mapped by its shapes)."""

    id: int
    user: str
    state: ReviewState
    body: str = ""
    commit_id: str | None = None
    submitted_at: str | None = Field(default_factory=now_iso)
    via_app: int | None = None


class Protection(BaseModel):
    """What guards a branch: the status checks it requires. GitHub's classic branch protection (or, with
    ``ruleset``, a repository ruleset's ``required_status_checks`` rule); Gitea's branch protection."""

    required_contexts: list[str] = Field(default_factory=list)
    strict: bool = False
    # Whether status checks are required at all (GitHub's `required_status_checks` may be null).
    status_checks: bool = True
    ruleset: bool = False
    ruleset_id: int = 0
    # The rest of GitHub's classic protection, as an admin's PUT gave it: `enforce_admins`, the
    # `required_pull_request_reviews` object (None: not required), who may push (`restrictions`: user
    # logins; None: anyone with write) and the other switches (`required_linear_history` …).
    enforce_admins: bool = False
    reviews: dict[str, bool | int] | None = None
    dismissal_users: list[str] = Field(default_factory=list)
    push_users: list[str] | None = None
    switches: dict[str, bool] = Field(default_factory=dict)
    created_at: str = Field(default_factory=now_iso)


class PullData(BaseModel):
    """What makes an issue a pull request: its branches and what became of it. GitHub and Gitea number
    pull requests and issues in one sequence, so a pull request is an Issue with this."""

    head_ref: str
    base_ref: str
    head_sha: str
    # The base branch's head when the pull request was opened: its commits are those of head not in base.
    base_sha: str
    # GitHub's draft flag; Gitea derives "draft" from the title (see pull_ops.gitea_draft).
    draft: bool = False
    merged: bool = False
    merged_at: str | None = None
    merged_by: str | None = None
    merge_commit_sha: str | None = None
    # Where the head branch lives: None is this repository; else the fork's key (lowercased owner/name).
    # ``head_repo_deleted`` once that fork is gone (both forges then answer ``head.repo`` null).
    head_repo: str | None = None
    head_repo_deleted: bool = False
    # Whose review is requested and not yet given (logins as the forge spells them); a submitted review takes
    # its reviewer off (``pull_ops.review_submitted``).
    requested_reviewers: list[str] = Field(default_factory=list)


class BodyEdit(BaseModel):
    """One version of an issue's body and who wrote it (GitHub's GraphQL ``userContentEdits``; see
    ``bot/sandbox/github/graphql.py``): the creation's version, kept once the body is first edited, then one
    per edit."""

    editor: str
    at: str
    body: str


class Issue(BaseModel):
    id: int
    number: int
    title: str
    body: str | None = None
    user: str
    state: Literal["open", "closed"] = "open"
    state_reason: str | None = None
    label_ids: list[int] = Field(default_factory=list)
    milestone: int | None = None
    assignees: list[str] = Field(default_factory=list)
    locked: bool = False
    # Why it was locked (GitHub's `active_lock_reason`: off-topic, too heated, resolved, spam), if said.
    lock_reason: str | None = None
    reactions: list[Reaction] = Field(default_factory=list)
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)
    closed_at: str | None = None
    closed_by: str | None = None
    via_app: int | None = None
    # Relations by global issue id, any repository: the issues that block this one (both forges'
    # dependencies) and this issue's sub-issues (GitHub only).
    blocked_by: list[int] = Field(default_factory=list)
    sub_issues: list[int] = Field(default_factory=list)
    pull: PullData | None = None
    # Label changes with who made them (GitHub's issue events, Gitea's timeline), oldest first.
    events: list[IssueEvent] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    # The body's versions, oldest first: empty until the body is first edited.
    body_edits: list[BodyEdit] = Field(default_factory=list)


class Comment(BaseModel):
    id: int
    issue_number: int
    user: str
    body: str
    reactions: list[Reaction] = Field(default_factory=list)
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)
    via_app: int | None = None


class Hook(BaseModel):
    id: int
    url: str
    content_type: Literal["json", "form"] = "json"
    secret: str | None = None
    insecure_ssl: str = "0"
    events: list[str] = Field(default_factory=lambda: ["push"])
    active: bool = True
    # Gitea's hook type ("gitea", "forgejo", …) for hooks made through its API.
    hook_type: str | None = None
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)


class Signature(BaseModel):
    name: str
    email: str
    date: str = Field(default_factory=now_iso)


class TreeEntry(BaseModel):
    name: str
    mode: str
    type: Literal["blob", "tree", "commit"]
    sha: str


class GitTree(BaseModel):
    sha: str
    entries: list[TreeEntry]


class GitCommit(BaseModel):
    sha: str
    tree: str
    parents: list[str]
    message: str
    author: Signature
    committer: Signature


class CommitStatus(BaseModel):
    id: int
    sha: str
    # GitHub takes the first four; Gitea also warning and skipped (its CommitStatusState).
    state: Literal["error", "failure", "pending", "success", "warning", "skipped"]
    target_url: str | None = None
    description: str | None = None
    context: str = "default"
    creator: str
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)


class CheckSuite(BaseModel):
    """A GitHub check suite: the check runs one app made for one commit."""

    id: int
    head_sha: str
    head_branch: str | None = None
    before: str | None = None
    app_id: int = 0
    status: str = "queued"
    conclusion: str | None = None
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)


class Annotation(BaseModel):
    """A check run annotation (GitHub: ``GET /check-runs/{id}/annotations``)."""

    path: str
    start_line: int
    end_line: int
    annotation_level: Literal["notice", "warning", "failure"] = "failure"
    message: str
    title: str | None = None
    raw_details: str | None = None


class PushRecord(BaseModel):
    """One move of a branch, with who made it: what GitHub's repository activity and Gitea's activity
    feed answer (``github.branches.list_activity``, ``gitea.branches.list_feeds``)."""

    id: int
    ref: str
    before: str | None
    after: str | None
    actor: str
    forced: bool = False
    merge: bool = False
    at: str = Field(default_factory=now_iso)


class CheckRun(BaseModel):
    id: int
    suite_id: int
    head_sha: str
    name: str
    status: str = "queued"
    conclusion: str | None = None
    details_url: str | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[Annotation] = Field(default_factory=list)
    started_at: str = Field(default_factory=now_iso)
    completed_at: str | None = None


class Repo(BaseModel):
    id: int
    owner: str
    name: str
    flavor: Flavor = "github"
    description: str | None = None
    private: bool = False
    default_branch: str = "main"
    created_at: str = Field(default_factory=now_iso)
    updated_at: str = Field(default_factory=now_iso)
    pushed_at: str | None = None
    collaborators: dict[str, Role] = Field(default_factory=dict)
    next_number: int = 1
    next_milestone: int = 1
    issues: dict[int, Issue] = Field(default_factory=dict)
    # The pinned issues and pull requests, by number, in pin order (see ``pin_ops``).
    pinned: list[int] = Field(default_factory=list)
    comments: dict[int, Comment] = Field(default_factory=dict)
    labels: dict[int, Label] = Field(default_factory=dict)
    milestones: dict[int, Milestone] = Field(default_factory=dict)
    hooks: dict[int, Hook] = Field(default_factory=dict)
    blobs: dict[str, str] = Field(default_factory=dict, description="sha -> base64 content")
    trees: dict[str, GitTree] = Field(default_factory=dict)
    commits: dict[str, GitCommit] = Field(default_factory=dict)
    refs: dict[str, str] = Field(default_factory=dict, description="full ref name -> commit sha")
    statuses: list[CommitStatus] = Field(default_factory=list)
    check_suites: list[CheckSuite] = Field(default_factory=list)
    check_runs: list[CheckRun] = Field(default_factory=list)
    # Whether GitHub takes draft pull requests here: None follows GitHub's plans as on GitHub Free
    # (public repositories have drafts, private ones not); the admin API sets it either way.
    drafts: bool | None = None
    # Branch protections by branch name (see ``Protection``), and the repository this one is a fork of.
    protections: dict[str, Protection] = Field(default_factory=dict)
    fork_of: str | None = None
    # Every move of a branch or tag and who made it, oldest first (``pull_ops.pushed``).
    pushes: list[PushRecord] = Field(default_factory=list)
    # The repository's settings that only its own shape shows (merge options, has_wiki …), as the last
    # PATCH of the repository set them; a key left out has the forge's default (``repo_settings``).
    settings: dict[str, bool | str | None] = Field(default_factory=dict)
    # A transfer to another user waiting for them to accept it (GitHub: the new owner is asked by e-mail).
    transfer_to: str | None = None

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def drafts_allowed(self) -> bool:
        return self.drafts if self.drafts is not None else not self.private

    def label_named(self, name: str) -> Label | None:
        folded = name.casefold()
        return next((lb for lb in self.labels.values() if lb.name.casefold() == folded), None)

    def milestone_counts(self, number: int) -> tuple[int, int]:
        open_ = closed = 0
        for issue in self.issues.values():
            if issue.milestone == number:
                if issue.state == "open":
                    open_ += 1
                else:
                    closed += 1
        return open_, closed


class Invitation(BaseModel):
    """An invitation to collaborate on a repository (GitHub's repository invitations): the invitee gets
    `role` once they accept it (``PATCH /user/repository_invitations/{id}``)."""

    id: int
    repo_id: int
    invitee: str
    inviter: str
    role: Role
    created_at: str = Field(default_factory=now_iso)


class App(BaseModel):
    id: int
    slug: str
    name: str
    public_key_pem: str
    owner: str | None = None
    created_at: str = Field(default_factory=now_iso)
    # The App's own webhook (GitHub delivers an App's events to it, for every installed repository).
    webhook: Hook | None = None

    @property
    def bot_login(self) -> str:
        return f"{self.slug}[bot]"


class Installation(BaseModel):
    id: int
    app_id: int
    owner: str
    repos: list[str]
    created_at: str = Field(default_factory=now_iso)


class SandboxState(BaseModel):
    """All persistent sandbox state. Request handlers mutate it synchronously on one event loop."""

    next_id: int = 1000
    users: dict[str, User] = Field(default_factory=dict)
    tokens: dict[str, Token] = Field(default_factory=dict)
    repos: dict[str, Repo] = Field(default_factory=dict, description="keyed by lowercased owner/name")
    apps: dict[int, App] = Field(default_factory=dict)
    installations: dict[int, Installation] = Field(default_factory=dict)
    invitations: dict[int, Invitation] = Field(default_factory=dict)
    # The names renamed or transferred repositories had (lowercased owner/name) -> the repository's id:
    # both forges answer an old name with a redirect until a repository takes the name again.
    redirects: dict[str, int] = Field(default_factory=dict)

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    # users and tokens ---------------------------------------------------------------------------------

    def ensure_user(self, login: str, kind: Literal["User", "Bot", "Organization"] = "User") -> User:
        user = self.user(login)
        if user is None:
            user = User(id=self.new_id(), login=login, type=kind)
            self.users[login.casefold()] = user
        return user

    def user(self, login: str) -> User | None:
        return self.users.get(login.casefold())

    def add_token(self, login: str, token: str) -> None:
        self.ensure_user(login)
        self.tokens[token] = Token(token=token, login=login)

    def login_for_token(self, token: str) -> Token | None:
        found = self.tokens.get(token)
        if found is None:
            return None
        if found.expires_at is not None and found.expires_at <= now_iso():
            return None
        return found

    def issue_installation_token(self, installation: Installation, expires_at: str) -> Token:
        app = self.apps[installation.app_id]
        token = Token(
            token="ghs_" + secrets.token_hex(18),
            login=app.bot_login,
            installation_id=installation.id,
            expires_at=expires_at,
        )
        self.tokens[token.token] = token
        return token

    # repositories -------------------------------------------------------------------------------------

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".casefold())

    def add_repo(self, repo: Repo) -> None:
        self.repos[repo.full_name.casefold()] = repo
        # A repository made under a name that redirected takes the name: the redirect ends.
        self.redirects.pop(repo.full_name.casefold(), None)

    def repo_by_id(self, ident: int) -> Repo | None:
        return next((r for r in self.repos.values() if r.id == ident), None)

    def redirect(self, owner: str, name: str) -> Repo | None:
        """The repository that used to be called owner/name, when one was renamed or moved away."""
        ident = self.redirects.get(f"{owner}/{name}".casefold())
        return self.repo_by_id(ident) if ident is not None else None

    def installation_for(self, repo: Repo) -> Installation | None:
        for inst in self.installations.values():
            if inst.owner.casefold() == repo.owner.casefold() and repo.name.casefold() in {
                r.casefold() for r in inst.repos
            }:
                return inst
        return None

    def role_of(self, repo: Repo, login: str | None) -> Role | None:
        """The role `login` holds on `repo`; None means no access beyond what visibility grants."""
        if login is None:
            return None
        if login.casefold() == repo.owner.casefold():
            return "admin"
        for who, role in repo.collaborators.items():
            if who.casefold() == login.casefold():
                return role
        member = self.membership(repo.owner, login)
        if member == "admin":
            return "admin"
        if member == "member" and repo.flavor == "github":
            # GitHub organisations' default base permission is read; Gitea gives members access
            # through teams only (the sandbox has none but the owners).
            return "pull"
        for inst in self.installations.values():
            app = self.apps.get(inst.app_id)
            if app is not None and app.bot_login == login and self.installation_for(repo) is inst:
                return "push"
        return None

    def membership(self, org: str, login: str) -> Literal["admin", "member"] | None:
        """`login`'s role in organisation `org` (None: not a member, or `org` is a user)."""
        owner = self.user(org)
        if owner is None or owner.type != "Organization":
            return None
        return next((r for who, r in owner.members.items() if who.casefold() == login.casefold()), None)

    def can(self, repo: Repo, login: str | None, needed: Role) -> bool:
        role = self.role_of(repo, login)
        if role is None:
            return needed == "pull" and not repo.private
        return ROLE_ORDER.index(role) >= ROLE_ORDER.index(needed)

    # persistence --------------------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write atomically: a crash mid-write never leaves a truncated state file."""
        data = self.model_dump_json(indent=1)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> SandboxState:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))
