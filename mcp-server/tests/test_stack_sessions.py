"""Hosted MCP session limits against the real stack, with the SDK's own client: one tenant's flood of sessions stays
within its caps and never keeps another tenant out; at a cap the session unused the longest is closed (its next
request gets the spec's 404); sessions all busy are refused with 429; unused sessions close after the idle timeout;
made-up bearers the gateway cannot vouch for (it answers 429) open no session at all.

The clients use the handshake protocol (`mode="legacy"`, `initialize`), as deployed MCP clients do: that is what
holds a session on the server. (The SDK client's default, the 2026-07-28 protocol, holds none.) Every server here
listens on loopback only, and every flood is a bounded loop.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import Stack, free_port, http_server
from linepack_mcp.client import new_http_pool
from linepack_mcp.server import GatewayTokenVerifier
from linepack_mcp.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.stack]

PER_CREDENTIAL, PER_TENANT, TOTAL = 3, 5, 8
CAPS = {"LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL": str(PER_CREDENTIAL),
        "LINEPACK_MCP_MAX_SESSIONS_PER_TENANT": str(PER_TENANT), "LINEPACK_MCP_MAX_SESSIONS": str(TOTAL)}
EVENTUALLY_S = 30.0  # a generous bound for what the server does on its own (the idle sweep)


@pytest.fixture(scope="module")
def second_key(stack: Stack) -> str:
    """Another key of the demo tenant (tenant A): a tenant's cap spans its credentials."""
    return stack.create_key("assets:read,measurements:read,analytics:read,compliance:read")["apiKey"]


@pytest.fixture(scope="module")
def tenant_b(stack: Stack) -> dict[str, Any]:
    tenant = stack.create_tenant("MCP sessions B")
    asset = stack.graphql("mutation($i: CreateAssetInput!) { createAsset(input: $i) { id name } }",
                          {"i": {"type": "PIPELINE", "name": "Tenant B's line", "status": "ACTIVE"}},
                          key=tenant["apiKey"])["createAsset"]
    return tenant | {"asset": asset}


@contextmanager
def server(stack: Stack, tmp_path: Path, **env: str) -> Iterator[str]:
    with http_server(stack, tmp_path / "server.log", **env) as (base, _):
        yield base


def sessions(base: str) -> dict[str, Any]:
    """The server's own count of open sessions (the SDK's table), with its limits and what it closed."""
    health = httpx.get(f"{base}/healthz", timeout=10).json()
    assert "sessions" in health, f"/healthz reports no session counts: {health}"
    return health["sessions"]


async def eventually(check: Callable[[], bool], what: str) -> None:
    with anyio.move_on_after(EVENTUALLY_S):
        while not check():
            await anyio.sleep(0.1)
        return
    raise AssertionError(f"not within {EVENTUALLY_S:.0f} s: {what}")


class Session:
    """One real SDK client session, with the HTTP statuses and the session id the server answered."""

    def __init__(self, client: Client, statuses: list[tuple[str, int]], ids: list[str]) -> None:
        self.client = client
        self.statuses = statuses
        self._ids = ids

    @property
    def id(self) -> str:
        return self._ids[0]

    async def whoami(self) -> dict[str, Any]:
        result = await self.client.call_tool("whoami", {})
        assert not result.is_error, result.content[0].text
        return result.structured_content


@asynccontextmanager
async def session(base: str, key: str, *, close: bool = True) -> AsyncIterator[Session]:
    """A session as deployed clients open it (initialize, then the listening GET stream). `close=False` leaves it
    behind on the server when the client goes, as the sessions of the flood in the finding were."""
    statuses: list[tuple[str, int]] = []
    ids: list[str] = []

    async def record(response: httpx2.Response) -> None:
        statuses.append((response.request.method, response.status_code))
        if response.headers.get("mcp-session-id") and not ids:
            ids.append(response.headers["mcp-session-id"])

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60,
                                  event_hooks={"response": [record]}) as http:
        transport = streamable_http_client(f"{base}/mcp", http_client=http, terminate_on_close=close)
        async with Client(transport, mode="legacy") as client:
            yield Session(client, statuses, ids)


async def flood(base: str, keys: list[str], count: int, after_each: Callable[[], Awaitable[None]]) -> None:
    """`count` sessions opened one after another with `keys` in turn, each abandoned at once (never closed)."""
    for i in range(count):
        async with session(base, keys[i % len(keys)], close=False):
            pass
        await after_each()


