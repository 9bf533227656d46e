"""Comment links (bot.forge.links): which forge a link is on and which comment it names, no I/O."""

from __future__ import annotations

import pytest

from bot.forge import NotSupported, RepoRef
from bot.forge.links import github_graphql_url, github_web_base, parse_comment_url, repo_now


@pytest.mark.parametrize(
    ("api", "web"),
    [
        ("https://api.github.com", "https://github.com"),
        ("https://api.github.com/", "https://github.com"),
        ("https://ghe.example.com/api/v3", "https://ghe.example.com"),
        ("http://127.0.0.1:8700", "http://127.0.0.1:8700"),
    ],
)
def test_githubs_web_root_follows_from_its_api(api: str, web: str) -> None:
    assert github_web_base(api) == web


@pytest.mark.parametrize(
    ("api", "graphql"),
    [
        ("https://api.github.com", "https://api.github.com/graphql"),
        ("https://api.github.com/", "https://api.github.com/graphql"),
        ("https://ghe.example.com/api/v3", "https://ghe.example.com/api/graphql"),
        ("http://127.0.0.1:8700", "http://127.0.0.1:8700/graphql"),
    ],
)
def test_githubs_graphql_endpoint_follows_from_its_api(api: str, graphql: str) -> None:
    """api.github.com/graphql; GitHub Enterprise Server HOST/api/graphql beside HOST/api/v3."""
    assert github_graphql_url(api) == graphql


def test_github_issue_and_pull_request_comment_links() -> None:
    """FORGE-FACTS "Links": GitHub …/issues/N#issuecomment-ID and …/pull/N#issuecomment-ID."""
    found = parse_comment_url(
        "https://github.com/o/r/issues/12#issuecomment-345", "https://github.com", "github"
    )
    assert (found.repo, found.number, found.comment_id) == (RepoRef("o", "r"), 12, 345)
    found = parse_comment_url("https://github.com/o/r/pull/7#issuecomment-9", "https://github.com", "github")
    assert (found.number, found.comment_id) == (7, 9)


def test_gitea_issue_and_pull_request_comment_links_under_a_sub_path() -> None:
    """FORGE-FACTS "Links": Gitea …/issues/N#issuecomment-ID and …/pulls/N#issuecomment-ID."""
    base = "https://code.example/gitea"
    found = parse_comment_url(f"{base}/o/r/pulls/3#issuecomment-4", base, "gitea")
    assert (found.repo, found.number, found.comment_id) == (RepoRef("o", "r"), 3, 4)
    assert parse_comment_url("HTTPS://CODE.EXAMPLE:443/gitea/o/r/issues/1#issuecomment-2", base, "gitea")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://gitlab.com/o/r/issues/1#issuecomment-2", "not a link on this forge"),
        ("http://github.com/o/r/issues/1#issuecomment-2", "not a link on this forge"),
        ("https://github.com/o/r/pull/1#discussion_r2", "review comment"),
        ("https://github.com/o/r/issues/1", "not a link to a comment"),
        ("https://github.com/o/r/issues/1#issue-2", "not a link to a comment"),
        ("https://github.com/o/r/pulls/1#issuecomment-2", "not a link to an issue"),
        ("https://github.com/o/r/commit/abc#issuecomment-2", "not a link to an issue"),
        ("https://github.com/o/r/issues/1/extra#issuecomment-2", "not a link to an issue"),
    ],
)
def test_anything_else_is_not_supported_with_the_reason(url: str, why: str) -> None:
    with pytest.raises(NotSupported, match=why):
        parse_comment_url(url, "https://github.com", "github")


def test_a_gitea_link_outside_its_sub_path_is_not_its() -> None:
    with pytest.raises(NotSupported, match="not a link on this forge"):
        parse_comment_url(
            "https://code.example/o/r/issues/1#issuecomment-2", "https://code.example/gitea", "gitea"
        )


def test_a_link_by_a_repositorys_old_name_names_the_repository_the_comment_is_in_now() -> None:
    """A link written before a rename names the old owner/name; once the comment is read (the forge redirects
    the old name), its ``html_url`` says where it is now. Without a readable one, the link's own name."""
    web = "https://gitea.example/git"
    old = parse_comment_url(f"{web}/o/old/issues/3#issuecomment-9", web, "gitea")
    now = repo_now(old, f"{web}/acme/new/issues/3#issuecomment-9", web, "gitea")
    assert now == RepoRef("acme", "new")
    assert repo_now(old, "", web, "gitea") == RepoRef("o", "old")
