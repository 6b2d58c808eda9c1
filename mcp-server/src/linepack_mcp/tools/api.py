"""Identity and the API itself: who am I, read-only GraphQL, the schema tools and the schema resource."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from ..budget import estimate_tokens, to_text
from ..client import LinepackClient, LinepackError, LinepackGraphQLError, format_graphql_error
from ..models import Me, QueryResult, SchemaSearchResult, TypeDescription, ValidationResult, WhoAmI
from .kit import READ, Toolkit


def register(kit: Toolkit) -> None:
    settings, state, ops = kit.settings, kit.state, kit.ops
    tool, run_read, answer = kit.tool, kit.run_read, kit.answer
    resource = kit.resource

    @tool(title="Who am I", annotations=READ)
    async def whoami() -> Annotated[CallToolResult, WhoAmI]:
        """The identity behind the configured API key: tenant, memberships and scopes (`me`), and the
        key's own record from the gateway (active, scopes, tenant, expiry)."""
        data = await run_read(ops["LinepackMe"])
        key: dict[str, Any] | None = None
        key_error: str | None = None
        try:
            key = await state.client.introspect_key()
        except LinepackError as exc:
            key_error = exc.message
        return answer(WhoAmI(
            apiUrl=settings.api_url, tenantHeader=state.client.credential.tenant_id, me=Me.model_validate(data["me"]),
            key=key, keyError=key_error,
        ))


    # -- GraphQL ------------------------------------------------------------------------------

    @tool(title="Run a read-only GraphQL query", annotations=READ)
    async def graphql_query(
        query: Annotated[str, Field(min_length=1, description="A GraphQL query document (no mutations).")],
        variables: Annotated[dict[str, Any] | None, Field(description="Variables of the query.")] = None,
        operation_name: Annotated[str | None, Field(description="Which operation to run, if the document has several.")] = None,
    ) -> Annotated[CallToolResult, QueryResult]:
        """Run any read-only GraphQL query against the Linepack API (schema: resource
        linepack://schema). Mutations and subscriptions are refused: use the write tools. GraphQL
        errors are returned with their extensions.code; very large results are truncated."""
        # graphql-core is imported when a schema tool is first used, not at start-up
        from graphql import GraphQLError
        from ..schema import describe_syntax_error, inspect_document

        try:
            info = inspect_document(query)
        except GraphQLError as err:
            raise ToolError(f"Not a valid GraphQL document: {describe_syntax_error(err)}") from None
        if not info.operation_types:
            raise ToolError("The document has no operation: write `query { ... }`.")
        if not info.read_only:
            kinds = sorted({t for t in info.operation_types if t != "query"})
            raise ToolError(
                f"graphql_query is read-only and refuses {' and '.join(kinds)} operations. Use create_asset, "
                f"update_asset or record_measurements to change data (they are marked as writes)."
            )
        client = state.client
        try:
            result = await client.graphql(query, variables, read_only=True, operation_name=operation_name)
        except LinepackGraphQLError as exc:
            if exc.code in ("GRAPHQL_VALIDATION_FAILED", "GRAPHQL_PARSE_FAILED", "BAD_USER_INPUT"):
                raise ToolError(await _invalid_query_help(client, query, exc)) from None
            raise
        if result.data is None and result.errors:
            raise LinepackGraphQLError(
                "The query failed: " + "; ".join(format_graphql_error(e) for e in result.errors),
                code=(result.errors[0].get("extensions") or {}).get("code"),
                request_id=result.request_id, errors=result.errors,
            )
        out = QueryResult(data=result.data, errors=result.errors, requestId=result.request_id)
        text = to_text(result.data)
        cap = settings.max_result_chars
        if len(text) > cap or estimate_tokens(to_text(out.model_dump(mode="json"))) > settings.result_tokens:
            out.data = None
            out.truncated = True
            preview = text[:cap]
            out.note = (f"The result is {len(text)} characters ({estimate_tokens(text)} tokens), over the cap of "
                        f"{cap} characters or {settings.result_tokens} tokens; dataPreview holds the start. Ask for "
                        f"fewer fields or a smaller page (first/after).")
            out.dataPreview = preview
            while estimate_tokens(to_text(out.model_dump(mode="json"))) > settings.result_tokens:
                preview = preview[: int(len(preview) * 0.9)]
                out.dataPreview = preview
        # The data exactly as the API sent it: a null is information here, and the digits are the caller's choice.
        return answer(out, drop_nulls=False, round_numbers=False)

    async def _invalid_query_help(client: LinepackClient, query: str, exc: LinepackGraphQLError) -> str:
        """The gateway hides "did you mean" suggestions; the local validation has them."""
        # graphql-core is imported when a schema tool is first used, not at start-up
        from ..schema import validate_document

        text = f"The query was refused: {exc.message}."
        try:
            local = validate_document(await state.schema.get(client), query)
        except LinepackError:
            local = []
        if local:
            text += " Checked against the schema here: " + "; ".join(str(e.get("message")) for e in local[:10])
        return (text + " Check a query with the validate tool before running it; search_schema finds types and "
                "fields by words and describe_type lists a type's fields with their arguments.")

    @tool(title="Search the schema", annotations=READ)
    async def search_schema(
        words: Annotated[str, Field(min_length=1, max_length=200, description="Words to look for in type, field, "
                                    "argument and enum value names and descriptions, e.g. 'wall thickness' or "
                                    "'overdue'. Every word must match.")],
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many matches.")] = 30,
    ) -> Annotated[CallToolResult, SchemaSearchResult]:
        """Find where something lives in the Linepack GraphQL schema: types, fields (with their type, the
        scopes they need and whether they are deprecated), arguments and enum values whose name or
        description contains all the words, name matches first. Use it to write a graphql_query; then
        describe_type for a type's fields and validate to check the query."""
        # graphql-core is imported when a schema tool is first used, not at start-up
        from ..schema import search_schema as search_schema_entries

        client = state.client
        schema_now = await state.schema.get(client)
        scopes = await state.schema.scopes(client)
        matches = search_schema_entries(schema_now, scopes, words.split(), limit)
        return answer(SchemaSearchResult(
            words=words.split(), matches=matches,
            note=None if matches else "Nothing matched every word: try fewer or more general words, or describe_type('Query') "
                                      "for the entry points.",
        ))

    @tool(title="Describe a schema type", annotations=READ)
    async def describe_type(
        name: Annotated[str, Field(min_length=1, max_length=200, description="A type name as the schema spells it, "
                                   "e.g. Query, Asset, AssetFilter, MeasurementType.")],
    ) -> Annotated[CallToolResult, TypeDescription]:
        """One type of the Linepack GraphQL schema: its fields with their types, arguments (with defaults),
        descriptions, the scopes each needs and deprecations; or an input type's fields, or an enum's
        values; and a selection of its scalar fields to start a query from. 'Query' lists the entry points."""
        # graphql-core is imported when a schema tool is first used, not at start-up
        from ..schema import describe_type as describe_schema_type, similar_type_names

        client = state.client
        schema_now = await state.schema.get(client)
        described = describe_schema_type(schema_now, await state.schema.scopes(client), name.strip())
        if described is None:
            close = similar_type_names(schema_now, name.strip())
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ToolError(f"The schema has no type {name.strip()!r}.{hint} search_schema finds types by words.")
        return answer(TypeDescription.model_validate(described))

    @tool(name="validate", title="Validate a GraphQL document", annotations=READ)
    async def validate(
        query: Annotated[str, Field(min_length=1, description="A GraphQL document to check.")],
    ) -> Annotated[CallToolResult, ValidationResult]:
        """Check a GraphQL document against the Linepack schema without running it: syntax, fields,
        arguments and types. Also says whether graphql_query would accept it (queries only)."""
        # graphql-core is imported when a schema tool is first used, not at start-up
        from graphql import GraphQLError
        from ..schema import inspect_document, validate_document

        try:
            info = inspect_document(query)
        except GraphQLError as err:
            return answer(ValidationResult(
                valid=False, operationTypes=[], readOnly=False,
                errors=[err.formatted | {"extensions": {"code": "GRAPHQL_PARSE_FAILED"}}],
            ))
        schema_now = await state.schema.get(state.client)
        errors = validate_document(schema_now, query)
        return answer(ValidationResult(valid=not errors, operationTypes=info.operation_types,
                                        readOnly=bool(info.operation_types) and info.read_only, errors=errors))

    # -- resources ------------------------------------------------------------------------------

    @resource("linepack://schema", name="schema", title="Linepack GraphQL schema (SDL)",
                  description="The composed API schema of the gateway, as SDL (by introspection).",
                  mime_type="text/plain")
    async def schema_resource() -> str:
        # graphql-core is imported when a schema tool is first used, not at start-up
        from ..schema import schema_sdl

        return schema_sdl(await state.schema.get(state.client))
