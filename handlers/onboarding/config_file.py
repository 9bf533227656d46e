"""The configuration file the onboarding pull request proposes, generated from the settings models. Pure.

Every section and key appears once, with its description as a comment and its default as the value. One
live line, ``preset: refine-and-bugfix`` (``PROPOSED_PRESET``), says which capabilities run; every other key
is commented out, so the repository keeps following Steward's defaults until someone chooses otherwise.
``live=True`` writes every key as a live line instead (the file a maintainer gets by uncommenting
everything, less the preset): both validate with ``steward check-config``, and the live one sets exactly the
defaults.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

from bot.config.repo_file import CONFIG_PATHS
from bot.config.settings import PRESETS, HandlerSettings, Permission
from bot.forge import ForgeKind

__all__ = ["Note", "config_path", "config_text"]

INDENT: Final = "  "
# The preset the onboarding pull request proposes: the light one, so that day one reopens no milestone and
# starts no interview (the maintainer picks another in the file before or after merging).
PROPOSED_PRESET: Final = "refine-and-bugfix"


def config_path(kind: ForgeKind) -> str:
    """Where the onboarding pull request puts the file: the first place Steward reads on this forge."""
    return CONFIG_PATHS[kind][0]


def _scalar(value: Any) -> str:
    # JSON is valid YAML for these values, and quotes every string (`level:` stays a string).
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False)


def _comment_lines(text: str, indent: str) -> list[str]:
    words = " ".join(text.split())
    lines: list[str] = []
    current = ""
    for word in words.split(" "):
        if current and len(indent) + len(current) + len(word) + 3 > 110:
            lines.append(f"{indent}# {current}")
            current = word
        else:
            current = f"{current} {word}".strip()
    if current:
        lines.append(f"{indent}# {current}")
    return lines


def _comment_out(block: list[str], indent: str) -> list[str]:
    """A block commented out: ``# `` after its indent on every line, so deleting it restores the block."""
    return [f"{indent}# {line[len(indent) :]}" for line in block]


@dataclass(frozen=True)
class Note:
    """What the pull request proposes for one key (``section.key``): a comment under its description and,
    when ``value`` is not None, that value in place of the default — still commented out: it takes effect
    only once a maintainer uncomments it."""

    text: str
    value: Any = None


def _model_lines(
    model: type[BaseModel],
    indent: str,
    *,
    live: bool,
    live_enabled: bool,
    prefix: str = "",
    notes: Mapping[str, Note] | None = None,
) -> list[str]:
    """The keys of one section (or a nested group), each under its description."""
    out: list[str] = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        out += _comment_lines(info.description or "", indent)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            block = [
                f"{indent}{name}:",
                *_model_lines(annotation, indent + INDENT, live=True, live_enabled=False),
            ]
            out += block if live else _comment_out(block, indent)
            continue
        value = info.get_default(call_default_factory=True)
        note = (notes or {}).get(f"{prefix}{name}")
        if note is not None:
            out += _comment_lines(note.text, indent)
            value = value if note.value is None else note.value
        line = f"{indent}{name}: {_scalar(value)}"
        out += [line] if live or (live_enabled and name == "enabled") else _comment_out([line], indent)
    return out


def _commands_lines(commands: Mapping[str, Permission], *, live: bool) -> list[str]:
    field = HandlerSettings.model_fields["commands"]
    out = _comment_lines(
        (field.description or "") + " Each command is shown with who may run it by default: anyone, author, "
        "triage, write, maintain or admin.",
        "",
    )
    if not commands:
        return out
    block = ["commands:"]
    for name, permission in sorted(commands.items()):
        block += [f"{INDENT}{name}:", f"{INDENT * 2}permission: {_scalar(permission)}"]
    return out + (block if live else _comment_out(block, ""))


def config_text(
    *,
    commands: Mapping[str, Permission],
    switches: Sequence[tuple[str, str]],
    path: str,
    live: bool = False,
    notes: Mapping[str, Note] | None = None,
) -> str:
    """The file. ``commands``: every command Steward registers, with its default permission; ``switches``:
    (section, what it does) for the capabilities this Steward runs, called out at the top; ``notes``: what
    this repository's pull request proposes for a key (``section.key``), commented out like the rest."""
    width = max((len(section) for section, _ in switches), default=0) + len(".enabled")
    lines = [
        f"# Steward's settings for this repository ({path}).",
        "#",
        "# Steward reads this file from the default branch only. Every key below shows Steward's default;",
        "# the commented ones (`# key: value`) follow Steward's defaults until you uncomment them. Check a",
        f"# change before you push it with `steward check-config {path}`.",
        *(
            ['# A key under a note that says "Proposed" shows a value proposed for this repository instead.']
            if notes
            else []
        ),
        "#",
        f"# Which capabilities run: `preset` below ({', '.join(PRESETS)}; proposed: {PROPOSED_PRESET}).",
        "# A section's own `enabled: true` or `enabled: false` overrides the preset for that capability:",
    ]
    lines += [f"#   {(section + '.enabled').ljust(width)}  {what}" for section, what in switches]
    lines.append("")
    lines += _commands_lines(commands, live=live)
    for name, info in HandlerSettings.model_fields.items():
        if name == "commands":
            continue
        annotation = info.annotation
        if name == "preset":  # proposed live: which capabilities run, in one word
            if not live:  # (the all-live file sets every switch itself: no preset)
                lines += ["", *_comment_lines(info.description or "", ""), f"preset: {PROPOSED_PRESET}"]
            continue
        if name in ("mode", "language"):  # live or shadow; en or pt
            lines += ["", *_comment_lines(info.description or "", ""), f"# {name}: {info.default}"]
            continue
        assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
        lines.append("")
        lines += _comment_lines(info.description or "", "")
        # The preset above says which capabilities run, so every section is commented out whole (its values,
        # and what this pull request proposes for a key, are live once the section is uncommented).
        block = [
            f"{name}:",
            *_model_lines(annotation, INDENT, live=True, live_enabled=False, prefix=f"{name}.", notes=notes),
        ]
        lines += block if live else _comment_out(block, "")
    return "\n".join(lines) + "\n"
