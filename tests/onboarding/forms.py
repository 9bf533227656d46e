"""Opening an issue from a template, as the forge does it (for tests).

GitHub renders an issue form's answers as one section per field: ``### <label>``, a blank line, the answer
(``_No response_`` for an empty one, the chosen option for a dropdown); markdown fields are not submitted
(GitHub docs, "Syntax for issue forms"; the format github/issue-parser and stefanbuck/github-issue-parser
read back). A markdown template's body is its text after the YAML front matter, which gives the title and
labels (GitHub and Gitea alike)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

NO_RESPONSE = "_No response_"


def render_form(form_yaml: str, answers: Mapping[str, str]) -> tuple[str, list[str]]:
    """The body GitHub writes for ``answers`` (by field id; a field left out keeps its pre-filled value),
    and the labels the form applies."""
    form: dict[str, Any] = yaml.safe_load(form_yaml)
    parts: list[str] = []
    for item in form["body"]:
        if item["type"] == "markdown":
            continue
        attrs = item["attributes"]
        if item["type"] == "dropdown":
            default = attrs.get("default")
            value = answers.get(item["id"], attrs["options"][default] if default is not None else "")
        else:
            value = answers.get(item["id"], attrs.get("value", ""))
        parts.append(f"### {attrs['label']}\n\n{value.strip() or NO_RESPONSE}")
    return "\n\n".join(parts), list(form.get("labels") or [])


def markdown_template(text: str) -> tuple[str, list[str]]:
    """A markdown template's body and labels (its front matter says them)."""
    _, front, body = text.split("---\n", 2)
    meta: dict[str, Any] = yaml.safe_load(front)
    return body, list(meta.get("labels") or [])


def fill_markdown(body: str, answers: Mapping[str, str]) -> str:
    """The template with each heading's hint comment replaced by the answer given for that heading."""
    out: list[str] = []
    heading = ""
    for line in body.split("\n"):
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            out.append(line)
            continue
        if line.startswith("<!--") and heading in answers:
            out.append(answers[heading])
            continue
        out.append(line)
    return "\n".join(out)
