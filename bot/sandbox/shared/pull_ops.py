"""Forge-neutral operations on pull requests and branches: open, push to, merge; and the webhooks they cause.

Both forges number pull requests and issues in one sequence, so a pull request is an ``Issue`` with
``PullData``; closing, reopening, labelling and commenting go through ``issue_ops`` as for any issue, and
the emitter words the webhooks as pull request events.
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.shared import ci_ops, closing_refs, codeowners, fork_ops, gitmodel, issue_ops

from .caller import Caller
from .plumbing import ApiError
from .pulls import branch_head, changes_of, is_draft, open_pulls
from .state import GitCommit, Issue, PullData, PushRecord, Repo, Signature, now_iso

# writing --------------------------------------------------------------------------------------------------


def open_pull(
    caller: Caller,
    repo: Repo,
    *,
    title: str,
    body: str | None,
    head: str,
    base: str,
    draft: bool,
    head_repo: Repo | None = None,
) -> Issue:
    """A new open pull request (the caller has checked the branches and that none is open for `head`);
    `head_repo` is the fork its head branch lives in (None: this repository)."""
    head_sha, base_sha = branch_head(head_repo or repo, head), branch_head(repo, base)
    assert head_sha is not None and base_sha is not None
    if head_repo is not None:
        fork_ops.copy_objects(head_repo, repo)
    number = repo.next_number
    repo.next_number += 1
    issue = Issue(
        id=caller.forge.new_id(),
        number=number,
        title=title,
        body=body,
        user=caller.login,
        via_app=caller.via_app,
        pull=PullData(
            head_ref=head,
            base_ref=base,
            head_sha=head_sha,
            base_sha=base_sha,
            draft=draft,
            head_repo=fork_ops.key(head_repo) if head_repo is not None else None,
        ),
    )
    repo.issues[number] = issue
    request_code_owners(caller, repo, issue)
    caller.events.issue(repo, issue, "opened")
    return issue


def edit_pull(caller: Caller, repo: Repo, issue: Issue, body: dict[str, Any], invalid: ApiError) -> None:
    """Change a pull request's `title`, `body`, `state` and `base` (GitHub "Update a pull request", Gitea
    EditPullRequest): its author or a writer may; one `edited` event for the text and base, then `closed`
    or `reopened`. `invalid` is the flavour's error for a bad state or a base branch that does not exist."""
    assert issue.pull is not None
    text: dict[str, Any] = {f: body[f] for f in ("title", "body") if f in body and body[f] is not None}
    text = {f: str(v) for f, v in text.items() if v != getattr(issue, f)}
    base = body.get("base")
    state = body.get("state")
    issue_ops.check_edit(caller, repo, issue, text, state, invalid)
    if base is not None and base != issue.pull.base_ref:
        caller.require_author(repo, issue.user)
        if not isinstance(base, str) or branch_head(repo, base) is None or issue.pull.merged:
            raise invalid
        old = issue.pull.base_ref
        issue.pull.base_ref, issue.pull.base_sha = base, branch_head(repo, base) or issue.pull.base_sha
        issue.updated_at = now_iso()
        changes = {"base": {"ref": {"from": old}, "sha": {"from": issue.pull.base_sha}}}
        if text:
            issue_ops.edit_text(caller, repo, issue, text)
        else:
            caller.events.issue(repo, issue, "edited", changes)
    else:
        was_draft = is_draft(repo, issue)
        issue_ops.edit_text(caller, repo, issue, text)
        if was_draft and not is_draft(repo, issue):  # Gitea: the WIP prefix came off
            request_code_owners(caller, repo, issue)
    if state is not None and not issue.pull.merged:
        issue_ops.set_state(caller, repo, issue, state)


def request_reviews(caller: Caller, repo: Repo, issue: Issue, logins: list[str], *, add: bool) -> None:
    """Add or withdraw review requests (the caller has checked who may and whom). Someone already requested
    stays once: both forges keep one request per reviewer (GitHub's requested_reviewers is a set; Gitea keeps
    one ReviewTypeRequest review per user, models/issues/review.go AddReviewRequest returns early when the
    latest review is already a request). Each request made or withdrawn sends its webhook, one per reviewer:
    GitHub `pull_request` `review_requested` / `review_request_removed` with `requested_reviewer` (octokit
    webhook schemas pull_request/review_requested, review_request_removed); Gitea X-Gitea-Event
    `pull_request`, type `pull_request_review_request`, the same actions (services/webhook/notifier.go
    PullRequestReviewRequest; modules/structs/hook.go HookIssueReviewRequested,
    HookIssueReviewRequestRemoved).
    """
    assert issue.pull is not None
    have = issue.pull.requested_reviewers
    for login in logins:
        found = next((r for r in have if r.casefold() == login.casefold()), None)
        if add and found is None:
            have.append(login)
            caller.events.review_request(repo, issue, login, "review_requested")
        elif not add and found is not None:
            have.remove(found)
            caller.events.review_request(repo, issue, found, "review_request_removed")


