"""The GraphQL operations the tools send, read from the `.graphql` files in `operations/`.

Keeping them as files (not Python strings) lets the schema checks validate them against the composed
API schema and name the tools a schema change would break; see `operations/README.md`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # graphql-core is imported when an operation is first needed, not when the server starts
    from graphql import DocumentNode, FragmentDefinitionNode, OperationDefinitionNode, SelectionSetNode

_TOOLS_LINE = re.compile(r"^#\s*tools:\s*(.+)$")


@dataclass(frozen=True)
class Operation:
    name: str
    file: str
    #: What the `# tools:` comment above the operation says uses it.
    tools: tuple[str, ...]
    definition: OperationDefinitionNode


class OperationLibrary:
    """Operations by name, each sent with exactly the fragments it uses (GraphQL refuses unused ones)."""

    def __init__(self, files: dict[str, str]) -> None:
        from graphql import FragmentDefinitionNode, OperationDefinitionNode, parse

        self.operations: dict[str, Operation] = {}
        self._fragments: dict[str, FragmentDefinitionNode] = {}
        for file, text in sorted(files.items()):
            lines = text.splitlines()
            for definition in parse(text).definitions:
                if isinstance(definition, FragmentDefinitionNode):
                    self._add_unique(self._fragments, definition.name.value, definition, file)
                elif isinstance(definition, OperationDefinitionNode):
                    if definition.name is None:
                        raise ValueError(f"{file}: every operation needs a name")
                    line = definition.loc.start_token.line if definition.loc else 1
                    comment = _TOOLS_LINE.match(lines[line - 2].strip()) if line >= 2 else None
                    tools = tuple(t.strip() for t in comment.group(1).split(",")) if comment else ()
                    op = Operation(definition.name.value, file, tools, definition)
                    self._add_unique(self.operations, op.name, op, file)
        self._documents: dict[str, str] = {}

    @staticmethod
    def _add_unique(into: dict, name: str, value: object, file: str) -> None:  # type: ignore[type-arg]
        if name in into:
            raise ValueError(f"{file}: {name} is defined twice in the operation files")
        into[name] = value

    def _fragments_of(self, node: object, seen: dict[str, FragmentDefinitionNode]) -> None:
        from graphql import FragmentSpreadNode

        selection_set: SelectionSetNode | None = getattr(node, "selection_set", None)
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name not in seen:
                    seen[name] = self._fragments[name]
                    self._fragments_of(seen[name], seen)
            else:
                self._fragments_of(selection, seen)

    def document_node(self, name: str) -> DocumentNode:
        from graphql import DocumentNode

        op = self.operations[name].definition
        used: dict[str, FragmentDefinitionNode] = {}
        self._fragments_of(op, used)
        return DocumentNode(definitions=(op, *used.values()))

    def __getitem__(self, name: str) -> str:
        """The operation `name` as a document to send."""
        if name not in self._documents:
            from graphql import print_ast

            self._documents[name] = print_ast(self.document_node(name))
        return self._documents[name]

    def with_fields(self, name: str, root_field: str, extra: str) -> str:
        """Operation `name` with `extra` (a selection, e.g. "riskSummary { high }") added under `root_field`.

        Done on the printed text (one `root_field {` line at the operation's first level, as print_ast
        writes it): graphql-core's AST is immutable in some versions and mutable in others.
        """
        text = self[name]
        if not extra.strip():
            return text
        opening = f"\n  {root_field} {{\n"
        if text.count(opening) != 1:
            raise ValueError(f"{name} has no single top-level {root_field} selection")
        extended = text.replace(opening, f"{opening}    {extra}\n", 1)
        from graphql import parse

        parse(extended)  # a bad `extra` fails here, not at the gateway
        return extended


@cache
def _library() -> OperationLibrary:
    folder = resources.files("linepack_mcp") / "operations"
    return OperationLibrary({
        entry.name: entry.read_text(encoding="utf-8") for entry in folder.iterdir() if entry.name.endswith(".graphql")
    })


class _Deferred:
    """The library, read and parsed on first use: the tools take it when the server is built, and a stdio start
    should not wait for graphql-core (a tenth of it) before the SDK answers anyone."""

    def __getattr__(self, name: str) -> object:
        return getattr(_library(), name)

    def __getitem__(self, name: str) -> str:
        return _library()[name]


def operations() -> OperationLibrary:
    return _Deferred()  # type: ignore[return-value]
