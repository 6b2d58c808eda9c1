"""The gateway's schema, learned by introspection, and what we do with it locally."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import graphql
from graphql import (
    Undefined,
    ast_from_value,
    print_ast,
    GraphQLEnumType,
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLUnionType,
    GraphQLNamedType,
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

from graphql.pyutils import suggestion_list

from .client import LinepackClient, LinepackError, LinepackGraphQLError

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
    """Introspects the gateway once per `ttl_s` and keeps the client schema (the same for every
    credential), with the scope each field needs when the gateway says (`GET /schema/scopes`)."""

    def __init__(self, ttl_s: float = 300.0) -> None:
        self.ttl_s = ttl_s
        self._schema: GraphQLSchema | None = None
        self._fetched_at = 0.0
        self._scopes: ScopeMap | None = None
        self._scopes_at = 0.0

    async def scopes(self, client: LinepackClient) -> ScopeMap:
        if self._scopes is not None and time.monotonic() - self._scopes_at < self.ttl_s:
            return self._scopes
        try:
            body = await client.scope_requirements()
        except LinepackError as exc:
            log.info("scope requirements unavailable: %s", exc.message)
            body = None
        self._scopes = ScopeMap.from_document(body)
        self._scopes_at = time.monotonic()
        return self._scopes

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
        said = "; ".join(str(e.get("message")) for e in result.errors)
        hint = (" The gateway does not allow introspection to this credential (a production setting), so the "
                "schema tools cannot work." if "introspection" in said.lower() else "")
        raise LinepackGraphQLError(
            f"Linepack did not answer the introspection query: {said}.{hint}",
            request_id=result.request_id, errors=result.errors,
        )
    try:
        return build_client_schema(result.data)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - whatever graphql-core trips on, say which version and what to do
        raise LinepackError(
            f"The gateway's schema could not be read with graphql-core {graphql.__version__} "
            f"({type(exc).__name__}: {exc}). linepack-mcp needs graphql-core >= 3.2.11: reinstall linepack-mcp, or "
            f"pip install -U 'graphql-core>=3.2.11' in its environment."
        ) from exc


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


@dataclass
class ScopeMap:
    """What each field or type demands ("Type.field" or "Type" -> OR of AND sets), and what scopes mean."""

    requirements: dict[str, list[list[str]]]
    descriptions: dict[str, str]

    @classmethod
    def from_document(cls, body: dict[str, Any] | None) -> ScopeMap:
        body = body or {}
        reqs = body.get("requirements") if isinstance(body.get("requirements"), dict) else {}
        scopes = body.get("scopes") if isinstance(body.get("scopes"), list) else []
        return cls(
            requirements={str(k): [[str(s) for s in alt] for alt in v] for k, v in reqs.items() if isinstance(v, list)},
            descriptions={str(d.get("name")): str(d.get("description", "")) for d in scopes if isinstance(d, dict)},
        )

    @property
    def known(self) -> bool:
        return bool(self.requirements)

    def of(self, type_name: str, field_name: str | None = None) -> list[str] | None:
        """The scopes a field needs, as one readable list ("a", "b" or "a+b"); None when the gateway did not say."""
        if not self.known:
            return None
        alternatives = self.requirements.get(f"{type_name}.{field_name}") if field_name else None
        alternatives = alternatives or self.requirements.get(type_name) or []
        return ["+".join(alt) for alt in alternatives]


def _description(text: str | None, limit: int | None = None) -> str | None:
    if not text:
        return None
    text = " ".join(text.split())
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "\u2026"


def _user_types(schema: GraphQLSchema) -> list[GraphQLNamedType]:
    return [t for name, t in sorted(schema.type_map.items()) if not name.startswith("__")]


def search_schema(schema: GraphQLSchema, scopes: ScopeMap, words: list[str], limit: int = 30) -> list[dict[str, Any]]:
    """Types, fields, arguments and enum values whose name or description holds every word (case-insensitive),
    those matching by name first."""
    needles = [w.lower() for w in words if w.strip()]
    if not needles:
        return []
    found: list[tuple[int, dict[str, Any]]] = []

    def consider(kind: str, coordinate: str, name: str, description: str | None, entry: dict[str, Any]) -> None:
        name_l, text_l = name.lower(), (description or "").lower()
        if not all(n in name_l or n in text_l for n in needles):
            return
        rank = sum(2 if n in name_l else 0 for n in needles) + (1 if kind == "type" else 0)
        found.append((rank, {"kind": kind, "coordinate": coordinate, **entry,
                             "description": _description(description, 300)}))

    for t in _user_types(schema):
        consider("type", t.name, t.name, t.description, {"typeKind": _kind(t)})
        if isinstance(t, (GraphQLObjectType, GraphQLInterfaceType)):
            for fname, f in t.fields.items():
                consider("field", f"{t.name}.{fname}", fname, f.description,
                         {"type": str(f.type), "requiredScopes": scopes.of(t.name, fname),
                          **({"deprecated": f.deprecation_reason} if f.deprecation_reason else {})})
                for aname, a in f.args.items():
                    consider("argument", f"{t.name}.{fname}({aname}:)", aname, a.description,
                             {"type": str(a.type)})
        elif isinstance(t, GraphQLInputObjectType):
            for fname, f in t.fields.items():
                consider("inputField", f"{t.name}.{fname}", fname, f.description, {"type": str(f.type)})
        elif isinstance(t, GraphQLEnumType):
            for vname, v in t.values.items():
                consider("enumValue", f"{t.name}.{vname}", vname, v.description, {})
    found.sort(key=lambda item: (-item[0], item[1]["coordinate"]))
    return [entry for _, entry in found[:limit]]


def _kind(t: GraphQLNamedType) -> str:
    return {GraphQLObjectType: "OBJECT", GraphQLInterfaceType: "INTERFACE", GraphQLUnionType: "UNION",
            GraphQLEnumType: "ENUM", GraphQLInputObjectType: "INPUT_OBJECT"}.get(type(t), "SCALAR")


def _default(arg: Any) -> dict[str, str]:
    if arg.default_value is Undefined:
        # A schema built from SDL (not introspection) may keep the default only as written.
        written = getattr(getattr(arg, "ast_node", None), "default_value", None)
        return {"default": print_ast(written)} if written is not None else {}
    node = ast_from_value(arg.default_value, arg.type)
    return {"default": print_ast(node)} if node else {}


def similar_type_names(schema: GraphQLSchema, name: str) -> list[str]:
    return suggestion_list(name, [t.name for t in _user_types(schema)])[:5]


def describe_type(schema: GraphQLSchema, scopes: ScopeMap, name: str) -> dict[str, Any] | None:
    """Everything a query writer needs about one type; None when the schema has no such type."""
    t = schema.get_type(name)
    if t is None or name.startswith("__"):
        return None
    out: dict[str, Any] = {"name": t.name, "kind": _kind(t), "description": _description(t.description)}
    if isinstance(t, (GraphQLObjectType, GraphQLInterfaceType)):
        out["fields"] = [
            {
                "name": fname,
                "type": str(f.type),
                "description": _description(f.description),
                "arguments": [
                    {"name": aname, "type": str(a.type), "description": _description(a.description),
                     **_default(a)}
                    for aname, a in f.args.items()
                ],
                "requiredScopes": scopes.of(t.name, fname),
                **({"deprecated": f.deprecation_reason} if f.deprecation_reason else {}),
            }
            for fname, f in t.fields.items()
        ]
        out["interfaces"] = [i.name for i in t.interfaces]
        selection = leaf_selection(schema, t.name, depth=1)
        if selection:
            out["exampleSelection"] = selection
    if isinstance(t, (GraphQLInterfaceType, GraphQLUnionType)):
        out["possibleTypes"] = [p.name for p in schema.get_possible_types(t)]
    if isinstance(t, GraphQLInputObjectType):
        out["inputFields"] = [
            {"name": fname, "type": str(f.type), "description": _description(f.description)}
            for fname, f in t.fields.items()
        ]
    if isinstance(t, GraphQLEnumType):
        out["enumValues"] = [
            {"name": vname, "description": _description(v.description),
             **({"deprecated": v.deprecation_reason} if v.deprecation_reason else {})}
            for vname, v in t.values.items()
        ]
    if not scopes.known:
        out["note"] = "This gateway does not publish field scopes (GET /schema/scopes); requiredScopes are unknown."
    return out