def request_code_owners(caller: Caller, repo: Repo, issue: Issue) -> None:
    """What both forges do when a pull request is opened ready or a draft is made ready: ask every code owner
    of its changed files for a review, read on the base repository's default branch with the forge's own
    rules (``codeowners``) — never on a draft, never its author, never someone without access
    (GitHub docs "About code owners": "Code owners are automatically requested for review when someone opens
    a pull request that modifies code that they own … not … for draft pull requests"; Gitea
    services/issue/pull.go PullRequestCodeOwnersReview: none while WIP, not the poster, and on
    IssueChangeTitle when the WIP prefix comes off). Teams are not modelled."""
    assert issue.pull is not None
    if issue.state != "open" or is_draft(repo, issue):
        return
    flavor = "gitea" if repo.flavor == "gitea" else "github"
    head = branch_head(repo, repo.default_branch)
    tree = repo.commits[head].tree if head in repo.commits else None
    text = None
    for path in codeowners.GITEA if flavor == "gitea" else codeowners.GITHUB:
        entry = gitmodel.lookup(repo, tree, path) if tree else None
        if entry is not None and entry.type == "blob":
            text = gitmodel.blob_bytes(repo, entry.sha).decode("utf-8", "replace")
            break
    if text is None:
        return
    added, removed, modified = changes_of(repo, issue)
    wanted: list[str] = []
    for path in [*added, *removed, *modified]:
        for name in codeowners.owners(flavor, text, path):
            user = caller.forge.user(name) if "/" not in name and "@" not in name else None
            if user is None or user.login.casefold() == issue.user.casefold():
                continue
            if caller.forge.role_of(repo, user.login) is None and (flavor == "github" or repo.private):
                continue
            if user.login not in wanted:
                wanted.append(user.login)
    request_reviews(caller, repo, issue, wanted, add=True)


def review_submitted(issue: Issue, reviewer: str) -> None:
    """A submitted review takes its reviewer off the requested reviewers (GitHub REST "List requested
    reviewers": "Once a requested reviewer submits a review, they are no longer considered a requested
    reviewer"; Gitea lists a reviewer as requested only while their latest review is the request)."""
    if issue.pull is not None:
        kept = [r for r in issue.pull.requested_reviewers if r.casefold() != reviewer.casefold()]
        issue.pull.requested_reviewers = kept


def pushed(
    caller: Caller,
    repo: Repo,
    ref: str,
    before: str | None,
    after: str | None,
    forced: bool = False,
    merge: bool = False,
) -> None:
    """A branch moved: the forge records who moved it (its push history), the push webhook, then each open
    pull request of that branch is synchronised (GitHub `pull_request` synchronize, Gitea
    `pull_request_sync` synchronized)."""
    repo.pushed_at = now_iso()
    repo.pushes.append(
        PushRecord(
            id=caller.forge.new_id(),
            ref=ref,
            before=before,
            after=after,
            actor=caller.login,
            forced=forced,
            merge=merge,
        )
    )
    caller.events.push(repo, ref, before, after, forced)
    if after is None or not ref.startswith("refs/heads/"):
        return
    branch = ref.removeprefix("refs/heads/")
    for issue in open_pulls(repo):
        assert issue.pull is not None
        if issue.pull.head_repo is None and issue.pull.head_ref == branch and issue.pull.head_sha != after:
            old, issue.pull.head_sha = issue.pull.head_sha, after
            issue.updated_at = now_iso()
            caller.events.pull_synchronized(repo, issue, old, after)
    if repo.fork_of is not None:
        fork_ops.fork_pushed(caller, repo, branch, after)
    ci_ops.on_push(caller, repo, branch, after)


def merge(
    caller: Caller,
    repo: Repo,
    issue: Issue,
    *,
    method: str,
    title: str | None,
    message: str | None,
    expected_head: str | None,
    not_mergeable: ApiError,
    head_moved: ApiError,
) -> GitCommit:
    """Merge the pull request into its base (merge commit, squash, or rebase as a fast-forward when possible)
    and close it; refuses with the flavour's errors when it is not open, conflicts, or its head moved."""
    assert issue.pull is not None
    pr = issue.pull
    if issue.state != "open" or pr.merged:
        raise not_mergeable
    if expected_head and expected_head != pr.head_sha:
        raise head_moved
    base_sha = branch_head(repo, pr.base_ref)
    if base_sha is None or pr.head_sha not in repo.commits:
        raise not_mergeable
    files = gitmodel.merged_files(repo, base_sha, base_sha, pr.head_sha)
    if files is None:
        raise not_mergeable
    me = Signature(name=caller.login, email=f"{caller.login}@users.noreply.sandbox")
    if method == "rebase" and base_sha in gitmodel.ancestors(repo, pr.head_sha):
        merged = repo.commits[pr.head_sha]
    else:
        parents = [base_sha] if method in ("squash", "rebase") else [base_sha, pr.head_sha]
        default = f"Merge pull request #{issue.number} from {repo.owner}/{pr.head_ref}\n\n{issue.title}"
        text = "\n\n".join(part for part in (title, message) if part) or default
        merged = gitmodel.make_commit(repo, gitmodel.write_tree(repo, files), parents, text, me, me)
    repo.refs[f"refs/heads/{pr.base_ref}"] = merged.sha
    pr.merged, pr.merged_at, pr.merged_by, pr.merge_commit_sha = True, now_iso(), caller.login, merged.sha
    issue.state, issue.closed_at, issue.closed_by = "closed", pr.merged_at, caller.login
    issue.updated_at = pr.merged_at
    pushed(caller, repo, f"refs/heads/{pr.base_ref}", base_sha, merged.sha, merge=True)
    caller.events.issue(repo, issue, "closed")
    if pr.base_ref == repo.default_branch:
        _close_named_issues(caller, repo, issue, base_sha, merged.sha)
    return merged


def _close_named_issues(caller: Caller, repo: Repo, pull: Issue, base_sha: str, merged_sha: str) -> None:
    """What the description and the commits that landed close (``closing_refs``: both forges' rules)."""
    before = set(gitmodel.ancestors(repo, base_sha))
    texts = [
        pull.body or "",
        *(repo.commits[sha].message for sha in gitmodel.ancestors(repo, merged_sha) if sha not in before),
    ]
    for number in closing_refs.closed_by("\n".join(texts), repo.owner, repo.name):
        target = repo.issues.get(number)
        if target is not None and target.pull is None and number != pull.number:
            issue_ops.set_state(caller, repo, target, "closed")
