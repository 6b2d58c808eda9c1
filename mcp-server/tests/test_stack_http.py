"""`linepack-mcp serve --transport streamable-http`: a shared server where every MCP client acts with its own
Linepack credential. Two SDK clients with keys of two tenants each see only their own data."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import Stack, http_server as start_http_server, linepack_mcp_exe

pytestmark = [pytest.mark.anyio, pytest.mark.stack]


@pytest.fixture(scope="module")
def http_server(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_http_server(stack, tmp_path_factory.mktemp("mcp-http") / "server.log") as (base, _):
        yield base


@pytest.fixture(scope="module")
def other_tenant(stack: Stack) -> dict[str, Any]:
    """A second tenant with its own key and one asset of its own, made with the project's CLI and API."""
    tenant = stack.create_tenant("MCP HTTP other")
    asset = stack.graphql("mutation($i: CreateAssetInput!) { createAsset(input: $i) { id name } }",
                          {"i": {"type": "PIPELINE", "name": "Other tenant's only line", "status": "ACTIVE"}},
                          key=tenant["apiKey"])["createAsset"]
    return tenant | {"asset": asset}


@asynccontextmanager
async def http_client(base: str, key: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            yield client


async def list_all_assets(client: Client) -> list[dict[str, Any]]:
    result = await client.call_tool("list_assets", {"first": 100})
    assert not result.is_error, result.content[0].text
    return result.structured_content["items"]


async def test_two_clients_of_two_tenants_each_see_only_their_own(
    http_server: str, stack: Stack, seeded: dict[str, Any], other_tenant: dict[str, Any]
):
    seen: dict[str, list[dict[str, Any]]] = {}
    summaries: dict[str, dict[str, Any]] = {}

    async def session(who: str, key: str) -> None:
        async with http_client(http_server, key) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "list_assets" in names and "create_asset" not in names  # writes off by default
            for _ in range(3):  # interleaved with the other session
                seen[who] = await list_all_assets(client)
                summaries[who] = (await client.call_tool("pipeline_summary", {})).structured_content
                await anyio.sleep(0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(session, "demo", stack.api_key)
        tg.start_soon(session, "other", other_tenant["apiKey"])

    other_ids = {a["id"] for a in seen["other"]}
    demo_ids = {a["id"] for a in seen["demo"]}
    assert other_ids == {other_tenant["asset"]["id"]}
    assert seeded["pipeline"]["id"] in demo_ids and other_tenant["asset"]["id"] not in demo_ids
    assert summaries["other"]["tenantId"] == other_tenant["tenantId"]
    assert summaries["demo"]["tenantId"] == stack.tenant_id


async def test_a_client_cannot_reach_another_tenants_asset_by_id(http_server: str, other_tenant: dict[str, Any],
                                                                 stack: Stack):
    async with http_client(http_server, stack.api_key) as client:
        result = await client.call_tool("get_asset", {"asset_id": other_tenant["asset"]["id"]})
    assert result.is_error and "NOT_FOUND" in result.content[0].text


async def test_http_refuses_missing_bad_and_cross_origin_requests(http_server: str, stack: Stack):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(timeout=30) as http:
        missing = await http.post(f"{http_server}/mcp", json=init, headers=headers)
        assert missing.status_code == 401 and "Bearer" in missing.headers.get("www-authenticate", "")
        bad = await http.post(f"{http_server}/mcp", json=init,
                              headers=headers | {"Authorization": "Bearer lpk_not_a_real_key_000000000000"})
        assert bad.status_code == 401
        evil = await http.post(f"{http_server}/mcp", json=init,
                               headers=headers | {"Authorization": f"Bearer {stack.api_key}", "Origin": "https://evil.example"})
        assert evil.status_code == 403
        rebinding = await http.post(f"{http_server}/mcp", json=init,
                                    headers=headers | {"Authorization": f"Bearer {stack.api_key}", "Host": "evil.example"})
        assert rebinding.status_code == 421
        health = await http.get(f"{http_server}/healthz")
        assert health.status_code == 200 and health.json()["writes"] == "off"


def test_listening_beyond_localhost_needs_allowed_hosts(stack: Stack):
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ} | {"LINEPACK_API_URL": stack.gateway_url}
    proc = subprocess.run([linepack_mcp_exe(), "serve", "--transport", "streamable-http", "--host", "0.0.0.0"],
                          env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "--allowed-host" in proc.stderr




async def test_a_user_access_token_is_never_passed_through_to_the_gateway(http_server: str, stack: Stack):
    """Without sign-in configured the server takes API keys only: a user's gateway token (from /auth/login) is
    refused here, not forwarded (MCP authorization: servers "MUST NOT accept or transit any other tokens")."""
    login = httpx.post(f"{stack.dev['authUrl']}/auth/login", json=stack.dev["user"], timeout=30)
    token = login.json()["access_token"]
    assert httpx.post(stack.gateway_url, json={"query": "{ me { id } }"},
                      headers={"Authorization": f"Bearer {token}"}, timeout=30).status_code == 200
    async with httpx.AsyncClient(timeout=30) as http:
        refused = await http.post(f"{http_server}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                  headers={"Accept": "application/json, text/event-stream",
                                           "Authorization": f"Bearer {token}"})
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert "never passed on" in refused.json()["error_description"]


async def test_health_and_readiness_follow_the_gateway(http_server: str, stack: Stack, tmp_path):
    async with httpx.AsyncClient(timeout=30) as http:
        ready = await http.get(f"{http_server}/readyz")
        assert ready.status_code == 200 and ready.json()["status"] in ("ready", "degraded")
        assert ready.json()["gateway"]["status"] == ready.json()["status"]
        health = (await http.get(f"{http_server}/healthz")).json()
        assert health["readiness"]["gateway"] == ready.json()["gateway"]["status"] and health["signIn"] == "off"
    # A server whose gateway is down: alive (restarting it would not help), not ready (503), and says why.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with start_http_server(stack, tmp_path / "down.log", LINEPACK_API_URL=f"http://127.0.0.1:{port}/graphql") as (base, _):
        async with httpx.AsyncClient(timeout=30) as http:
            down = await http.get(f"{base}/readyz")
            assert down.status_code == 503 and down.json()["status"] == "unavailable"
            assert "unreachable" in down.json()["gateway"]["reason"]
            alive = await http.get(f"{base}/healthz")
            assert alive.status_code == 200 and alive.json()["readiness"]["status"] == "unavailable"
