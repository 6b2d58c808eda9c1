"""An MCP client from the SDK launches linepack-mcp over stdio against the real Linepack stack."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import Stack, mcp_client

pytestmark = [pytest.mark.anyio, pytest.mark.stack]

READ_TOOLS = {
    "pipeline_summary", "list_assets", "search_assets", "get_asset", "list_measurements", "assess_anomaly",
    "list_compliance_obligations", "whoami", "graphql_query", "validate", "list_anomaly_assessments",
    "get_segment_risk", "risk_register", "get_asset_compliance", "list_compliance_status",
}
WRITE_TOOLS = {"create_asset", "update_asset", "record_measurements"}
SCHEMA_TOOLS = {"search_schema", "describe_type"}


async def call(client, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(name, args or {})
    assert not result.is_error, f"{name}: {result.content[0].text if result.content else result}"
    assert result.structured_content is not None, name
    # The text the model reads is the same data, as JSON.
    json.loads(result.content[0].text)
    return result.structured_content


async def call_error(client, name: str, args: dict[str, Any] | None = None) -> str:
    result = await client.call_tool(name, args or {})
    assert result.is_error, f"{name} should have failed: {result.structured_content}"
    return result.content[0].text


async def test_tools_are_typed_and_annotated(stack: Stack):
    async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert READ_TOOLS | WRITE_TOOLS | SCHEMA_TOOLS <= set(tools)
    for name, tool in tools.items():
        assert tool.description, name
        assert tool.input_schema["type"] == "object", name
        assert tool.output_schema and tool.output_schema.get("type") == "object", name
        assert tool.annotations is not None, name
    for name in READ_TOOLS:
        assert tools[name].annotations.read_only_hint is True, name
    for name in WRITE_TOOLS:
        ann = tools[name].annotations
        assert ann.read_only_hint is False, name
        assert ann.destructive_hint is not None, name
    assert tools["update_asset"].annotations.destructive_hint is True
    assert tools["record_measurements"].annotations.idempotent_hint is True
    # Every structured tool declares its whole result: nothing is an untyped bag of fields.
    for name in READ_TOOLS - {"graphql_query"}:
        assert tools[name].output_schema.get("properties"), name


async def test_read_tools_return_real_data(stack: Stack, seeded: dict[str, Any]):
    pipe, seg = seeded["pipeline"], seeded["segment"]
    async with mcp_client(stack.env()) as client:
        summary = await call(client, "pipeline_summary")
        assert summary["tenantId"] == stack.tenant_id
        assert summary["totalAssets"] >= 2
        assert any(c["type"] == "PIPELINE" and c["count"] >= 1 for c in summary["assetsByType"])
        assert summary["measurementCount"] >= 3 and summary["omitted"] == []

        page = await call(client, "list_assets", {"type": "PIPELINE", "first": 100})
        assert any(a["id"] == pipe["id"] for a in page["items"])
        assert page["totalCount"] >= 1 and "hasNextPage" in page["pageInfo"]

        first = await call(client, "list_assets", {"first": 1})
        assert len(first["items"]) == 1
        if first["pageInfo"]["hasNextPage"]:
            assert first["next"] and first["pageInfo"]["endCursor"] in first["next"]
            second = await call(client, "list_assets", {"first": 1, "after": first["pageInfo"]["endCursor"]})
            assert second["items"][0]["id"] != first["items"][0]["id"]

        children = await call(client, "list_assets", {"parent_id": pipe["id"]})
        assert [a["id"] for a in children["items"]] == [seg["id"]]

        found = await call(client, "search_assets", {"text": seeded["tag"].lower()})
        assert {a["id"] for a in found["items"]} == {pipe["id"], seg["id"]}
        by_id = await call(client, "search_assets", {"text": pipe["id"]})
        assert by_id["items"][0]["id"] == pipe["id"]

        asset = await call(client, "get_asset", {"asset_id": pipe["id"]})
        assert asset["name"] == pipe["name"] and asset["wallThicknessMm"] == 9.5 and asset["inHca"] is True
        assert isinstance(asset["version"], int)

        ms = await call(client, "list_measurements", {"asset_id": pipe["id"]})
        assert ms["totalCount"] == 3 and ms["asset"]["id"] == pipe["id"]
        anomalies = await call(client, "list_measurements", {"asset_id": pipe["id"], "type": "ILI_ANOMALY"})
        (anomaly,) = anomalies["items"]
        assert anomaly["depthPctWt"] == 45 and anomaly["lengthMm"] == 200

        fitness = await call(client, "assess_anomaly", {"asset_id": pipe["id"], "measurement_id": anomaly["id"]})
        a = fitness["assessment"]
        assert a["failurePressureKpa"] > a["safePressureKpa"] > 0 and a["erf"] is not None and a["modelVersion"]
        assert fitness["inputs"]["defectDepthMm"] == pytest.approx(9.5 * 0.45, abs=0.005)  # mm to 0.01 (budget.py)
        manual = await call(client, "assess_anomaly", {"asset_id": pipe["id"], "defect_depth_pct_wt": 45,
                                                       "defect_length_mm": 200})
        assert manual["assessment"]["erf"] == pytest.approx(a["erf"])

        obligations = await call(client, "list_compliance_obligations", {"asset_id": pipe["id"]})
        assert obligations["regulation"] == "CFR_192" and obligations["obligations"]
        assert all(o["regulation"] == "CFR_192" for o in obligations["obligations"])

        who = await call(client, "whoami")
        assert who["me"]["tenantId"] == stack.tenant_id and who["me"]["kind"] == "API_KEY"
        assert "assets:read" in who["me"]["scopes"]
        assert who["key"]["active"] is True and who["key"]["tenant_id"] == stack.tenant_id

        q = await call(client, "graphql_query", {
            "query": "query($id: ID!) { asset(id: $id) { name latestMeasurement { type } } }",
            "variables": {"id": pipe["id"]},
        })
        assert q["data"]["asset"]["name"] == pipe["name"] and q["errors"] == []

        compliance = await call(client, "get_asset_compliance", {"asset_id": pipe["id"], "as_of": "2026-01-01T00:00:00Z"})
        assert compliance["asset"]["id"] == pipe["id"] and compliance["asOf"].startswith("2026-01-01")
        by_obligation = {o["obligation"]: o for o in compliance["obligations"]}
        # A class 2 gas pipeline in an HCA with no patrol or leak survey recorded.
        assert by_obligation["PATROL"]["state"] == "NO_RECORD" and "192.705" in by_obligation["PATROL"]["regulationRef"]
        assert "GAS_HCA_REASSESSMENT" in by_obligation and compliance["state"] in {"NO_RECORD", "OVERDUE"}
        rows = await call(client, "list_compliance_status", {"asset_id": pipe["id"], "state": "NO_RECORD", "first": 100})
        assert rows["totalCount"] >= 1 and {r["asset"]["id"] for r in rows["items"]} == {pipe["id"]}
        assert all(r["state"] == "NO_RECORD" for r in rows["items"])

        ok = await call(client, "validate", {"query": "{ pipelineSummary { totalAssets } }"})
        assert ok["valid"] is True and ok["readOnly"] is True
        bad = await call(client, "validate", {"query": "{ pipelineSummary { noSuchField } }"})
        assert bad["valid"] is False and "noSuchField" in bad["errors"][0]["message"]
        mutation = await call(client, "validate", {"query": "mutation { createAsset(input: {type: VALVE, name: \"v\"}) { id } }"})
        assert mutation["valid"] is True and mutation["readOnly"] is False


async def test_graphql_query_refuses_mutations_and_keeps_error_codes(stack: Stack):
    async with mcp_client(stack.env()) as client:
        text = await call_error(client, "graphql_query", {
            "query": "mutation { createAsset(input: {type: VALVE, name: \"nope\"}) { id } }"})
        assert "read-only" in text and "mutation" in text
        text = await call_error(client, "graphql_query", {"query": "{ pipelineSummary { noSuchField } }"})
        assert "GRAPHQL_VALIDATION_FAILED" in text and "validate" in text
        # The gateway hides "did you mean"; the tool adds it from the schema and points at the schema tools.
        text = await call_error(client, "graphql_query", {"query": "{ pipelineSummary { totalAsset } }"})
        assert "Did you mean 'totalAssets'?" in text and "search_schema" in text
        text = await call_error(client, "graphql_query", {"query": "{ pipelineSummary { "})
        assert "Not a valid GraphQL document" in text
    # nothing named "nope" was created
    assert stack.graphql('{ assets(filter: {nameContains: "nope"}) { totalCount } }')["assets"]["totalCount"] == 0


async def test_write_tools_are_not_offered_unless_switched_on(stack: Stack):
    async with mcp_client(stack.env()) as client:  # LINEPACK_MCP_WRITES unset: off
        names = {t.name for t in (await client.list_tools()).tools}
        assert READ_TOOLS | SCHEMA_TOOLS <= names and not names & WRITE_TOOLS
        text = await call_error(client, "create_asset", {"type": "VALVE", "name": "writes are off"})
        assert "create_asset" in text
        assert "read-only" in client.instructions and "update_asset" not in client.instructions
    assert stack.graphql('{ assets(filter: {nameContains: "writes are off"}) { totalCount } }')["assets"]["totalCount"] == 0


async def test_write_tools(stack: Stack):
    async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on")) as client:
        created = await call(client, "create_asset", {
            "type": "VALVE", "name": "MCP test valve", "status": "PLANNED", "in_hca": False})
        assert created["type"] == "VALVE" and created["status"] == "PLANNED"
        updated = await call(client, "update_asset", {
            "asset_id": created["id"], "version": created["version"], "status": "ACTIVE"})
        assert updated["status"] == "ACTIVE" and updated["version"] > created["version"]
        marked = await call(client, "update_asset", {
            "asset_id": created["id"], "version": updated["version"], "atmospheric_exposure": True,
            "offshore": True, "gas_odorized": False})
        assert (marked["atmosphericExposure"], marked["offshore"], marked["gasOdorized"]) == (True, True, False)
        updated = marked
        stale = await call_error(client, "update_asset", {
            "asset_id": created["id"], "version": created["version"], "name": "renamed"})
        assert "CONFLICT" in stale and "get_asset" in stale

        items = [{"assetId": created["id"], "type": "VALVE_INSPECTION", "observedAt": "2025-03-01T10:00:00Z",
                  "source": "FIELD"}]
        first = await call(client, "record_measurements", {"measurements": items})
        assert first["insertedCount"] == 1 and first["duplicateCount"] == 0
        again = await call(client, "record_measurements", {"measurements": items})
        assert again["insertedCount"] == 0 and again["duplicateCount"] == 1
        assert again["idempotencyKeys"] == first["idempotencyKeys"]


async def test_resources_and_prompts(stack: Stack, seeded: dict[str, Any]):
    async with mcp_client(stack.env()) as client:
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert "linepack://schema" in resources
        sdl = (await client.read_resource("linepack://schema")).contents[0].text
        assert "type Asset" in sdl and "pipelineSummary" in sdl and "modifiedB31G" in sdl
        asset = (await client.read_resource(f"linepack://assets/{seeded['pipeline']['id']}")).contents[0].text
        assert json.loads(asset)["id"] == seeded["pipeline"]["id"]

        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert {"integrity_review", "anomaly_triage"} <= set(prompts)
        got = await client.get_prompt("integrity_review", {"pipeline": "Main Line"})
        text = got.messages[0].content.text
        assert "Main Line" in text and "get_segment_risk" in text and "get_asset_compliance" in text


async def test_bad_key_is_a_401_the_model_can_act_on(stack: Stack, tmp_path: Path):
    bad = "lpk_this_is_not_a_valid_key_0000000000"
    errlog = tmp_path / "stderr.log"
    async with mcp_client(stack.env(LINEPACK_API_KEY=bad, LINEPACK_LOG_LEVEL="DEBUG"), errlog) as client:
        text = await call_error(client, "pipeline_summary")
        assert "401" in text and "LINEPACK_API_KEY" in text and "UNAUTHENTICATED" in text
        text = await call_error(client, "list_assets")
        assert "401" in text
    log = errlog.read_text()
    assert bad not in log


async def test_narrow_key_gets_403_naming_the_scope(stack: Stack, narrow_key: dict[str, Any], seeded: dict[str, Any],
                                                    tmp_path: Path):
    errlog = tmp_path / "stderr.log"
    env = stack.env(LINEPACK_API_KEY=narrow_key["apiKey"], LINEPACK_LOG_LEVEL="DEBUG", LINEPACK_MCP_WRITES="on")
    async with mcp_client(env, errlog) as client:
        text = await call_error(client, "list_measurements", {"asset_id": seeded["pipeline"]["id"]})
        assert "403" in text and "FORBIDDEN" in text and "measurements:read" in text
        text = await call_error(client, "create_asset", {"type": "VALVE", "name": "not allowed"})
        assert "403" in text and "assets:write" in text
        # What the key may read still works; the summary says what it left out and why.
        summary = await call(client, "pipeline_summary")
        assert summary["totalAssets"] >= 2 and summary["measurementCount"] is None
        assert any("measurements:read" in o for o in summary["omitted"])
        asset = await call(client, "get_asset", {"asset_id": seeded["pipeline"]["id"]})
        assert asset["id"] == seeded["pipeline"]["id"]
    assert narrow_key["apiKey"] not in errlog.read_text()
    assert stack.api_key not in errlog.read_text()


async def test_large_results_are_capped(stack: Stack, seeded: dict[str, Any]):
    async with mcp_client(stack.env(LINEPACK_MAX_RESULT_CHARS="1000")) as client:
        big = await call(client, "graphql_query", {
            "query": "{ assets(first: 100) { edges { node { id name type status location parent { id name } } } } }"})
    assert big["truncated"] is True and big["data"] is None
    assert len(big["dataPreview"]) == 1000 and "cap" in big["note"]


async def test_a_deep_anomaly_recorded_through_mcp_is_immediate_and_raises_the_segment_risk(stack: Stack):
    """The issue's 'done when': metal loss deeper than 80 % of wall on a gas segment in an HCA."""
    tag = f"MCP-DEEP-{int(time.time() * 1000) % 10_000_000}"
    seg = stack.graphql(
        "mutation($i: CreateAssetInput!) { createAsset(input: $i) { id } }",
        {"i": {"type": "SEGMENT", "name": f"{tag} HCA segment", "status": "ACTIVE", "product": "NATURAL_GAS",
               "regulation": "CFR_192", "outsideDiameterMm": 508, "wallThicknessMm": 7.9, "smysMpa": 359,
               "maopKpa": 6200, "classLocation": 3, "inHca": True}},
    )["createAsset"]
    async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on")) as client:
        await call(client, "record_measurements", {"measurements": [
            {"assetId": seg["id"], "type": "ILI_ANOMALY", "observedAt": "2026-03-02T00:00:00Z", "source": "ILI",
             "runId": f"{tag}-R1", "featureType": "METAL_LOSS", "surface": "EXTERNAL", "odometerM": 120,
             "clockDeg": 90, "depthPctWt": 82, "lengthMm": 60, "widthMm": 40},
            {"assetId": seg["id"], "type": "ILI_ANOMALY", "observedAt": "2026-03-02T00:00:00Z", "source": "ILI",
             "runId": f"{tag}-R1", "featureType": "METAL_LOSS", "surface": "EXTERNAL", "odometerM": 300,
             "clockDeg": 180, "depthPctWt": 20, "lengthMm": 30, "widthMm": 20},
        ]})
        deadline = time.monotonic() + 20
        while True:
            page = await call(client, "list_anomaly_assessments", {"asset_id": seg["id"]})
            risk = await call(client, "get_segment_risk", {"asset_id": seg["id"]})
            drivers = " ".join((risk["risk"] or {}).get("drivers", []))
            if page["totalCount"] == 2 and "IMMEDIATE" in drivers:
                break
            assert time.monotonic() < deadline, f"not assessed in time: {page} {risk}"
            await anyio.sleep(0.3)
        first, second = page["items"]
        assert first["responseCategory"] == "IMMEDIATE" and "192.933(d)(1)" in first["ruleRef"]
        assert first["depthPctWt"] == 82 and first["repairDueAt"].startswith("2026-03-02")
        assert second["responseCategory"] != "IMMEDIATE"
        immediate = await call(client, "list_anomaly_assessments", {"asset_id": seg["id"], "response_category": "IMMEDIATE"})
        assert [a["measurementId"] for a in immediate["items"]] == [first["measurementId"]]
        assert risk["risk"]["likelihood"] == 5 and risk["risk"]["band"] == "VERY_HIGH"

        register = await call(client, "risk_register", {"band": "VERY_HIGH", "first": 100})
        entry = next(e for e in register["items"] if e["asset"]["id"] == seg["id"])
        assert entry["risk"]["score"] == risk["risk"]["score"]
        scores = [e["risk"]["score"] for e in register["items"]]
        assert scores == sorted(scores, reverse=True)

        # The what-if calculator agrees that B31G does not apply past 80 % of wall.
        what_if = await call(client, "assess_anomaly", {"asset_id": seg["id"], "defect_depth_pct_wt": 85, "defect_length_mm": 60})
        assert what_if["assessment"]["applicable"] is False and "immediate" in what_if["verdict"].lower()


