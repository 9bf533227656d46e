"""Label descriptions in the repository's language (issue 34 §2), end to end on both forges: with
`language: pt` in the configuration, the refinement labels Steward creates are described in Portuguese (while
the verdict speaks the report's language); a push that switches the language to `en` gives Steward's labels
the English descriptions; a description the team wrote for a label of Steward's is never replaced."""

from __future__ import annotations

from typing import Any

from bot.config.label_texts import LABEL_DESCRIPTIONS
from tests.e2e.conftest import Steward
from tests.e2e.stack import TEST_CONFIG_PATHS


def descriptions(steward: Steward, repo: str) -> dict[str, str]:
    labels: list[dict[str, Any]] = steward.maintainer.call("GET", f"/repos/{repo}/labels")
    return {str(label["name"]): str(label.get("description") or "") for label in labels}


def test_labels_are_described_in_the_repositorys_language_and_follow_it(steward: Steward) -> None:
    m = steward.maintainer
    repo = steward.new_repo()
    config = TEST_CONFIG_PATHS[steward.forge]
    m.put_file(repo, config, "language: pt\n")
    ours = "Ready for work: the team's own words"
    color = "0e8a16" if steward.forge == "github" else "#0e8a16"
    m.call(
        "POST", f"/repos/{repo}/labels", {"name": "refinement:approved", "color": color, "description": ours}
    )
    steward.settle()

    number = steward.outsider.open_issue(repo, "It crashes", "The app crashes when I save.")
    m.add_labels(repo, number, ["bug", "refine"])
    steward.settle()
    pt = LABEL_DESCRIPTIONS["pt"]["needs-info"]
    assert descriptions(steward, repo)["refinement:needs-info"] == pt, "created in the repository's language"
    [verdict] = [c["body"] for c in steward.bot_comments(repo, number) if "Refinement Verdict" in c["body"]]
    assert "Which version" in verdict, "the verdict speaks the report's language (English)"

    m.put_file(repo, config, "language: en\n")
    steward.settle()
    after = descriptions(steward, repo)
    assert after["refinement:needs-info"] == LABEL_DESCRIPTIONS["en"]["needs-info"], "follows the language"
    assert after["refinement:approved"] == ours, "the team's own description is left alone"

    m.put_file(repo, config, "language: en\nmode: live\n")  # a change that keeps the language: no write
    steward.settle()
    assert descriptions(steward, repo) == after
