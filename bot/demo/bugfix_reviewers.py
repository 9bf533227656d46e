"""`steward demo --all`: reviewers for a bugfix pull request (issue 39, `bugfix.request_reviewers`) — the
draft is marked ready with only its regression test, nobody is asked; once the fix is pushed Steward asks an
independent code owner of the changed files (not whoever ran `/bugfix`) and names the files nobody eligible
owns."""

from __future__ import annotations

import base64

from bot.demo.stage import (
    CONFIG_PATHS,
    DEMO_CONFIG,
    Person,
    Stage,
    add_collaborator,
    put_cart_code,
    quote,
    say,
)
from bot.demo.texts import APPROVED_BUG

REVIEWERS_CONFIG = "bugfix:\n  request_reviewers: true\n"
# Each forge's own CODEOWNERS rules: GitHub's gitignore-style patterns, Gitea's Go regular expressions.
CODEOWNERS = {
    "github": (".github/CODEOWNERS", "cart/ @maintainer @guard\n"),
    "gitea": ("CODEOWNERS", "cart/.* @maintainer @guard\n"),
}
READY = (
    "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { clientMutationId } }"
)


def _asked(stage: Stage, number: int) -> str:
    pull = stage.maintainer("GET", f"/repos/{stage.repo}/pulls/{number}")
    return ", ".join(f"@{u['login']}" for u in pull.get("requested_reviewers") or []) or "(nobody)"


def bugfix_reviewers_scene(stage: Stage) -> None:
    say("\n▶ Reviewers for a bugfix pull request")
    sandbox = str(stage.maintainer.http.base_url).rstrip("/").removesuffix("/api/v1")
    guard = Person(sandbox, "guard", stage.flavor)
    add_collaborator(stage.maintainer, stage.repo, guard, "admin" if stage.flavor == "gitea" else "maintain")
    path = CONFIG_PATHS[stage.flavor]
    stage.put_file(path, DEMO_CONFIG + REVIEWERS_CONFIG)
    owners, text = CODEOWNERS[stage.flavor]
    stage.put_file(owners, text)
    put_cart_code(stage)
    say(
        f"  @maintainer switched on `bugfix.request_reviewers` in `{path}`; `{owners}` names @maintainer and "
        "@guard as the owners of the cart's code."
    )
    stage.settle()
    number = stage.issue(stage.maintainer, "Cart total drops the discount on a currency switch", APPROVED_BUG)
    stage.label(number, ["bug", "refine"])
    stage.settle()
    stage.comment(
        stage.maintainer,
        number,
        "/steward hypothesis Switch drops the code: cart/total.py:42 rebuilds the total without the discount"
        "\n/steward confirm H1 a trace shows cart/total.py:42 drops `discount`",
    )
    stage.settle()
    stage.comment(stage.maintainer, number, "/steward bugfix")
    stage.settle()
    pulls = [p for p in stage.maintainer("GET", f"/repos/{stage.repo}/pulls?state=open")
             if str(p["head"]["ref"]).startswith(f"bugfix/{number}-")]  # fmt: skip
    if not pulls:
        stage.show(number, max_lines=4)
        return
    pr = pulls[0]
    pr_number, branch = int(pr["number"]), str(pr["head"]["ref"])
    if stage.flavor == "github":
        stage.maintainer("POST", "/graphql", {"query": READY, "variables": {"id": pr["node_id"]}})
    else:
        title = str(pr["title"]).removeprefix("WIP: ")
        stage.maintainer("PATCH", f"/repos/{stage.repo}/pulls/{pr_number}", {"title": title})
    stage.settle()
    say(f"\n  @maintainer ran `/steward bugfix` and marked #{pr_number} ready while it held only the test:")
    say(f"    review requested from: {_asked(stage, pr_number)}")
    fixed = "def convert(total, rate, discount):\n    return (total - discount) * rate\n"
    found = stage.maintainer.get_optional(f"/repos/{stage.repo}/contents/cart/rates.py?ref={branch}")
    body = {
        "message": "fix: keep the discount when the currency changes",
        "content": base64.b64encode(fixed.encode()).decode(),
        "branch": branch,
    }
    if found:
        body["sha"] = found["sha"]
    method = "POST" if stage.flavor == "gitea" and not found else "PUT"
    stage.maintainer(method, f"/repos/{stage.repo}/contents/cart/rates.py", body)
    stage.settle()
    say("  @maintainer pushed the fix to `cart/rates.py`: Steward asks an owner who wrote none of it.")
    comments = stage.maintainer("GET", f"/repos/{stage.repo}/issues/{pr_number}/comments")
    for comment in comments:
        if "<!-- steward:bugfix-reviewers:" in comment["body"]:
            say(f"\n    @{comment['user']['login']} wrote:")
            quote(comment["body"], 4)
    say(f"    review requested from: {_asked(stage, pr_number)}")
    stage.put_file(path, DEMO_CONFIG)
    stage.settle()
