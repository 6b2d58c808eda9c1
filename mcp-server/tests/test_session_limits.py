"""Hosted session limits without a stack: the settings, the decisions of the session table (who may open a
session, whose session is closed to make room, which are idle) on a clock the test moves, and the server's HTTP app
in-process in front of a stand-in gateway (what a credential the gateway could not verify may open)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from conftest import run_cli
from linepack_mcp import client as linepack_client
from linepack_mcp import state as linepack_state
from linepack_mcp.cli import transport_security
from linepack_mcp.server import GatewayTokenVerifier, build_http_app
from linepack_mcp.sessions import (
    PER_CREDENTIAL,
    PER_TENANT,
    TOTAL,
    UNVERIFIED_RETRY_AFTER_S,
    SessionGate,
    SessionLimits,
    SessionTable,
    Unverified,
    _OncePerPeriod,
)
from linepack_mcp.settings import ConfigError, load_settings

URL = {"LINEPACK_API_URL": "http://localhost:4000/graphql"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float = 1.0) -> None:
        self.now += seconds


def table(per_credential: int = 3, per_tenant: int = 5, total: int = 8, idle_s: float = 60.0) -> tuple[SessionTable, Clock]:
    clock = Clock()
    return SessionTable(SessionLimits(per_credential, per_tenant, total, idle_s), clock=clock), clock


def open_session(t: SessionTable, clock: Clock, sid: str, credential: str, tenant: str) -> list[str]:
    """One session opened and its opening request answered; returns the ids of the sessions closed to make room."""
    admission = t.admit(credential, tenant)
    assert admission.refusal is None, admission.refusal
    t.opened(admission, sid)
    t.end(sid)
    clock.tick()
    return [s.id for s in admission.closed]


def use(t: SessionTable, clock: Clock, sid: str) -> None:
    t.begin(sid)
    t.end(sid)
    clock.tick()


# -- settings ---------------------------------------------------------------------------------------------------


def test_session_settings_defaults_and_values():
    s = load_settings(URL, per_request_credentials=True)
    assert (s.max_sessions_per_credential, s.max_sessions_per_tenant, s.max_sessions) == (16, 64, 1000)
    assert s.session_idle_timeout_s == 900.0
    s = load_settings(URL | {"LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL": "2", "LINEPACK_MCP_MAX_SESSIONS_PER_TENANT": "4",
                             "LINEPACK_MCP_MAX_SESSIONS": "9", "LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S": "1.5"},
                      per_request_credentials=True)
    assert (s.max_sessions_per_credential, s.max_sessions_per_tenant, s.max_sessions) == (2, 4, 9)
    assert s.session_idle_timeout_s == 1.5


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL": "lots"}, "LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL must be an integer"),
        ({"LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL": "0"}, "LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL must be at least 1"),
        ({"LINEPACK_MCP_MAX_SESSIONS_PER_TENANT": "8"}, "LINEPACK_MCP_MAX_SESSIONS_PER_TENANT (8) must be at least "
                                                       "LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL (16)"),
        ({"LINEPACK_MCP_MAX_SESSIONS": "64"}, "LINEPACK_MCP_MAX_SESSIONS (64) must be larger than "
                                             "LINEPACK_MCP_MAX_SESSIONS_PER_TENANT (64)"),
        ({"LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S": "0.2"}, "LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S must be at least 1"),
        ({"LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S": "nan"}, "LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S must be a finite number"),
        ({"LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S": "inf"}, "LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S must be a finite number"),
    ],
)
def test_session_settings_errors_are_one_clear_line(env, needle):
    with pytest.raises(ConfigError) as info:
        load_settings(URL | env, per_request_credentials=True)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_session_settings_do_not_concern_stdio():
    # One client, one session: a hosted-only setting must not stop a stdio server.
    s = load_settings(URL | {"LINEPACK_API_KEY": "lpk_unit_0123456789", "LINEPACK_MCP_MAX_SESSIONS": "1"})
    assert s.max_sessions == 1000


def test_serve_refuses_to_start_with_caps_that_let_one_tenant_fill_the_server():
    proc = run_cli("serve", "--transport", "streamable-http", "--port", "9",
                   env=URL | {"LINEPACK_MCP_MAX_SESSIONS_PER_TENANT": "100", "LINEPACK_MCP_MAX_SESSIONS": "100"})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "LINEPACK_MCP_MAX_SESSIONS (100) must be larger than" in lines[0]


# -- the session table --------------------------------------------------------------------------------------------


def test_at_a_credentials_cap_its_session_unused_longest_is_closed():
    t, clock = table()
    for sid in ("s1", "s2", "s3"):
        assert open_session(t, clock, sid, "a1", "A") == []
    use(t, clock, "s1")  # s2 is now the one unused the longest, though s1 is older
    assert open_session(t, clock, "s4", "a1", "A") == ["s2"]
    assert "s2" not in t and all(sid in t for sid in ("s1", "s3", "s4"))
    assert len(t) == 3 and t.closed_to_admit == 1


def test_at_a_tenants_cap_the_tenants_idlest_session_goes_whichever_credential_holds_it():
    t, clock = table(per_credential=3, per_tenant=5)
    for i in range(3):
        open_session(t, clock, f"a1-{i}", "a1", "A")
    for i in range(2):
        open_session(t, clock, f"a2-{i}", "a2", "A")
    assert open_session(t, clock, "a2-2", "a2", "A") == ["a1-0"]
    assert len(t) == 5


def test_one_tenants_flood_never_closes_or_refuses_another_tenants_sessions():
    t, clock = table(per_credential=3, per_tenant=5, total=8)
    open_session(t, clock, "b-0", "b1", "B")  # B's session, then the oldest of all
    for i in range(60):  # A floods with two keys, far past every cap, the server-wide one included
        closed = open_session(t, clock, f"a-{i}", "a1" if i % 2 else "a2", "A")
        assert "b-0" not in closed
    assert "b-0" in t and len(t) == 6  # A holds its 5, B its 1
    assert open_session(t, clock, "b-1", "b1", "B") == []
    assert t.refused == 0


def test_when_every_session_is_busy_the_new_one_is_refused_with_429_naming_the_limit():
    t, clock = table(per_credential=2)
    open_session(t, clock, "s1", "a1", "A")
    open_session(t, clock, "s2", "a1", "A")
    t.begin("s1")
    t.begin("s2")
    refused = t.admit("a1", "A")
    assert refused.refusal is not None and refused.refusal.status == 429
    assert refused.refusal.limit == PER_CREDENTIAL and PER_CREDENTIAL in refused.refusal.message
    assert refused.refusal.retry_after_s > 0 and refused.closed == []
    assert "s1" in t and "s2" in t
    t.end("s2")
    assert [s.id for s in t.admit("a1", "A").closed] == ["s2"]


def test_a_tenant_whose_sessions_are_busy_is_refused_naming_the_tenant_limit():
    t, clock = table(per_credential=3, per_tenant=4)
    for i in range(3):
        open_session(t, clock, f"a1-{i}", "a1", "A")
    open_session(t, clock, "a2-0", "a2", "A")
    for sid in ("a1-0", "a1-1", "a1-2", "a2-0"):
        t.begin(sid)
    refusal = t.admit("a3", "A").refusal
    assert refusal is not None and refusal.status == 429 and refusal.limit == PER_TENANT


def test_the_server_wide_cap_is_the_last_resort():
    t, clock = table(per_credential=2, per_tenant=3, total=4)
    for tenant in ("A", "B"):
        for i in range(2):
            open_session(t, clock, f"{tenant}-{i}", tenant.lower(), tenant)
    refusal = t.admit("c1", "C").refusal
    assert refusal is not None and refusal.status == 503 and refusal.limit == TOTAL
    # Retry-After: when the server's idlest session will have been unused for the idle timeout.
    assert refusal.retry_after_s == 56  # A-0, unused since 1000, expires at 1060; it is 1004
    # A tenant at its own cap still gets in by closing its own idlest session.
    assert open_session(t, clock, "A-2", "a", "A") == ["A-0"]


def test_openings_not_yet_answered_hold_their_slots():
    t, _ = table(per_credential=2)
    first, second = t.admit("a1", "A"), t.admit("a1", "A")
    assert first.refusal is None and second.refusal is None
    third = t.admit("a1", "A")
    assert third.refusal is not None and third.refusal.status == 429  # nothing open yet, so nothing idle to close
    t.cancel(first)  # the SDK refused that one
    assert t.admit("a1", "A").refusal is None


def test_idle_sessions_expire_but_busy_ones_do_not():
    t, clock = table(idle_s=10)
    open_session(t, clock, "quiet", "a1", "A")
    open_session(t, clock, "busy", "a1", "A")
    t.begin("busy")
    clock.tick(7)  # quiet: unused since 1000, now 1009
    assert t.expired() == []
    clock.tick(2)
    assert [s.id for s in t.expired()] == ["quiet"]
    clock.tick(100)
    assert t.expired() == []  # still serving its request
    t.end("busy")
    clock.tick(10)
    assert [s.id for s in t.expired()] == ["busy"]
    assert len(t) == 0 and t.closed_idle == 2


def test_sessions_the_sdk_ended_are_forgotten_and_leave_nothing_behind():
    t, clock = table()
    for i in range(3):
        open_session(t, clock, f"s{i}", f"cred{i}", f"T{i}")
    t.retain({"s1"})
    assert len(t) == 1 and "s1" in t
    t.forget("s1")
    assert len(t) == 0
    # No per-credential or per-tenant entry outlives its last session: memory follows the open sessions only.
    assert not t._per_credential and not t._per_tenant
    assert t.snapshot()["tracked"] == 0 and t.snapshot()["opening"] == 0


def test_log_lines_of_a_flood_are_held_back_and_counted():
    once = _OncePerPeriod(period_s=60, keys=4)
    assert once("closed:a", 0.0) == 0
    assert [once("closed:a", float(s)) for s in range(1, 50)] == [None] * 49
    assert once("closed:a", 61.0) == 49
    for i in range(10):  # many credentials at once: the memory of who was logged stays bounded
        once(f"closed:{i}", 62.0)
        assert len(once._seen) <= 4


# -- credentials the gateway could not verify ---------------------------------------------------------------------
#
# The server's own HTTP app (the SDK's streamable HTTP app behind the session gate), in-process, talking to a
# stand-in gateway: what the finding's flood needs is a gateway that answers an unknown bearer 429, as the real one
# does for every uncached key from an address that failed too often.

GOOD_KEY = "lpk_unit_tenant_a_0123456789"
REVOKED_KEY = "lpk_unit_revoked_0123456789"
HOSTED = URL | {"LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL": "3", "LINEPACK_MCP_MAX_SESSIONS_PER_TENANT": "5",
                "LINEPACK_MCP_MAX_SESSIONS": "8"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"accept": "application/json, text/event-stream"}


class Gateway:
    """A stand-in for the gateway's `{ me }`: GOOD_KEY is tenant A's, REVOKED_KEY is refused with 401, and every other
    bearer gets what `unknown` says (by default the 429 of an address that failed too often)."""

    def __init__(self) -> None:
        self.unknown: Callable[[], httpx.Response] = lambda: httpx.Response(
            429, headers={"Retry-After": "7"},
            json={"errors": [{"message": "too many failed authentications from this address; retry in 7 s",
                              "extensions": {"code": "RATE_LIMITED", "retryAfterSeconds": 7}}]})
        self.checks = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.checks += 1
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if bearer == GOOD_KEY:
            return httpx.Response(200, json={"data": {"me": {"id": "key-a", "tenantId": "A",
                                                             "scopes": ["assets:read"]}}})
        if bearer == REVOKED_KEY:
            return httpx.Response(401, json={"errors": [{"message": "invalid, expired or revoked credential",
                                                         "extensions": {"code": "UNAUTHENTICATED"}}]})
        return self.unknown()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def own_task(app: ASGIApp) -> ASGIApp:
    """Each request in a task of its own, as uvicorn serves them: what the credential check remembers for a request
    (a context variable) must not reach the next one, as it would in the one task of ASGITransport."""

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        await asyncio.create_task(app(scope, receive, send))

    return serve


@asynccontextmanager
async def hosted(gateway: Gateway,
                 monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[httpx.AsyncClient, SessionGate]]:
    """The HTTP app as `serve --transport streamable-http` builds it, run as uvicorn runs it: its lifespan (the SDK's
    session manager, the idle sweeper) around the requests."""
    real_pool = linepack_client.new_http_pool
    monkeypatch.setattr(linepack_state, "new_http_pool",
                        lambda settings: real_pool(settings, transport=httpx.MockTransport(gateway)))
    app = build_http_app(load_settings(HOSTED, per_request_credentials=True), host="127.0.0.1",
                         transport_security=transport_security("127.0.0.1", 8765, [], []))
    gate = app.app  # behind the 401 challenge: the session limits
    to_app, app_receives = anyio.create_memory_object_stream[dict[str, Any]](2)
    app_sends, from_app = anyio.create_memory_object_stream[dict[str, Any]](2)
    async with anyio.create_task_group() as tg:
        tg.start_soon(app, {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, app_receives.receive,
                      app_sends.send)
        await to_app.send({"type": "lifespan.startup"})
        assert (await from_app.receive())["type"] == "lifespan.startup.complete"
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=own_task(app)),
                                         base_url="http://127.0.0.1:8765") as http:
                yield http, gate
        finally:
            await to_app.send({"type": "lifespan.shutdown"})
            await from_app.receive()
            tg.cancel_scope.cancel()


async def initialize(http: httpx.AsyncClient, bearer: str) -> httpx.Response:
    return await http.post("/mcp", json=INITIALIZE, headers=ACCEPT | {"authorization": f"Bearer {bearer}"})


def assert_counts_nothing(gate: SessionGate) -> None:
    health = gate.health()
    assert (health["open"], health["tracked"], health["opening"], health["refused"]) == (0, 0, 0, 0), health
    assert not gate.table._per_credential and not gate.table._per_tenant


@pytest.mark.anyio
async def test_made_up_bearers_the_gateway_answers_429_open_no_session_and_count_nothing(monkeypatch):
    gateway = Gateway()
    async with hosted(gateway, monkeypatch) as (http, gate):
        flood = 3 * 8  # three times the server-wide cap: as their own tenants they would have filled it
        for _ in range(flood):
            refused = await initialize(http, "lpk_" + secrets.token_hex(16))
            assert refused.status_code == 503, refused.text
            assert refused.headers["retry-after"] == "7"  # the gateway's own
            message = refused.json()["error"]["message"]
            assert "could not be verified right now" in message and "no MCP session was opened" in message
            assert "localhost:4000" not in message  # the gateway's address is for the log, not for a stranger
        assert_counts_nothing(gate)
        assert gate.health()["refusedUnverified"] == flood
        assert gateway.checks == flood  # one check each: the SDK's authentication reuses the gate's answer

        # Another tenant still gets in, and a credential the gateway rejects still gets the SDK's 401.
        opened = await initialize(http, GOOD_KEY)
        assert opened.status_code == 200 and opened.headers.get("mcp-session-id"), opened.text
        assert gate.health()["open"] == 1 and gate.health()["tracked"] == 1
        rejected = await initialize(http, REVOKED_KEY)
        assert rejected.status_code == 401 and "bearer" in rejected.headers["www-authenticate"].lower()


@pytest.mark.parametrize("unknown", [
    lambda: httpx.Response(503, json={"errors": [{"message": "credential verification is unavailable"}]}),
    lambda: httpx.Response(429, json={"errors": [{"message": "slow down", "extensions": {"code": "RATE_LIMITED"}}]}),
    lambda: (_ for _ in ()).throw(httpx.ConnectError("connection refused")),
    lambda: httpx.Response(200, json={"data": {"me": {"id": "k", "tenantId": None, "scopes": []}}}),
], ids=["5xx", "429 without Retry-After", "unreachable", "no tenant"])
@pytest.mark.anyio
async def test_without_a_wait_from_the_gateway_an_unverified_credential_is_told_to_retry_in_a_few_seconds(
        monkeypatch, unknown):
    gateway = Gateway()
    gateway.unknown = unknown
    async with hosted(gateway, monkeypatch) as (http, gate):
        refused = await initialize(http, "lpk_" + secrets.token_hex(16))
        assert refused.status_code == 503 and refused.headers["retry-after"] == str(UNVERIFIED_RETRY_AFTER_S)
        assert_counts_nothing(gate)


@pytest.mark.anyio
async def test_an_open_session_goes_on_while_its_credential_cannot_be_checked(monkeypatch):
    gateway = Gateway()
    async with hosted(gateway, monkeypatch) as (http, gate):
        opened = await initialize(http, GOOD_KEY)
        assert opened.status_code == 200
        in_session = ACCEPT | {"authorization": f"Bearer {GOOD_KEY}", "mcp-protocol-version": "2025-11-25",
                               "mcp-session-id": opened.headers["mcp-session-id"]}
        assert (await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                headers=in_session)).status_code == 202
        # The gateway goes away and the remembered answer expires: as before, the request is the gateway's to judge
        # (a tool call then says what is wrong), not refused by the server.
        gateway.unknown = lambda: httpx.Response(503)
        gate._identify.__self__._known.clear()  # type: ignore[attr-defined]
        checks = gateway.checks
        listed = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=in_session)
        assert gateway.checks == checks + 1  # it was checked, inconclusively
        assert listed.status_code == 200 and "whoami" in listed.text
        assert gate.health()["open"] == 1 and gate.health()["refusedUnverified"] == 0


@pytest.mark.anyio
async def test_the_credential_check_tells_rejected_from_inconclusive(monkeypatch):
    gateway = Gateway()
    settings = load_settings(URL, per_request_credentials=True)
    async with linepack_client.new_http_pool(settings, transport=httpx.MockTransport(gateway)) as pool:
        verifier = GatewayTokenVerifier(settings, lambda: pool)
        assert await verifier.check(REVOKED_KEY) is None
        unknown = await verifier.check("lpk_" + secrets.token_hex(16))
        assert isinstance(unknown, Unverified) and unknown.retry_after_s == 7
        good = await verifier.check(GOOD_KEY)
        assert good is not None and not isinstance(good, Unverified) and good.claims == {"tenant_id": "A"}
        # What the SDK's authentication sees of an inconclusive check is unchanged: a pass, without scopes.
        passed = await verifier.verify_token("lpk_" + secrets.token_hex(16))
        assert passed is not None and passed.client_id == "unverified" and passed.scopes == []