async def test_schema_tools_answer_from_the_gateway_with_scopes(stack: Stack):
    async with mcp_client(stack.env()) as client:
        found = await call(client, "search_schema", {"words": "overdue"})
        assert "ComplianceState.OVERDUE" in [m["coordinate"] for m in found["matches"]]
        found = await call(client, "search_schema", {"words": "wall thickness"})
        wall = next(m for m in found["matches"] if m["coordinate"] == "Asset.wallThicknessMm")
        assert wall["requiredScopes"] == ["assets:read"] and wall["type"] == "Float"
        query = await call(client, "describe_type", {"name": "Query"})
        fields = {f["name"]: f for f in query["fields"]}
        assert fields["assets"]["requiredScopes"] == ["assets:read"]
        assert fields["riskRegister"]["requiredScopes"] == ["analytics:read"]
        assert {a["name"] for a in fields["assets"]["arguments"]} >= {"filter", "first", "after"}
        text = await call_error(client, "describe_type", {"name": "Assett"})
        assert "Did you mean Asset" in text
        # What the tools found is enough to write a query that runs.
        built = f"{{ assets(first: 1) {{ edges {{ node {{ {wall['coordinate'].split('.')[1]} }} }} }} }}"
        ok = await call(client, "validate", {"query": built})
        assert ok["valid"] is True
        assert (await call(client, "graphql_query", {"query": built}))["errors"] == []
