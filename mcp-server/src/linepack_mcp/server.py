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
from typing import Annotated, Any

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
)
from .schema import (
    SchemaCache,
    describe_type as describe_schema_type,
    search_schema as search_schema_entries,
    similar_type_names,
    describe_syntax_error,
    fetch_schema,
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

log = logging.getLogger("linepack_mcp.server")

MAX_PAGE = 100
MAX_BATCH = 1000

# The summary's own fields; any other field the API's PipelineSummary offers is selected too (see pipeline_summary).
SUMMARY_KNOWN = {
    "tenantId", "totalAssets", "assetsByType", "assetsByStatus", "totalPipelineLengthM",
    "measurementCount", "latestInspectionAt",
}
WRITE_TOOLS = ("create_asset", "update_asset", "record_measurements")

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


def _compact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_compact(v) for v in value]
    return value


def _result(model: BaseModel, *, drop_nulls: bool = True) -> CallToolResult:
    """Structured content = the model; text for the model = compact JSON (without nulls by default)."""
    structured = model.model_dump(mode="json")
    text = json.dumps(_compact(structured) if drop_nulls else structured, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


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


def _page_fields(conn: dict[str, Any], item: Callable[[dict[str, Any]], BaseModel]) -> dict[str, Any]:
    """A GraphQL connection as the fields every *Page model shares: its nodes as items, the count, pageInfo."""
    return {
        "items": [item(e["node"]) for e in conn["edges"]],
        "totalCount": conn["totalCount"],
        "pageInfo": PageInfo.model_validate(conn["pageInfo"]),
    }


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

    assetId: str
    type: MeasurementType
    observedAt: datetime = Field(description="When it was observed, ISO 8601 (UTC if no offset).")
    source: MeasurementSource
    idempotencyKey: str | None = Field(
        default=None,
        description="Unique per tenant; sending the same key again stores nothing new. Omit it and "
        "a key is derived from the item's content, so retrying the same call never duplicates.",
    )
    stationM: float | None = None
    value: float | None = None
    unit: MeasurementUnit | None = None
    runId: str | None = None
    featureType: AnomalyFeatureType | None = None
    surface: AnomalySurface | None = None
    odometerM: float | None = None
    clockDeg: float | None = Field(default=None, ge=0, le=360)
    depthPctWt: float | None = Field(default=None, ge=0, le=100)
    lengthMm: float | None = Field(default=None, ge=0)
    widthMm: float | None = Field(default=None, ge=0)

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


def build_server(settings: Settings, schema: GraphQLSchema | None = None, *,
                 per_request_credentials: bool = False, state: AppState | None = None) -> MCPServer[AppState]:
    """The MCP server. `schema` (from a start-up probe) enables the tools that depend on it at once.

    With `per_request_credentials` (streamable HTTP) every MCP request acts with the credential its
    HTTP request carries; the process holds none of its own.
    """
    state = state or AppState(settings, per_request_credentials=per_request_credentials)
    if schema is not None:
        state.schema.set(schema)
    ops = operations()

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppState]) -> AsyncIterator[AppState]:
        try:
            yield state
        finally:
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
        **auth,
    )

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
        return _result(PipelineSummary.model_validate(summary))

    @tool(title="List assets", annotations=READ)
    async def list_assets(
        type: Annotated[AssetType | None, Field(description="Only assets of this type.")] = None,
        status: Annotated[AssetStatus | None, Field(description="Only assets in this lifecycle status.")] = None,
        parent_id: Annotated[str | None, Field(description="Only children of this asset (e.g. a pipeline's segments).")] = None,
        in_hca: Annotated[bool | None, Field(description="Only assets in (true) or outside (false) a high consequence area.")] = None,
        name_contains: Annotated[str | None, Field(description="Case-insensitive substring of the name.")] = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE, description="Page size.")] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page's pageInfo.endCursor.")] = None,
    ) -> Annotated[CallToolResult, AssetPage]:
        """List the tenant's assets, ordered by name, filtered and paginated."""
        flt = _drop_none({"type": type, "status": status, "parentId": parent_id, "inHca": in_hca,
                          "nameContains": name_contains})
        page = await _asset_page(flt, first, after)
        page.next = _next_hint("list_assets", page.pageInfo.model_dump(), type=type, status=status,
                               parent_id=parent_id, in_hca=in_hca, name_contains=name_contains, first=first)
        return _result(page)

    async def _asset_page(flt: dict[str, Any], first: int, after: str | None) -> AssetPage:
        data = await run_read(ops["LinepackAssets"], {"filter": flt or None, "first": first, "after": after})
        conn = data["assets"]
        return AssetPage(
            **_page_fields(conn, Asset.model_validate),
        )

    @tool(title="Search assets", annotations=READ)
    async def search_assets(
        text: Annotated[str, Field(min_length=1, description="Part of an asset's name, or an asset id.")],
        type: Annotated[AssetType | None, Field(description="Only assets of this type.")] = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, AssetPage]:
        """Find assets whose name contains `text` (case-insensitive); an exact asset id also matches."""
        page = await _asset_page(_drop_none({"nameContains": text, "type": type}), first, after)
        if after is None and " " not in text.strip() and not any(a.id == text.strip() for a in page.items):
            try:
                by_id = await run_read(ops["LinepackAsset"], {"id": text.strip()})
            except LinepackGraphQLError:
                by_id = {}  # not an id in the API's format
            if by_id.get("asset") and (type is None or by_id["asset"]["type"] == type):
                page.items.insert(0, Asset.model_validate(by_id["asset"]))
                page.totalCount += 1
        page.next = _next_hint("search_assets", page.pageInfo.model_dump(), text=text, type=type, first=first)
        return _result(page)

    @tool(title="Get an asset", annotations=READ)
    async def get_asset(
        asset_id: Annotated[str, Field(description="The asset's id.")],
    ) -> Annotated[CallToolResult, Asset]:
        """One asset with all its attributes (geometry, material, MAOP, class location, HCA, status,
        version). Use its `version` for update_asset."""
        return _result(Asset.model_validate(await fetch_asset(asset_id)))

    @tool(title="List measurements of an asset", annotations=READ)
    async def list_measurements(
        asset_id: Annotated[str, Field(description="The asset whose measurements to list.")],
        type: Annotated[MeasurementType | None, Field(description="Only this measurement or inspection type.")] = None,
        observed_from: Annotated[datetime | None, Field(description="Observed at or after this instant (ISO 8601).")] = None,
        observed_to: Annotated[datetime | None, Field(description="Observed before this instant (ISO 8601).")] = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, MeasurementPage]:
        """Measurements and inspection records of one asset, newest observation first, paginated
        (ILI anomalies with depth/length/clock position, UT readings, CP potentials, surveys...)."""
        data = await run_read(
            ops["LinepackMeasurements"],
            {"id": asset_id, "type": type, "from": _utc(observed_from), "to": _utc(observed_to),
             "first": first, "after": after},
        )
        asset = _found_asset(data, asset_id)
        conn = asset["measurements"]
        page = MeasurementPage(
            asset=_asset_ref(asset),
            **_page_fields(conn, Measurement.model_validate),
        )
        page.next = _next_hint("list_measurements", conn["pageInfo"], asset_id=asset_id, type=type,
                               observed_from=_utc(observed_from), observed_to=_utc(observed_to), first=first)
        return _result(page)

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
        return _result(AnomalyAssessment(
            asset=_asset_ref(asset),
            measurementId=measurement_id, inputs=inputs, assessment=a, verdict=verdict,
        ))

    @tool(title="Anomaly assessments of a segment", annotations=READ)
    async def list_anomaly_assessments(
        asset_id: Annotated[str, Field(description="The pipe asset (segment or pipeline) whose ILI anomalies to list.")],
        response_category: Annotated[ResponseCategory | None, Field(description="Only anomalies in this response category.")] = None,
        assessable: Annotated[bool | None, Field(description="Only assessable (true) or not assessable (false) anomalies.")] = None,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, AnomalyAssessmentPage]:
        """Every recorded ILI anomaly of one pipe asset as analytics assessed it, most urgent first:
        Modified B31G at the depth with the ILI tool tolerance, failure/safe pressure, ERF, response
        category with its rule (192.933(d), 192.714(d), 195.452(h)(4)), repair due date, corrosion growth
        and remaining life, and when it was computed. Anomalies that cannot be assessed say why."""
        data = await run_read(
            ops["LinepackAssessments"],
            {"id": asset_id, "filter": _drop_none({"responseCategory": response_category, "assessable": assessable}) or None,
             "first": first, "after": after},
        )
        asset = _found_asset(data, asset_id)
        conn = asset["anomalyAssessments"]
        page = AnomalyAssessmentPage(
            asset=_asset_ref(asset),
            **_page_fields(conn, lambda node: StoredAssessment.model_validate(
                {**node, "measurementId": node["measurement"]["id"]})),
        )
        page.next = _next_hint("list_anomaly_assessments", conn["pageInfo"], asset_id=asset_id,
                               response_category=response_category, assessable=assessable, first=first)
        return _result(page)

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
        return _result(AssetRisk(
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
        first: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, RiskRegisterPage]:
        """The tenant's pipe segments ranked by risk score, highest first, each with its likelihood,
        consequence, band and drivers."""
        data = await run_read(
            ops["LinepackRiskRegister"],
            {"filter": _drop_none({"band": band, "minScore": min_score, "regulation": regulation}) or None,
             "first": first, "after": after},
        )
        conn = data["riskRegister"]
        page = RiskRegisterPage(
            **_page_fields(conn, RiskRegisterEntry.model_validate),
        )
        page.next = _next_hint("risk_register", conn["pageInfo"], band=band, min_score=min_score,
                               regulation=regulation, first=first)
        return _result(page)

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
        return _result(ComplianceObligations(
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
        return _result(AssetCompliance(
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
        due_soon_days: Annotated[int, Field(ge=0, le=365)] = 30,
        first: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 20,
        after: Annotated[str | None, Field(description="Cursor from a previous page.")] = None,
    ) -> Annotated[CallToolResult, ComplianceStatusPage]:
        """Every (asset, obligation) row of the tenant with its state, soonest due first: what is
        overdue or due soon across the whole system."""
        data = await run_read(
            ops["LinepackComplianceStatus"],
            {"filter": _drop_none({"state": state, "obligation": obligation, "regulation": regulation,
                                   "assetId": asset_id}) or None,
             "asOf": _utc(as_of), "days": due_soon_days, "first": first, "after": after},
        )
        conn = data["complianceStatus"]
        page = ComplianceStatusPage(
            **_page_fields(conn, ComplianceStatusRow.model_validate),
        )
        page.next = _next_hint("list_compliance_status", conn["pageInfo"], state=state, obligation=obligation,
                               regulation=regulation, asset_id=asset_id, as_of=_utc(as_of),
                               due_soon_days=due_soon_days, first=first)
        return _result(page)

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
        return _result(WhoAmI(
            apiUrl=settings.api_url, tenantHeader=state.client.credential.tenant_id, me=Me.model_validate(data["me"]),
            key=key, keyError=key_error,
        ))

    # -- write tools ---------------------------------------------------------------------------

    @tool(title="Create an asset (writes data)", annotations=CREATE)
    async def create_asset(
        type: AssetType,
        name: Annotated[str, Field(min_length=1)],
        parent_id: Annotated[str | None, Field(description="The asset it belongs to (a segment's pipeline...).")] = None,
        status: Annotated[AssetStatus | None, Field(description="Defaults to PLANNED.")] = None,
        product: Product | None = None,
        regulation: Regulation | None = None,
        begin_station_m: float | None = None,
        end_station_m: float | None = None,
        outside_diameter_mm: Annotated[float | None, Field(gt=0)] = None,
        wall_thickness_mm: Annotated[float | None, Field(gt=0)] = None,
        smys_mpa: Annotated[float | None, Field(gt=0)] = None,
        maop_kpa: Annotated[float | None, Field(gt=0)] = None,
        class_location: Annotated[int | None, Field(ge=1, le=4)] = None,
        in_hca: bool | None = None,
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
        installed_at: datetime | None = None,
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
        return _result(Asset.model_validate(data["createAsset"]))

    @tool(title="Update an asset (writes data)", annotations=UPDATE)
    async def update_asset(
        asset_id: str,
        version: Annotated[int, Field(description="The asset's current version, from get_asset; a stale "
                                                  "version fails with CONFLICT instead of overwriting.")],
        name: str | None = None,
        parent_id: str | None = None,
        status: Annotated[AssetStatus | None, Field(description="PLANNED -> ACTIVE <-> IDLE; any -> ABANDONED, which is final.")] = None,
        product: Product | None = None,
        regulation: Regulation | None = None,
        begin_station_m: float | None = None,
        end_station_m: float | None = None,
        outside_diameter_mm: Annotated[float | None, Field(gt=0)] = None,
        wall_thickness_mm: Annotated[float | None, Field(gt=0)] = None,
        smys_mpa: Annotated[float | None, Field(gt=0)] = None,
        maop_kpa: Annotated[float | None, Field(gt=0)] = None,
        class_location: Annotated[int | None, Field(ge=1, le=4)] = None,
        in_hca: bool | None = None,
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
        location: dict[str, Any] | None = None,
        installed_at: datetime | None = None,
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
        return _result(Asset.model_validate(data["updateAsset"]))

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
        return _result(RecordResult(insertedCount=r["insertedCount"], duplicateCount=r["duplicateCount"],
                                    ids=r["ids"], idempotencyKeys=[i["idempotencyKey"] for i in items]))

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
        text = json.dumps(result.data, ensure_ascii=False, separators=(",", ":"))
        cap = settings.max_result_chars
        if len(text) > cap:
            out.data = None
            out.truncated = True
            out.dataPreview = text[:cap]
            out.note = (f"The result is {len(text)} characters, over the {cap}-character cap; dataPreview "
                        f"holds the start. Ask for fewer fields or a smaller page (first/after).")
        # The data exactly as the API sent it: a null is information here.
        return _result(out, drop_nulls=False)

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
        return _result(SchemaSearchResult(
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
        return _result(TypeDescription.model_validate(described))

    @tool(name="validate", title="Validate a GraphQL document", annotations=READ)
    async def validate(
        query: Annotated[str, Field(min_length=1, description="A GraphQL document to check.")],
    ) -> Annotated[CallToolResult, ValidationResult]:
        """Check a GraphQL document against the Linepack schema without running it: syntax, fields,
        arguments and types. Also says whether graphql_query would accept it (queries only)."""
        try:
            info = inspect_document(query)
        except GraphQLError as err:
            return _result(ValidationResult(
                valid=False, operationTypes=[], readOnly=False,
                errors=[err.formatted | {"extensions": {"code": "GRAPHQL_PARSE_FAILED"}}],
            ))
        schema_now = await state.schema.get(state.client)
        errors = validate_document(schema_now, query)
        return _result(ValidationResult(valid=not errors, operationTypes=info.operation_types,
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
    def integrity_review(pipeline: str) -> str:
        """Review the integrity of one pipeline: attributes, anomalies, fitness for service, obligations."""
        return f"""Carry out an integrity review of the pipeline "{pipeline}" using the Linepack tools.

1. Find it: search_assets(text="{pipeline}", type="PIPELINE") (or get_asset if that is an id). Report its
   product, regulation, diameter, wall thickness, SMYS, MAOP, class location, HCA status and status.
2. List its segments and components: list_assets(parent_id=<pipeline id>), following pages.
3. For the pipeline and each segment, get_segment_risk (score, band and drivers) and
   list_anomaly_assessments (most urgent first); report every IMMEDIATE and time-bound anomaly with its
   rule, repair due date and remaining life, and every anomaly that could not be assessed and why.
4. Note the latest ILI_RUN, CP_SURVEY and PATROL records (list_measurements with type).
5. get_asset_compliance for the pipeline and each segment; report every OVERDUE, DUE_SOON and NO_RECORD
   obligation with its section and due date.
6. Finish with a table of findings (asset, issue, evidence, recommended action, urgency) and state
   what data was missing. Do not change any data."""

    @mcp.prompt(title="Triage ILI anomalies of an asset")
    def anomaly_triage(asset: str, max_anomalies: str = "10") -> str:
        """Rank the in-line-inspection anomalies of one pipe asset by severity with Modified B31G."""
        return f"""Triage the in-line inspection anomalies of asset "{asset}".

1. Resolve the asset (search_assets or get_asset) and check it has outsideDiameterMm, wallThicknessMm,
   smysMpa and maopKpa; say which are missing if any.
2. list_anomaly_assessments(asset_id=..., first=100), following pages: they come most urgent first
   (IMMEDIATE, then by repair due date). Take the {max_anomalies} most urgent.
3. For each give odometer/station (from list_measurements if needed), depth %WT with tool tolerance,
   length, safe pressure, ERF, response category with its rule, repair due date and remaining life.
4. get_segment_risk for the asset and say what drives its score. Say which anomalies could not be
   assessed and what data is missing. Do not change any data."""

    return mcp


async def probe_schema(settings: Settings, timeout_s: float = 5.0) -> GraphQLSchema | None:
    """Introspect the gateway once at start-up; None (and a warning) when it cannot be reached."""
    quick = replace(settings, timeout_s=timeout_s, max_retries=0)
    try:
        async with LinepackClient(quick) as client:
            return await asyncio.wait_for(fetch_schema(client), timeout_s + 1)
    except (LinepackError, asyncio.TimeoutError) as exc:
        log.warning("Could not read the API schema at start-up (%s); schema-dependent tools stay off "
                    "until restart.", getattr(exc, "message", type(exc).__name__))
        return None
    except Exception:  # noqa: BLE001 - a start-up probe must never stop the server
        log.exception("Unexpected error while reading the API schema at start-up")
        return None
