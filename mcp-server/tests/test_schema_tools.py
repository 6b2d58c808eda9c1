"""Schema exploration, the operation files and the write switch, without a stack: the API schema here is the
published one in schema/published/supergraph.graphql (what `npm run schema:publish` printed)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from graphql import build_schema, parse, validate

from conftest import REPO_ROOT
from linepack_mcp.models import Asset
from linepack_mcp.operations import operations
from linepack_mcp.schema import ScopeMap, describe_type, search_schema
from linepack_mcp.server import WRITE_TOOLS, build_server, credential_from_headers
from linepack_mcp.settings import ConfigError, Settings, load_settings

# The composed schema of this repository, as `npm run schema:check` validates the operations against it (the published
# baseline in schema/published/ lags behind what the gateway serves).
API = build_schema((REPO_ROOT / "schema" / "supergraph.graphql").read_text(), assume_valid_sdl=True)
SCOPES = ScopeMap.from_document({
    "scopes": [{"name": "assets:read", "description": "Read the asset register."}],
    "requirements": {"Query.assets": [["assets:read"]], "Asset.wallThicknessMm": [["assets:read"]],
                     "Asset.measurements": [["measurements:read"]]},
})
# The Python sources of the server (the tools live in tools/, one module per family).
SERVER_PY = "\n".join(
    p.read_text() for p in sorted((Path(__file__).resolve().parents[1] / "src" / "linepack_mcp").rglob("*.py")))


def tool_names(writes: bool) -> set[str]:
    server = build_server(Settings(api_url="http://localhost:4000/graphql", api_key="lpk_unit", writes=writes))
    return {t.name for t in asyncio.run(server.list_tools())}


def test_every_operation_is_valid_against_the_published_api_schema():
    ops = operations()
    assert len(ops.operations) >= 15
    for name in ops.operations:
        errors = validate(API, parse(ops[name]))
        assert not errors, f"{name}: {[e.message for e in errors]}"


def test_every_operation_names_the_tools_that_send_it_and_is_sent():
    ops = operations()
    registered = tool_names(writes=True)
    server = build_server(Settings(api_url="http://localhost:4000/graphql", api_key="lpk_unit", writes=True))
    resources = [str(r.uri) for r in asyncio.run(server.list_resources())]
    resources += [t.uri_template for t in asyncio.run(server.list_resource_templates())]
    other_users = {f"resource {uri}" for uri in resources} | {"streamable-http credential check"}
    for name, op in ops.operations.items():
        assert op.tools, f"{op.file}: {name} has no '# tools:' line above it"
        for tool in op.tools:
            assert tool in registered | other_users, f"{op.file}: {name} names {tool!r}, which is not a tool"
        assert f'"{name}"' in SERVER_PY, f"{name} is never sent by the server"
    # And no GraphQL is written in Python any more.
    assert not re.search(r'"\s*(query|mutation) [A-Z]', SERVER_PY)


def test_an_operation_is_sent_with_exactly_the_fragments_it_uses():
    text = operations()["LinepackRisk"]
    assert "fragment RiskFields" in text and "fragment AssetFields" not in text
    assert validate(API, parse(text)) == []


def test_a_field_added_to_an_operation_reaches_the_tool_output():
    # The output models keep fields they do not declare, so an edit to operations/*.graphql is enough.
    asset = Asset.model_validate({"id": "a", "type": "PIPELINE", "name": "P", "status": "ACTIVE", "inHca": False,
                                  "version": 1, "coatingType": "FBE"})
    assert asset.model_dump(mode="json")["coatingType"] == "FBE"


def test_summary_takes_further_fields_under_its_root():
    text = operations().with_fields("LinepackSummary", "pipelineSummary", "riskByBand { band count }")
    assert "riskByBand" in text and parse(text)


def test_search_schema_finds_fields_by_words_with_scopes():
    matches = search_schema(API, SCOPES, ["wall", "thickness"])
    by = {m["coordinate"]: m for m in matches}
    assert by["Asset.wallThicknessMm"]["requiredScopes"] == ["assets:read"]
    assert by["Asset.wallThicknessMm"]["type"] == "Float"
    assert "CreateAssetInput.wallThicknessMm" in by
    # Every word must match; names rank before descriptions.
    assert matches[0]["coordinate"].lower().count("wall") >= 1
    assert search_schema(API, SCOPES, ["wall", "zebra"]) == []


def test_describe_type_lists_fields_arguments_defaults_and_scopes():
    asset = describe_type(API, SCOPES, "Asset")
    fields = {f["name"]: f for f in asset["fields"]}
    measurements = fields["measurements"]
    assert measurements["requiredScopes"] == ["measurements:read"]
    assert {"name": "first", "type": "Int", "default": "50"}.items() <= next(
        a for a in measurements["arguments"] if a["name"] == "first").items()
    assert "wallThicknessMm" in asset["exampleSelection"]
    enum = describe_type(API, SCOPES, "MeasurementType")
    assert "ILI_ANOMALY" in [v["name"] for v in enum["enumValues"]]
    assert describe_type(API, SCOPES, "NoSuchType") is None
    unknown_scopes = describe_type(API, ScopeMap.from_document(None), "Asset")
    assert unknown_scopes["fields"][0]["requiredScopes"] is None and "note" in unknown_scopes


def test_writes_switch_hides_write_tools():
    assert not (tool_names(writes=False) & set(WRITE_TOOLS))
    assert set(WRITE_TOOLS) <= tool_names(writes=True)
    assert load_settings({"LINEPACK_API_URL": "http://h/graphql", "LINEPACK_API_KEY": "k"}).writes is False
    assert load_settings({"LINEPACK_API_URL": "http://h/graphql", "LINEPACK_API_KEY": "k",
                          "LINEPACK_MCP_WRITES": "ON"}).writes is True
    with pytest.raises(ConfigError, match="LINEPACK_MCP_WRITES must be 'on' or 'off'"):
        load_settings({"LINEPACK_API_URL": "http://h/graphql", "LINEPACK_API_KEY": "k", "LINEPACK_MCP_WRITES": "yes"})


def test_http_mode_holds_no_credential_of_its_own():
    s = load_settings({"LINEPACK_API_URL": "http://h/graphql", "LINEPACK_API_KEY": "lpk_server_side",
                       "LINEPACK_TENANT_ID": "t"}, per_request_credentials=True)
    assert s.api_key is None and s.tenant_id is None


def test_credential_from_headers():
    tenant = "2b7c0f8e-1111-4222-8333-944445555666"
    c = credential_from_headers({"authorization": "Bearer lpk_abc", "x-tenant-id": tenant})
    assert c.token == "lpk_abc" and c.tenant_id == tenant and "lpk_abc" not in repr(c)
    assert credential_from_headers({"authorization": "Basic dXNlcjpwYXNz"}) is None
    assert credential_from_headers({}) is None and credential_from_headers(None) is None
