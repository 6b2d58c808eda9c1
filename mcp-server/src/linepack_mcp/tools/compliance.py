"""Regulatory obligations (49 CFR 192/195): the catalogue, an asset's compliance, the tenant's status rows."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from ..models import (
    AssetCompliance,
    ComplianceObligation,
    ComplianceObligations,
    ComplianceState,
    ComplianceStatusPage,
    ComplianceStatusRow,
    Obligation,
    ObligationStatus,
    Regulation,
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

COMPLIANCE_COMPACT = ("asset", "obligation", "state", "dueAt", "lastCompletedAt")
COMPLIANCE_FIELDS = tuple(ComplianceStatusRow.model_fields)


def register(kit: Toolkit) -> None:
    ops, tool, run_read, answer, page_answer = kit.ops, kit.tool, kit.run_read, kit.answer, kit.page_answer
    fetch_asset = kit.fetch_asset

    @tool(title="Compliance obligations", annotations=READ)
    async def list_compliance_obligations(
        regulation: Annotated[Regulation | None, Field(description="CFR_192 (gas) or CFR_195 (liquids); all when omitted.")] = None,
        asset_id: Annotated[str | None, Field(description="Use this asset's regulation (and report which asset).")] = None,
    ) -> Annotated[CallToolResult, ComplianceObligations]:
        """The recurring regulatory obligations Linepack tracks (49 CFR 192/195): section, the interval
        rule as the regulation states it, which assets each applies to and what evidence counts. With
        asset_id, those of the asset's regulation; get_asset_compliance says which apply to the asset
        and when each is due."""
        ref = None
        note = None
        if asset_id:
            asset = await fetch_asset(asset_id, "LinepackAssetRegulation")
            ref = _asset_ref(asset)
            if asset.get("regulation") is None:
                note = "The asset has no regulation set, so every obligation is listed."
            elif regulation and regulation != asset["regulation"]:
                raise ToolError(f"Asset {asset_id} is regulated under {asset['regulation']}, not {regulation}.")
            else:
                regulation = asset["regulation"]
        data = await run_read(ops["LinepackObligations"], {"regulation": regulation})
        return answer(ComplianceObligations(
            regulation=regulation, asset=ref, note=note,
            obligations=[ComplianceObligation.model_validate(o) for o in data["complianceObligations"]],
        ))

    @tool(title="Compliance of an asset", annotations=READ)
    async def get_asset_compliance(
        asset_id: Annotated[str, Field(description="The asset.")],
        as_of: Annotated[datetime | None, Field(description="Evaluate as of this instant (ISO 8601); now when omitted.")] = None,
        due_soon_days: Annotated[int, Field(ge=0, le=365, description="Due within this many days counts as DUE_SOON.")] = 30,
    ) -> Annotated[CallToolResult, AssetCompliance]:
        """The asset's applicable regulatory obligations and the state of each (OK, DUE_SOON, OVERDUE,
        NO_RECORD): last completed, due date by the regulation's calendar rule, and every broken rule."""
        data = await run_read(
            ops["LinepackAssetCompliance"],
            {"id": asset_id, "asOf": _utc(as_of), "days": due_soon_days},
        )
        asset = _found_asset(data, asset_id)
        c = asset["compliance"]
        return answer(AssetCompliance(
            asset=_asset_ref(asset),
            asOf=c["asOf"], state=c["state"],
            obligations=[ObligationStatus.model_validate(o) for o in c["obligations"]],
        ))

    @tool(title="Compliance status across the tenant", annotations=READ)
    async def list_compliance_status(
        state: Annotated[ComplianceState | None, Field(description="Only rows in this state, e.g. OVERDUE.")] = None,
        obligation: Annotated[Obligation | None, Field(description="Only this obligation.")] = None,
        regulation: Annotated[Regulation | None, Field(description="Only CFR_192 or CFR_195 obligations.")] = None,
        asset_id: Annotated[str | None, Field(description="Only this asset's rows.")] = None,
        as_of: Annotated[datetime | None, Field(description="Evaluate as of this instant (ISO 8601); now when omitted.")] = None,
        due_soon_days: Annotated[int, Field(ge=0, le=365, description="Due within this many days counts as DUE_SOON.")] = 30,
        view: ViewArg = "compact",
        fields: FieldsArg = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size (1-100).")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, ComplianceStatusPage]:
        """Every (asset, obligation) row of the tenant with its state, soonest due first: what is overdue or due soon
        across the whole system. Filter by state (e.g. OVERDUE) rather than paging through every row."""
        _check_fields("list_compliance_status", fields, COMPLIANCE_FIELDS)
        data = await run_read(
            ops["LinepackComplianceStatus"],
            {"filter": _drop_none({"state": state, "obligation": obligation, "regulation": regulation,
                                   "assetId": asset_id}) or None,
             "asOf": _utc(as_of), "days": due_soon_days, "first": first, "after": after},
        )
        conn = data["complianceStatus"]
        items = _select([e["node"] for e in conn["edges"]], view=view, fields=fields, compact=COMPLIANCE_COMPACT,
                        key="asset")
        return page_answer(ComplianceStatusPage, {}, conn, items, "list_compliance_status", dict(
            state=state, obligation=obligation, regulation=regulation, asset_id=asset_id, as_of=_utc(as_of),
            due_soon_days=due_soon_days, view=view, fields=fields, first=first),
            export=Export("linepack://compliance-status.csv", "compliance-status.csv",
                          "Every (asset, obligation) row of the tenant as of now, all states"))

    @kit.resource("linepack://compliance-status.csv", name="compliance-status.csv",
                  title="Compliance status of the tenant (CSV)", mime_type="text/csv",
                  description=f"Every (asset, obligation) row of the tenant as of now, soonest due first, one row each "
                              f"(at most {MAX_EXPORT_ROWS}): what list_compliance_status pages through.")
    async def compliance_status_csv() -> str:
        rows = await kit.export_rows(ops["LinepackComplianceStatus"], {"days": 30},
                                     lambda data: data["complianceStatus"], lambda node: node)
        return csv_text(rows)
