"""The tools that change data, offered only with LINEPACK_MCP_WRITES=on."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Annotated, Any

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from ..client import LinepackError, LinepackGraphQLError
from ..models import (
    AnomalyFeatureType,
    AnomalySurface,
    Asset,
    AssetStatus,
    AssetType,
    Crossing,
    MeasurementSource,
    MeasurementType,
    MeasurementUnit,
    Product,
    RecordResult,
    Regulation,
)
from ..idempotency import caller_key, content_key
from ..operations import operations
from .kit import CREATE, RECORD, UPDATE, Toolkit, _drop_none, _found_asset, _utc, as_data

MAX_BATCH = 1000
RECORD_LISTED = 20  # a batch up to this size answers every id and key; a larger one, counts and duplicates


def _compliance_attributes(could_affect_hca: bool | None, cathodically_protected: bool | None,
                           atmospheric_exposure: bool | None, offshore: bool | None, gas_odorized: bool | None,
                           crossing: str | None) -> dict[str, Any]:
    """The asset attributes the compliance rules read, in the API's names (create and update share them)."""
    return {"couldAffectHca": could_affect_hca, "cathodicallyProtected": cathodically_protected,
            "atmosphericExposure": atmospheric_exposure, "offshore": offshore, "gasOdorized": gas_odorized,
            "crossing": crossing}


class MeasurementIn(BaseModel):
    """One measurement to record; the fields of the API's MeasurementInput."""

    model_config = ConfigDict(extra="forbid")

    assetId: str = Field(description="The asset observed.")
    type: MeasurementType = Field(description="What was measured or inspected.")
    observedAt: datetime = Field(description="When it was observed, ISO 8601 (UTC if no offset).")
    source: MeasurementSource = Field(description="Where it comes from: ILI, FIELD, SCADA or LAB.")
    idempotencyKey: str | None = Field(
        default=None,
        description="Unique per tenant; sending the same key again stores nothing new. Omit it and "
        "a key is derived from the item's content, so retrying the same call never duplicates.",
    )
    stationM: float | None = Field(default=None, description="Station (chainage), metres along the pipeline.")
    value: float | None = Field(default=None, description="The reading, in `unit`.")
    unit: MeasurementUnit | None = Field(default=None, description="The unit of `value`.")
    runId: str | None = Field(default=None, description="ILI: the run it belongs to.")
    featureType: AnomalyFeatureType | None = Field(default=None, description="ILI anomalies: METAL_LOSS, DENT, ...")
    surface: AnomalySurface | None = Field(default=None, description="ILI anomalies: EXTERNAL, INTERNAL or MID_WALL.")
    odometerM: float | None = Field(default=None, description="ILI anomalies: the tool's odometer, metres.")
    clockDeg: float | None = Field(default=None, ge=0, le=360, description="Degrees clockwise from top of pipe.")
    depthPctWt: float | None = Field(default=None, ge=0, le=100, description="Depth, % of wall thickness.")
    lengthMm: float | None = Field(default=None, ge=0, description="Axial length, mm.")
    widthMm: float | None = Field(default=None, ge=0, description="Circumferential width, mm.")

    def to_input(self) -> dict[str, Any]:
        d = self.model_dump(exclude_none=True)
        d["observedAt"] = _utc(self.observedAt)
        if not d.get("idempotencyKey"):
            content = json.dumps({k: v for k, v in d.items() if k != "idempotencyKey"}, sort_keys=True)
            d["idempotencyKey"] = "mcp-" + hashlib.sha256(content.encode()).hexdigest()[:32]
        return d


