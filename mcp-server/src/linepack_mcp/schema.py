"""The gateway's schema, learned by introspection, and what we do with it locally."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from graphql import (
    GraphQLError,
    GraphQLObjectType,
    GraphQLSchema,
    OperationDefinitionNode,
    build_client_schema,
    get_introspection_query,
    get_named_type,
    is_leaf_type,
    is_object_type,
    is_required_argument,
    parse,
    print_schema,
    validate,
)

from .client import LinepackClient, LinepackGraphQLError

log = logging.getLogger("linepack_mcp.schema")


@dataclass
class OperationInfo:
    """What a GraphQL document would do, found without sending it."""

    operation_types: list[str]
    names: list[str | None]

    @property
    def read_only(self) -> bool:
        return all(t == "query" for t in self.operation_types)


def inspect_document(document: str) -> OperationInfo:
    """Parse `document`; raise :class:`GraphQLError` (with locations) when it is not valid syntax."""
    ast = parse(document)
    types: list[str] = []
    names: list[str | None] = []
    for definition in ast.definitions:
        if isinstance(definition, OperationDefinitionNode):
            types.append(definition.operation.value)
            names.append(definition.name.value if definition.name else None)
    return OperationInfo(operation_types=types, names=names)


def describe_syntax_error(err: GraphQLError) -> str:
    where = ""
    if err.locations:
        loc = err.locations[0]
        where = f" at line {loc.line}, column {loc.column}"
    return f"{err.message}{where}"


def validate_document(schema: GraphQLSchema, document: str) -> list[dict[str, Any]]:
    """Validation errors of `document` against `schema`, as GraphQL error objects (empty when valid)."""
    try:
        ast = parse(document)
    except GraphQLError as err:
        return [err.formatted | {"extensions": {"code": "GRAPHQL_PARSE_FAILED"}}]
    return [
        err.formatted | {"extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}
        for err in validate(schema, ast)
    ]


class SchemaCache:
    """Introspects the gateway once per `ttl_s` and keeps the client schema."""

    def __init__(self, ttl_s: float = 300.0) -> None:
        self.ttl_s = ttl_s
        self._schema: GraphQLSchema | None = None
        self._fetched_at = 0.0

    def set(self, schema: GraphQLSchema) -> None:
        self._schema = schema
        self._fetched_at = time.monotonic()

    @property
    def cached(self) -> GraphQLSchema | None:
        return self._schema

    async def get(self, client: LinepackClient) -> GraphQLSchema:
        if self._schema is not None and time.monotonic() - self._fetched_at < self.ttl_s:
            return self._schema
        schema = await fetch_schema(client)
        self.set(schema)
        return schema


async def fetch_schema(client: LinepackClient) -> GraphQLSchema:
    result = await client.graphql(get_introspection_query(descriptions=True), read_only=True)
    if result.errors or not result.data:
        raise LinepackGraphQLError(
            "Linepack did not answer the introspection query: "
            + "; ".join(str(e.get("message")) for e in result.errors),
            request_id=result.request_id, errors=result.errors,
        )
    return build_client_schema(result.data)  # type: ignore[arg-type]


def schema_sdl(schema: GraphQLSchema) -> str:
    return print_schema(schema)


def object_field(schema: GraphQLSchema, type_name: str, candidates: tuple[str, ...]) -> str | None:
    """The first of `candidates` that `type_name` has and that needs no argument."""
    t = schema.get_type(type_name)
    if not isinstance(t, GraphQLObjectType):
        return None
    for name in candidates:
        f = t.fields.get(name)
        if f is not None and not any(is_required_argument(a) for a in f.args.values()):
            return name
    return None


def leaf_selection(schema: GraphQLSchema, type_name: str, depth: int = 2, _seen: tuple[str, ...] = ()) -> str:
    """A selection set with every argument-free leaf field of `type_name`, nesting objects to `depth`.

    Used for fields whose exact shape this package does not hard-code (e.g. risk or compliance
    results that the API may add later): whatever the gateway offers is selected.
    """
    t = schema.get_type(type_name)
    if not is_object_type(t):
        return ""
    parts: list[str] = []
    for name, f in t.fields.items():  # type: ignore[union-attr]
        if any(is_required_argument(a) for a in f.args.values()):
            continue
        named = get_named_type(f.type)
        if is_leaf_type(named):
            parts.append(name)
        elif is_object_type(named) and depth > 1 and named.name not in _seen:
            inner = leaf_selection(schema, named.name, depth - 1, _seen + (type_name,))
            if inner:
                parts.append(f"{name} {inner}")
    return "{ " + " ".join(parts) + " }" if parts else ""
