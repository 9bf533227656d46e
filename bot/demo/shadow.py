"""The `steward demo` scene of shadow mode: with `mode: shadow` Steward answers a labelled bug with nothing
on the forge, and `/steward config` lists what it would have written; `mode: live` lets it act again."""

from __future__ import annotations

from typing import Any

from bot.demo.stage import CONFIG_PATHS, DEMO_CONFIG, Stage, say


def shadow_scene(stage: Stage) -> None:
    say("\n▶ Shadow mode: watching Steward before letting it speak")
    path = CONFIG_PATHS[stage.flavor]
    stage.put_file(path, DEMO_CONFIG + "mode: shadow\n")
    say(f"  @maintainer set `mode: shadow` in `{path}`.")
    stage.settle()
    number = stage.issue(stage.outsider, "Search finds nothing", "Searching for shoes finds nothing.")
    stage.label(number, ["bug", "refine"])
    stage.settle()
    mine = [c for c in _comments(stage, number) if c["user"]["login"] != stage.outsider.login]
    say(
        f"  @outsider reported #{number} and @maintainer labelled it `bug` and `refine`: Steward wrote "
        f"{len(mine)} comments and set no label."
    )
    stage.comment(stage.maintainer, number, "/steward config")
    say("  @maintainer asked `/steward config`; its answer ends with what Steward would have done:")
    stage.settle()
    answer = str(next((c["body"] for c in _comments(stage, number) if "**Shadow mode**" in c["body"]), ""))
    wanted = [line for line in answer.splitlines() if line.startswith("- ") and " would " in line]
    say("\n".join(f"      │ {line.split(': ', 1)[-1]}" for line in wanted[:4]) or "      │ (nothing listed)")
    stage.put_file(path, DEMO_CONFIG)
    say("  @maintainer set it back to live (no `mode` line): Steward acts again from the next event.")
    stage.settle()


def _comments(stage: Stage, number: int) -> list[dict[str, Any]]:
    found = stage.maintainer("GET", f"/repos/{stage.repo}/issues/{number}/comments")
    return list(found)
