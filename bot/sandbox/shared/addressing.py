"""How a request names its repository: by owner/name, by id, or by a name the repository no longer has.

GitHub serves every repository route under `/repositories/{id}` too (its pagination links use that form),
and answers a renamed or transferred repository's old name with a redirect to the id form; Gitea answers an
old name with a redirect to the new owner/name path. Both are done here, in front of the routes, so every
route the sandbox serves is reachable each way.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from .runtime import Principal, Sandbox
from .state import Repo

_BY_ID = re.compile(r"^/repositories/(\d+)(/.*)?$")
_GITHUB_NAMED = re.compile(r"^/repos/([^/]+)/([^/]+)(/.*)?$")
_GITEA_NAMED = re.compile(r"^/api/v1/repos/([^/]+)/([^/]+)(/.*)?$")
# The documentation GitHub's redirect answers name (octokit/fixtures `rename-repository`).
REDIRECT_DOCS = "https://docs.github.com/v3/#http-redirects"


def is_gitea(path: str) -> bool:
    return path == "/api/v1" or path.startswith("/api/v1/")


def id_form(path: str, sandbox: Sandbox) -> str | None:
    """`/repositories/{id}/…` for a GitHub `/repos/{owner}/{name}/…` path, when that repository exists: the
    form of GitHub's `Link` headers (octokit/fixtures `paginate-issues`: a list read at
    `/repos/o/r/issues` links its pages as `/repositories/{id}/issues?…`)."""
    found = _GITHUB_NAMED.match(path)
    if found is None or is_gitea(path):
        return None
    repo = sandbox.forge.repo(found[1], found[2])
    return f"/repositories/{repo.id}{found[3] or ''}" if repo is not None else None


class Addressing:
    """ASGI middleware inside ``ApiMiddleware`` (which has authenticated the caller)."""

    def __init__(self, app: ASGIApp, sandbox: Sandbox) -> None:
        self.app = app
        self.sandbox = sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/_sandbox"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if is_gitea(path):
            named = _GITEA_NAMED.match(path)
            moved = self._moved(named)
            if named is not None and moved is not None:
                await self._gitea_redirect(scope, send, named, moved)
                return
        else:
            by_id = _BY_ID.match(path)
            if by_id is not None:
                repo = self.sandbox.forge.repo_by_id(int(by_id[1]))
                if repo is not None:
                    scope = _rewritten(scope, f"/repos/{repo.owner}/{repo.name}{by_id[2] or ''}")
            named = _GITHUB_NAMED.match(path)
            moved = self._moved(named)
            if named is not None and moved is not None and self._visible(scope, moved):
                await self._github_redirect(scope, send, named, moved)
                return
        await self.app(scope, receive, send)

    def _moved(self, named: re.Match[str] | None) -> Repo | None:
        """The repository an owner/name path used to name (None when that name is a repository's now)."""
        if named is None or self.sandbox.forge.repo(named[1], named[2]) is not None:
            return None
        return self.sandbox.forge.redirect(named[1], named[2])

    def _visible(self, scope: Scope, repo: Repo) -> bool:
        """GitHub redirects only those who may read the repository; others get its 404."""
        login = principal_login(scope)
        return self.sandbox.forge.can(repo, login, "pull")

    async def _github_redirect(self, scope: Scope, send: Send, named: re.Match[str], repo: Repo) -> None:
        """docs.github.com "Best practices for using the REST API" › "Follow redirects"; octokit/fixtures
        `rename-repository`: the old name answers a GET with 301 and a PATCH with 307, `Location` the
        repository's id form, the body `{"message": "Moved Permanently", "url", "documentation_url"}`
        (a 307 too, as 18F/charlie#85 quotes it). The rest of the path follows (`…/issues`, ibid.)."""
        base = _base(scope)
        location = f"{base}/repositories/{repo.id}{named[3] or ''}"
        query = scope.get("query_string", b"").decode("latin-1")
        if query:
            location += "?" + query
        status = 301 if scope["method"] in ("GET", "HEAD") else 307
        body = {"message": "Moved Permanently", "url": location, "documentation_url": REDIRECT_DOCS}
        await _answer(send, status, location, json.dumps(body).encode(), "application/json; charset=utf-8")

    async def _gitea_redirect(self, scope: Scope, send: Send, named: re.Match[str], repo: Repo) -> None:
        """services/context/repo.go RedirectToRepo (reached from routers/api/v1/api.go repoAssignment when
        `repo_model.LookupRedirect` finds the old name): 307 for every method, to the request's path with
        the old owner/name replaced by the new, its query kept; a path without the host."""
        path = f"/api/v1/repos/{repo.owner}/{repo.name}{named[3] or ''}"
        query = scope.get("query_string", b"").decode("latin-1")
        location = path + ("?" + query if query else "")
        page = f'<a href="{location}">Temporary Redirect</a>.\n\n'.encode()
        await _answer(
            send, 307, location, page if scope["method"] == "GET" else b"", "text/html; charset=utf-8"
        )


def principal_login(scope: Scope) -> str | None:
    """Who ``ApiMiddleware`` found the request to come from (None: nobody, or an App by its JWT)."""
    found = scope.get("state", {}).get("principal")
    return found.login if isinstance(found, Principal) else None


def _rewritten(scope: Scope, path: str) -> Scope:
    """The request as if it named the repository's current owner/name (what the routes serve)."""
    return {**scope, "path": path, "raw_path": path.encode()}


def _base(scope: Scope) -> str:
    headers = dict(scope["headers"])
    host = headers.get(b"host", b"").decode("latin-1")
    if not host and scope.get("server"):
        server: Any = scope["server"]
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


async def _answer(send: Send, status: int, location: str, body: bytes, media: str) -> None:
    headers = [
        (b"location", location.encode("latin-1")),
        (b"content-type", media.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
