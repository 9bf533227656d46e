"""GitHub's REST API versions (`X-GitHub-Api-Version`): the sandbox answers each version it serves with that
version's shapes and refuses one it does not know, as GitHub does; Gitea's labels carry `is_archived`."""

from __future__ import annotations

import ast
import datetime
from pathlib import Path
from typing import Any

import httpx2

from bot.sandbox.server import SandboxServer

from .helpers import FIXTURES, OpenApiCheck, gitea_client

# githubkit-schemas-2026-03-10 26.10.21 — its Label model, generated from GitHub's description of version
# 2026-03-10 (tests/fixtures/PROVENANCE.md): the second oracle for that version.
LABEL_2026 = FIXTURES / "githubkit-schemas-2026-03-10" / "group_0043.py.txt"


def _model_fields(path: Path, name: str) -> dict[str, str]:
    """The fields of the pydantic model `name` in a githubkit model file, each with its annotation as
    written (every field there is required: `Field()` without a default)."""
    tree = ast.parse(path.read_text())
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    return {
        node.target.id: ast.unparse(node.annotation)
        for node in model.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


def _fits(value: Any, annotation: str) -> bool:
    """Does a JSON value fit a githubkit annotation (`int`, `str`, `bool`, `None`, `Union[X, None]`)?"""
    if annotation.startswith("Union["):
        return any(_fits(value, part.strip()) for part in annotation[6:-1].split(","))
    if annotation == "None":
        return value is None
    if annotation == "_dt.datetime":
        return isinstance(value, str) and bool(datetime.datetime.fromisoformat(value.replace("Z", "+00:00")))
    return isinstance(value, {"int": int, "str": str, "bool": bool}[annotation])


def label_errors(label: dict[str, Any]) -> list[str]:
    fields = _model_fields(LABEL_2026, "Label")
    missing = [f"{name} missing" for name in fields if name not in label]
    wrong = [
        f"{name}: {label[name]!r} is not {kind}"
        for name, kind in fields.items()
        if name in label and not _fits(label[name], kind)
    ]
    return missing + wrong


def test_github_answers_each_api_version_it_serves_with_that_versions_labels(
    sandbox: SandboxServer, alice: httpx2.Client, repo: str, openapi: OpenApiCheck
) -> None:
    """docs.github.com "API Versions": unversioned requests get 2022-11-28; GitHub's changelog (2026-03-12)
    announced 2026-03-10, whose Label requires `archived_at` and `archived_by` (null when not archived) —
    checked against githubkit-schemas-2026-03-10's Label model. 2022-11-28 answers stay valid against
    `@octokit/openapi` 23.0.2 (which predates 2026-03-10)."""
    # `bug` is one of the labels GitHub gives a new repository.
    n = alice.post(repo + "/issues", json={"title": "t", "labels": ["bug"]}).json()["number"]
    plain = openapi(alice.get(repo + "/labels/bug")).json()
    assert "archived_at" not in plain
    pinned = openapi(alice.get(repo + "/labels/bug", headers={"X-GitHub-Api-Version": "2022-11-28"})).json()
    assert pinned == plain
    v2026 = {"X-GitHub-Api-Version": "2026-03-10"}
    answers = [
        alice.get(repo + "/labels/bug", headers=v2026).json(),
        *alice.get(repo + "/labels", headers=v2026).json(),
        *alice.get(f"{repo}/issues/{n}/labels", headers=v2026).json(),
        alice.post(repo + "/labels", json={"name": "ui"}, headers=v2026).json(),
        alice.patch(repo + "/labels/ui", json={"color": "00ff00"}, headers=v2026).json(),
        *alice.post(f"{repo}/issues/{n}/labels", json={"labels": ["ui"]}, headers=v2026).json(),
    ]
    for label in answers:
        assert label_errors(label) == [], label
        assert (label["archived_at"], label["archived_by"]) == (None, None)


def test_github_refuses_an_api_version_it_does_not_know_with_400(alice: httpx2.Client, repo: str) -> None:
    """docs.github.com "API Versions": "If you specify an API version that is no longer supported, you will
    receive a 400 error"; GitHub's wording as quoted in expipiplus1/update-nix-fetchgit#79."""
    refused = alice.get(repo, headers={"X-GitHub-Api-Version": "v3"})
    assert refused.status_code == 400
    assert refused.json() == {
        "message": 'The version you specified in the "X-GitHub-API-Version" request header, "v3", is not a '
        'supported version. The following versions are currently supported: "2026-03-10" (most recent), '
        '"2022-11-28".',
        "documentation_url": "https://docs.github.com/rest",
    }


def test_gitea_labels_carry_is_archived(sandbox: SandboxServer) -> None:
    """Gitea's `Label` has `is_archived` (modules/structs/issue_label.go; swagger `Label`), false until a
    label is archived; Gitea ignores GitHub's version header."""
    with gitea_client(sandbox, "alice-token") as g:
        g.post("/user/repos", json={"name": "glabels"}).raise_for_status()
        made = g.post("/repos/alice/glabels/labels", json={"name": "bug", "color": "d73a4a"}).json()
        listed = g.get("/repos/alice/glabels/labels", headers={"X-GitHub-Api-Version": "v3"}).json()
        assert made["is_archived"] is False and [lb["is_archived"] for lb in listed] == [False]
