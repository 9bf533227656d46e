"""JSON → port values where the forges differ (bot.forge.shapes), no I/O."""

from __future__ import annotations

from bot.forge import ChangedFile
from bot.forge.shapes import changed_files, pull_from_json, status_from_json


def test_file_statuses_of_both_forges_become_three_words() -> None:
    """GitHub: added/removed/modified/renamed/copied/changed; Gitea commits added/removed/modified, Gitea
    pull request files added/deleted/changed/renamed (services/convert/pull.go ToChangedFile); older Gitea
    gave commit files no status."""
    found = changed_files(
        [
            {"filename": "a", "status": "added"},
            {"filename": "b", "status": "deleted"},
            {"filename": "c", "status": "changed"},
            {"filename": "d", "status": "renamed", "previous_filename": "old-d"},
            {"filename": "e"},
            {"filename": "f", "status": "copied"},
        ]
    )
    assert found == (
        ChangedFile("a", "added"),
        ChangedFile("b", "removed"),
        ChangedFile("c", "modified"),
        ChangedFile("d", "added"),
        ChangedFile("e", "modified"),
        ChangedFile("f", "added"),
        ChangedFile("old-d", "removed"),
    )


def test_githubs_pull_request_lists_say_merged_only_by_merged_at() -> None:
    raw = {"number": 1, "state": "closed", "merged_at": "2026-01-01T00:00:00Z", "head": {}, "base": {}}
    assert pull_from_json(raw, milestone_key="number").merged
    assert not pull_from_json({**raw, "merged_at": None}, milestone_key="number").merged


def test_gitea_names_a_statuss_state_status() -> None:
    assert status_from_json({"status": "warning", "context": "ci"}).state == "warning"
    assert status_from_json({"state": "success", "context": "ci"}).state == "success"
