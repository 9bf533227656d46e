"""The `steward demo` scene of regression-first bugfix branches: `/bugfix` on a refined bug, CI red on the
test alone, a fix beyond its evidence and its size budget accepted with `/scope`, a product decision that
stops the loop until it is decided, CI green, a refused self-review, an independent one and the security
group's, then a weakened test that fails the proof, and a merge that leaves the bug open as merged without
its proof."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from bot.demo.stage import CONFIG_PATHS, DEMO_CONFIG, Person, add_collaborator, put_cart_code
from bot.demo.texts import APPROVED_BUG

if TYPE_CHECKING:
    from bot.demo.stage import Stage

CONTEXT = "steward/regression-first"
# The scene's settings (issue 36 §2, §5): a size budget the fix goes over, and a security reviewer group for
# the cart's code.
BUGFIX_CONFIG = """bugfix:
  max_fix_lines: 3
  sensitive_paths:
    security:
      paths: ["cart/**"]
      reviewers: ["guard"]
"""
FORK = "\n\n## Open forks\n\n- [ ] F1: Round the discount before or after the currency conversion?\n"


def _say(text: str) -> None:
    print(text, flush=True)


def _root(person: Person) -> str:
    base = str(person.http.base_url).rstrip("/")
    return base.removesuffix("/api/v1")


def _play_ci(stage: Stage, sha: str, outcome: str, says: str = "") -> None:
    """The sandbox plays CI: a check run on GitHub (``says``: its summary), a commit status on Gitea
    (``says``: its description)."""
    kind = "check_run" if stage.flavor == "github" else "status"
    key = "conclusion" if kind == "check_run" else "state"
    body = {"repo": stage.repo, "sha": sha, "kind": kind, "context": "ci/tests", key: outcome}
    if says:
        body["summary" if kind == "check_run" else "description"] = says
    stage.maintainer("POST", f"{_root(stage.maintainer)}/_sandbox/ci", body)


def _push(stage: Stage, branch: str, path: str, text: str) -> str:
    found = stage.maintainer.get_optional(f"/repos/{stage.repo}/contents/{path}?ref={branch}")
    body: dict[str, Any] = {
        "message": "fix: keep the discount when the currency changes",
        "content": base64.b64encode(text.encode()).decode(),
        "branch": branch,
    }
    if found:
        body["sha"] = found["sha"]
    method = "POST" if stage.flavor == "gitea" and not found else "PUT"
    return str(stage.maintainer(method, f"/repos/{stage.repo}/contents/{path}", body)["commit"]["sha"])


def _status(stage: Stage, sha: str) -> str:
    for status in stage.maintainer("GET", f"/repos/{stage.repo}/commits/{sha}/statuses"):
        if status["context"] == CONTEXT:
            return f"{status.get('state') or status.get('status')} — {status['description']}"
    return "(none)"


def bugfix_scene(stage: Stage) -> None:
    _say("\n▶ Regression-first bugfix: the failing test first, then the fix, then an independent review")
    path = CONFIG_PATHS[stage.flavor]
    stage.put_file(path, DEMO_CONFIG + BUGFIX_CONFIG)
    _say(
        f"  @maintainer set in `{path}` a size budget for fixes (`bugfix.max_fix_lines: 3`; 400 by default) "
        "and a `security` reviewer group for `cart/**` (`bugfix.sensitive_paths`: @guard)."
    )
    stage.settle()
    number = stage.issue(
        stage.maintainer, "Cart total ignores the discount after a currency switch", APPROVED_BUG
    )
    stage.label(number, ["bug", "refine"])
    put_cart_code(stage)
    stage.settle()
    stage.comment(stage.maintainer, number, "/steward bugfix")
    stage.settle()
    _say("  The bug is refined (approved) but its root cause is not evidenced: `/steward bugfix` is refused.")
    stage.show(number, max_lines=4)
    stage.comment(
        stage.maintainer,
        number,
        "/steward hypothesis Switch drops the code: cart/total.py:42 rebuilds the total without the discount"
        "\n\n/steward hypothesis Stale rate: the exchange rate is cached per session",
    )
    stage.settle()
    stage.comment(
        stage.maintainer, number, "/steward confirm H1 a trace shows cart/total.py:42 drops `discount`"
    )
    stage.settle()
    stage.comment(stage.maintainer, number, "/steward bugfix")
    _say(
        "  @maintainer confirmed H1 with evidence at `cart/total.py:42` and asked for `/steward bugfix` "
        "while H2 was still pending:"
    )
    stage.settle()
    stage.show(number, max_lines=3)
    stage.comment(stage.maintainer, number, "/steward refute H2 the rate is read on every request")
    stage.settle()
    stage.comment(stage.maintainer, number, "/steward bugfix")
    _say("  @maintainer refuted H2, then asked for `/steward bugfix` again.")
    stage.settle()
    stage.show(number, max_lines=5)
    pulls = [p for p in stage.maintainer("GET", f"/repos/{stage.repo}/pulls?state=open")
             if str(p["head"]["ref"]).startswith("bugfix/")]  # fmt: skip
    if not pulls:
        return
    pr = pulls[0]
    branch, red = str(pr["head"]["ref"]), str(pr["head"]["sha"])
    _say(f"\n  Draft pull request #{pr['number']} “{pr['title']}”, branch `{branch}`.")
    _play_ci(stage, red, "failure", "FAILED tests/test_cart.py::test_discount_survives_a_currency_switch")
    stage.settle()
    _say("  CI failed on the first commit (the regression test alone), naming that test: the bug reproduces.")
    fixed = "def convert(total, rate, discount):\n    return total * rate\n"
    fix = _push(stage, branch, "cart/rates.py", fixed)
    stage.settle()
    _say(f"  @maintainer pushed the fix `{fix[:10]}` to `cart/rates.py`, a file the evidence does not name:")
    _say(f"    commit status {CONTEXT}: {_status(stage, fix)}")
    sandbox = _root(stage.maintainer)
    guard = Person(sandbox, "guard", stage.flavor)
    add_collaborator(stage.maintainer, stage.repo, guard, "admin" if stage.flavor == "gitea" else "maintain")
    stage.comment(
        guard,
        int(pr["number"]),
        "/steward scope the discount is lost where the total is converted, in cart/rates.py",
    )
    _say(
        "  @guard (maintain access, who wrote none of the fix) accepted both — the file and the size — with "
        "`/steward scope <reason>`:"
    )
    stage.settle()
    stage.show(int(pr["number"]), max_lines=2)
    bug = stage.maintainer("GET", f"/repos/{stage.repo}/issues/{number}")
    stage.maintainer("PATCH", f"/repos/{stage.repo}/issues/{number}", {"body": str(bug["body"]) + FORK})
    stage.settle()
    _say(
        "\n  Then @maintainer raised a product question on the bug — a design fork, F1: round the discount "
        "before or after the conversion? The loop stops for it:"
    )
    _say(f"    commit status {CONTEXT}: {_status(stage, fix)}")
    stage.comment(stage.maintainer, number, "/steward decide F1 after the conversion, as the price list does")
    stage.settle()
    _say("  @maintainer decided F1 (`/steward decide`); CI then passed on the fix.")
    _play_ci(stage, fix, "success")
    stage.settle()
    add_collaborator(
        stage.maintainer, stage.repo, stage.outsider, "write" if stage.flavor == "gitea" else "push"
    )
    stage.comment(stage.maintainer, int(pr["number"]), "/steward review clean")
    _say(
        "  @maintainer, who ran `/steward bugfix` and wrote the fix, wrote `/steward review clean`: refused, "
        "whoever writes the fix does not judge it."
    )
    stage.settle()
    stage.show(int(pr["number"]), max_lines=3)
    stage.comment(stage.outsider, int(pr["number"]), "/steward review clean")
    _say("  @outsider (a collaborator now, who committed nothing) reviewed the head: `review clean`.")
    stage.settle()
    stage.show(int(pr["number"]), max_lines=8)
    _say(
        "\n  The fix touches `cart/**`, the security group's paths: the independent review is not enough."
        f"\n    commit status {CONTEXT}: {_status(stage, fix)}"
    )
    approve = "APPROVE" if stage.flavor == "github" else "APPROVED"
    guard("POST", f"/repos/{stage.repo}/pulls/{pr['number']}/reviews", {"event": approve, "body": "ok"})
    _say("  @guard, of the security group, approved the head (the forge's own review).")
    stage.settle()
    _say(f"    commit status {CONTEXT}: {_status(stage, fix)}")
    weakened = (
        "import pytest\n\n\n@pytest.mark.skip\ndef test_discount_survives_a_currency_switch():\n"
        "    assert True\n"
    )
    head = _push(stage, branch, "tests/test_cart.py", weakened)
    stage.settle()
    _play_ci(stage, head, "success")
    stage.settle()
    _say(
        f"\n  Then @maintainer pushed `{head[:10]}`: the regression test skipped, its assertion now "
        "`assert True`. CI is green — the proof is not:"
    )
    _say(f"    commit status {CONTEXT}: {_status(stage, head)}")
    merge: tuple[str, dict[str, Any]] = ("POST", {"Do": "merge"}) if stage.flavor == "gitea" else ("PUT", {})
    stage.maintainer(merge[0], f"/repos/{stage.repo}/pulls/{pr['number']}/merge", merge[1])
    _say(
        f"\n  @maintainer merged #{pr['number']} anyway: the bug stays open, labelled "
        "`bugfix:merged-unproven`, with what was missing."
    )
    stage.settle()
    stage.show(number, max_lines=8)
    stage.put_file(path, DEMO_CONFIG)
    stage.settle()
