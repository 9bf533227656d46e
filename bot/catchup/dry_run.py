"""A forge that reads for real and writes nothing: `steward reconcile --dry-run`.

Every write is described in one line through ``say`` and answered with the value the forge would most
likely have returned (the comment as written, the issue as edited), so a handler goes on as it would. Reads
of the forge's own things pass through unchanged (and so never see the writes that were not made); what the
dry run pretended to make — an issue, a comment, a pull request, under a made-up negative number — is
remembered and answered from memory, so a handler that goes on to edit what it "opened" does not fail on
the dry run's own pretence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import count

from bot.forge import (
    KEEP,
    BodyVersion,
    Branch,
    ChangedFile,
    CheckRun,
    CIReport,
    CIState,
    CloseReason,
    Comment,
    CommentLink,
    Commit,
    CommitStatus,
    FileChange,
    FileContent,
    Forge,
    HookDelivery,
    Issue,
    IssueHistory,
    IssueKind,
    IssueState,
    Keep,
    Label,
    LabelEvent,
    ListState,
    Milestone,
    NotSupported,
    PermissionLevel,
    PullRequest,
    Push,
    ReactionContent,
    Repo,
    RepoRef,
    Review,
    StatusState,
    User,
)


def _excerpt(text: str, limit: int = 72) -> str:
    """The first line a reader would see (Steward's own markers and data blocks are HTML comments)."""
    shown = (line.strip() for line in text.splitlines())
    first = next((line for line in shown if line and not line.startswith("<!--")), "")
    return first if len(first) <= limit else first[: limit - 1] + "…"


class DryRunForge:
    """Wraps ``inner`` (see the module docstring); ``say`` receives one line per write not made."""

    def __init__(self, inner: Forge, say: Callable[[str], object]) -> None:
        self.inner = inner
        self.kind = inner.kind
        self._say = say
        self._ids = count(-1, -1)  # made-up ids are negative: they name nothing on the forge
        # What this dry run pretended to make, by its made-up number or id.
        self._issues: dict[int, Issue] = {}
        self._comments: dict[int, Comment] = {}
        self._pulls: dict[int, PullRequest] = {}

    def _issue(self, number: int) -> Issue | None:
        return self._issues.get(number) if number < 0 else None

    def _write(self, line: str) -> None:
        self._say(f"would {line}")

    # --- reads ------------------------------------------------------------------------------------

    async def whoami(self) -> User:
        return await self.inner.whoami()

    async def get_repo(self, repo: RepoRef) -> Repo:
        return await self.inner.get_repo(repo)

    async def get_issue(self, repo: RepoRef, number: int) -> Issue:
        return self._issue(number) or await self.inner.get_issue(repo, number)

    async def list_comments(self, repo: RepoRef, number: int) -> list[Comment]:
        if number < 0:
            return [c for c in self._comments.values() if c.issue_number == number]
        return await self.inner.list_comments(repo, number)

    async def list_repo_labels(self, repo: RepoRef) -> list[Label]:
        return await self.inner.list_repo_labels(repo)

    async def permission_of(self, repo: RepoRef, login: str) -> PermissionLevel:
        return await self.inner.permission_of(repo, login)

    async def team_members(self, org: str, team: str) -> tuple[str, ...]:
        return await self.inner.team_members(org, team)

    async def repo_admins(self, repo: RepoRef) -> tuple[str, ...]:
        return await self.inner.repo_admins(repo)

    async def label_events(self, repo: RepoRef, number: int) -> list[LabelEvent]:
        return await self.inner.label_events(repo, number)

    async def issue_history(self, repo: RepoRef, number: int) -> IssueHistory:
        return await self.inner.issue_history(repo, number)

    async def list_reviews(self, repo: RepoRef, number: int) -> list[Review]:
        return await self.inner.list_reviews(repo, number)

    async def read_branch(self, repo: RepoRef, name: str) -> Branch | None:
        return await self.inner.read_branch(repo, name)

    async def branch_pushes(self, repo: RepoRef, branch: str, since: str = "") -> list[Push]:
        return await self.inner.branch_pushes(repo, branch, since)

    async def ci_reports(self, repo: RepoRef, sha: str) -> list[CIReport]:
        return await self.inner.ci_reports(repo, sha)

    async def read_file(self, repo: RepoRef, path: str, ref: str | None = None) -> FileContent | None:
        return await self.inner.read_file(repo, path, ref)

    async def list_folder(self, repo: RepoRef, path: str, ref: str | None = None) -> list[str] | None:
        return await self.inner.list_folder(repo, path, ref)

    async def list_files(self, repo: RepoRef, ref: str) -> list[str] | None:
        return await self.inner.list_files(repo, ref)

    async def list_sub_issues(self, repo: RepoRef, number: int) -> list[Issue]:
        return [] if number < 0 else await self.inner.list_sub_issues(repo, number)

    async def list_blocked_by(self, repo: RepoRef, number: int) -> list[int]:
        return [] if number < 0 else await self.inner.list_blocked_by(repo, number)

    async def list_issues(
        self,
        repo: RepoRef,
        *,
        milestone: int | None = None,
        labels: Sequence[str] = (),
        state: ListState = "open",
        kind: IssueKind = "issues",
        since: datetime | None = None,
    ) -> list[Issue]:
        return await self.inner.list_issues(
            repo, milestone=milestone, labels=labels, state=state, kind=kind, since=since
        )

    async def get_comment(self, repo: RepoRef, comment_id: int) -> Comment:
        if comment_id in self._comments:
            return self._comments[comment_id]
        return await self.inner.get_comment(repo, comment_id)

    async def list_repo_comments(self, repo: RepoRef, since: datetime) -> list[Comment]:
        return await self.inner.list_repo_comments(repo, since)

    async def resolve_comment_url(self, url: str) -> CommentLink:
        return await self.inner.resolve_comment_url(url)

    async def list_milestones(self, repo: RepoRef, state: ListState = "open") -> list[Milestone]:
        return await self.inner.list_milestones(repo, state)

    async def get_milestone(self, repo: RepoRef, key: int) -> Milestone:
        return await self.inner.get_milestone(repo, key)

    async def get_branch(self, repo: RepoRef, name: str) -> str | None:
        return await self.inner.get_branch(repo, name)

    async def get_commit(self, repo: RepoRef, sha: str) -> Commit:
        return await self.inner.get_commit(repo, sha)

    async def get_pull_request(self, repo: RepoRef, number: int) -> PullRequest:
        if number in self._pulls:
            return self._pulls[number]
        return await self.inner.get_pull_request(repo, number)

    async def find_pull_request(
        self, repo: RepoRef, head: str, *, state: ListState = "open"
    ) -> PullRequest | None:
        return await self.inner.find_pull_request(repo, head, state=state)

    async def list_pr_commits(self, repo: RepoRef, number: int) -> list[Commit]:
        return [] if number < 0 else await self.inner.list_pr_commits(repo, number)

    async def list_pr_files(self, repo: RepoRef, number: int) -> list[ChangedFile]:
        return [] if number < 0 else await self.inner.list_pr_files(repo, number)

    async def ci_state(self, repo: RepoRef, sha: str, required_contexts: Sequence[str] = ()) -> CIState:
        return await self.inner.ci_state(repo, sha, required_contexts)

    async def commit_statuses(self, repo: RepoRef, sha: str) -> list[CommitStatus]:
        return await self.inner.commit_statuses(repo, sha)

    async def list_hook_deliveries(
        self, repo: RepoRef | None, since: datetime | None = None
    ) -> list[HookDelivery]:
        return await self.inner.list_hook_deliveries(repo, since)

    # --- writes: described, not made --------------------------------------------------------------

    async def create_comment(self, repo: RepoRef, number: int, body: str) -> Comment:
        self._write(f"comment on {repo}#{number}: {_excerpt(body)}")
        me = await self.whoami()
        made = Comment(id=next(self._ids), author=me.login, body=body, issue_number=number)
        self._comments[made.id] = made
        return made

    async def edit_comment(self, repo: RepoRef, comment_id: int, body: str) -> Comment:
        old = await self.get_comment(repo, comment_id)
        if comment_id < 0:
            # A comment this run only pretended to create, edited to sign its record in (bot.records.sticky):
            # the creation was reported already.
            edited = replace(old, body=body)
            self._comments[comment_id] = edited
            return edited
        self._write(f"edit comment {comment_id} on {repo}#{old.issue_number}: {_excerpt(body)}")
        edited = replace(old, body=body)
        if comment_id < 0:
            self._comments[comment_id] = edited
        return edited

    async def add_reaction(self, repo: RepoRef, comment_id: int, content: ReactionContent) -> None:
        self._write(f"react {content} to comment {comment_id} on {repo}")

    async def ensure_label(
        self, repo: RepoRef, name: str, *, color: str = "ededed", description: str = ""
    ) -> Label:
        existing = {label.name.casefold(): label for label in await self.inner.list_repo_labels(repo)}
        if name.casefold() in existing:
            return existing[name.casefold()]
        self._write(f"create label {name!r} on {repo}")
        return Label(name, color, description)

    async def set_label_description(self, repo: RepoRef, name: str, description: str) -> Label:
        self._write(f"describe label {name!r} on {repo}: {_excerpt(description)}")
        return Label(name, "", description)

    async def set_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        self._write(f"set the labels of {repo}#{number} to {', '.join(names) or '(none)'}")
        return tuple(names)

    async def add_labels(self, repo: RepoRef, number: int, names: list[str]) -> tuple[str, ...]:
        issue = await self.get_issue(repo, number)
        self._write(f"add {', '.join(names)} to {repo}#{number}")
        have = list(issue.labels)
        have += [n for n in names if n.casefold() not in {h.casefold() for h in have}]
        if number < 0:
            self._issues[number] = replace(issue, labels=tuple(have))
        return tuple(have)

    async def remove_label(self, repo: RepoRef, number: int, name: str) -> None:
        self._write(f"remove {name} from {repo}#{number}")

    async def add_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        issue = await self.get_issue(repo, number)
        self._write(f"assign {', '.join(logins)} to {repo}#{number}")
        have = {a.casefold() for a in issue.assignees}
        return (*issue.assignees, *(login for login in logins if login.casefold() not in have))

    async def user_exists(self, login: str) -> bool:
        return await self.inner.user_exists(login)

    async def remove_assignees(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        issue = await self.get_issue(repo, number)
        self._write(f"unassign {', '.join(logins)} from {repo}#{number}")
        gone = {login.casefold() for login in logins}
        return tuple(a for a in issue.assignees if a.casefold() not in gone)

    async def pin_issue(self, repo: RepoRef, number: int) -> bool:
        # A made-up number (negative) is an issue this dry run "opened".
        named = f"{repo}#{number}" if number > 0 else f"the new issue on {repo}"
        self._write(f"pin {named} (unless it is pinned already)")
        return True

    async def unpin_issue(self, repo: RepoRef, number: int) -> None:
        self._write(f"unpin {repo}#{number} (if it is pinned)")

    async def add_blocked_by(self, repo: RepoRef, number: int, blocker: int) -> None:
        self._write(f"mark {repo}#{number} blocked by #{blocker}")

    async def create_issue(
        self,
        repo: RepoRef,
        title: str,
        body: str,
        labels: Sequence[str] = (),
        milestone: int | None = None,
    ) -> Issue:
        self._write(f"open an issue on {repo}: {title!r}")
        me = await self.whoami()
        number = next(self._ids)
        made = Issue(number, title, body, "open", me.login, tuple(labels), milestone, id=number)
        self._issues[made.number] = made
        return made

    async def edit_issue(
        self,
        repo: RepoRef,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: IssueState | None = None,
        milestone: int | Keep | None = KEEP,
    ) -> Issue:
        issue = await self.get_issue(repo, number)
        if number < 0 and body is not None and title is None and state is None and milestone is KEEP:
            # An issue this run only pretended to open, edited to sign its record in: reported already.
            self._issues[number] = replace(issue, body=body)
            return self._issues[number]
        changes = [
            what
            for what, given in (
                ("title", title is not None),
                ("body", body is not None),
                (f"state to {state}", state is not None),
                ("milestone", milestone is not KEEP),
            )
            if given
        ]
        named = f"{repo}#{number}" if number > 0 else f"the new issue {issue.title!r} on {repo}"
        self._write(f"edit {named}: {', '.join(changes) or 'nothing'}")
        edited = replace(
            issue,
            title=issue.title if title is None else title,
            body=issue.body if body is None else body,
            state=issue.state if state is None else state,
            milestone=issue.milestone if isinstance(milestone, Keep) else milestone,
        )
        if number < 0:
            self._issues[number] = edited
        return edited

    async def close_issue(
        self, repo: RepoRef, number: int, *, reason: CloseReason = "completed", duplicate_of: int = 0
    ) -> Issue:
        issue = await self.get_issue(repo, number)
        self._write(f"close {repo}#{number} ({reason.replace('_', ' ')})")
        return replace(issue, state="closed", state_reason=reason)

    async def opened_before(self, repo: RepoRef, login: str, number: int) -> bool:
        return await self.inner.opened_before(repo, login, number)

    async def body_versions(self, repo: RepoRef, number: int) -> list[BodyVersion] | None:
        return await self.inner.body_versions(repo, number)

    async def set_milestone_state(self, repo: RepoRef, key: int, state: IssueState) -> Milestone:
        found = await self.inner.get_milestone(repo, key)
        self._write(f"set milestone {found.title!r} of {repo} to {state}")
        return replace(found, state=state)

    async def commit_files(
        self, repo: RepoRef, *, base: str, branch: str, files: Sequence[FileChange], message: str
    ) -> Commit:
        self._write(f"commit {len(files)} file(s) to {repo}@{branch}: {_excerpt(message)}")
        head = await self.inner.get_branch(repo, branch) or await self.inner.get_branch(repo, base) or ""
        changed = tuple(ChangedFile(f.path, "removed" if f.content is None else "modified") for f in files)
        return Commit(sha="0" * 40, parents=(head,) if head else (), message=message, files=changed)

    async def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str, draft: bool = False
    ) -> PullRequest:
        existing = await self.inner.find_pull_request(repo, head)
        if existing is not None:
            return existing
        self._write(f"open a {'draft ' if draft else ''}pull request {head} → {base} on {repo}: {title!r}")
        me = await self.whoami()
        made = PullRequest(next(self._ids), title, body, "open", draft, False, head, "", base, me.login)
        self._pulls[made.number] = made
        return made

    async def request_reviewers(self, repo: RepoRef, number: int, logins: Sequence[str]) -> tuple[str, ...]:
        pull = await self.get_pull_request(repo, number)
        self._write(f"request a review of {repo}#{number} from {', '.join('@' + n for n in logins)}")
        return tuple(dict.fromkeys((*pull.requested_reviewers, *logins)))

    async def set_commit_status(
        self,
        repo: RepoRef,
        sha: str,
        context: str,
        state: StatusState,
        description: str = "",
        target_url: str = "",
    ) -> CommitStatus:
        self._write(f"set status {context}={state} on {repo}@{sha[:10]}: {description}")
        return CommitStatus(context, state, description[:140], target_url)

    async def set_check_run(
        self,
        repo: RepoRef,
        sha: str,
        name: str,
        state: StatusState,
        description: str = "",
        target_url: str = "",
    ) -> CheckRun:
        if not getattr(self.inner, "as_app", False):  # a token, or Gitea: the forge would post none
            raise NotSupported("check runs are posted by a GitHub App only")
        self._write(f"post check run {name}={state} on {repo}@{sha[:10]}: {description}")
        return CheckRun(name, "in_progress" if state == "pending" else "completed", title=description[:140])

    async def redeliver(self, repo: RepoRef | None, delivery: HookDelivery) -> None:
        self._write(f"redeliver {delivery.guid}")
