"""The per-repository configuration file: where it is, how it is read and checked, and its JSON Schema.

A repository tunes Steward with `.github/steward.yml` (GitHub) or `.gitea/steward.yml` (Gitea, which also
reads `.github/steward.yml` when it has no `.gitea/` one) on its default branch. The file's keys are
``HandlerSettings``'s sections; what it leaves out keeps its default. Reading is pure here (text in,
settings and errors out); ``bot.config.repo_settings`` fetches the file through the port and caches it.

Errors name the key's path and the file's line (``backlog.round_cap`` (line 4): …), and an unknown key
says which one was meant, so a typo never silently does nothing.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast, get_args

import yaml
from pydantic import BaseModel, ValidationError

from bot.config.settings import PRESETS, CommandSettings, HandlerSettings, Permission, below_floor
from bot.forge import ForgeKind

_PERMISSIONS: Final = frozenset(get_args(Permission))

CONFIG_PATHS: Final[Mapping[ForgeKind, tuple[str, ...]]] = {
    "github": (".github/steward.yml",),
    "gitea": (".gitea/steward.yml", ".github/steward.yml"),
}
MAX_CONFIG_BYTES: Final = 256 * 1024
SCHEMA_ID: Final = "https://steward.dev/schemas/steward.yml.json"


@dataclass(frozen=True)
class ConfigError:
    path: str  # "backlog.round_cap", or "" for the file as a whole
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.path or "the file"
        at = f" (line {self.line})" if self.line else ""
        return f"{where}{at}: {self.message}"


@dataclass(frozen=True)
class Parsed:
    """A configuration file read: its settings overrides (``data``: only what the file sets) or errors."""

    data: Mapping[str, Any] | None
    errors: tuple[ConfigError, ...]

    @property
    def valid(self) -> bool:
        return self.data is not None and not self.errors


def schema(commands: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the configuration file, from ``HandlerSettings``; ``commands``,
    the command names Steward knows, are the only keys allowed under ``commands``."""
    found = HandlerSettings.model_json_schema(mode="validation")
    if commands:
        found["properties"]["commands"]["propertyNames"] = {"enum": sorted(commands)}
    found["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    found["$id"] = SCHEMA_ID
    found["title"] = "Steward repository configuration (.github/steward.yml, .gitea/steward.yml)"
    found["description"] = (
        "Per-repository settings for Steward. Every section and key is optional; what a file leaves out "
        "keeps its default. Unknown keys are errors."
    )
    return found


class _Loader(yaml.SafeLoader):
    """YAML's safe subset without aliases: a configuration file has no use for them, and nested aliases
    expand into billions of values (a "billion laughs" file) when the settings are validated."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "aliases (`*name`) are not supported in a configuration file", event.start_mark
            )
        return super().compose_node(parent, index)


def _lines(node: yaml.Node, path: tuple[str, ...], out: dict[tuple[str, ...], int]) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = str(key.value)
            out[(*path, name)] = key.start_mark.line + 1
            _lines(value, (*path, name), out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _lines(item, (*path, str(index)), out)


def _duplicates(node: yaml.Node, path: tuple[str, ...] = ()) -> list[ConfigError]:
    """A key given twice in one mapping (two `limits:`): YAML loaders keep the last one silently, so half
    of what the file says would be dropped without a word."""
    errors: list[ConfigError] = []
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key, value in node.value:
            name, line = str(key.value), key.start_mark.line + 1
            if name in first:
                errors.append(
                    ConfigError(
                        ".".join((*path, name)),
                        line,
                        f"`{name}` is given twice (lines {first[name]} and {line}); only one would count: "
                        "merge them into one",
                    )
                )
            else:
                first[name] = line
            errors += _duplicates(value, (*path, name))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            errors += _duplicates(item, (*path, str(index)))
    return errors


def _line_of(lines: Mapping[tuple[str, ...], int], loc: Sequence[str]) -> int | None:
    for n in range(len(loc), -1, -1):
        if tuple(loc[:n]) in lines:
            return lines[tuple(loc[:n])]
    return None


def _fields_at(loc: Sequence[str]) -> list[str]:
    """The keys allowed where ``loc`` points (for "did you mean")."""
    model: type[BaseModel] = HandlerSettings
    i = 0
    while i < len(loc):
        if model is HandlerSettings and loc[i] == "commands":
            if i + 1 >= len(loc):
                return []  # any command name
            model, i = CommandSettings, i + 2
            continue
        field = model.model_fields.get(loc[i])
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model, i = annotation, i + 1
    return list(model.model_fields)


def _message(error: Mapping[str, Any], loc: tuple[str, ...]) -> str:
    if error.get("type") == "extra_forbidden":
        parent, key = loc[:-1], loc[-1]
        allowed = _fields_at(parent)
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = (
            f"; did you mean `{close[0]}`?"
            if close
            else (f"; known keys: {', '.join(allowed)}" if allowed else "")
        )
        return f"unknown key `{key}`{hint}"
    # Pydantic names Python's types; a YAML file has lists (`[a, b]` or `- a` lines) and mappings.
    return _YAML_WORDS.get(str(error.get("type"))) or plain_message(error)


# Pydantic's messages for a value of the wrong kind, in a reader's words ("Input should be a valid integer,
# unable to parse string as an integer" names the parser, not what to write).
_PLAIN: Final[Mapping[str, str]] = {
    "int_parsing": "should be a whole number, like 3",
    "int_type": "should be a whole number, like 3",
    "int_from_float": "should be a whole number, like 3",
    "float_parsing": "should be a number, like 1.5",
    "float_type": "should be a number, like 1.5",
    "bool_parsing": "should be true or false",
    "bool_type": "should be true or false",
    "string_type": "should be text",
    "missing": "is required",
}


def plain_message(error: Mapping[str, Any]) -> str:
    """One validation error of pydantic's (``ValidationError.errors()``) as a reader would say it."""
    kind = str(error.get("type"))
    if kind in _PLAIN:
        return _PLAIN[kind]
    text = str(error.get("msg", "invalid value"))
    text = text.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if text.startswith("Input should be "):
        text = "should be " + text.removeprefix("Input should be ")
    return text


_YAML_WORDS: Final[Mapping[str, str]] = {
    "tuple_type": "should be a list (`[a, b]`, or one `- item` per line)",
    "list_type": "should be a list (`[a, b]`, or one `- item` per line)",
    "dict_type": "should be a mapping (`key: value` lines)",
    "model_type": "should be a mapping (`key: value` lines)",
    "model_attributes_type": "should be a mapping (`key: value` lines)",
}


def parse(text: str | bytes, commands: Sequence[str] = ()) -> Parsed:
    """Read a configuration file; never raises. ``data`` holds what the file sets, validated. When
    ``commands`` (the command names Steward knows) is given, a key under ``commands`` that names none of
    them is an error too."""
    raw = text.encode() if isinstance(text, str) else text
    if len(raw) > MAX_CONFIG_BYTES:
        return Parsed(None, (ConfigError("", None, f"the file is larger than {MAX_CONFIG_BYTES} bytes"),))
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Parsed(None, (ConfigError("", None, "the file is not UTF-8 text"),))
    try:
        loader = _Loader(source)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        return Parsed(None, (ConfigError("", line, f"not valid YAML: {problem}"),))
    except RecursionError:
        return Parsed(None, (ConfigError("", None, "the file is nested too deeply"),))
    if data is None:
        return Parsed({}, ())
    if not isinstance(data, dict):
        return Parsed(None, (ConfigError("", 1, "the file must be a mapping of sections (`limits:`, …)"),))
    lines: dict[tuple[str, ...], int] = {}
    if node is not None:
        _lines(node, (), lines)
    given = data.get("commands")
    errors = _duplicates(node) if node is not None else []
    errors += _unknown_commands(given if isinstance(given, dict) else {}, commands, lines)
    errors += _below_floors(given if isinstance(given, dict) else {}, lines)
    try:
        HandlerSettings.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(str(part) for part in error["loc"])
            errors.append(ConfigError(".".join(loc), _line_of(lines, loc), _message(error, loc)))
    if errors:
        return Parsed(None, tuple(sorted(errors, key=lambda e: (e.line or 0, e.path))))
    return Parsed(data, ())


def _below_floors(given: Mapping[str, Any], lines: Mapping[tuple[str, ...], int]) -> list[ConfigError]:
    """A privileged act's permission set below the floor that configuration cannot lower."""
    errors = []
    for name, entry in given.items():
        permission = entry.get("permission") if isinstance(entry, Mapping) else None
        if permission not in _PERMISSIONS:
            continue
        reason = below_floor(str(name), cast(Permission, permission))
        if reason is not None:
            loc = ("commands", str(name), "permission")
            errors.append(ConfigError(".".join(loc), _line_of(lines, loc), reason))
    return errors


def _unknown_commands(
    given: Mapping[str, Any], known: Sequence[str], lines: Mapping[tuple[str, ...], int]
) -> tuple[ConfigError, ...]:
    if not known:
        return ()
    errors = []
    for name in given:
        if str(name) in known:
            continue
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = (
            f"; did you mean `{close[0]}`?" if close else f"; Steward's commands: {', '.join(sorted(known))}"
        )
        errors.append(
            ConfigError(
                f"commands.{name}", lines.get(("commands", str(name))), f"unknown command `{name}`{hint}"
            )
        )
    return tuple(errors)


def merge(defaults: HandlerSettings, overrides: Mapping[str, Any]) -> HandlerSettings:
    """``defaults`` with what a file sets laid over them, key by key (a section the file names keeps the
    keys it does not set)."""

    def deep(base: Any, over: Any) -> Any:
        if isinstance(base, dict) and isinstance(over, Mapping):
            out = dict(base)
            for key, value in over.items():
                out[key] = deep(base.get(key), value) if key in base else value
            return out
        return over

    merged = deep(defaults.model_dump(mode="json"), with_preset(overrides))
    return HandlerSettings.model_validate(merged)


def with_preset(overrides: Mapping[str, Any]) -> Mapping[str, Any]:
    """What a file sets, with its `preset` spelt out: each capability's `enabled` as the preset says, unless
    the file sets that section's `enabled` itself."""
    chosen = PRESETS.get(str(overrides.get("preset") or ""))
    if chosen is None:
        return overrides
    out = dict(overrides)
    for name in PRESETS["everything"]:
        section = out.get(name)
        if isinstance(section, Mapping) and "enabled" in section:
            continue
        out[name] = {**(section if isinstance(section, Mapping) else {}), "enabled": name in chosen}
    return out


def sources(overrides: Mapping[str, Any], settings: HandlerSettings) -> list[tuple[str, Any, str]]:
    """Every effective setting as (dotted path, value, "file" | "default"), for `/steward config`."""
    rows: list[tuple[str, Any, str]] = []

    def walk(value: Any, over: Any, path: str) -> None:
        if isinstance(value, dict) and value:
            for key, child in value.items():
                walk(
                    child,
                    over.get(key) if isinstance(over, Mapping) else None,
                    f"{path}.{key}" if path else key,
                )
            return
        rows.append((path, value, "file" if over is not None else "default"))

    walk(settings.model_dump(mode="json"), overrides, "")
    return rows


def dump_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


REFERENCE_START: Final = (
    "<!-- config-reference:start (generated by `make docs`; edit bot/config/settings.py) -->"
)
REFERENCE_END: Final = "<!-- config-reference:end -->"


def reference_markdown() -> str:
    """The configuration reference: one table row per key with its default and meaning, from the same
    models the schema comes from (the README embeds it; a test keeps the two equal)."""
    rows = [
        "| Key | Default | Meaning |",
        "|---|---|---|",
        "| `commands.<command>.permission` | the command's own | "
        + _cell(CommandSettings.model_fields["permission"].description or "")
        + " |",
    ]

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            path = f"{prefix}{name}"
            annotation = info.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                walk(annotation, f"{path}.")
                continue
            if path == "commands":
                continue
            default = info.get_default(call_default_factory=True)
            shown = dump_value(list(default) if isinstance(default, tuple) else default)
            rows.append(f"| `{path}` | `{_cell(shown)}` | {_cell(info.description or '')} |")

    walk(HandlerSettings, "")
    return "\n".join(rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
