"""The MCP server: tools, resources and prompts over a Linepack gateway."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import replace
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, get_args

from graphql import GraphQLError, GraphQLSchema, is_leaf_type, is_object_type, get_named_type, is_required_argument
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from . import __version__
from .budget import DEFAULT_RESULT_TOKENS, estimate_tokens, fitting_count, shorten_to_budget, tidy, to_text
from .client import (
    Credential,
    LinepackClient,
    LinepackError,
    LinepackForbidden,
    LinepackGraphQLError,
    LinepackRateLimited,
    LinepackUnauthenticated,
    format_graphql_error,
    new_http_pool,
)
from .operations import operations
from .models import (
    AnomalyAssessment,
    AnomalyAssessmentPage,
    AssetCompliance,
    AssetRisk,
    ComplianceState,
    Crossing,
    ComplianceStatusPage,
    ComplianceStatusRow,
    FlowStressMethod,
    Obligation,
    ObligationStatus,
    ResponseCategory,
    RiskBand,
    RiskRegisterEntry,
    RiskRegisterPage,
    SegmentRisk,
    StoredAssessment,
    AnomalyFeatureType,
    AnomalySurface,
    Asset,
    AssetPage,
    AssetRef,
    AssetStatus,
    AssetType,
    B31GAssessment,
    B31GInputs,
    ComplianceObligation,
    ComplianceObligations,
    Me,
    Measurement,
    MeasurementPage,
    MeasurementSource,
    MeasurementType,
    MeasurementUnit,
    PageInfo,
    PipelineSummary,
    Product,
    QueryResult,
    RecordResult,
    Regulation,
    SchemaSearchResult,
    TypeDescription,
    ValidationResult,
    WhoAmI,
    DigItem,
    DigListPage,
    DigSheet,
)
from .schema import (
    SchemaCache,
    describe_type as describe_schema_type,
    search_schema as search_schema_entries,
    similar_type_names,
    describe_syntax_error,
    inspect_document,
    leaf_selection,
    schema_sdl,
    validate_document,
)
from .sessions import (
    SdkSessions,
    SessionGate,
    SessionLimits,
    SessionTable,
    Unverified,
    _OncePerPeriod,
    credential_digest,
)
from .settings import Settings, validate_tenant_id, ConfigError
from .strict import StrictRequests

log = logging.getLogger("linepack_mcp.server")

MAX_PAGE = 100
MAX_BATCH = 1000

# The summary's own fields; any other field the API's PipelineSummary offers is selected too (see pipeline_summary).
SUMMARY_KNOWN = {
    "tenantId", "totalAssets", "assetsByType", "assetsByStatus", "totalPipelineLengthM",
    "measurementCount", "latestInspectionAt",
}
WRITE_TOOLS = ("create_asset", "update_asset", "record_measurements")
# What the compact view of each list tool keeps: enough to review and to pick items for a closer look.
ASSET_COMPACT = ("id", "name", "type", "status", "parent", "regulation", "classLocation", "inHca", "maopKpa")
MEASUREMENT_COMPACT = ("id", "type", "observedAt", "stationM", "odometerM", "value", "unit", "featureType", "depthPctWt",
                       "lengthMm", "widthMm", "clockDeg", "runId")
ASSESSMENT_COMPACT = ("measurementId", "responseCategory", "ruleRef", "repairDueAt", "featureType", "odometerM",
                      "clockDeg", "depthPctWt", "depthWithTolerancePctWt", "lengthMm", "erf", "safePressureKpa",
                      "remainingLifeYears", "growthRateMmPerYear", "notAssessableReason")
COMPLIANCE_COMPACT = ("asset", "obligation", "state", "dueAt", "lastCompletedAt")
RESPONSE_CATEGORIES: tuple[str, ...] = get_args(ResponseCategory)
ASSESSMENT_FIELDS = tuple(StoredAssessment.model_fields)
ASSET_FIELDS = tuple(Asset.model_fields)
MEASUREMENT_FIELDS = tuple(Measurement.model_fields)
COMPLIANCE_FIELDS = tuple(ComplianceStatusRow.model_fields)
DIG_FIELDS = tuple(DigItem.model_fields)
DUE_DATE_CATEGORIES = ("IMMEDIATE", "SIXTY_DAY", "ONE_HUNDRED_EIGHTY_DAY", "ONE_YEAR", "TWO_YEAR")
DIG_COMPACT = ("measurementId", "asset", "responseCategory", "ruleRef", "repairDueAt", "overdue", "status",
               "depthSource", "featureType", "odometerM", "clockDeg", "depthPctWt", "lengthMm", "erf")
RECORD_LISTED = 20  # a batch up to this size answers every id and key; a larger one, counts and duplicates

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# Writes: never destructive unless they can overwrite or end something.
CREATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
UPDATE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)
RECORD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

def instructions(writes: bool) -> str:
    """What the model is told about this server; the write tools are mentioned only when offered."""
    text = """\