@asynccontextmanager
async def busy(base: str, key: str, session_id: str) -> AsyncIterator[None]:
    """Holds a request in flight on the session: a POST whose body arrives only when the block ends."""
    release = anyio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 7, '
        await release.wait()
        yield b'"method": "ping"}'

    async def post() -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            await http.post(f"{base}/mcp", content=body(), headers={
                "Authorization": f"Bearer {key}", "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25",
                "content-type": "application/json", "accept": "application/json, text/event-stream"})

    serving = sessions(base)["serving"]
    async with anyio.create_task_group() as tg:
        tg.start_soon(post)
        try:
            # In flight at the server before the block runs: on a loaded machine the POST can take a while to arrive.
            await eventually(lambda: sessions(base)["serving"] > serving, "the held request to reach the server")
            yield
        finally:
            release.set()


def leaves(error: BaseException) -> list[BaseException]:
    """The errors inside (nested) exception groups."""
    inner = getattr(error, "exceptions", None)
    return [error] if inner is None else [leaf for e in inner for leaf in leaves(e)]


def initialize_request() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


async def test_one_tenants_flood_leaves_another_tenant_able_to_open_sessions(
        stack: Stack, second_key: str, tenant_b: dict[str, Any], tmp_path: Path):
    with server(stack, tmp_path, **CAPS) as base:
        async with session(base, tenant_b["apiKey"]) as b_before:
            assert (await b_before.whoami())["me"]["tenantId"] == tenant_b["tenantId"]
            peak = 0

            async def bounded() -> None:
                nonlocal peak
                peak = max(peak, sessions(base)["open"])
                assert peak <= PER_TENANT + 1, sessions(base)  # tenant A's cap, and B's one session

            # Three times each credential's cap with each of tenant A's two keys: past the server-wide cap too.
            await flood(base, [stack.api_key, second_key], 3 * PER_CREDENTIAL * 2, bounded)
            after = sessions(base)
            assert after["open"] == PER_TENANT + 1 and after["refused"] == 0
            assert after["closedToAdmit"] == 3 * PER_CREDENTIAL * 2 - PER_TENANT

            # B's session was never touched, and B opens another and uses it.
            assert (await b_before.whoami())["me"]["tenantId"] == tenant_b["tenantId"]
            async with session(base, tenant_b["apiKey"]) as b_new:
                listed = await b_new.client.call_tool("list_assets", {"first": 100})
                assert not listed.is_error, listed.content[0].text
                assert [a["id"] for a in listed.structured_content["items"]] == [tenant_b["asset"]["id"]]
                assert ("POST", 200) in b_new.statuses
                assert sessions(base)["open"] == PER_TENANT + 2


async def test_at_the_cap_the_session_unused_longest_is_closed_first(stack: Stack, tmp_path: Path):
    with server(stack, tmp_path, **CAPS) as base:
        async with AsyncExitStack() as held:
            s1, s2, s3 = [await held.enter_async_context(session(base, stack.api_key)) for _ in range(3)]
            await s1.whoami()  # s2 is now the one unused the longest, though s1 is older
            s4 = await held.enter_async_context(session(base, stack.api_key))
            assert sessions(base)["open"] == PER_CREDENTIAL

            with pytest.raises(MCPError, match="Session not found"):
                await s2.client.call_tool("whoami", {})
            assert s2.statuses[-1] == ("POST", 404)  # the spec's answer for a session that has ended
            for other in (s1, s3, s4):
                await other.whoami()


async def test_sessions_all_busy_are_not_closed_and_the_new_one_gets_429(
        stack: Stack, tenant_b: dict[str, Any], tmp_path: Path):
    with server(stack, tmp_path, **CAPS) as base:
        async with AsyncExitStack() as held:
            mine = [await held.enter_async_context(session(base, stack.api_key)) for _ in range(PER_CREDENTIAL)]
            async with AsyncExitStack() as requests:
                for s in mine:
                    await requests.enter_async_context(busy(base, stack.api_key, s.id))
                await eventually(lambda: sessions(base)["serving"] == PER_CREDENTIAL, "every session serving")

                async with httpx.AsyncClient(timeout=30) as http:
                    refused = await http.post(f"{base}/mcp", json=initialize_request(), headers={
                        "Authorization": f"Bearer {stack.api_key}", "accept": "application/json, text/event-stream"})
                assert refused.status_code == 429
                assert int(refused.headers["retry-after"]) > 0
                assert "LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL" in refused.json()["error"]["message"]
                with pytest.raises(BaseException) as info:  # the client's task group wraps the MCPError
                    async with session(base, stack.api_key):
                        pass
                assert any(isinstance(e, MCPError) and "LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL" in str(e)
                           for e in leaves(info.value)), info.value
                async with session(base, tenant_b["apiKey"]) as other:  # another tenant is not held up
                    await other.whoami()
                assert sessions(base)["open"] == PER_CREDENTIAL  # B's came and went; none of mine was closed

            # Once a session is idle again, it makes room.
            async with session(base, stack.api_key) as fresh:
                await fresh.whoami()
                assert sessions(base)["closedToAdmit"] == 1


