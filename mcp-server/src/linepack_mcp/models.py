"""Tool output models: these are the tools' output schemas.

Field names follow the GraphQL API (camelCase), so what a tool returns can be reused as-is in
`graphql_query` and matches the schema resource.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, create_model

AssetType = Literal[
    "SYSTEM", "PIPELINE", "SEGMENT", "VALVE", "FITTING", "LAUNCHER_RECEIVER", "CP_TEST_POINT", "RECTIFIER", "STATION"
]
AssetStatus = Literal["PLANNED", "ACTIVE", "IDLE", "ABANDONED"]
Product = Literal["NATURAL_GAS", "CRUDE_OIL", "REFINED_PRODUCTS", "NGL", "CO2", "HYDROGEN"]
Regulation = Literal["CFR_192", "CFR_195"]
Crossing = Literal["HIGHWAY", "RAILROAD"]
MeasurementType = Literal[
    "ILI_ANOMALY", "WALL_THICKNESS_UT", "CP_PIPE_TO_SOIL", "RECTIFIER_OUTPUT", "PRESSURE", "TEMPERATURE", "FLOW",
    "CORROSION_COUPON", "ILI_RUN", "PRESSURE_TEST", "DIRECT_ASSESSMENT", "CP_SURVEY", "VALVE_INSPECTION", "LEAK_SURVEY", "PATROL",
    "ATMOSPHERIC_CORROSION_INSPECTION",
]
MeasurementUnit = Literal["MM", "PERCENT_WT", "MV", "A", "V", "KPA", "CELSIUS", "M3_PER_H", "MM_PER_YEAR"]
MeasurementSource = Literal["ILI", "FIELD", "SCADA", "LAB"]
AnomalyFeatureType = Literal["METAL_LOSS", "DENT", "CRACK", "GOUGE", "LAMINATION", "WELD_ANOMALY"]
AnomalySurface = Literal["EXTERNAL", "INTERNAL", "MID_WALL"]
ResponseCategory = Literal["IMMEDIATE", "SIXTY_DAY", "ONE_HUNDRED_EIGHTY_DAY", "ONE_YEAR", "TWO_YEAR", "MONITORED", "OTHER"]
RiskBand = Literal["LOW", "MEDIUM", "HIGH", "VERY_HIGH"]
ComplianceState = Literal["OK", "DUE_SOON", "OVERDUE", "NO_RECORD", "NOT_EVALUATED", "NOT_IN_SERVICE"]
Obligation = Literal[
    "GAS_HCA_REASSESSMENT", "LIQUID_HCA_REASSESSMENT", "CP_SURVEY", "RECTIFIER_CHECK", "VALVE_INSPECTION", "PATROL",
    "ATMOSPHERIC_CORROSION", "LEAK_SURVEY", "LIQUID_CP_SURVEY", "LIQUID_RECTIFIER_CHECK", "LIQUID_VALVE_INSPECTION",
    "LIQUID_ROW_PATROL", "LIQUID_ATMOSPHERIC_CORROSION",
]
FlowStressMethod = Literal["SMYS_PLUS_69_MPA", "SMYS_TIMES_1_1", "MEAN_OF_SMYS_AND_SMTS"]


class _Model(BaseModel):
    # Enum-typed fields are plain strings in the output: a value the API adds later must not
    # make a tool fail its own output validation. Fields beyond those declared here are kept: a field
    # added to a tool's operation file (operations/*.graphql) reaches the model without a Python change.
    model_config = ConfigDict(extra="allow")


@cache
def partial(model: type[BaseModel]) -> type[BaseModel]:
    """`model` with every field optional: the item of a list tool, whose `view` or `fields` picks what it holds."""

    def loosen(annotation: Any) -> Any:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return partial(annotation)
        args = get_args(annotation)
        if get_origin(annotation) is list and args:
            return list[loosen(args[0])]  # type: ignore[misc]
        if args and type(None) in args:
            inner = [loosen(a) for a in args if a is not type(None)]
            return Union[tuple(inner)] if len(inner) > 1 else inner[0]  # type: ignore[return-value]
        return annotation

    fields = {name: (loosen(f.annotation) | None, Field(default=None, description=f.description))
              for name, f in model.model_fields.items()}
    made: type[BaseModel] = create_model(f"{model.__name__}Item", __base__=_Model, __doc__=model.__doc__,
                                         **fields)  # type: ignore[call-overload]
    return made


class PageInfo(_Model):
    hasNextPage: bool
    endCursor: str | None = None


class CsvExport(_Model):
    uri: str = Field(description="The resource holding every item as CSV (resources/read).")
    mimeType: str
    rows: int = Field(description="How many rows it holds.")
    use: str


class _Page(_Model):
    """What every list tool's answer shares besides its items."""

    totalCount: int = Field(description="Items matching the filter, over all pages.")
    pageInfo: PageInfo
    next: str | None = Field(default=None, description="The exact call for the next page, when there is one.")
    shortened: str | None = Field(
        default=None, description="Set when fewer items than asked for fit the answer's token budget; the next page "
        "continues right after the last item shown.")
    export: CsvExport | None = Field(
        default=None, description="When the list is longer than this answer shows (list tools that offer it): every "
        "item as a CSV resource, to read or hand to the user instead of paging.")


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
    couldAffectHca: bool | None = None
    cathodicallyProtected: bool | None = None
    atmosphericExposure: bool | None = None
    offshore: bool | None = None
    gasOdorized: bool | None = None
    crossing: str | None = None
    location: dict[str, Any] | None = Field(default=None, description="GeoJSON geometry (WGS 84 lon/lat).")
    installedAt: str | None = None
    version: int = Field(description="Send this back as `version` to update_asset.")
    createdAt: str | None = None
    updatedAt: str | None = None


