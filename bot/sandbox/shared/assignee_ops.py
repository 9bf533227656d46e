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

from bot.sandbox.shared.state import ROLE_ORDER, Issue, Repo, SandboxState

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