async def test_a_session_without_requests_is_closed_after_the_idle_timeout(stack: Stack, tmp_path: Path):
    # 5 s, not 1: both sessions must make their first request within it, which a stalled machine could miss at 1 s.
    with server(stack, tmp_path, LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S="5") as base:
        async with session(base, stack.api_key) as quiet, session(base, stack.api_key) as working:
            await quiet.whoami()
            # `quiet` keeps its listening GET stream open, as clients do: that alone does not keep it.
            async with busy(base, stack.api_key, working.id):
                await eventually(lambda: sessions(base)["closedIdle"] >= 1, "the quiet session closed")
                assert sessions(base)["open"] == 1  # the one serving a request stays, however long it takes
                with pytest.raises(MCPError, match="Session not found"):
                    await quiet.client.call_tool("whoami", {})
                assert quiet.statuses[-1] == ("POST", 404)
            await eventually(lambda: sessions(base)["open"] == 0, "the other one closed once idle")


async def test_the_credential_check_remembers_a_digest_not_the_credential(stack: Stack):
    settings = Settings(api_url=stack.gateway_url)
    pool = new_http_pool(settings)
    try:
        verifier = GatewayTokenVerifier(settings, lambda: pool)
        access = await verifier.verify_token(stack.api_key)
        assert access is not None and access.claims == {"tenant_id": stack.tenant_id}
        assert stack.api_key not in json.dumps({k: v[1].model_dump() for k, v in verifier._known.items()} | {
            "keys": list(verifier._known)})
    finally:
        await pool.aclose()


@contextmanager
def gateway_locked_out(stack: Stack, known: set[str], retry_after_s: int) -> Iterator[tuple[str, list[int]]]:
    """The gateway as the MCP server sees it once the address they share has failed authentication too often: every
    bearer it has not cached is refused with 429 before it is looked up; the `known` (cached) ones are served. A proxy
    in front of the real gateway, so the real lockout (a minute, for every test of the run) is never set off. Yields
    the proxy's GraphQL URL and a list that grows by one per refusal."""
    refused: list[int] = []
    upstream = httpx.Client(timeout=30)

    class Proxy(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            bearer = (self.headers.get("authorization") or "").removeprefix("Bearer ")
            if bearer not in known:
                refused.append(1)
                body = json.dumps({"errors": [{"message": "too many failed authentications from this address; retry "
                                                          f"in {retry_after_s} s", "extensions": {
                    "code": "RATE_LIMITED", "retryAfterSeconds": retry_after_s}}]}).encode()
                self._send(429, body, {"content-type": "application/json", "retry-after": str(retry_after_s)})
                return
            length = int(self.headers.get("content-length") or 0)
            forwarded = {k: v for k, v in self.headers.items()
                         if k.lower() in ("authorization", "content-type", "accept", "x-tenant-id", "user-agent")}
            answer = upstream.request(self.command, stack.gateway_url.rsplit("/graphql", 1)[0] + self.path,
                                      headers=forwarded, content=self.rfile.read(length) if length else None)
            kept = ("content-type", "retry-after", "x-request-id")
            self._send(answer.status_code, answer.content,
                       {k: v for k, v in answer.headers.items() if k.lower() in kept})

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *_: Any) -> None:
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", free_port()), Proxy)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{proxy.server_address[1]}/graphql", refused
    finally:
        proxy.shutdown()
        proxy.server_close()
        upstream.close()


async def test_made_up_bearers_while_the_gateway_answers_429_open_no_session_and_keep_no_tenant_out(
        stack: Stack, tenant_b: dict[str, Any], tmp_path: Path):
    flood = 3 * TOTAL  # as tenants of their own they filled the server: TOTAL / PER_CREDENTIAL bearers sufficed
    with gateway_locked_out(stack, {stack.api_key, tenant_b["apiKey"]}, retry_after_s=7) as (gateway_url, refused), \
            server(stack, tmp_path, LINEPACK_API_URL=gateway_url, **CAPS) as base:
        async with httpx.AsyncClient(timeout=30) as http:
            for _ in range(flood):
                answer = await http.post(f"{base}/mcp", json=initialize_request(), headers={
                    "Authorization": f"Bearer lpk_{secrets.token_hex(24)}",
                    "accept": "application/json, text/event-stream"})
                assert answer.status_code == 503, answer.text
                assert answer.headers["retry-after"] == "7"  # the gateway's own wait
                assert "could not be verified right now" in answer.json()["error"]["message"]
        assert len(refused) == flood  # each was checked once, and the gateway refused each
        after = sessions(base)
        assert (after["open"], after["tracked"], after["opening"], after["refused"]) == (0, 0, 0, 0), after
        assert after["refusedUnverified"] == flood

        async with session(base, tenant_b["apiKey"]) as b:  # a tenant the gateway knows is not held up
            assert (await b.whoami())["me"]["tenantId"] == tenant_b["tenantId"]
            assert sessions(base)["open"] == 1
