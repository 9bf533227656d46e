"""What Steward writes for bugfix branches: the refusal, the bug's record comment, the pull request's body,
the ledger comment, the budget-exhausted note and the closing summary. Pure: values in, markdown out.
Next action first, @mention who must act, machine data in ``<details>`` (DESIGN §8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.forge import ForgeKind, Review
from bot.records import neutralise
from handlers.bugfix.gate import Refusal
from handlers.bugfix.ledger import Ledger
from handlers.bugfix.native_reviews import Conflict, shown
from handlers.bugfix.regression_slot import fence_info
from handlers.bugfix.restorations import Restoration
from handlers.bugfix.restorations import lines as restoration_lines
from handlers.bugfix.scope import ScopeAcceptance, item_words
from handlers.bugfix.status import CONTEXT, INFRA_ERROR, RegressionStatus

MAX_TABLE_ROWS = 60
_ICON = {"success": "✅", "failure": "❌", "pending": "⏳"}


def fence(code: str, info: str = "") -> str:
    """``code`` verbatim in a fence longer than any run of backticks in it; the info string only when it is
    a plain language name (``[A-Za-z0-9+#-]``)."""
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return f"{ticks}{fence_info(info)}\n{code.rstrip(chr(10))}\n{ticks}"


def _completion_meaning(word: str) -> str:
    """Seed 001's completion words stay as written, each with what it means beside it."""
    if word == "CLEAN":
        return "the review found nothing left to fix."
    return "the review is complete; the findings not fixed were accepted as residuals (listed below)."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


inert = neutralise.inert


def cell(text: str, limit: int = 200) -> str:
    return neutralise.cell(text, limit)


def branch_url(html_url: str, branch: str, forge: ForgeKind) -> str:
    if not html_url:
        return ""
    return f"{html_url}/src/branch/{branch}" if forge == "gitea" else f"{html_url}/tree/{branch}"


def refusal_text(refusals: Sequence[Refusal]) -> str:
    lines = ["I can't open a bugfix branch for this bug yet:", ""]
    for refusal in refusals:
        lines.append(f"- {refusal.message[:1].upper()}{refusal.message[1:]} <sub>`{refusal.code}`</sub>")
        if refusal.code_block:
            lines += [
                "",
                # split("\n"), not splitlines(): that also splits at \f, \x1c-\x1e, U+2028…, which would
                # change the code shown.
                *("  " + line for line in fence(refusal.code_block, refusal.code_info).split("\n")),
            ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Opened:
    number: int
    branch: str
    branch_link: str
    base: str
    path: str
    digest: str
    pull: int | None
    pull_link: str
    red_sha: str
    trusted_by: str = ""
    merged: bool = False
    # Merged without its proof (the status was not success at the merged head, or a required check failed).
    unproven: bool = False


def record_text(o: Opened) -> str:
    branch = f"[`{o.branch}`]({o.branch_link})" if o.branch_link else f"`{o.branch}`"
    if o.merged and o.unproven:
        head = (
            f"**Merged without its proof** in #{o.pull} from branch {branch}: the bug stays open. The "
            "comment "
            "below lists what was missing."
        )
    elif o.merged:
        head = f"**Fixed** in #{o.pull} (merged) from branch {branch}: nothing to do. The summary is below."
    elif o.pull is None:
        head = f"Opening the bugfix branch {branch}…"
    else:
        head = (
            f"**Bugfix in progress:** branch {branch} and draft pull request #{o.pull}. Next: CI must fail "
            "on the first commit (the regression test alone), then push the fix to the branch."
        )
    lines = [head, ""]
    lines.append(f"- Regression test: `{o.path}` (test code digest `{o.digest}`)")
    if o.red_sha:
        lines.append(f"- First commit (red): `{o.red_sha[:10]}`, from `{o.base}`")
    if o.trusted_by:
        lines.append(f"- Test code vouched for by @{o.trusted_by}")
    if not o.merged:  # once merged, nothing is missing: the record says it is done, and no more
        lines.append(
            f"- The pull request's `{CONTEXT}` status and its ledger comment say what is missing next."
        )
    return "\n".join(lines)


def pull_body(number: int, observed_expected: str, hypothesis: str, path: str) -> str:
    lines = [
        f"Fixes the bug in #{number} — regression first: the first commit adds only the regression test "
        f"(`{path}`), which must fail on CI; the commits after it fix the bug and make it pass.",
        "",
        "### Observed vs expected",
        "",
        inert(observed_expected) or "_(see the bug)_",
        "",
        "### Root-cause hypothesis",
        "",
        inert(hypothesis) or "_(see the bug)_",
        "",
        "### Checklist",
        "",
        "- [ ] CI fails on the first commit (red proof), or a gap is disclosed with `/accept-gap <reason>`",
        "- [ ] The fix (at most 2 commits after the red one; amend and force-push after that) makes CI green",
        "- [ ] A reviewer who did not commit reviews the head: `/review clean` or `/review findings`",
        "- [ ] Every finding has a disposition: "
        "`/disposition <id> fix|low|out-of-scope|unvalidated <reason>`",
        "",
        f"Refs #{number}",
    ]
    return "\n".join(lines)


def ledger_text(
    *,
    number: int,
    status: RegressionStatus,
    ledger: Ledger,
    red_sha: str,
    head_sha: str,
    red_ci: str,
    head_ci: str,
    native: Sequence[Review] = (),
    restored: Sequence[Restoration] = (),
) -> str:
    icon = _ICON[status.state]
    lines = [f"{icon} **Regression-first: {status.description}**", ""]
    if status.detail:
        lines += [status.detail, ""]
    b = ledger.budgets
    lines.append(
        f"Bug #{number} · review rounds {ledger.rounds_used}/{b.review_rounds} · fix cycles "
        f"{ledger.fix_cycles_used}/{b.fix_cycles} · no-verdict retries "
        f"{ledger.retries_used}/{b.no_verdict_retries}"
    )
    if status.state == "success":
        lines.append(f"Completion: **{ledger.completion()}** — {_completion_meaning(ledger.completion())}")
    lines += ["", "| Proof | Commit | CI |", "|---|---|---|"]
    lines.append(f"| red (the test alone) | `{red_sha[:10]}` | {red_ci or '—'} |")
    lines.append(f"| head | `{head_sha[:10]}` | {head_ci or '—'} |")
    if ledger.gaps:
        lines += ["", "**Disclosed gaps** (instead of red proof):"]
        lines += [f"- {cell(g.reason)} — @{g.actor}" for g in ledger.gaps[:20]]
    if ledger.scopes:
        lines += ["", "**Scope accepted** (the fix goes beyond its evidence):"]
        lines += [_scope_line(a) for a in ledger.scopes[:20]]
    if ledger.rounds:
        lines += ["", "| Round | Head | Reviewer | Verdict | Findings |", "|---|---|---|---|---|"]
        for i, rnd in enumerate(ledger.rounds, start=1):
            found = ", ".join(f"{f.id} ({f.severity})" for f in rnd.findings) or cell(rnd.reason, 80) or "—"
            n = ledger.number_of(i)
            verdict = f"{rnd.verdict} — **void**: {cell(rnd.void, 120)}" if rnd.void else rnd.verdict
            lines.append(f"| {n} | `{rnd.head[:10]}` | @{rnd.actor} | {verdict} | {found} |")
        findings = [
            (ledger.number_of(i), f) for i, r in enumerate(ledger.rounds, start=1) for f in r.findings
        ]
        if findings:
            lines += ["", "<details><summary>Findings and dispositions</summary>", ""]
            lines += [
                "| Round | Id | Severity (category · impact) | Location | Finding | Disposition |",
                "|---|---|---|---|---|---|",
            ]
            for i, f in findings[:MAX_TABLE_ROWS]:
                record = ledger.disposition_of(i, f.id)
                disposed = f"{record.disposition}: {cell(record.reason, 80)}" if record else "**needed**"
                lines.append(
                    f"| {i} | {f.id} | {cell(f.kind, 100)} | `{cell(f.location, 80)}` | {cell(f.text)} "
                    f"| {disposed} |"
                )
            if len(findings) > MAX_TABLE_ROWS:
                lines.append(f"| … {len(findings) - MAX_TABLE_ROWS} more | | | | | |")
            lines += ["", "</details>"]
    rows = shown(native, head_sha)
    if rows:
        lines += [
            "",
            "**Native reviews** (they spend no review round; a request for changes on the head waits for a "
            "`/review` round):",
            "",
            "| Reviewer | Verdict | Commit | On the head |",
            "|---|---|---|---|",
            *rows,
        ]
    lines += restoration_lines(restored)
    lines += [
        "",
        "<details><summary>Commands</summary>",
        "",
        "- `/review clean` · `/review inconclusive <why>` · `/review findings` then lines "
        "`<id> <severity> <path:line> <text>` (write access; not whoever ran `/bugfix`, "
        "authored, committed or pushed to the branch)",
        "- `/disposition <id> fix|low|out-of-scope|unvalidated <reason>` (write access)",
        "- `/accept-gap <reason>` records a disclosed gap instead of red proof (maintain access)",
        "- `/scope <reason>` accepts a fix that goes beyond its evidence (maintain access; not whoever "
        "made or moved the branch)",
        "",
        "</details>",
        "",
        "<details><summary>Status record</summary>",
        "",
        f"`steward/regression-first`: {status.state}, by the rule `{status.code}`{_meaning(status.code)} "
        "(docs/bugfix.md lists the rules).",
        "",
        "</details>",
    ]
    return "\n".join(lines)


def _meaning(code: str) -> str:
    if code == INFRA_ERROR:
        return " — a check Steward could not make, so the status stays closed until it can"
    return ""


def _scope_line(accepted: ScopeAcceptance) -> str:
    files = ", ".join(cell(item_words(f), 140) for f in accepted.files[:10])
    more = f" +{len(accepted.files) - 10}" if len(accepted.files) > 10 else ""
    return f"- {files}{more}: {cell(accepted.reason)} — @{accepted.actor}"


def exhausted_note(mentions: Sequence[str], ledger: Ledger, ledger_link: str, number: int) -> str:
    who = " ".join(f"@{m}" for m in dict.fromkeys(mentions) if m) or "Maintainers"
    return (
        f"{who}: the review budget of bug #{number} is exhausted — a person must decide how it goes on. "
        f"{ledger.exhaustion_reason} A new pull request does not reset the budget, nor does editing my "
        "comments, and a finding's disposition stands. Decide one of: split the remaining work into a new "
        "bug and close this pull request; merge it as it is — the bug then stays open, labelled "
        "`bugfix:merged-unproven`, with what was missing; or close the pull request and the bug. "
        f"[Ledger]({ledger_link})"
    )


@dataclass(frozen=True)
class Summary:
    number: int
    pull: int
    steps: str
    observed_expected: str
    hypothesis: str
    path: str
    red_sha: str
    red_ci: str
    head_sha: str
    head_ci: str
    status: str
    # What the merged head lacked (empty: an honest completion).
    missing: tuple[str, ...] = ()
    # The hypotheses the investigation refuted, and the reviewers' conflicts on the way.
    refuted: tuple[str, ...] = ()
    conflicts: tuple[Conflict, ...] = ()


def summary_text(s: Summary, ledger: Ledger) -> str:
    if s.missing:
        lines = [
            f"**#{s.pull} was merged without its proof**, so this bug stays open (`bugfix:merged-unproven`). "
            "Next: a maintainer checks the fix on the default branch and closes the bug, or opens a new "
            "bugfix for it. What was missing at the merged head:",
            "",
            *(f"- {item}" for item in s.missing),
            "",
        ]
    else:
        lines = [
            f"**Fixed in #{s.pull}** (merged): nothing to do. Closing this bug with the evidence below.",
            "",
        ]
    b = ledger.budgets
    lines += [
        "### Reproduction",
        "",
        inert(s.steps) or "_(the bug's recipe)_",
        "",
        inert(s.observed_expected),
        "",
        "### Root cause (the confirmed hypothesis)",
        "",
        inert(s.hypothesis) or "_(see the bug)_",
        "",
        *(
            ["**Refuted on the way:**", *(f"- {cell(r, 300)}" for r in s.refuted[:20]), ""]
            if s.refuted
            else []
        ),
        "### Regression test",
        "",
        f"`{s.path}`, added alone in `{s.red_sha[:10]}` — CI on it: {s.red_ci}.",
        "",
        "### Review",
        "",
        f"{_plural(ledger.rounds_used, 'round')}; completion "
        + (
            "**UNPROVEN** — merged without its proof (above)."
            if s.missing
            else f"**{ledger.completion()}** — {_completion_meaning(ledger.completion())}"
        ),
        f"Budgets used: review rounds {ledger.rounds_used}/{b.review_rounds}, fix cycles "
        f"{ledger.fix_cycles_used}/{b.fix_cycles}, no-verdict retries {ledger.retries_used}/"
        f"{b.no_verdict_retries}.",
    ]
    for i, rnd in enumerate(ledger.rounds, start=1):
        lines.append(f"- Round {ledger.number_of(i)} on `{rnd.head[:10]}` by @{rnd.actor}: {rnd.verdict}")
    lines += [
        "",
        "### Verification",
        "",
        f"Head `{s.head_sha[:10]}` — CI: {s.head_ci}; `{CONTEXT}`: {s.status}.",
    ]
    residuals = ledger.residuals()
    if residuals:
        lines += [
            "",
            "### Accepted residuals",
            "",
            "| Severity | Disposition | Location | Reason |",
            "|---|---|---|---|",
        ]
        for r in residuals[:MAX_TABLE_ROWS]:
            lines.append(
                f"| {cell(r.finding.kind, 100)} | {r.disposition} | `{cell(r.finding.location, 80)}` "
                f"| {cell(r.reason)} |"
            )
    if ledger.gaps:
        lines += ["", "### Disclosed gaps", ""]
        lines += [f"- {cell(g.reason)} — @{g.actor}" for g in ledger.gaps[:20]]
    if ledger.scopes:
        lines += ["", "### Scope accepted beyond the evidence", ""]
        lines += [_scope_line(a) for a in ledger.scopes[:20]]
    if s.conflicts:
        lines += ["", "### Reviewer conflicts", ""]
        for conflict in s.conflicts[:20]:
            found = ", ".join(f"{f.id} ({f.severity})" for f in conflict.findings)
            lines.append(
                f"- `{conflict.head[:10]}`: @{conflict.actor} reported blocking findings "
                f"({cell(found, 200)}) on a head another reviewer passed clean"
            )
    return "\n".join(line for line in lines)