class AssetPage(_Page):
    items: list[partial(Asset)] = Field(description="The fields of `view` or `fields`.")  # type: ignore[valid-type]


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


class MeasurementPage(_Page):
    asset: AssetRef
    items: list[partial(Measurement)] = Field(description="Newest first.")  # type: ignore[valid-type]


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
    applicable: bool = Field(description="False when Modified B31G does not apply (metal loss deeper than 80 % of wall).")
    notApplicableReason: str | None = None
    z: float | None = None
    foliasFactor: float | None = None
    flowStressMethod: str
    flowStressMpa: float | None = None
    failureStressMpa: float | None = None
    failurePressureKpa: float | None = None
    designFactor: float | None = None
    safePressureKpa: float | None = None
    erf: float | None = Field(default=None, description="MAOP / safe pressure; above 1 the feature needs action.")
    failurePressureRatio: float | None = Field(default=None, description="Failure pressure / MAOP.")
    modelVersion: str


class B31GInputs(_Model):
    outsideDiameterMm: float
    wallThicknessMm: float
    smysMpa: float
    defectDepthMm: float
    defectLengthMm: float
    regulation: str
    classLocation: int | None = None
    maopKpa: float | None = None


class AnomalyAssessment(_Model):
    asset: AssetRef
    measurementId: str | None = None
    inputs: B31GInputs
    assessment: B31GAssessment
    verdict: str = Field(description="Plain-language reading of the ERF / safe pressure.")


class StoredAssessment(_Model):
    """One recorded ILI anomaly as the analytics subgraph assessed it."""

    measurementId: str
    assessable: bool
    notAssessableReason: str | None = None
    featureType: str | None = Field(default=None, description="From the ILI measurement, as are odometerM, clockDeg, "
                                    "lengthMm and widthMm.")
    odometerM: float | None = None
    clockDeg: float | None = None
    lengthMm: float | None = None
    widthMm: float | None = None
    depthPctWt: float | None = None
    depthWithTolerancePctWt: float | None = Field(default=None, description="Reported depth plus the ILI tool tolerance.")
    failurePressureKpa: float | None = None
    nominalFailurePressureKpa: float | None = Field(default=None, description="At the reported depth, without tolerance.")
    safePressureKpa: float | None = None
    failurePressureRatio: float | None = None
    erf: float | None = None
    responseCategory: str | None = Field(
        default=None, description="IMMEDIATE, SIXTY_DAY, ONE_HUNDRED_EIGHTY_DAY, ONE_YEAR, TWO_YEAR, MONITORED or OTHER."
    )
    ruleRef: str | None = Field(default=None, description="The regulation paragraph that sets the category.")
    categoryReason: str | None = None
    methodNotes: list[str] | None = Field(default=None, description="Where the assessment departs from the plain method.")
    discoveredAt: str | None = None
    repairDueAt: str | None = None
    growthRateMmPerYear: float | None = None
    growthBasis: str | None = None
    matchedMeasurementId: str | None = Field(default=None, description="The earlier run's anomaly it was matched to.")
    remainingLifeYears: float | None = None
    remainingLifeLimit: str | None = None
    modelVersion: str
    computedAt: str


