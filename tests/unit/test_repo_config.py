"""The repository configuration file: parsing with lines, "did you mean", the schema, merging, the
reference table, and `steward check-config` / `steward config-schema`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config.repo_file import (
    REFERENCE_END,
    REFERENCE_START,
    merge,
    parse,
    reference_markdown,
    schema,
    sources,
)
from bot.config.settings import HandlerSettings

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("help", "ping", "refresh", "refine", "approve-spec", "config")


def test_an_empty_file_sets_nothing() -> None:
    for text in ("", "# only a comment\n", "---\n"):
        parsed = parse(text)
        assert parsed.valid and parsed.data == {}


def test_a_valid_file_overrides_only_what_it_names() -> None:
    parsed = parse("backlog:\n  round_cap: 3\ncommands:\n  approve-spec: {permission: author}\n", COMMANDS)
    assert parsed.valid
    merged = merge(HandlerSettings(), parsed.data or {})
    assert merged.backlog.round_cap == 3
    assert merged.backlog.refine_label == "refine", "a section named in the file keeps its other defaults"
    assert merged.permission("approve-spec", "triage") == "author"
    assert merged.permission("refresh", "triage") == "triage"


def test_every_error_names_its_key_and_line() -> None:
    text = "limits:\n  commands_per_minute: -1\nbacklog:\n  round_cap: many\n"
    errors = {e.path: e for e in parse(text).errors}
    assert errors["limits.commands_per_minute"].line == 2
    assert "greater than or equal to 0" in errors["limits.commands_per_minute"].message
    assert errors["backlog.round_cap"].line == 4
    assert str(errors["backlog.round_cap"]).startswith("backlog.round_cap (line 4): ")


@pytest.mark.parametrize(
    ("text", "path", "hint"),
    [
        ("backlog:\n  roundcap: 3\n", "backlog.roundcap", "did you mean `round_cap`?"),
        ("backlogs:\n  round_cap: 3\n", "backlogs", "did you mean `backlog`?"),
        ("milestones:\n  labels:\n    dashbord: x\n", "milestones.labels.dashbord", "`dashboard`?"),
        ("commands:\n  aprove-spec: {permission: author}\n", "commands.aprove-spec", "`approve-spec`?"),
        ("commands:\n  refine: {permision: author}\n", "commands.refine.permision", "`permission`?"),
        ("bugfix:\n  zzz: 1\n", "bugfix.zzz", "known keys: enabled, branch_prefix"),
    ],
)
def test_a_typo_is_an_error_with_a_suggestion(text: str, path: str, hint: str) -> None:
    parsed = parse(text, COMMANDS)
    assert not parsed.valid
    [error] = [e for e in parsed.errors if e.path == path]
    assert hint in error.message
    assert error.line is not None


def test_permissions_are_the_documented_words_only() -> None:
    parsed = parse("commands:\n  refresh: {permission: owner}\n", COMMANDS)
    [error] = parsed.errors
    assert error.path == "commands.refresh.permission" and error.line == 2
    assert "anyone" in error.message and "maintain" in error.message


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"backlog: [unclosed\n", "not valid YAML"),
        (b"- a\n- b\n", "must be a mapping"),
        (b"just words\n", "must be a mapping"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"a: " + b"x" * 300_000, "larger than"),
        (b"backlog: &a\n  round_cap: 3\nforks: *a\n", "aliases (`*name`) are not supported"),
        (b"a: " + b"[" * 5000 + b"]" * 5000, "nested too deeply"),
    ],
)
def test_a_file_that_is_not_settings_is_refused_with_a_reason(raw: bytes, says: str) -> None:
    parsed = parse(raw)
    assert not parsed.valid
    assert any(says in e.message for e in parsed.errors), parsed.errors


def test_a_billion_laughs_file_is_refused_before_it_expands() -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    lines += ["forks:", "  headings: *a9"]
    parsed = parse("\n".join(lines))
    assert not parsed.valid and "aliases" in parsed.errors[0].message and parsed.errors[0].line == 2


def test_yaml_tags_that_build_objects_are_not_honoured() -> None:
    parsed = parse("backlog: !!python/object/apply:os.system ['true']\n")
    assert not parsed.valid and "not valid YAML" in parsed.errors[0].message


@settings(max_examples=300)
@given(st.text(max_size=400))
def test_parse_never_raises(text: str) -> None:
    parsed = parse(text, COMMANDS)
    assert parsed.valid or parsed.errors
    for error in parsed.errors:
        assert error.line is None or 1 <= error.line <= text.count("\n") + 2


_section_values = st.fixed_dictionaries(
    {},
    optional={
        "limits": st.fixed_dictionaries(
            {}, optional={"commands_per_minute": st.integers(0, 1000), "stories_per_bug": st.integers(0, 200)}
        ),
        "backlog": st.fixed_dictionaries(
            {},
            optional={
                "round_cap": st.integers(1, 50),
                "refine_label": st.text(min_size=1, max_size=20),
                "enabled": st.booleans(),
            },
        ),
        "commands": st.dictionaries(
            st.sampled_from(COMMANDS),
            st.fixed_dictionaries({"permission": st.sampled_from(["anyone", "author", "triage", "admin"])}),
            max_size=3,
        ),
    },
)


@settings(max_examples=200)
@given(_section_values)
def test_any_valid_settings_survive_a_yaml_round_trip(values: dict[str, object]) -> None:
    parsed = parse(yaml.safe_dump(values), COMMANDS)
    assert parsed.valid, parsed.errors
    merged = merge(HandlerSettings(), parsed.data or {})
    again = merge(merged, {})
    assert again == merged
    for path, value, origin in sources(parsed.data or {}, merged):
        assert origin in ("file", "default")
        if origin == "file":
            node: object = values
            for part in path.split("."):
                assert isinstance(node, dict)
                node = node[part]
            assert node == value


def test_the_schema_accepts_what_the_parser_accepts_and_refuses_typos() -> None:
    found = schema(COMMANDS)
    jsonschema.Draft202012Validator.check_schema(found)
    validator = jsonschema.Draft202012Validator(found)
    good = yaml.safe_load("backlog:\n  round_cap: 3\ncommands:\n  refine: {permission: author}\n")
    assert not list(validator.iter_errors(good))
    assert list(validator.iter_errors({"backlog": {"roundcap": 3}}))
    assert list(validator.iter_errors({"commands": {"nope": {"permission": "author"}}}))
    # Every section has `enabled` (but `commands` and `limits`, which are not capabilities).
    sections = found["properties"]
    for name in ("bug_refinement", "backlog", "forks", "milestones", "bugfix", "debug"):
        ref = sections[name]["$ref"].split("/")[-1]
        assert "enabled" in found["$defs"][ref]["properties"], name
    assert "triage means write" in json.dumps(found), "Gitea's mapping is documented in the schema"


def test_the_readme_reference_is_the_one_the_schema_makes() -> None:
    readme = (ROOT / "README.md").read_text()
    match = re.search(re.escape(REFERENCE_START) + r"\n(.*?)\n" + re.escape(REFERENCE_END), readme, re.S)
    assert match, "README.md must embed the configuration reference (run `make docs`)"
    assert match[1] == reference_markdown(), "the README's configuration table is stale: run `make docs`"
    for path in re.findall(r"^\| `([a-z_.]+)` \|", match[1], re.M):
        node: dict[str, object] = schema()
        for part in path.split("."):
            props = node.get("properties") or {}
            if "$ref" in node:
                props = schema()["$defs"][str(node["$ref"]).split("/")[-1]]["properties"]
            assert isinstance(props, dict) and part in props, path
            node = props[part]


def _steward(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin.decode() if stdin else None,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_check_config_exit_codes_and_lines(tmp_path: Path) -> None:
    good = tmp_path / "good.yml"
    good.write_text("backlog:\n  round_cap: 3\n")
    bad = tmp_path / "bad.yml"
    bad.write_text("backlog:\n  round_cap: 3\n  roundcap: 4\ncommands:\n  refrsh: {permission: anyone}\n")
    ok = _steward("check-config", str(good))
    assert ok.returncode == 0 and "valid" in ok.stdout
    wrong = _steward("check-config", str(bad))
    assert wrong.returncode == 1
    assert f"{bad}:3: backlog.roundcap: unknown key `roundcap`; did you mean `round_cap`?" in wrong.stdout
    assert f"{bad}:5: commands.refrsh: unknown command `refrsh`; did you mean `refresh`?" in wrong.stdout
    missing = _steward("check-config", str(tmp_path / "absent.yml"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    piped = _steward("check-config", "-", stdin=b"forks:\n  enabled: maybe\n")
    assert piped.returncode == 1 and "-:2: forks.enabled:" in piped.stdout


def test_check_config_reports_a_key_given_twice_in_plain_words_and_says_what_an_invalid_file_means() -> None:
    """Issue 37: two `limits:` passed silently (YAML keeps the last); pydantic's "Input should be a valid
    integer, unable to parse string as an integer" named the parser; and "keeps the last valid settings" was
    said of every file, though a repository that never had a valid one has none."""
    text = b"limits:\n  stories_per_bug: 3\nbacklog:\n  round_cap: many\nlimits:\n  references_per_issue: 9\n"
    done = _steward("check-config", "-", stdin=text)
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert (
        "-:5: limits: `limits` is given twice (lines 1 and 5); only one would count: merge them into one"
        in lines
    )
    assert "-:4: backlog.round_cap: should be a whole number, like 3" in lines
    assert "valid integer" not in done.stdout and "unable to parse" not in done.stdout
    assert lines[-1].startswith("2 errors: fix them before pushing.")
    assert "never had a valid file stays switched off" in lines[-1]
    nested = parse("commands:\n  refine: {permission: triage}\n  refine: {permission: write}\n")
    assert [e.path for e in nested.errors] == ["commands.refine"] and nested.errors[0].line == 3
    flag = parse("forks:\n  enabled: maybe\n")
    assert [e.message for e in flag.errors] == ["should be true or false"]


def test_config_schema_prints_the_schema() -> None:
    done = _steward("config-schema")
    assert done.returncode == 0
    printed = json.loads(done.stdout)
    assert printed["$schema"].endswith("2020-12/schema")
    assert "config" in printed["properties"]["commands"]["propertyNames"]["enum"]


def test_permissions_a_capability_checks_itself_are_configurable_too() -> None:
    done = _steward("check-config", "-", stdin=b"commands:\n  gate-override: {permission: admin}\n")
    assert done.returncode == 0, done.stdout
    printed = json.loads(_steward("config-schema").stdout)
    assert "gate-override" in printed["properties"]["commands"]["propertyNames"]["enum"]


@pytest.mark.parametrize(
    ("command", "permission"),
    [("accept-gap", "triage"), ("gate-override", "anyone"), ("init", "author"), ("red-proof", "triage")],
)
def test_a_privileged_act_below_its_floor_is_an_error_with_the_reason(command: str, permission: str) -> None:
    """Issue 24: configuration cannot lower the floor of a privileged act; Steward uses the floor anyway."""
    parsed = parse(f"commands:\n  {command}:\n    permission: {permission}\n")
    assert not parsed.valid
    [error] = parsed.errors
    assert error.path == f"commands.{command}.permission" and error.line == 3
    assert "at least `write`" in error.message and f"`{permission}` is below" in error.message
    lowered = HandlerSettings.model_validate({"commands": {command: {"permission": permission}}})
    assert lowered.permission(command, "maintain") == "write"
    assert parse(f"commands:\n  {command}:\n    permission: admin\n").valid