# The asset attributes create_asset and update_asset both take, described once.
ProductArg = Annotated[Product | None, Field(description="What it carries, e.g. NATURAL_GAS or CRUDE_OIL.")]
RegulationArg = Annotated[Regulation | None, Field(description="CFR_192 (gas) or CFR_195 (hazardous liquids).")]
BeginStationArg = Annotated[float | None, Field(description="Station (chainage) where it begins, metres.")]
EndStationArg = Annotated[float | None, Field(description="Station (chainage) where it ends, metres.")]
DiameterArg = Annotated[float | None, Field(gt=0, description="Nominal outside diameter, mm.")]
WallArg = Annotated[float | None, Field(gt=0, description="Nominal wall thickness, mm.")]
SmysArg = Annotated[float | None, Field(gt=0, description="Specified minimum yield strength, MPa (X52 = 359).")]
MaopArg = Annotated[float | None, Field(gt=0, description="Maximum allowable operating pressure, kPa.")]
ClassLocationArg = Annotated[int | None, Field(ge=1, le=4, description="Class location 1-4 (§192.5).")]
InHcaArg = Annotated[bool | None, Field(description="In a high consequence area.")]
CouldAffectHcaArg = Annotated[bool | None, Field(description="Part 195: a release could affect a high consequence "
                                                             "area (§195.452(a)).")]
CathodicArg = Annotated[bool | None, Field(description="Under cathodic protection; sets the CP survey obligations.")]
AtmosphericArg = Annotated[bool | None, Field(description="Exposed to the atmosphere; sets the atmospheric corrosion "
                                                          "inspection.")]
OffshoreArg = Annotated[bool | None, Field(description="Offshore: yearly atmospheric corrosion inspection instead of "
                                                       "every 3 years.")]
OdorizedArg = Annotated[bool | None, Field(description="Gas odorized (§192.625); unodorized gas in class 3/4 has "
                                                       "shorter leakage-survey intervals.")]
CrossingArg = Annotated[Crossing | None, Field(description="A highway or railroad crossing; tightens the patrol "
                                                           "interval.")]
LocationArg = Annotated[dict[str, Any] | None, Field(description="GeoJSON geometry, lon/lat (WGS 84).")]
InstalledAtArg = Annotated[datetime | None, Field(description="When it was installed (ISO 8601).")]


class ConfirmChange(BaseModel):
    """What the user answers when asked to allow a change (a form of one checkbox)."""

    confirm: bool = Field(title="Apply this change", description="Allow the change described above.")


def describe_update(asset: dict[str, Any], changed: dict[str, Any]) -> str:
    """The question the user sees: which asset, which values change from what to what, and what cannot be undone."""
    lines = [f"Update asset {as_data(asset.get('name'))} ({asset.get('type')}, id {asset.get('id')}, version "
             f"{asset.get('version')})?"]
    for argument, value in sorted(changed.items()):
        head, *rest = argument.split("_")
        field = head + "".join(part.title() for part in rest)  # the API's name: maop_kpa -> maopKpa
        before = (asset.get("parent") or {}).get("id") if field == "parentId" else asset.get(field)
        if field == "name":  # the one free text here; the rest are numbers, flags and enum values
            before, value = as_data(before), as_data(value)
        lines.append(f"- {field}: {before if before is not None else '(not set)'} -> {value}")
    if changed.get("status") == "ABANDONED":
        lines.append("ABANDONED is final: the asset can never be made active again.")
    return "\n".join(lines)


async def confirm_update(asset_id: str, ctx: Context) -> Elicit[ConfirmChange] | ConfirmChange:
    """Asks the user, through the client, before update_asset overwrites anything (MCP elicitation; the SDK sends it
    mid-call or, from protocol 2026-07-28, as an input-required round). A client that cannot ask is not asked: the
    tool's destructiveHint and the instructions leave the confirmation to the model."""
    capabilities = ctx.client_capabilities
    arguments = dict((ctx.request_context.params or {}).get("arguments") or {})
    changed = {k: v for k, v in arguments.items() if k not in ("asset_id", "version") and v is not None}
    if capabilities is None or capabilities.elicitation is None or not changed:
        return ConfirmChange(confirm=True)
    state = ctx.request_context.lifespan_context
    try:
        data = await state.client.query_data(operations()["LinepackAsset"], {"id": asset_id})
    except LinepackError as exc:
        raise ToolError(exc.message) from exc
    return Elicit(describe_update(_found_asset(data, asset_id), changed), ConfirmChange)