class CategoryCounts(_Model):
    """How many anomalies (or digs) fall in each response category: the first thing to read when triaging."""

    total: int
    byResponseCategory: dict[str, int] = Field(description="Response category -> count; categories with none left out.")
    notAssessable: int | None = Field(default=None, description="Anomalies that could not be assessed (see "
                                      "notAssessableReason); they need data, not a repair date.")


class AnomalyAssessmentPage(_Page):
    asset: AssetRef
    summary: CategoryCounts | None = Field(default=None, description="On the first page: counts by response category "
                                           "over all the asset's anomalies (not only this page).")
    items: list[partial(StoredAssessment)] = Field(description="Most urgent first.")  # type: ignore[valid-type]


class SegmentRisk(_Model):
    likelihood: int = Field(description="1-5.")
    consequence: int = Field(description="1-5.")
    score: int = Field(description="likelihood x consequence, 1-25.")
    band: str = Field(description="LOW, MEDIUM, HIGH or VERY_HIGH.")
    drivers: list[str] = Field(description="What set the likelihood and consequence, in words a reviewer can check.")
    potentialImpactRadiusM: float | None = None
    modelVersion: str
    computedAt: str


class AssetRisk(_Model):
    asset: AssetRef
    risk: SegmentRisk | None = None
    note: str | None = None


class RiskRegisterEntry(_Model):
    asset: AssetRef
    risk: SegmentRisk


class RiskRegisterPage(_Page):
    items: list[partial(RiskRegisterEntry)] = Field(description="Highest score first.")  # type: ignore[valid-type]


class ComplianceObligation(_Model):
    obligation: str
    regulation: str
    regulationRef: str
    title: str
    interval: str = Field(description="The rule as the regulation states it (calendar months and years).")
    appliesTo: str
    evidenceTypes: list[str] = Field(default_factory=list, description="Measurement types that count as doing it.")


class ComplianceObligations(_Model):
    regulation: str | None = None
    asset: AssetRef | None = None
    obligations: list[ComplianceObligation]
    note: str | None = None


class ComplianceViolation(_Model):
    rule: str
    brokenAt: str


class ObligationStatus(_Model):
    obligation: str
    state: str = Field(description="OK, DUE_SOON, OVERDUE or NO_RECORD; NOT_IN_SERVICE for a planned asset's future obligations.")
    regulationRef: str
    rule: str
    lastCompletedAt: str | None = None
    dueAt: str | None = None
    violations: list[ComplianceViolation] = Field(default_factory=list)


class AssetCompliance(_Model):
    asset: AssetRef
    asOf: str
    state: str = Field(
        description="The worst state of the asset's obligations; NOT_EVALUATED before compliance has received the asset, "
        "NOT_IN_SERVICE for a planned or abandoned asset (never OK for either)."
    )
    obligations: list[ObligationStatus]


class ComplianceStatusRow(_Model):
    asset: AssetRef
    obligation: str
    regulation: str
    state: str
    lastCompletedAt: str | None = None
    dueAt: str | None = None


class ComplianceStatusPage(_Page):
    items: list[partial(ComplianceStatusRow)] = Field(  # type: ignore[valid-type]
        description="Soonest due first; rows with no record last.")


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
    ids: list[str] | None = Field(default=None, description="For a batch of at most 20: each item's id, in input order.")
    idempotencyKeys: list[str] | None = Field(default=None, description="For a batch of at most 20: the key each item "
                                              "was stored under, in input order (retrying with them stores nothing new).")
    note: str | None = None


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


