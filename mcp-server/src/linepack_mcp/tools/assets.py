"""Assets and their measurements: the summary, listing, search, one asset (tool and resource), measurements."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from ..client import LinepackError, LinepackForbidden, LinepackGraphQLError
from ..models import (
    Asset,
    AssetPage,
    AssetStatus,
    AssetType,
    Measurement,
    MeasurementPage,
    MeasurementType,
    PipelineSummary,
)
from .kit import (
    MAX_EXPORT_ROWS,
    MAX_PAGE,
    READ,
    FieldsArg,
    Export,
    Toolkit,
    ViewArg,
    _asset_ref,
    _check_fields,
    _drop_none,
    _found_asset,
    _select,
    _utc,
    csv_text,
)

log = logging.getLogger("linepack_mcp.server")

# The summary's own fields; any other field the API's PipelineSummary offers is selected too (see pipeline_summary).
SUMMARY_KNOWN = {
    "tenantId", "totalAssets", "assetsByType", "assetsByStatus", "totalPipelineLengthM",
    "measurementCount", "latestInspectionAt",
}
# What the compact view of each list tool keeps: enough to review and to pick items for a closer look.
ASSET_COMPACT = ("id", "name", "type", "status", "parent", "regulation", "classLocation", "inHca", "maopKpa")
MEASUREMENT_COMPACT = ("id", "type", "observedAt", "stationM", "odometerM", "value", "unit", "featureType", "depthPctWt",
                       "lengthMm", "widthMm", "clockDeg", "runId")
ASSET_FIELDS = tuple(Asset.model_fields)
MEASUREMENT_FIELDS = tuple(Measurement.model_fields)


def register(kit: Toolkit) -> None:
    state, ops = kit.state, kit.ops
    tool, run_read, answer, page_answer = kit.tool, kit.run_read, kit.answer, kit.page_answer
    fetch_asset = kit.fetch_asset
    resource = kit.resource

    @tool(title="Pipeline summary", annotations=READ)
    async def pipeline_summary() -> Annotated[CallToolResult, PipelineSummary]:
        """Summary of the tenant's pipeline: asset counts by type and status, total pipeline length,
        measurement count and latest inspection, plus whatever else the API's summary offers."""
        # graphql-core is imported when a tool first needs it, not at start-up
        from graphql import GraphQLSchema, get_named_type, is_leaf_type, is_object_type, is_required_argument

        from ..schema import leaf_selection

        extra_names: list[str] = []
        extra_sel = ""
        try:
            schema_now: GraphQLSchema | None = await state.schema.get(state.client)
        except LinepackError as exc:
            log.info("pipeline_summary without the schema (%s): the API's further summary fields are left out", exc.message)
            schema_now = None
        if schema_now is not None:
            t = schema_now.get_type("PipelineSummary")
            if is_object_type(t):
                for name, f in t.fields.items():  # type: ignore[union-attr]
                    if name in SUMMARY_KNOWN or any(is_required_argument(a) for a in f.args.values()):
                        continue
                    named = get_named_type(f.type)
                    if is_leaf_type(named):
                        extra_names.append(name)
                        extra_sel += f" {name}"
                    elif is_object_type(named):
                        inner = leaf_selection(schema_now, named.name)
                        if inner:
                            extra_names.append(name)
                            extra_sel += f" {name} {inner}"
        omitted: list[str] = []
        try:
            data = await run_read(ops.with_fields("LinepackSummary", "pipelineSummary", extra_sel))
        except LinepackForbidden as exc:
            # Some contributed fields need scopes beyond assets:read: answer with what the key may see.
            log.info("pipeline_summary: retrying without contributed fields (%s)", exc.missing_scopes)
            data = await run_read(ops["LinepackSummaryCore"])
            needs = ", ".join(exc.missing_scopes) or "more scopes"
            omitted = [f"{n} (needs {needs})" for n in ["measurementCount", "latestInspectionAt", *extra_names]]
        summary = dict(data["pipelineSummary"])
        summary["otherFields"] = {n: summary.pop(n) for n in extra_names if n in summary}
        summary["omitted"] = omitted
        return answer(PipelineSummary.model_validate(summary), drop_nulls=False)

    @tool(title="List assets", annotations=READ)
    async def list_assets(
        type: Annotated[AssetType | None, Field(description="Only assets of this type.")] = None,
        status: Annotated[AssetStatus | None, Field(description="Only assets in this lifecycle status.")] = None,
        parent_id: Annotated[str | None, Field(description="Only children of this asset (e.g. a pipeline's segments).")] = None,
        in_hca: Annotated[bool | None, Field(description="Only assets in (true) or outside (false) a high consequence area.")] = None,
        name_contains: Annotated[str | None, Field(description="Case-insensitive substring of the name.")] = None,
        view: ViewArg = "compact",
        fields: FieldsArg = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size (1-100); fewer come back when they "
                                    "would not fit the answer budget.")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page's pageInfo.endCursor.")] = None,
    ) -> Annotated[CallToolResult, AssetPage]:
        """List the tenant's assets, ordered by name, filtered and paginated. The compact view gives each asset's
        id, name, type, status, parent, regulation, class location, HCA and MAOP; get_asset (or view='full') has
        every attribute."""
        _check_fields("list_assets", fields, ASSET_FIELDS)
        flt = _drop_none({"type": type, "status": status, "parentId": parent_id, "inHca": in_hca,
                          "nameContains": name_contains})
        return await _asset_page("list_assets", flt, first, after, view, fields, dict(
            type=type, status=status, parent_id=parent_id, in_hca=in_hca, name_contains=name_contains, view=view,
            fields=fields, first=first))

    async def _asset_page(tool_name: str, flt: dict[str, Any], first: int, after: str | None, view: str,
                          fields: list[str] | None, same: dict[str, Any],
                          lead: dict[str, Any] | None = None) -> CallToolResult:
        data = await run_read(ops["LinepackAssets"], {"filter": flt or None, "first": first, "after": after})
        conn = data["assets"]
        pairs = [(e["cursor"], e["node"]) for e in conn["edges"]]
        if lead is not None:  # an exact id match, shown first
            named = any(n["id"] == lead["id"] for _, n in pairs)
            pairs = [(None, lead), *[(c, n) for c, n in pairs if n["id"] != lead["id"]]]
            conn = {**conn, "totalCount": conn["totalCount"] + (0 if named else 1)}
        conn = {**conn, "edges": [{"cursor": c} for c, _ in pairs]}
        items = _select([n for _, n in pairs], view=view, fields=fields, compact=ASSET_COMPACT, key="id")
        return page_answer(AssetPage, {}, conn, items, tool_name, same)

    @tool(title="Search assets", annotations=READ)
    async def search_assets(
        text: Annotated[str, Field(min_length=1, description="Part of an asset's name, or an asset id.")],
        type: Annotated[AssetType | None, Field(description="Only assets of this type.")] = None,
        view: ViewArg = "compact",
        fields: FieldsArg = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size (1-100).")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, AssetPage]:
        """Find assets whose name contains `text` (case-insensitive); an exact asset id also matches."""
        _check_fields("search_assets", fields, ASSET_FIELDS)
        lead: dict[str, Any] | None = None
        if after is None and " " not in text.strip():
            try:
                by_id = await run_read(ops["LinepackAsset"], {"id": text.strip()})
            except LinepackGraphQLError:
                by_id = {}  # not an id in the API's format
            if by_id.get("asset") and (type is None or by_id["asset"]["type"] == type):
                lead = by_id["asset"]
        return await _asset_page("search_assets", _drop_none({"nameContains": text, "type": type}), first, after,
                                 view, fields, dict(text=text, type=type, view=view, fields=fields, first=first), lead)

    @tool(title="Get an asset", annotations=READ)
    async def get_asset(
        asset_id: Annotated[str, Field(description="The asset's id.")],
    ) -> Annotated[CallToolResult, Asset]:
        """One asset with all its attributes (geometry, material, MAOP, class location, HCA, status,
        version). Use its `version` for update_asset."""
        return answer(Asset.model_validate(await fetch_asset(asset_id)))

    @tool(title="List measurements of an asset", annotations=READ)
    async def list_measurements(
        asset_id: Annotated[str, Field(description="The asset whose measurements to list.")],
        type: Annotated[MeasurementType | None, Field(description="Only this measurement or inspection type.")] = None,
        observed_from: Annotated[datetime | None, Field(description="Observed at or after this instant (ISO 8601).")] = None,
        observed_to: Annotated[datetime | None, Field(description="Observed before this instant (ISO 8601).")] = None,
        view: ViewArg = "compact",
        fields: FieldsArg = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size (1-100).")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, MeasurementPage]:
        """Measurements and inspection records of one asset, newest observation first, paginated
        (ILI anomalies with depth/length/clock position, UT readings, CP potentials, surveys...). For ILI anomalies
        as assessed (category, due date) use list_anomaly_assessments instead."""
        _check_fields("list_measurements", fields, MEASUREMENT_FIELDS)
        data = await run_read(
            ops["LinepackMeasurements"],
            {"id": asset_id, "type": type, "from": _utc(observed_from), "to": _utc(observed_to),
             "first": first, "after": after},
        )
        asset = _found_asset(data, asset_id)
        conn = asset["measurements"]
        items = _select([e["node"] for e in conn["edges"]], view=view, fields=fields, compact=MEASUREMENT_COMPACT,
                        key="id")
        return page_answer(MeasurementPage, {"asset": _asset_ref(asset).model_dump(exclude_none=True)}, conn, items,
                           "list_measurements", dict(asset_id=asset_id, type=type, observed_from=_utc(observed_from),
                                                     observed_to=_utc(observed_to), view=view, fields=fields,
                                                     first=first),
                           export=Export(f"linepack://assets/{asset_id}/measurements.csv", "measurements.csv",
                                         f"Every measurement of asset {asset_id}, all types"))

    @kit.resource("linepack://assets/{asset_id}/measurements.csv", name="measurements.csv",
                  title="Measurements of an asset (CSV)", mime_type="text/csv",
                  description=f"Every measurement and inspection record of an asset, newest first, one row each (at "
                              f"most {MAX_EXPORT_ROWS}): what list_measurements pages through.")
    async def measurements_csv(asset_id: str) -> str:
        rows = await kit.export_rows(ops["LinepackMeasurements"], {"id": asset_id},
                                     lambda data: _found_asset(data, asset_id)["measurements"], lambda node: node)
        return csv_text(rows)


    @resource("linepack://assets/{asset_id}", name="asset", title="A Linepack asset",
                  description="One asset of the tenant as JSON.", mime_type="application/json")
    async def asset_resource(asset_id: str) -> str:
        return json.dumps(await fetch_asset(asset_id), indent=2)