Linepack holds one tenant's pipeline-integrity data: assets (systems, pipelines, segments, valves, \
test points...), their measurements and inspection records (ILI anomalies, UT wall thickness, CP \
surveys...), fitness-for-service analytics (every ILI anomaly assessed with Modified B31G, its \
response category and remaining life; a 5x5 risk score per segment) and compliance with the \
recurring obligations of 49 CFR 192/195. Units are SI and named in each field (wallThicknessMm, maopKpa).
Start with pipeline_summary, find assets with search_assets or list_assets, then get_asset and \
list_measurements. risk_register ranks segments by risk; get_segment_risk explains one; \
list_anomaly_assessments lists a segment's anomalies most urgent first. get_asset_compliance and \
list_compliance_status say what is due or overdue. graphql_query runs any read-only query: find \
types and fields with search_schema, read one type with describe_type, and check a query with \
validate before running it. Lists are paginated: pass the `after` cursor a result gives you to get \
the next page."""
    if writes:
        text += """
Tools marked read-only never change data. create_asset, update_asset and record_measurements change \
the tenant's data: confirm with the user first. update_asset needs the asset's current `version` \
(from get_asset)."""
    else:
        text += """
This server is read-only (LINEPACK_MCP_WRITES=off): no tool changes data."""
    return text


def _result(model: BaseModel, *, drop_nulls: bool = True, round_numbers: bool = True,
            max_tokens: int = DEFAULT_RESULT_TOKENS) -> CallToolResult:
    """The answer: structured content and the text the model reads are the same JSON (numbers rounded to what their
    unit warrants, nulls left out by default), never longer than `max_tokens` (budget.estimate_tokens)."""
    data = model.model_dump(mode="json")
    # Unrounded answers (graphql_query's) keep their nulls too: nothing to tidy.
    data = tidy(data, drop_nulls=drop_nulls) if round_numbers else data
    return _fitted(data, max_tokens)


def _fitted(data: dict[str, Any], max_tokens: int) -> CallToolResult:
    if estimate_tokens(to_text(data)) > max_tokens:
        # No cursor to continue from (list tools trim their pages themselves): say what was left out and how to ask
        # for less, rather than go over the budget.
        data, dropped = shorten_to_budget(data, max_tokens - 200)
        data["shortenedLists"] = dropped
        data["shortened"] = (f"Over the {max_tokens}-token answer budget: the end of the longest lists was left out "
                             f"({', '.join(f'{n} of {path}' for path, n in dropped.items())}). Ask for less: a filter, "
                             f"fewer words or limit, or graphql_query with only the fields you need.")
    return CallToolResult(content=[TextContent(type="text", text=to_text(data))], structured_content=data)


# Arguments every list tool takes: which fields of each item the answer carries.
ViewArg = Annotated[Literal["compact", "full"], Field(
    description="compact (default): the fields a review needs; full: every field the API gives for each item.")]
FieldsArg = Annotated[list[str] | None, Field(
    description="Exactly these fields of each item (the API's names, e.g. [\"id\", \"name\", \"maopKpa\"]); "
    "overrides view. An unknown name is refused with the list of allowed ones.")]


def _check_fields(tool: str, fields: list[str] | None, allowed: tuple[str, ...]) -> None:
    """Refuses an unknown field name before anything is asked of the API."""
    unknown = [f for f in fields or () if f not in allowed]
    if unknown:
        raise ToolError(f"{tool} items have no field {', '.join(repr(f) for f in unknown)}. The fields are: "
                        f"{', '.join(allowed)}.")


def _select(items: list[dict[str, Any]], *, view: str, fields: list[str] | None, compact: tuple[str, ...],
            key: str) -> list[dict[str, Any]]:
    """Each item cut to the fields asked for (checked with _check_fields first); the identifying `key` always stays
    first, so an item can be named."""
    if fields:
        keep = tuple(dict.fromkeys((key, *fields)))
    elif view == "full":
        return items
    else:
        keep = compact
    return [{k: item[k] for k in keep if k in item} for item in items]


