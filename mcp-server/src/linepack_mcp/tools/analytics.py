"""Fitness for service and risk: Modified B31G what-ifs, stored anomaly assessments, a segment's risk, the register."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, get_args

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from ..models import (
    AnomalyAssessment,
    AnomalyAssessmentPage,
    AssetRisk,
    B31GAssessment,
    B31GInputs,
    FlowStressMethod,
    Regulation,
    ResponseCategory,
    RiskBand,
    RiskRegisterPage,
    SegmentRisk,
    StoredAssessment,
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
    _assessment_item,
    _check_fields,
    _drop_none,
    _found_asset,
    _select,
    csv_text,
)

ASSESSMENT_COMPACT = ("measurementId", "responseCategory", "ruleRef", "repairDueAt", "featureType", "odometerM",
                      "clockDeg", "depthPctWt", "depthWithTolerancePctWt", "lengthMm", "erf", "safePressureKpa",
                      "remainingLifeYears", "growthRateMmPerYear", "notAssessableReason")
RESPONSE_CATEGORIES: tuple[str, ...] = get_args(ResponseCategory)
ASSESSMENT_FIELDS = tuple(StoredAssessment.model_fields)


def register(kit: Toolkit) -> None:
    ops, tool, run_read, answer, page_answer = kit.ops, kit.tool, kit.run_read, kit.answer, kit.page_answer
    fetch_asset = kit.fetch_asset

    @tool(title="Assess a metal-loss anomaly (Modified B31G)", annotations=READ)
    async def assess_anomaly(
        asset_id: Annotated[str, Field(description="The pipe asset (pipeline or segment) the feature is on; its "
                                                   "diameter, wall thickness, SMYS, MAOP, regulation and class location are used.")],
        measurement_id: Annotated[str | None, Field(description="An ILI_ANOMALY measurement whose depthPctWt and lengthMm "
                                                                "give the feature's depth and length.")] = None,
        defect_depth_mm: Annotated[float | None, Field(gt=0, description="Maximum depth of the feature (instead of a measurement).")] = None,
        defect_depth_pct_wt: Annotated[float | None, Field(gt=0, lt=100, description="Depth as % of wall thickness (instead of mm).")] = None,
        defect_length_mm: Annotated[float | None, Field(gt=0, description="Axial length of the feature.")] = None,
        flow_stress: Annotated[FlowStressMethod | None, Field(description="Flow stress convention; SMYS + 69 MPa "
                                                                          "(Kiefner & Vieth) when omitted.")] = None,
    ) -> Annotated[CallToolResult, AnomalyAssessment]:
        """What-if remaining strength of corroded pipe with one metal-loss feature, by Modified B31G (0.85dL):
        failure pressure, safe pressure with the design factor (192.111 by class location for gas, 0.72 for
        liquid), ERF = MAOP / safe pressure (above 1 the feature needs action) and failure pressure / MAOP.
        Metal loss deeper than 80 % of wall is not assessable: an immediate repair condition. Give either
        measurement_id or the feature's depth and length. For the stored assessments of recorded anomalies
        (with response category and remaining life) use list_anomaly_assessments."""
        asset = await fetch_asset(asset_id, "LinepackAssetGeometry")
        depth_pct, length = defect_depth_pct_wt, defect_length_mm
        depth_mm = defect_depth_mm
        if measurement_id:
            data = await run_read(ops["LinepackAnomaly"], {"id": measurement_id})
            m = data.get("measurement")
            if m is None:
                raise ToolError(f"No measurement with id {measurement_id!r} in this tenant (NOT_FOUND).")
            if m["asset"]["id"] != asset["id"]:
                raise ToolError(f"Measurement {measurement_id} belongs to asset {m['asset']['id']}, not {asset['id']}.")
            if m.get("depthPctWt") is None or m.get("lengthMm") is None:
                raise ToolError(
                    f"Measurement {measurement_id} ({m['type']}) has no depthPctWt/lengthMm; Modified B31G needs "
                    f"an ILI_ANOMALY with both, or pass defect_depth_mm and defect_length_mm."
                )
            depth_pct, length, depth_mm = m["depthPctWt"], m["lengthMm"], None
        regulation = asset.get("regulation") or "CFR_192"
        missing = [f for f in ("outsideDiameterMm", "wallThicknessMm", "smysMpa") if asset.get(f) is None]
        if regulation == "CFR_192" and asset.get("classLocation") is None:
            missing.append("classLocation")
        if missing:
            raise ToolError(
                f"Asset {asset['id']} ({asset['name']}) has no {', '.join(missing)}; Modified B31G needs the "
                f"pipe's diameter, wall thickness and SMYS, and gas (CFR_192) pipe its class location for the "
                f"design factor. Set them with update_asset first."
            )
        wt = float(asset["wallThicknessMm"])
        if depth_mm is None and depth_pct is not None:
            depth_mm = wt * float(depth_pct) / 100.0
        if depth_mm is None or length is None:
            raise ToolError("Give measurement_id, or defect_length_mm and one of defect_depth_mm / defect_depth_pct_wt.")
        if depth_mm >= wt:
            raise ToolError(f"A defect {depth_mm:.2f} mm deep goes through the {wt} mm wall: no remaining strength to assess.")
        inputs = B31GInputs(
            outsideDiameterMm=asset["outsideDiameterMm"], wallThicknessMm=wt, smysMpa=asset["smysMpa"],
            defectDepthMm=round(depth_mm, 6), defectLengthMm=length, regulation=regulation,
            classLocation=asset.get("classLocation"), maopKpa=asset.get("maopKpa"),
        )
        variables = inputs.model_dump(exclude_none=True)
        if flow_stress:
            variables["flowStress"] = flow_stress
            if asset.get("smtsMpa") is not None:
                variables["smtsMpa"] = asset["smtsMpa"]
        data = await run_read(ops["LinepackB31G"], {"input": variables})
        a = B31GAssessment.model_validate(data["modifiedB31G"])
        if not a.applicable:
            verdict = f"Not assessable with Modified B31G: {a.notApplicableReason}"
        elif a.erf is None:
            verdict = (f"Safe pressure {a.safePressureKpa:.0f} kPa (failure {a.failurePressureKpa:.0f} kPa); "
                       f"no MAOP on the asset, so no ERF.")
        elif a.erf > 1:
            verdict = (f"ERF {a.erf:.3f} > 1: the safe pressure {a.safePressureKpa:.0f} kPa is below MAOP "
                       f"{inputs.maopKpa:.0f} kPa. The feature needs action (repair or pressure reduction).")
        else:
            verdict = (f"ERF {a.erf:.3f} <= 1: the safe pressure {a.safePressureKpa:.0f} kPa covers MAOP "
                       f"{inputs.maopKpa:.0f} kPa.")
        return answer(AnomalyAssessment(
            asset=_asset_ref(asset),
            measurementId=measurement_id, inputs=inputs, assessment=a, verdict=verdict,
        ))

    @tool(title="Anomaly assessments of a segment", annotations=READ)
    async def list_anomaly_assessments(
        asset_id: Annotated[str, Field(description="The pipe asset (segment or pipeline) whose ILI anomalies to list.")],
        response_category: Annotated[ResponseCategory | None, Field(description="Only anomalies in this response category.")] = None,
        assessable: Annotated[bool | None, Field(description="Only assessable (true) or not assessable (false) anomalies.")] = None,
        view: ViewArg = "compact",
        fields: FieldsArg = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size (1-100); fewer come back when they "
                                    "would not fit the answer budget.")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, AnomalyAssessmentPage]:
        """A pipe asset's recorded ILI anomalies as analytics assessed them, most urgent first. The first page starts
        with a summary: how many anomalies fall in each response category and how many could not be assessed, over
        all of them. Then the most urgent: response category with its rule (192.933(d), 192.714(d), 195.452(h)),
        repair due date, depth (reported and with tool tolerance), length, odometer, ERF, safe pressure, growth and
        remaining life. To triage, read the summary, then ask for one category at a time (response_category)
        rather than paging through everything; view='full' adds failure pressures, method notes and model versions."""
        _check_fields("list_anomaly_assessments", fields, ASSESSMENT_FIELDS)
        variables = {"id": asset_id, "first": first, "after": after,
                     "filter": _drop_none({"responseCategory": response_category, "assessable": assessable}) or None}
        if after is None:
            data, counts = await asyncio.gather(run_read(ops["LinepackAssessments"], variables),
                                                run_read(ops["LinepackAssessmentCounts"], {"id": asset_id}))
        else:
            data, counts = await run_read(ops["LinepackAssessments"], variables), {}
        asset = _found_asset(data, asset_id)
        conn = asset["anomalyAssessments"]
        head: dict[str, Any] = {"asset": _asset_ref(asset).model_dump(exclude_none=True)}
        if counts.get("asset"):
            c = counts["asset"]
            head["summary"] = {
                "total": c["all"]["totalCount"],
                "byResponseCategory": {cat: c[cat]["totalCount"] for cat in RESPONSE_CATEGORIES
                                       if c.get(cat) and c[cat]["totalCount"]},
                "notAssessable": c["notAssessable"]["totalCount"],
            }
        items = _select([_assessment_item(e["node"]) for e in conn["edges"]], view=view, fields=fields,
                        compact=ASSESSMENT_COMPACT, key="measurementId")
        return page_answer(AnomalyAssessmentPage, head, conn, items, "list_anomaly_assessments", dict(
            asset_id=asset_id, response_category=response_category, assessable=assessable, view=view, fields=fields,
            first=first), export=Export(f"linepack://assets/{asset_id}/anomaly-assessments.csv",
                                        "anomaly-assessments.csv",
                                        f"Every assessed ILI anomaly of asset {asset_id}, all categories"))

    @kit.resource("linepack://assets/{asset_id}/anomaly-assessments.csv", name="anomaly-assessments.csv",
                  title="Anomaly assessments of an asset (CSV)", mime_type="text/csv",
                  description=f"Every ILI anomaly of a pipe asset as analytics assessed it, most urgent first, one row "
                              f"each (at most {MAX_EXPORT_ROWS}): what list_anomaly_assessments pages through.")
    async def anomaly_assessments_csv(asset_id: str) -> str:
        rows = await kit.export_rows(ops["LinepackAssessments"], {"id": asset_id},
                                     lambda data: _found_asset(data, asset_id)["anomalyAssessments"], _assessment_item)
        return csv_text(rows)

    @tool(title="Risk of a segment", annotations=READ)
    async def get_segment_risk(
        asset_id: Annotated[str, Field(description="The pipe asset (segment or pipeline).")],
    ) -> Annotated[CallToolResult, AssetRisk]:
        """The 5x5 risk of one pipe segment: likelihood (from its assessed anomalies and CP readings),
        consequence (potential impact radius, class location, HCA, product), score, band and the
        drivers that explain both, with model version and when it was computed."""
        data = await run_read(ops["LinepackRisk"], {"id": asset_id})
        asset = _found_asset(data, asset_id)
        risk = asset.get("risk")
        return answer(AssetRisk(
            asset=_asset_ref(asset),
            risk=SegmentRisk.model_validate(risk) if risk else None,
            note=None if risk else "No risk score: only active pipelines and segments are scored, once analytics has "
                                   "received the asset.",
        ), drop_nulls=False)

    @tool(title="Risk register", annotations=READ)
    async def risk_register(
        band: Annotated[RiskBand | None, Field(description="Only segments in this risk band.")] = None,
        min_score: Annotated[int | None, Field(ge=1, le=25, description="Only segments scoring at least this (1-25).")] = None,
        regulation: Annotated[Regulation | None, Field(description="Only CFR_192 (gas) or CFR_195 (liquid) segments.")] = None,
        view: ViewArg = "compact",
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size (1-100).")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, RiskRegisterPage]:
        """The tenant's pipe segments ranked by risk score, highest first, each with its likelihood, consequence and
        band; view='full' adds the drivers behind each score (get_segment_risk explains one segment)."""
        data = await run_read(
            ops["LinepackRiskRegister"],
            {"filter": _drop_none({"band": band, "minScore": min_score, "regulation": regulation}) or None,
             "first": first, "after": after},
        )
        conn = data["riskRegister"]
        items = [e["node"] for e in conn["edges"]]
        if view == "compact":
            items = [{"asset": {k: v for k, v in n["asset"].items() if k in ("id", "name")},
                      "risk": {k: n["risk"][k] for k in ("score", "band", "likelihood", "consequence")}}
                     for n in items]
        return page_answer(RiskRegisterPage, {}, conn, items, "risk_register", dict(
            band=band, min_score=min_score, regulation=regulation, view=view, first=first))
