"""Tool output models: these are the tools' output schemas.

Field names follow the GraphQL API (camelCase), so what a tool returns can be reused as-is in
`graphql_query` and matches the schema resource.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AssetType = Literal[
    "SYSTEM", "PIPELINE", "SEGMENT", "VALVE", "FITTING", "LAUNCHER_RECEIVER", "CP_TEST_POINT", "RECTIFIER", "STATION"
]
AssetStatus = Literal["PLANNED", "ACTIVE", "IDLE", "ABANDONED"]
Product = Literal["NATURAL_GAS", "CRUDE_OIL", "REFINED_PRODUCTS", "NGL", "CO2", "HYDROGEN"]
Regulation = Literal["CFR_192", "CFR_195"]
MeasurementType = Literal[
    "ILI_ANOMALY", "WALL_THICKNESS_UT", "CP_PIPE_TO_SOIL", "RECTIFIER_OUTPUT", "PRESSURE", "TEMPERATURE", "FLOW",
    "CORROSION_COUPON", "ILI_RUN", "CP_SURVEY", "VALVE_INSPECTION", "LEAK_SURVEY", "PATROL",
    "ATMOSPHERIC_CORROSION_INSPECTION",
]
MeasurementUnit = Literal["MM", "PERCENT_WT", "MV", "A", "V", "KPA", "CELSIUS", "M3_PER_H", "MM_PER_YEAR"]
MeasurementSource = Literal["ILI", "FIELD", "SCADA", "LAB"]
AnomalyFeatureType = Literal["METAL_LOSS", "DENT", "CRACK", "GOUGE", "LAMINATION", "WELD_ANOMALY"]
AnomalySurface = Literal["EXTERNAL", "INTERNAL", "MID_WALL"]


class _Model(BaseModel):
    # Enum-typed fields are plain strings in the output: a value the API adds later must not
    # make a tool fail its own output validation.
    model_config = ConfigDict(extra="ignore")


class PageInfo(_Model):
    hasNextPage: bool
    endCursor: str | None = None


class AssetRef(_Model):
    id: str
    name: str | None = None
    type: str | None = None


class Asset(_Model):
    id: str
    type: str
    name: str
    parent: AssetRef | None = None
    status: str
    product: str | None = None
    regulation: str | None = None
    beginStationM: float | None = None
    endStationM: float | None = None
    lengthM: float | None = None
    outsideDiameterMm: float | None = None
    wallThicknessMm: float | None = None
    smysMpa: float | None = None
    maopKpa: float | None = None
    classLocation: int | None = None
    inHca: bool
    location: dict[str, Any] | None = Field(default=None, description="GeoJSON geometry (WGS 84 lon/lat).")
    installedAt: str | None = None
    version: int = Field(description="Send this back as `version` to update_asset.")
    createdAt: str | None = None
    updatedAt: str | None = None


class AssetPage(_Model):
    items: list[Asset]
    totalCount: int = Field(description="Assets matching the filter, over all pages.")
    pageInfo: PageInfo
    next: str | None = Field(
        default=None, description="How to fetch the next page, when there is one."
    )


class Measurement(_Model):
    id: str
    type: str
    observedAt: str
    stationM: float | None = None
    value: float | None = None
    unit: str | None = None
    source: str
    idempotencyKey: str | None = None
    runId: str | None = None
    featureType: str | None = None
    surface: str | None = None
    odometerM: float | None = None
    clockDeg: float | None = None
    depthPctWt: float | None = None
    lengthMm: float | None = None
    widthMm: float | None = None
    recordedAt: str | None = None


class MeasurementPage(_Model):
    asset: AssetRef
    items: list[Measurement]
    totalCount: int
    pageInfo: PageInfo
    next: str | None = None


class CountByType(_Model):
    type: str
    count: int


class CountByStatus(_Model):
    status: str
    count: int


class PipelineSummary(_Model):
    tenantId: str
    totalAssets: int
    assetsByType: list[CountByType]
    assetsByStatus: list[CountByStatus]
    totalPipelineLengthM: float
    measurementCount: int | None = None
    latestInspectionAt: str | None = None
    otherFields: dict[str, Any] = Field(
        default_factory=dict,
        description="Further summary fields the gateway offers (e.g. from analytics or compliance).",
    )
    omitted: list[str] = Field(
        default_factory=list, description="Fields left out because the API key lacks the scope they need."
    )


class B31GAssessment(_Model):
    z: float
    foliasFactor: float
    flowStressMpa: float
    failureStressMpa: float
    failurePressureKpa: float
    designFactor: float
    safePressureKpa: float
    erf: float | None = None
    modelVersion: str


class B31GInputs(_Model):
    outsideDiameterMm: float
    wallThicknessMm: float
    smysMpa: float
    defectDepthMm: float
    defectLengthMm: float
    classLocation: int
    maopKpa: float | None = None


class AnomalyAssessment(_Model):
    asset: AssetRef
    measurementId: str | None = None
    inputs: B31GInputs
    assessment: B31GAssessment
    verdict: str = Field(description="Plain-language reading of the ERF / safe pressure.")


class ComplianceObligation(_Model):
    obligation: str
    regulation: str
    regulationRef: str
    title: str
    interval: str
    maxIntervalDays: int
    appliesTo: str


class ComplianceObligations(_Model):
    regulation: str | None = None
    asset: AssetRef | None = None
    obligations: list[ComplianceObligation]
    note: str | None = None


class TenantMembership(_Model):
    tenantId: str
    name: str
    role: str | None = None


class Me(_Model):
    id: str
    kind: str
    email: str | None = None
    tenantId: str
    tenants: list[TenantMembership]
    scopes: list[str]


class WhoAmI(_Model):
    apiUrl: str
    tenantHeader: str | None = Field(default=None, description="The X-Tenant-ID sent, if any.")
    me: Me
    key: dict[str, Any] | None = Field(default=None, description="GET /auth/introspect for the key.")
    keyError: str | None = None


class RecordResult(_Model):
    insertedCount: int
    duplicateCount: int
    ids: list[str]
    idempotencyKeys: list[str] = Field(description="The key each item was stored under, in input order.")


class QueryResult(_Model):
    data: dict[str, Any] | None = None
    errors: list[dict[str, Any]] = Field(
        default_factory=list, description="GraphQL errors as returned, each keeping extensions.code."
    )
    truncated: bool = False
    dataPreview: str | None = Field(
        default=None, description="When truncated: the start of the JSON text of `data`."
    )
    note: str | None = None
    requestId: str | None = None


class ValidationResult(_Model):
    valid: bool
    operationTypes: list[str]
    readOnly: bool = Field(description="True when every operation is a query (graphql_query would run it).")
    errors: list[dict[str, Any]] = Field(default_factory=list)
