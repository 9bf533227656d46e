"""Comment links, as pure rules: which forge a link belongs to and which comment it names.

FORGE-FACTS "Links": GitHub writes ``https://HOST/OWNER/REPO/issues/N#issuecomment-ID`` and, on a pull
request, ``…/pull/N#issuecomment-ID`` (a review comment on a diff is ``…/pull/N#discussion_rID``, another
API); Gitea/Forgejo ``…/issues/N#issuecomment-ID`` and ``…/pulls/N#issuecomment-ID``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.forge import ForgeKind, NotSupported, RepoRef

_DEFAULT_PORTS = {"http": 80, "https": 443}
# The path segment before the number, per forge.
_KINDS: dict[ForgeKind, tuple[str, ...]] = {"github": ("issues", "pull"), "gitea": ("issues", "pulls")}


@dataclass(frozen=True)
class CommentAddress:
    repo: RepoRef
    number: int
    comment_id: int


def github_web_base(api_url: str) -> str:
    """The web root of a GitHub API: github.com for api.github.com, ``https://HOST`` for GitHub Enterprise
    Server's ``https://HOST/api/v3``; anything else (the sandbox) serves its web pages where its API is."""
    parts = urlsplit(api_url.rstrip("/"))
    if parts.netloc.casefold() == "api.github.com":
        return "https://github.com"
    if parts.path.rstrip("/").endswith("/api/v3"):
        return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/').removesuffix('/api/v3')}"
    return api_url.rstrip("/")


def github_graphql_url(api_url: str) -> str:
    """Where a GitHub API takes GraphQL: ``https://api.github.com/graphql``; GitHub Enterprise Server's
    ``https://HOST/api/graphql`` beside its REST ``https://HOST/api/v3`` ("Forming calls with GraphQL");
    anything else (the sandbox) at ``<api>/graphql``."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.casefold()
    return scheme, (parts.hostname or "").casefold(), parts.port or _DEFAULT_PORTS.get(scheme)


def parse_comment_url(url: str, web_base: str, kind: ForgeKind) -> CommentAddress:
    """The comment a link names, or ``NotSupported`` saying why not (another host, a review comment on a
    diff, not a comment link)."""
    given = url.strip()
    if _origin(given) != _origin(web_base):
        raise NotSupported(f"{given!r} is not a link on this forge ({web_base})")
    parts = urlsplit(given)
    prefix = urlsplit(web_base).path.rstrip("/")
    path = parts.path
    if prefix:
        if not path.startswith(prefix + "/"):
            raise NotSupported(f"{given!r} is not a link on this forge ({web_base})")
        path = path[len(prefix) :]
    fragment = parts.fragment
    if fragment.startswith("discussion_r"):
        raise NotSupported(f"{given!r} is a review comment on a diff, which is not supported (only comments)")
    found = re.fullmatch(r"/([^/]+)/([^/]+)/([a-z]+)/(\d+)/?", path)
    if found is None or found.group(3) not in _KINDS[kind]:
        raise NotSupported(f"{given!r} is not a link to an issue or pull request comment")
    comment = re.fullmatch(r"issuecomment-(\d+)", fragment)
    if comment is None:
        raise NotSupported(f"{given!r} is not a link to a comment (it has no #issuecomment-ID)")
    return CommentAddress(
        repo=RepoRef(found.group(1), found.group(2)),
        number=int(found.group(4)),
        comment_id=int(comment.group(1)),
    )


def repo_now(address: CommentAddress, html_url: str, web_base: str, kind: ForgeKind) -> RepoRef:
    """The repository a comment is in as the forge names it now: its ``html_url`` once read. A link written
    before a rename or a transfer names the old owner/name, which the forge redirects to the repository it
    is in now; the link's own name when the forge gave no readable address."""
    try:
        return parse_comment_url(html_url, web_base, kind).repo
    except NotSupported:
        return address.repo
