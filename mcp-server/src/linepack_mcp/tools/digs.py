"""The dig list across the tenant and the dig sheet of one anomaly."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from ..models import DigItem, DigListPage, DigSheet, ResponseCategory
from .kit import (
    MAX_EXPORT_ROWS,
    MAX_PAGE,
    READ,
    FieldsArg,
    Export,
    Toolkit,
    ViewArg,
    _asset_ref,
    _assessment_item,
    _check_fields,
    _drop_none,
    _select,
    _utc,
    as_data,
    csv_text,
)

DIG_FIELDS = tuple(DigItem.model_fields)
DUE_DATE_CATEGORIES = ("IMMEDIATE", "SIXTY_DAY", "ONE_HUNDRED_EIGHTY_DAY", "ONE_YEAR", "TWO_YEAR")
DIG_COMPACT = ("measurementId", "asset", "responseCategory", "ruleRef", "repairDueAt", "overdue", "status",
               "depthSource", "featureType", "odometerM", "clockDeg", "depthPctWt", "lengthMm", "erf")


def _clock(deg: float | None) -> str | None:
    """Degrees clockwise from top of pipe as the clock face a crew reads (30 degrees an hour)."""
    if deg is None:
        return None
    minutes = round((deg % 360) / 360 * 12 * 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours or 12}:{minutes:02d}"


def _dig_directions(m: dict[str, Any], location: dict[str, Any] | None) -> list[str]:
    """The dig sheet in words: each line is one thing a crew measures or looks for."""
    lines: list[str] = []
    asset = m.get("asset") or {}
    lines.append(f"On {as_data(asset.get('name') or asset.get('id'))}: {m.get('featureType') or m.get('type')} at odometer "
                 f"{_metres(m.get('odometerM'))}.")
    if location:
        joint, up, down = location.get("jointNumber"), location.get("upstreamWeld"), location.get("downstreamWeld")
        if up:
            lines.append(f"Joint {joint}: {_metres(location.get('distanceFromUpstreamWeldM'))} downstream of girth weld "
                         f"{up.get('jointNumber')} (log {_metres(up.get('logDistanceM'))}).")
        if down:
            lines.append(f"{_metres(down.get('distanceM'))} upstream of girth weld {down.get('jointNumber')} (log "
                         f"{_metres(down.get('logDistanceM'))}).")
        for side, marker in (("upstream", location.get("upstreamMarker")), ("downstream", location.get("downstreamMarker"))):
            if marker:
                lines.append(f"Nearest marker {side}: {as_data(marker.get('name') or marker.get('kind'))} ({marker.get('kind')}), "
                             f"{_metres(marker.get('distanceM'))} {side} of the feature.")
    clock = location.get("clockDeg") if location else m.get("clockDeg")
    if clock is not None:
        lines.append(f"Clock position {_clock(clock)} ({round(clock)} degrees from top of pipe, looking downstream).")
    return lines


def _metres(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f} m"


def register(kit: Toolkit) -> None:
    ops, tool, run_read, answer, page_answer = kit.ops, kit.tool, kit.run_read, kit.answer, kit.page_answer

    @tool(title="Dig list across the tenant", annotations=READ)
    async def dig_list(
        response_categories: Annotated[list[ResponseCategory] | None, Field(
            description="Only these response categories; by default every category with a due date (IMMEDIATE, "
                        "SIXTY_DAY, ONE_HUNDRED_EIGHTY_DAY, ONE_YEAR, TWO_YEAR).")] = None,
        due_before: Annotated[datetime | None, Field(description="Only repairs due before this instant (ISO 8601).")] = None,
        pipeline_id: Annotated[str | None, Field(description="Only this asset and its child segments.")] = None,
        in_hca: Annotated[bool | None, Field(description="Only segments in (true) or outside (false) a high "
                                             "consequence area.")] = None,
        include_repaired: Annotated[bool, Field(description="Also anomalies a repair has closed.")] = False,
        view: ViewArg = "compact",
        fields: FieldsArg = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size (1-100); fewer come back when they "
                                    "would not fit the answer budget.")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, DigListPage]:
        """The dig list: the tenant's open anomalies that need a response, across every segment, soonest repair due
        date first. The first page starts with counts by response category under the same filter. Each item: the
        segment, category and rule, due date and whether it is overdue, status (OPEN/REPAIRED), the depth used and
        where it comes from (ILI tool or field measurement), position; view='full' adds the field result, repair and
        pressure reductions. get_dig_sheet tells a crew where to dig one of them."""
        _check_fields("dig_list", fields, DIG_FIELDS)
        flt = _drop_none({"responseCategories": response_categories, "dueBefore": _utc(due_before),
                          "pipelineId": pipeline_id, "inHca": in_hca, "includeRepaired": include_repaired or None})
        variables = {"filter": flt or None, "first": first, "after": after}
        if after is None:
            asked = response_categories or list(DUE_DATE_CATEGORIES)
            # Only the asked categories are counted: an alias left without a filter would count every due
            # category across the whole tenant.
            per_category = {cat: {**flt, "responseCategories": [cat]} for cat in asked}
            per_category.update({f"count{cat}": True for cat in asked})
            data, counts = await asyncio.gather(run_read(ops["LinepackDigList"], variables),
                                                run_read(ops["LinepackDigCounts"], per_category))
        else:
            data, counts = await run_read(ops["LinepackDigList"], variables), {}
        conn = data["digList"]
        head: dict[str, Any] = {}
        if counts:
            head["summary"] = {"total": conn["totalCount"],
                               "byResponseCategory": {cat: counts[cat]["totalCount"] for cat in asked
                                                      if counts.get(cat) and counts[cat]["totalCount"]}}
        items = _select([_assessment_item(e["node"]) for e in conn["edges"]], view=view, fields=fields,
                        compact=DIG_COMPACT, key="measurementId")
        return page_answer(DigListPage, head, conn, items, "dig_list", dict(
            response_categories=response_categories, due_before=_utc(due_before), pipeline_id=pipeline_id,
            in_hca=in_hca, include_repaired=include_repaired or None, view=view, fields=fields, first=first),
            export=Export("linepack://dig-list.csv", "dig-list.csv",
                          "The tenant's whole open dig list (every category with a due date)"))

    @kit.resource("linepack://dig-list.csv", name="dig-list.csv", title="The dig list (CSV)", mime_type="text/csv",
                  description=f"The tenant's open anomalies that need a response, every category with a due date, "
                              f"soonest due first, one row each (at most {MAX_EXPORT_ROWS}): what dig_list pages "
                              f"through unfiltered.")
    async def dig_list_csv() -> str:
        rows = await kit.export_rows(ops["LinepackDigList"], {}, lambda data: data["digList"], _assessment_item)
        return csv_text(rows)

    @tool(title="Dig sheet of an anomaly", annotations=READ)
    async def get_dig_sheet(
        measurement_id: Annotated[str, Field(description="The ILI_ANOMALY measurement (measurementId in dig_list or "
                                             "list_anomaly_assessments).")],
    ) -> Annotated[CallToolResult, DigSheet]:
        """Where a field crew finds one anomaly and what it is: joint number, distance and direction from the
        nearest girth welds and reference markers either side, clock position, the tool's dimensions, and the
        assessment (category, rule, due date, status, field result, repair, pressure reductions)."""
        data = await run_read(ops["LinepackDigSheet"], {"id": measurement_id})
        m = data.get("measurement")
        if m is None:
            raise ToolError(f"No measurement with id {measurement_id!r} in this tenant (NOT_FOUND). dig_list and "
                            f"list_anomaly_assessments give anomalies' measurementId.")
        location = m.get("iliLocation")
        feature = {k: m.get(k) for k in ("type", "featureType", "surface", "observedAt", "runId", "odometerM",
                                         "clockDeg", "depthPctWt", "lengthMm", "widthMm")}
        assessment = m.get("assessment")
        return answer(DigSheet(
            measurementId=m["id"], asset=_asset_ref(m["asset"]), directions=_dig_directions(m, location),
            feature=feature, iliLocation=location,
            assessment=({k: v for k, v in assessment.items() if k not in ("measurement", "asset")}
                        if assessment else None),
            note=None if location else ("No pipe-tally location: the measurement was not imported from an ILI "
                                        "listing, so only its odometer and clock position are known."),
        ))
