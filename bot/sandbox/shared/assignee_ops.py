"""Who each forge lets be assigned to an issue (FORGE-FACTS "Assignees", pinned by
tests/sandbox/test_sandbox_assignees.py).

- GitHub: "You can assign up to 10 people to each issue or pull request, including yourself, anyone who has
  commented on the issue or pull request, anyone with write permissions to the repository, and organization
  members with read permissions to the repository" (docs.github.com, "Assigning issues and pull requests to
  other GitHub users"); in practice anyone on the repository's collaborators page (rust-lang/rust#64114) —
  the sandbox takes any collaborator role. `POST …/issues/{n}/assignees` drops the others silently (its
  REST description answers 201 with the issue; `GET …/issues/{n}/assignees/{login}` says 204 or 404).
- Gitea: `access_model.CanBeAssigned` — write access to code, issues or pull requests
  (models/perm/access/repo_permission.go); `EditIssue` with anyone else fails whole
  (services/issue/assignee.go ``validateAssignee`` → ``ErrUserDoesNotHaveAccessToRepo``, which
  routers/api/v1/repo/issue.go answers 500).
"""

from __future__ import annotations

from bot.sandbox.shared.state import ROLE_ORDER, Issue, Repo, SandboxState, now_iso

from .caller import Caller

MAX_ASSIGNEES = 10


def github_assignable(state: SandboxState, repo: Repo, issue: Issue, login: str) -> bool:
    if state.user(login) is None:
        return False
    if state.role_of(repo, login) is not None:
        return True
    folded = login.casefold()
    return any(c.issue_number == issue.number and c.user.casefold() == folded for c in repo.comments.values())


def gitea_assignable(state: SandboxState, repo: Repo, login: str) -> bool:
    if state.user(login) is None:
        return False
    role = state.role_of(repo, login)
    return role is not None and ROLE_ORDER.index(role) >= ROLE_ORDER.index("push")


def canonical(state: SandboxState, login: str) -> str:
    user = state.user(login)
    return user.login if user is not None else login


def set_assignees(caller: Caller, repo: Repo, issue: Issue, logins: list[str]) -> None:
    """Make ``logins`` the issue's assignees (the caller has checked whom), and send one webhook per person
    assigned or no longer assigned, those taken off first. GitHub: `issues` (of a pull request
    `pull_request`) `assigned` / `unassigned` with `assignee` (octokit webhook schemas issues/assigned,
    unassigned). Gitea (services/webhook/notifier.go IssueChangeAssignee): X-Gitea-Event `issues`, type
    `issue_assign`, an IssuePayload (no assignee field); of a pull request X-Gitea-Event `pull_request`,
    type `pull_request_assign` (modules/webhook/type.go). Both send them on a change of assignees only; an
    issue opened with assignees is not modelled to send them."""
    before = {a.casefold(): a for a in issue.assignees}
    after = {a.casefold(): a for a in logins}
    if list(before) == list(after):
        return
    issue.assignees = list(after.values())
    issue.updated_at = now_iso()
    for key, login in before.items():
        if key not in after:
            caller.events.assignment(repo, issue, login, "unassigned")
    for key, login in after.items():
        if key not in before:
            caller.events.assignment(repo, issue, login, "assigned")
