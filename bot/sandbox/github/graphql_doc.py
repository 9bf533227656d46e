"""A small reader of GraphQL documents, for the sandbox's GitHub GraphQL endpoint: one operation (a query or a
mutation, named or not, with variable definitions and their defaults), fields with aliases, arguments and
selection sets, and every kind of value (variables, strings, numbers, booleans, null, enums, lists, objects).

Fragments, directives, block strings and several operations in one document are not read: such a document is
refused with a ``GraphQLSyntaxError`` (answered as GitHub answers a parse error), never a crash.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

_TOKEN = re.compile(
    r"""
    (?P<skip>[\s,\ufeff]+|\#[^\n\r]*)
  | (?P<spread>\.\.\.)
  | (?P<block>\"\"\")
  | (?P<string>"(?:[^"\\\n\r]|\\.)*")
  | (?P<number>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[_A-Za-z][_0-9A-Za-z]*)
  | (?P<punct>[!$&():=@\[\]{}|])
    """,
    re.VERBOSE,
)


class GraphQLSyntaxError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Variable:
    name: str


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    line: int
    column: int


@dataclass
class Selection:
    """A field: ``key`` is its alias, or its name."""

    name: str
    alias: str | None
    arguments: dict[str, Any]
    selections: list[Selection]
    line: int
    column: int

    @property
    def key(self) -> str:
        return self.alias or self.name


@dataclass
class Operation:
    kind: Literal["query", "mutation"]
    name: str | None
    defaults: dict[str, Any] = field(default_factory=dict)
    selections: list[Selection] = field(default_factory=list)

    @property
    def label(self) -> str:
        """How GitHub names the operation in a validation error's path: ``query``, ``mutation Name``."""
        return f"{self.kind} {self.name}" if self.name else self.kind


def _tokens(text: str) -> list[Token]:
    found: list[Token] = []
    line, line_start, at = 1, 0, 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        column = at - line_start + 1
        if match is None:
            raise GraphQLSyntaxError(f'Parse error on "{text[at]}" at [{line}, {column}]', line, column)
        kind = match.lastgroup or ""
        chunk = match.group()
        if kind == "block":
            raise GraphQLSyntaxError(
                f"Parse error on block string at [{line}, {column}] (not read by the sandbox)", line, column
            )
        if kind != "skip":
            found.append(Token(kind, chunk, line, column))
        for offset, char in enumerate(chunk):
            if char == "\n":
                line, line_start = line + 1, at + offset + 1
        at = match.end()
    found.append(Token("end", "", line, at - line_start + 1))
    return found


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    @property
    def peek(self) -> Token:
        return self.tokens[self.at]

    def fail(self, token: Token | None = None) -> GraphQLSyntaxError:
        token = token or self.peek
        shown = "end of file" if token.kind == "end" else f'"{token.text}"'
        return GraphQLSyntaxError(
            f"Parse error on {shown} at [{token.line}, {token.column}]", token.line, token.column
        )

    def take(self, text: str | None = None, kind: str | None = None) -> Token:
        token = self.peek
        if (text is not None and token.text != text) or (kind is not None and token.kind != kind):
            raise self.fail(token)
        self.at += 1
        return token

    def at_punct(self, text: str) -> bool:
        return self.peek.kind == "punct" and self.peek.text == text

    # --- the document -----------------------------------------------------------------------------------

    def document(self) -> Operation:
        if self.at_punct("{"):
            operation = Operation("query", None)
        else:
            word = self.take(kind="name")
            if word.text not in ("query", "mutation"):
                raise self.fail(word)
            name = self.take(kind="name").text if self.peek.kind == "name" else None
            operation = Operation("mutation" if word.text == "mutation" else "query", name)
            if self.at_punct("("):
                operation.defaults = self.variable_definitions()
        if self.at_punct("@"):
            raise self.fail()
        operation.selections = self.selection_set()
        if self.peek.kind != "end":
            raise self.fail()
        return operation

    def variable_definitions(self) -> dict[str, Any]:
        defaults: dict[str, Any] = {}
        self.take("(")
        while not self.at_punct(")"):
            self.take("$")
            name = self.take(kind="name").text
            self.take(":")
            self.type_reference()
            if self.at_punct("="):
                self.take("=")
                defaults[name] = self.value(constant=True)
        self.take(")")
        return defaults

    def type_reference(self) -> None:
        if self.at_punct("["):
            self.take("[")
            self.type_reference()
            self.take("]")
        else:
            self.take(kind="name")
        if self.at_punct("!"):
            self.take("!")

    def selection_set(self) -> list[Selection]:
        self.take("{")
        found: list[Selection] = []
        while not self.at_punct("}"):
            found.append(self.selection())
        self.take("}")
        if not found:
            raise self.fail(self.tokens[self.at - 1])
        return found

    def selection(self) -> Selection:
        first = self.take(kind="name")
        alias, name = None, first.text
        if self.at_punct(":"):
            self.take(":")
            alias, name = first.text, self.take(kind="name").text
        arguments: dict[str, Any] = {}
        if self.at_punct("("):
            self.take("(")
            while not self.at_punct(")"):
                key = self.take(kind="name").text
                self.take(":")
                arguments[key] = self.value(constant=False)
            self.take(")")
        if self.at_punct("@"):
            raise self.fail()
        children = self.selection_set() if self.at_punct("{") else []
        return Selection(name, alias, arguments, children, first.line, first.column)

    def value(self, *, constant: bool) -> Any:
        token = self.peek
        if token.kind == "punct" and token.text == "$" and not constant:
            self.take("$")
            return Variable(self.take(kind="name").text)
        if token.kind == "string":
            self.take()
            return json.loads(token.text)
        if token.kind == "number":
            self.take()
            return float(token.text) if any(c in token.text for c in ".eE") else int(token.text)
        if token.kind == "name":
            self.take()
            return {"true": True, "false": False, "null": None}.get(token.text, token.text)
        if self.at_punct("["):
            self.take("[")
            items = []
            while not self.at_punct("]"):
                items.append(self.value(constant=constant))
            self.take("]")
            return items
        if self.at_punct("{"):
            self.take("{")
            fields: dict[str, Any] = {}
            while not self.at_punct("}"):
                key = self.take(kind="name").text
                self.take(":")
                fields[key] = self.value(constant=constant)
            self.take("}")
            return fields
        raise self.fail(token)


def parse(text: str) -> Operation:
    """The one operation of a document; ``GraphQLSyntaxError`` for anything else."""
    return _Reader(text).document()


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    """`value` with its variables replaced by their values (a variable not given is null, as on GitHub)."""
    if isinstance(value, Variable):
        return variables.get(value.name)
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, variables) for key, item in value.items()}
    return value