def register(kit: Toolkit) -> None:
    ops, tool, run_write, answer = kit.ops, kit.tool, kit.run_write, kit.answer

    @tool(title="Create an asset (writes data)", annotations=CREATE)
    async def create_asset(
        type: Annotated[AssetType, Field(description="What the asset is: SYSTEM, PIPELINE, SEGMENT, VALVE, ...")],
        name: Annotated[str, Field(min_length=1, description="The asset's name, unique enough for people to find it.")],
        parent_id: Annotated[str | None, Field(description="The asset it belongs to (a segment's pipeline...).")] = None,
        status: Annotated[AssetStatus | None, Field(description="Defaults to PLANNED.")] = None,
        product: ProductArg = None,
        regulation: RegulationArg = None,
        begin_station_m: BeginStationArg = None,
        end_station_m: EndStationArg = None,
        outside_diameter_mm: DiameterArg = None,
        wall_thickness_mm: WallArg = None,
        smys_mpa: SmysArg = None,
        maop_kpa: MaopArg = None,
        class_location: ClassLocationArg = None,
        in_hca: InHcaArg = None,
        could_affect_hca: CouldAffectHcaArg = None,
        cathodically_protected: CathodicArg = None,
        atmospheric_exposure: AtmosphericArg = None,
        offshore: OffshoreArg = None,
        gas_odorized: OdorizedArg = None,
        crossing: CrossingArg = None,
        location: LocationArg = None,
        installed_at: InstalledAtArg = None,
        idempotency_key: Annotated[str | None, Field(
            min_length=1, max_length=200,
            description="Makes the call safe to repeat: the same key answers the asset its first call created "
                        "(as it is now) and creates nothing new, whenever it is repeated. Omit it and a key is "
                        "derived from the call's content, so repeating the very same call never creates a second "
                        "asset; give a new key to create a second asset with identical values on purpose.")] = None,
    ) -> Annotated[CallToolResult, Asset]:
        """Register a new asset in the tenant. This WRITES data: confirm with the user first. Repeating a call (same
        idempotency_key, or the same values without one) answers the asset the first call created, with the same id,
        and creates nothing."""
        values = _drop_none({
            "type": type, "name": name, "parentId": parent_id, "status": status, "product": product,
            "regulation": regulation, "beginStationM": begin_station_m, "endStationM": end_station_m,
            "outsideDiameterMm": outside_diameter_mm, "wallThicknessMm": wall_thickness_mm,
            "smysMpa": smys_mpa, "maopKpa": maop_kpa, "classLocation": class_location, "inHca": in_hca,
            **_compliance_attributes(could_affect_hca, cathodically_protected, atmospheric_exposure, offshore,
                                     gas_odorized, crossing),
            "location": location, "installedAt": _utc(installed_at),
        })
        key = idempotency_key or content_key(values)
        try:
            data = await run_write(ops["LinepackCreateAsset"],
                                   {"input": {**values, "idempotencyKey": caller_key(kit.state.caller(), key)}})
        except LinepackGraphQLError as exc:
            reused = next((e for e in exc.errors if (e.get("extensions") or {}).get("field") == "input.idempotencyKey"
                           and (e.get("extensions") or {}).get("code") == "CONFLICT"), None)
            if reused is None:
                raise
            raise ToolError(f"idempotency_key {key!r} already created asset {reused['extensions'].get('assetId')} "
                            f"from different values. Nothing was created: give a new key to create another asset, or "
                            f"leave the key out.") from None
        return answer(Asset.model_validate({**data["createAsset"], "idempotencyKey": key}))

    @tool(title="Update an asset (writes data)", annotations=UPDATE)
    async def update_asset(
        asset_id: Annotated[str, Field(description="The asset to change.")],
        version: Annotated[int, Field(description="The asset's current version, from get_asset; a stale "
                                                  "version fails with CONFLICT instead of overwriting.")],
        name: Annotated[str | None, Field(min_length=1, description="A new name.")] = None,
        parent_id: Annotated[str | None, Field(description="The asset it now belongs to.")] = None,
        status: Annotated[AssetStatus | None, Field(description="PLANNED -> ACTIVE <-> IDLE; any -> ABANDONED, which is final.")] = None,
        product: ProductArg = None,
        regulation: RegulationArg = None,
        begin_station_m: BeginStationArg = None,
        end_station_m: EndStationArg = None,
        outside_diameter_mm: DiameterArg = None,
        wall_thickness_mm: WallArg = None,
        smys_mpa: SmysArg = None,
        maop_kpa: MaopArg = None,
        class_location: ClassLocationArg = None,
        in_hca: InHcaArg = None,
        could_affect_hca: CouldAffectHcaArg = None,
        cathodically_protected: CathodicArg = None,
        atmospheric_exposure: AtmosphericArg = None,
        offshore: OffshoreArg = None,
        gas_odorized: OdorizedArg = None,
        crossing: CrossingArg = None,
        location: LocationArg = None,
        installed_at: InstalledAtArg = None,
        confirmation: Annotated[ElicitationResult[ConfirmChange], Resolve(confirm_update)] = None,  # type: ignore[assignment]
    ) -> Annotated[CallToolResult, Asset]:
        """Change an asset's attributes; omitted fields keep their value. This WRITES data and can
        overwrite values or abandon an asset for good: confirm with the user first (a client that supports
        elicitation shows the user the change and asks; nothing is changed unless they allow it)."""
        if not isinstance(confirmation, AcceptedElicitation) or not confirmation.data.confirm:
            raise ToolError(f"Nothing was changed: the user did not allow this update of asset {asset_id}. Ask them "
                            f"what to change instead, or leave the asset as it is.")
        changes = _drop_none({
            "name": name, "parentId": parent_id, "status": status, "product": product, "regulation": regulation,
            "beginStationM": begin_station_m, "endStationM": end_station_m,
            "outsideDiameterMm": outside_diameter_mm, "wallThicknessMm": wall_thickness_mm, "smysMpa": smys_mpa,
            "maopKpa": maop_kpa, "classLocation": class_location, "inHca": in_hca, "location": location,
            **_compliance_attributes(could_affect_hca, cathodically_protected, atmospheric_exposure, offshore,
                                     gas_odorized, crossing),
            "installedAt": _utc(installed_at),
        })
        if not changes:
            raise ToolError("Nothing to change: give at least one field to update.")
        try:
            data = await run_write(
                ops["LinepackUpdateAsset"],
                {"id": asset_id, "version": version, "input": changes},
            )
        except LinepackGraphQLError as exc:
            if exc.code == "CONFLICT":
                raise ToolError(f"{exc.message}. The asset changed since version {version} was read: call "
                                f"get_asset for the current values and version, then retry.") from None
            raise
        return answer(Asset.model_validate(data["updateAsset"]))

    @tool(title="Record measurements (writes data)", annotations=RECORD)
    async def record_measurements(
        measurements: Annotated[list[MeasurementIn], Field(min_length=1, max_length=MAX_BATCH,
                                                           description="Up to 1000 measurements.")],
    ) -> Annotated[CallToolResult, RecordResult]:
        """Store measurements or inspection records. Idempotent per item key: items already stored
        under their idempotencyKey are counted as duplicates, not stored twice. If any item is
        invalid the whole batch is rejected. This WRITES data: confirm with the user first."""
        items = [m.to_input() for m in measurements]
        data = await run_write(ops["LinepackRecord"], {"input": items})
        r = data["recordMeasurements"]
        keys = [i["idempotencyKey"] for i in items]
        listed = len(items) <= RECORD_LISTED
        return answer(RecordResult(
            insertedCount=r["insertedCount"], duplicateCount=r["duplicateCount"],
            ids=r["ids"] if listed else None, idempotencyKeys=keys if listed else None,
            note=None if listed else (f"{len(items)} items: ids and keys are not listed (a batch of at most "
                                      f"{RECORD_LISTED} lists them). Retrying the same call stores nothing new; "
                                      f"list_measurements shows what is stored."),
        ))