class SchemaMatch(_Model):
    kind: Literal["type", "field", "argument", "inputField", "enumValue"]
    coordinate: str = Field(description="Type, Type.field, Type.field(argument:) or Enum.VALUE.")
    typeKind: str | None = Field(default=None, description="For a type: OBJECT, INPUT_OBJECT, ENUM, SCALAR...")
    type: str | None = Field(default=None, description="The GraphQL type of a field, argument or input field.")
    requiredScopes: list[str] | None = Field(
        default=None, description="Scopes a field needs (any one of the entries; 'a+b' means both); empty when "
        "none; absent when the gateway does not publish them.")
    deprecated: str | None = Field(default=None, description="Deprecation reason, when deprecated.")
    description: str | None = None


class SchemaSearchResult(_Model):
    words: list[str]
    matches: list[SchemaMatch]
    note: str | None = None


class ArgumentDescription(_Model):
    name: str
    type: str
    description: str | None = None
    default: str | None = None


class FieldDescription(_Model):
    name: str
    type: str
    description: str | None = None
    arguments: list[ArgumentDescription] = Field(default_factory=list)
    requiredScopes: list[str] | None = None
    deprecated: str | None = None


class InputFieldDescription(_Model):
    name: str
    type: str
    description: str | None = None


class EnumValueDescription(_Model):
    name: str
    description: str | None = None
    deprecated: str | None = None


class TypeDescription(_Model):
    name: str
    kind: str
    description: str | None = None
    fields: list[FieldDescription] | None = None
    interfaces: list[str] | None = None
    possibleTypes: list[str] | None = None
    inputFields: list[InputFieldDescription] | None = None
    enumValues: list[EnumValueDescription] | None = None
    exampleSelection: str | None = Field(default=None, description="Every scalar field of the type, to start a "
                                         "selection from.")
    note: str | None = None


class DigItem(_Model):
    """One anomaly of the dig list: what to dig, where, by when, and what has been done about it."""

    measurementId: str
    asset: AssetRef | None = None
    responseCategory: str | None = None
    ruleRef: str | None = None
    repairDueAt: str | None = None
    overdue: bool | None = Field(default=None, description="The repair due date has passed and it is still OPEN.")
    status: str | None = Field(default=None, description="OPEN; REPAIRED once a repair covers it; SUPERSEDED once a newer ILI run reported it again.")
    depthSource: str | None = Field(default=None, description="TOOL (ILI call with tolerance) or FIELD (as measured).")
    featureType: str | None = None
    odometerM: float | None = None
    clockDeg: float | None = None
    depthPctWt: float | None = None
    depthWithTolerancePctWt: float | None = None
    lengthMm: float | None = None
    widthMm: float | None = None
    erf: float | None = None
    safePressureKpa: float | None = None
    failurePressureKpa: float | None = None
    remainingLifeYears: float | None = None
    growthRateMmPerYear: float | None = None
    categoryReason: str | None = None
    discoveredAt: str | None = None
    runId: str | None = None
    assessable: bool | None = None
    notAssessableReason: str | None = None
    fieldResult: dict[str, Any] | None = Field(default=None, description="The latest field (NDE) result.")
    repair: dict[str, Any] | None = None
    pressureReductions: list[dict[str, Any]] | None = Field(default=None, description="Latest first.")


class DigListPage(_Page):
    summary: CategoryCounts | None = Field(default=None, description="On the first page: the dig list's anomalies "
                                           "by response category under the same filter (not only this page).")
    items: list[partial(DigItem)] = Field(description="Soonest repair due date first.")  # type: ignore[valid-type]


class DigSheet(_Model):
    """What a field crew needs to find and dig one anomaly."""

    measurementId: str
    asset: AssetRef
    directions: list[str] = Field(description="Where to dig, in words: joint, distance from the girth welds and "
                                  "markers either side, clock position.")
    feature: dict[str, Any] = Field(description="The ILI call: type, dimensions, odometer, clock, run.")
    iliLocation: dict[str, Any] | None = Field(default=None, description="From the run's pipe tally; absent for a "
                                               "measurement that did not come from an imported run.")
    assessment: dict[str, Any] | None = Field(default=None, description="Category, rule, due date, status, field "
                                              "result, repair and pressure reductions.")
    note: str | None = None