def _utc(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _compliance_attributes(could_affect_hca: bool | None, cathodically_protected: bool | None,
                           atmospheric_exposure: bool | None, offshore: bool | None, gas_odorized: bool | None,
                           crossing: str | None) -> dict[str, Any]:
    """The asset attributes the compliance rules read, in the API's names (create and update share them)."""
    return {"couldAffectHca": could_affect_hca, "cathodicallyProtected": cathodically_protected,
            "atmosphericExposure": atmospheric_exposure, "offshore": offshore, "gasOdorized": gas_odorized,
            "crossing": crossing}


def _found_asset(data: dict[str, Any], asset_id: str) -> dict[str, Any]:
    """The `asset` of a query result, or an error the model can act on when the tenant has no such asset."""
    asset = data.get("asset")
    if asset is None:
        raise ToolError(
            f"No asset with id {asset_id!r} in this tenant (NOT_FOUND). Find ids with search_assets "
            f"or list_assets."
        )
    return asset


def _asset_ref(asset: dict[str, Any]) -> AssetRef:
    return AssetRef(id=asset["id"], name=asset.get("name"), type=asset.get("type"))


def _assessment_item(node: dict[str, Any]) -> dict[str, Any]:
    """An assessment with its measurement's id and position at the top level: the id once, not twice."""
    item = {k: v for k, v in node.items() if k != "measurement"}
    measurement = node.get("measurement") or {}
    return {"measurementId": measurement.get("id"),
            **{k: v for k, v in measurement.items() if k != "id" and k not in item}, **item}


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
    lines.append(f"On {asset.get('name') or asset.get('id')}: {m.get('featureType') or m.get('type')} at odometer "
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
                lines.append(f"Nearest marker {side}: {marker.get('name') or marker.get('kind')} ({marker.get('kind')}), "
                             f"{_metres(marker.get('distanceM'))} {side} of the feature.")
    clock = location.get("clockDeg") if location else m.get("clockDeg")
    if clock is not None:
        lines.append(f"Clock position {_clock(clock)} ({round(clock)} degrees from top of pipe, looking downstream).")
    return lines


def _metres(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.2f} m"


def _next_hint(tool: str, page_info: dict[str, Any], **same: Any) -> str | None:
    if not page_info.get("hasNextPage"):
        return None
    args = ", ".join(f"{k}={v!r}" for k, v in same.items() if v is not None)
    prefix = f"{args}, " if args else ""
    return f"More results: call {tool}({prefix}after={page_info.get('endCursor')!r})"


def _tool_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Let a LinepackError reach the model: the SDK shows the text of ToolError only."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except LinepackError as exc:
            raise ToolError(exc.message) from exc

    return wrapper


def _resource_errors(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except (LinepackError, ToolError) as exc:
            raise ResourceError(str(getattr(exc, "message", exc))) from exc

    return wrapper


# The credential of the MCP request being handled, when serving over HTTP (set by RequestCredentials).
_request_credential: ContextVar[Credential | None] = ContextVar("linepack_request_credential", default=None)
# The credential check's answer for the HTTP request being handled: (digest of the bearer, answer). Every HTTP
# request runs in a task of its own, with a context of its own, so an answer never reaches another request.
_verified_in_request: ContextVar[tuple[str, AccessToken | Unverified | None] | None] = ContextVar(
    "linepack_verified", default=None)


def credential_from_headers(headers: Any) -> Credential | None:
    """`Authorization: Bearer <Linepack key or access token>` and an optional `X-Tenant-ID` of an HTTP request."""
    if headers is None:
        return None
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    try:
        tenant = validate_tenant_id((headers.get("x-tenant-id") or "").strip() or None)
    except ConfigError:
        tenant = None  # the gateway answers a malformed tenant with 403 anyway; never guess one
    return Credential(token, tenant)


class RequestCredentials:
    """MCP server middleware (HTTP only): each request runs with the credential its own HTTP request carried.

    The credential is read per MCP message, not per session, so two clients can never act with each
    other's key, and a client that changes its key is served with the new one at once.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        token = _request_credential.set(credential_from_headers(getattr(ctx.request, "headers", None)))
        try:
            return await call_next(ctx)
        finally:
            _request_credential.reset(token)


class GatewayTokenVerifier:
    """Answers 401 at the MCP endpoint for a credential the gateway rejects, before any session starts.

    The gateway stays the only judge: every tool call sends the caller's credential again, so a key
    revoked after this check is refused there. A positive answer is remembered for `ttl_s` (one
    `{ me }` request of the caller's budget per period). An inconclusive check (gateway unreachable,
    5xx, 429) is no 401: it opens no session (the session limits answer 503, see `check`), and in a
    session already open the tools then say what is wrong.
    """

    def __init__(self, settings: Settings, pool: Callable[[], Any], ttl_s: float = 30.0, size: int = 1024) -> None:
        self.settings = settings
        self._pool = pool
        self.ttl_s = ttl_s
        self.size = size
        self._known: OrderedDict[str, tuple[float, AccessToken]] = OrderedDict()
        self._log_once = _OncePerPeriod()

    async def check(self, token: str) -> AccessToken | Unverified | None:
        """The session limits' question: the credential's tenant, None if the gateway rejects it, or `Unverified`
        if it gave no definitive answer."""
        digest = credential_digest(token)
        # The session limits ask first (they need the tenant), then the SDK's authentication: one answer per request,
        # so a rejected or unverifiable credential costs the gateway one check, not two.
        answered = _verified_in_request.get()
        if answered is not None and answered[0] == digest:
            return answered[1]
        access = await self._verify(token, digest)
        _verified_in_request.set((digest, access))
        return access

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's question. An inconclusive check passes here, as an access without scopes: a request that opens
        a session has been refused by the session limits already, and one in an open session goes on to the
        gateway, which checks the credential with every call."""
        access = await self.check(token)
        if isinstance(access, Unverified):
            return AccessToken(token=credential_digest(token), client_id="unverified", scopes=[])
        return access

    async def _verify(self, token: str, digest: str) -> AccessToken | Unverified | None:
        now = time.monotonic()
        hit = self._known.get(digest)
        if hit and hit[0] > now:
            return hit[1]
        client = LinepackClient(replace(self.settings, max_retries=0), credential=Credential(token), http=self._pool())
        # The answers hold the digest, not the credential: the cache outlives the request, the bearer need not
        # (every tool call reads it from its own request's header).
        try:
            data = await client.query_data(operations()["LinepackVerify"])
        except LinepackUnauthenticated:
            return None
        except LinepackError as exc:
            # Not remembered: the next request asks again, so the gateway's recovery is seen at once.
            held = self._log_once("inconclusive", now)  # a flood of made-up bearers: one line a minute
            if held is not None:
                log.info("credential check at the gateway inconclusive (%s); no new session for it, calls in an open "
                         "session left to the gateway%s", exc.message,
                         f" ({held} more like it in the last minute)" if held else "")
            return Unverified(exc.message, exc.retry_after_s if isinstance(exc, LinepackRateLimited) else None)
        me = data.get("me") or {}
        if not me.get("tenantId"):  # the schema makes it non-null: a gateway answering otherwise has not vouched
            return Unverified("the gateway's answer to { me } named no tenant")
        access = AccessToken(token=digest, client_id=str(me.get("id") or "linepack"),
                             scopes=[str(s) for s in me.get("scopes") or []],
                             claims={"tenant_id": me.get("tenantId")})
        self._known[digest] = (now + self.ttl_s, access)
        self._known.move_to_end(digest)
        while len(self._known) > self.size:
            self._known.popitem(last=False)
        return access


class AppState:
    """Per-process state: the HTTP connection pool (made in the server's event loop) and the schema cache."""

    def __init__(self, settings: Settings, *, per_request_credentials: bool = False) -> None:
        self.settings = settings
        self.per_request_credentials = per_request_credentials
        self.schema = SchemaCache()
        self._pool: Any = None
        self._client: LinepackClient | None = None
        #: Over HTTP: the credential check at the MCP endpoint, shared by the session limits and the SDK's auth.
        self.verifier = GatewayTokenVerifier(settings, self.pool) if per_request_credentials else None
        #: Over HTTP: the session counts and limits /healthz reports (set once the session limits are in place).
        self.session_health: Callable[[], dict[str, Any]] | None = None

    def pool(self) -> Any:
        if self._pool is None:
            self._pool = new_http_pool(self.settings)
        return self._pool

    @property
    def client(self) -> LinepackClient:
        """A client acting with the current caller's credential: the configured key over stdio, the
        request's own bearer over HTTP."""
        if not self.per_request_credentials:
            if self._client is None:
                self._client = LinepackClient(self.settings, http=self.pool())
            return self._client
        credential = _request_credential.get()
        if credential is None:
            raise ToolError("This MCP request carries no Linepack credential: send 'Authorization: Bearer <your "
                            "Linepack API key or access token>' with every request.")
        return LinepackClient(self.settings, credential=credential, http=self.pool())

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
            self._client = None


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


def build_http_app(settings: Settings, *, host: str, transport_security: Any) -> SessionGate:
    """The shared server over streamable HTTP: every client acts with its own credential, and sessions are held
    to the limits per credential and per tenant, the idle timeout and the server-wide cap (sessions.py)."""
    state = AppState(settings, per_request_credentials=True)
    server = build_server(settings, per_request_credentials=True, state=state)
    app = server.streamable_http_app(
        host=host,
        transport_security=transport_security,
        # The SDK's own limits stay as a backstop; the gate keeps below them. Its idle timeout alone would never
        # close a session whose client keeps the listening stream open.
        session_idle_timeout=settings.session_idle_timeout_s,
        max_sessions=settings.max_sessions,
    )
    assert state.verifier is not None
    gate = SessionGate(app, SessionTable(SessionLimits.from_settings(settings)), SdkSessions(server.session_manager),
                       state.verifier.check)
    state.session_health = gate.health
    return gate


def build_server(settings: Settings, *, per_request_credentials: bool = False,
                 state: AppState | None = None) -> MCPServer[AppState]:
    """The MCP server.

    With `per_request_credentials` (streamable HTTP) every MCP request acts with the credential its
    HTTP request carries; the process holds none of its own.
    """
    state = state or AppState(settings, per_request_credentials=per_request_credentials)
    ops = operations()

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppState]) -> AsyncIterator[AppState]:
        warming = None if per_request_credentials or state.schema.cached is not None else \
            asyncio.get_running_loop().create_task(_warm_schema(state))
        try:
            yield state
        finally:
            if warming is not None:
                warming.cancel()
            # Over HTTP the lifespan is a session's; the pool is the process's and outlives it.
            if not per_request_credentials:
                await state.aclose()

    auth: dict[str, Any] = {}
    if per_request_credentials:
        auth = {
            # Linepack issues the credentials (API keys, and access tokens at /auth/login); this server only
            # passes each caller's own on to the gateway, which decides what it may see.
            "auth": AuthSettings(issuer_url=settings.origin, resource_server_url=None),  # type: ignore[arg-type]
            "token_verifier": state.verifier,
            "middleware": [RequestCredentials()],
        }

    mcp: MCPServer[AppState] = MCPServer(
        name="linepack",
        title="Linepack",
        version=__version__,
        instructions=instructions(settings.writes),
        website_url=None,
        lifespan=lifespan,
        log_level=settings.log_level,  # type: ignore[arg-type]
        # Nothing here sends resource change notifications: `resources.subscribe` and listChanged are not advertised.
        subscriptions=False,
        **auth,
    )
    mcp.middleware.append(StrictRequests(mcp, writes=settings.writes, write_tools=WRITE_TOOLS))

    if per_request_credentials:
        @mcp.custom_route("/healthz", methods=["GET"])
        async def healthz(_: Request) -> Response:
            body: dict[str, Any] = {"status": "ok", "server": "linepack-mcp", "version": __version__,
                                    "writes": "on" if settings.writes else "off"}
            if state.session_health is not None:
                body["sessions"] = state.session_health()
            return JSONResponse(body)

    def tool(**kw: Any) -> Callable[[Callable[..., Awaitable[Any]]], Any]:
        def register(fn: Callable[..., Awaitable[Any]]) -> Any:
            # With writes off the tools that change data are not offered at all (not merely refused).
            if fn.__name__ in WRITE_TOOLS and not settings.writes:
                return fn
            mcp.tool(**kw)(_tool_errors(fn))
            return fn

        return register

    def resource(uri: str, **kw: Any) -> Callable[[Callable[..., Awaitable[Any]]], Any]:
        def register(fn: Callable[..., Awaitable[Any]]) -> Any:
            mcp.resource(uri, **kw)(_resource_errors(fn))
            return fn

        return register

    async def run_read(query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        return await state.client.query_data(query, variables, read_only=True)

    async def run_write(query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        return await state.client.query_data(query, variables, read_only=False)

    async def fetch_asset(asset_id: str, operation: str = "LinepackAsset") -> dict[str, Any]:
        data = await run_read(ops[operation], {"id": asset_id})
        return _found_asset(data, asset_id)

    def answer(model: BaseModel, **kw: Any) -> CallToolResult:
        return _result(model, max_tokens=settings.result_tokens, **kw)

    def page_answer(page_model: type[BaseModel], head: dict[str, Any], conn: dict[str, Any],
                    items: list[dict[str, Any]], tool: str, same: dict[str, Any]) -> CallToolResult:
        """A page as many items as fit the budget: when fewer than asked for fit, the cursor is the last shown item's
        own (every edge has one), so the next call continues exactly there."""
        edges, info = conn["edges"], conn["pageInfo"]
        tidied = tidy(items, key="items")  # once, not at every step of the search below

        def build(k: int) -> dict[str, Any]:
            more = k < len(items) or bool(info.get("hasNextPage"))
            end = edges[k - 1]["cursor"] if k else info.get("endCursor")
            page_info = {"hasNextPage": more, "endCursor": end if more else info.get("endCursor")}
            body: dict[str, Any] = {**head, "totalCount": conn["totalCount"], "pageInfo": page_info,
                                    "next": _next_hint(tool, page_info, **same)}
            if k < len(items):
                body["shortened"] = (f"{k} of the {len(items)} items of this page fit the {settings.result_tokens}-token "
                                     f"answer budget; `next` continues after the last one shown. Ask for fewer fields "
                                     f"(fields=[...]) or a filter to see more at once.")
            return {**tidy(body), "items": tidied[:k]}

        fitting = fitting_count(build, len(items), settings.result_tokens)
        data = build(max(fitting, min(1, len(items))))
        page_model.model_validate(data)  # what the output schema promises, checked before it is sent
        return _fitted(data, settings.result_tokens)

    # -- read tools ----------------------------------------------------------------------------

    @tool(title="Pipeline summary", annotations=READ)
    async def pipeline_summary() -> Annotated[CallToolResult, PipelineSummary]:
        """Summary of the tenant's pipeline: asset counts by type and status, total pipeline length,
        measurement count and latest inspection, plus whatever else the API's summary offers."""
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
                                                     first=first))

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
            first=first))

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
            due_soon_days=due_soon_days, view=view, fields=fields, first=first))

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
            in_hca=in_hca, include_repaired=include_repaired or None, view=view, fields=fields, first=first))

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

    # -- write tools ---------------------------------------------------------------------------

    @tool(title="Create an asset (writes data)", annotations=CREATE)
    async def create_asset(
        type: Annotated[AssetType, Field(description="What the asset is: SYSTEM, PIPELINE, SEGMENT, VALVE, ...")],
        name: Annotated[str, Field(min_length=1, description="The asset's name, unique enough for people to find it.")],
        parent_id: Annotated[str | None, Field(description="The asset it belongs to (a segment's pipeline...).")] = None,
        status: Annotated[AssetStatus | None, Field(description="Defaults to PLANNED.")] = None,
        product: Annotated[Product | None, Field(description="What it carries, e.g. NATURAL_GAS or CRUDE_OIL.")] = None,
        regulation: Annotated[Regulation | None, Field(description="CFR_192 (gas) or CFR_195 (hazardous liquids).")] = None,
        begin_station_m: Annotated[float | None, Field(description="Station (chainage) where it begins, metres.")] = None,
        end_station_m: Annotated[float | None, Field(description="Station (chainage) where it ends, metres.")] = None,
        outside_diameter_mm: Annotated[float | None, Field(gt=0, description="Nominal outside diameter, mm.")] = None,
        wall_thickness_mm: Annotated[float | None, Field(gt=0, description="Nominal wall thickness, mm.")] = None,
        smys_mpa: Annotated[float | None, Field(gt=0, description="Specified minimum yield strength, MPa (X52 = 359).")] = None,
        maop_kpa: Annotated[float | None, Field(gt=0, description="Maximum allowable operating pressure, kPa.")] = None,
        class_location: Annotated[int | None, Field(ge=1, le=4, description="Class location 1-4 (§192.5).")] = None,
        in_hca: Annotated[bool | None, Field(description="In a high consequence area.")] = None,
        could_affect_hca: Annotated[bool | None, Field(description="Part 195: a release could affect a high "
                                                             "consequence area (§195.452(a)).")] = None,
        cathodically_protected: Annotated[bool | None, Field(description="Under cathodic protection; sets the CP "
                                                                   "survey obligations.")] = None,
        atmospheric_exposure: Annotated[bool | None, Field(description="Exposed to the atmosphere; sets the "
                                                                 "atmospheric corrosion inspection.")] = None,
        offshore: Annotated[bool | None, Field(description="Offshore: yearly atmospheric corrosion inspection "
                                                     "instead of every 3 years.")] = None,
        gas_odorized: Annotated[bool | None, Field(description="Gas odorized (§192.625); unodorized gas in class 3/4 "
                                                         "has shorter leakage-survey intervals.")] = None,
        crossing: Annotated[Crossing | None, Field(description="A highway or railroad crossing; tightens the "
                                                         "patrol interval.")] = None,
        location: Annotated[dict[str, Any] | None, Field(description="GeoJSON geometry, lon/lat (WGS 84).")] = None,
        installed_at: Annotated[datetime | None, Field(description="When it was installed (ISO 8601).")] = None,
    ) -> Annotated[CallToolResult, Asset]:
        """Register a new asset in the tenant. This WRITES data: confirm with the user first."""
        data = await run_write(
            ops["LinepackCreateAsset"],
            {"input": _drop_none({
                "type": type, "name": name, "parentId": parent_id, "status": status, "product": product,
                "regulation": regulation, "beginStationM": begin_station_m, "endStationM": end_station_m,
                "outsideDiameterMm": outside_diameter_mm, "wallThicknessMm": wall_thickness_mm,
                "smysMpa": smys_mpa, "maopKpa": maop_kpa, "classLocation": class_location, "inHca": in_hca,
                **_compliance_attributes(could_affect_hca, cathodically_protected, atmospheric_exposure, offshore,
                                         gas_odorized, crossing),
                "location": location, "installedAt": _utc(installed_at),
            })},
        )
        return answer(Asset.model_validate(data["createAsset"]))

    @tool(title="Update an asset (writes data)", annotations=UPDATE)
    async def update_asset(
        asset_id: Annotated[str, Field(description="The asset to change.")],
        version: Annotated[int, Field(description="The asset's current version, from get_asset; a stale "
                                                  "version fails with CONFLICT instead of overwriting.")],
        name: Annotated[str | None, Field(min_length=1, description="A new name.")] = None,
        parent_id: Annotated[str | None, Field(description="The asset it now belongs to.")] = None,
        status: Annotated[AssetStatus | None, Field(description="PLANNED -> ACTIVE <-> IDLE; any -> ABANDONED, which is final.")] = None,
        product: Annotated[Product | None, Field(description="What it carries, e.g. NATURAL_GAS or CRUDE_OIL.")] = None,
        regulation: Annotated[Regulation | None, Field(description="CFR_192 (gas) or CFR_195 (hazardous liquids).")] = None,
        begin_station_m: Annotated[float | None, Field(description="Station (chainage) where it begins, metres.")] = None,
        end_station_m: Annotated[float | None, Field(description="Station (chainage) where it ends, metres.")] = None,
        outside_diameter_mm: Annotated[float | None, Field(gt=0, description="Nominal outside diameter, mm.")] = None,
        wall_thickness_mm: Annotated[float | None, Field(gt=0, description="Nominal wall thickness, mm.")] = None,
        smys_mpa: Annotated[float | None, Field(gt=0, description="Specified minimum yield strength, MPa (X52 = 359).")] = None,
        maop_kpa: Annotated[float | None, Field(gt=0, description="Maximum allowable operating pressure, kPa.")] = None,
        class_location: Annotated[int | None, Field(ge=1, le=4, description="Class location 1-4 (§192.5).")] = None,
        in_hca: Annotated[bool | None, Field(description="In a high consequence area.")] = None,
        could_affect_hca: Annotated[bool | None, Field(description="Part 195: a release could affect a high "
                                                             "consequence area (§195.452(a)).")] = None,
        cathodically_protected: Annotated[bool | None, Field(description="Under cathodic protection; sets the CP "
                                                                   "survey obligations.")] = None,
        atmospheric_exposure: Annotated[bool | None, Field(description="Exposed to the atmosphere; sets the "
                                                                 "atmospheric corrosion inspection.")] = None,
        offshore: Annotated[bool | None, Field(description="Offshore: yearly atmospheric corrosion inspection "
                                                     "instead of every 3 years.")] = None,
        gas_odorized: Annotated[bool | None, Field(description="Gas odorized (§192.625); unodorized gas in class 3/4 "
                                                         "has shorter leakage-survey intervals.")] = None,
        crossing: Annotated[Crossing | None, Field(description="A highway or railroad crossing; tightens the "
                                                         "patrol interval.")] = None,
        location: Annotated[dict[str, Any] | None, Field(description="GeoJSON geometry, lon/lat (WGS 84).")] = None,
        installed_at: Annotated[datetime | None, Field(description="When it was installed (ISO 8601).")] = None,
    ) -> Annotated[CallToolResult, Asset]:
        """Change an asset's attributes; omitted fields keep their value. This WRITES data and can
        overwrite values or abandon an asset for good: confirm with the user first."""
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
        return schema_sdl(await state.schema.get(state.client))

    @resource("linepack://assets/{asset_id}", name="asset", title="A Linepack asset",
                  description="One asset of the tenant as JSON.", mime_type="application/json")
    async def asset_resource(asset_id: str) -> str:
        return json.dumps(await fetch_asset(asset_id), indent=2)

    # -- prompts --------------------------------------------------------------------------------

    @mcp.prompt(title="Integrity review of a pipeline")
    def integrity_review(
        pipeline: Annotated[str, Field(description="The pipeline's name (or part of it) or its asset id.")],
    ) -> str:
        """Review the integrity of one pipeline: attributes, anomalies, fitness for service, obligations."""
        return f"""Carry out an integrity review of the pipeline "{pipeline}" using the Linepack tools.
Every answer is sized to a budget: read each summary first and narrow with filters instead of paging through
everything.

1. Find it: search_assets(text="{pipeline}", type="PIPELINE") (or get_asset if that is an id). Report its
   product, regulation, diameter, wall thickness, SMYS, MAOP, class location, HCA status and status.
2. Its segments: list_assets(parent_id=<pipeline id>).
3. risk_register for the ranking; get_segment_risk for the highest-scoring segments (score, band, drivers).
4. Anomalies: dig_list(pipeline_id=<pipeline id>) gives counts by response category and the soonest due first;
   list_anomaly_assessments(asset_id=<segment id>) gives a segment's counts, then ask for one
   response_category at a time (IMMEDIATE first). Report every IMMEDIATE and overdue anomaly with its rule and
   repair due date, and how many could not be assessed and why.
5. The latest ILI_RUN, CP_SURVEY and PATROL records: list_measurements(asset_id=..., type=..., first=1).
6. Obligations: list_compliance_status(asset_id=..., state="OVERDUE") and state="DUE_SOON" (get_asset_compliance
   for one asset's detail).
7. Finish with a table of findings (asset, issue, evidence, recommended action, urgency) and state what data
   was missing. Do not change any data."""

    @mcp.prompt(title="Triage ILI anomalies of an asset")
    def anomaly_triage(
        asset: Annotated[str, Field(description="The pipe asset's name (or part of it) or its asset id.")],
        max_anomalies: Annotated[str, Field(description="How many of the most urgent anomalies to detail "
                                            "(default 10).")] = "10",
    ) -> str:
        """Rank the in-line-inspection anomalies of one pipe asset by severity with Modified B31G."""
        return f"""Triage the in-line inspection anomalies of asset "{asset}". Aim for a handful of tool calls: the
answers carry summaries, so do not page through every anomaly.

1. Resolve the asset (search_assets, or get_asset if that is an id) and check it has outsideDiameterMm,
   wallThicknessMm, smysMpa and maopKpa; say which are missing if any.
2. list_anomaly_assessments(asset_id=...): its summary counts the anomalies by response category and those
   that could not be assessed, and its items are the most urgent first.
3. If the {max_anomalies} most urgent are not all on that page, ask for the categories that matter one at a time
   (response_category="IMMEDIATE", then "SIXTY_DAY", ...) with first={max_anomalies}. For each give odometer,
   clock, depth %WT reported and with tool tolerance, length, safe pressure, ERF, response category with its
   rule, repair due date and remaining life. Use fields=[...] to ask only for what you need.
4. get_segment_risk for the asset and say what drives its score. Say how many anomalies could not be
   assessed and what data is missing; get_dig_sheet(measurement_id) locates one for a field crew.
   Do not change any data."""

    for registered in mcp._tool_manager.list_tools():
        # The SDK ignores arguments a tool does not declare; say so in the schema too (StrictRequests refuses them).
        registered.parameters["additionalProperties"] = False
    return mcp


async def _warm_schema(state: AppState) -> None:
    """Read the schema while the client is still starting up, so the first tool that needs it does not wait."""
    try:
        await state.schema.get(state.client)
    except LinepackError as exc:
        log.warning("Could not read the API schema (%s); the tools that need it will try again.", exc.message)
    except Exception:  # noqa: BLE001 - warming a cache must never stop the server
        log.exception("Unexpected error while reading the API schema")
