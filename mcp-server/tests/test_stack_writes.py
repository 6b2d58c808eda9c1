"""Writes with a real client (the SDK's, over stdio, writes on): creates happen once per idempotency key, and a client
that supports elicitation shows the user a destructive change and applies it only when they allow it (issue 28
item 4)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from mcp.types import ElicitRequestParams, ElicitResult

from conftest import Stack, mcp_client

pytestmark = [pytest.mark.anyio, pytest.mark.stack]


async def call(client, name: str, args: dict[str, Any]) -> tuple[dict[str, Any] | None, str, bool]:
    result = await client.call_tool(name, args)
    return result.structured_content, result.content[0].text, bool(result.is_error)


def count_named(stack: Stack, name: str) -> int:
    return stack.graphql("query($n: String) { assets(filter: {nameContains: $n}) { totalCount } }",
                         {"n": name})["assets"]["totalCount"]


async def test_create_asset_twice_creates_one_asset_across_restarts(stack: Stack):
    name = f"MCP idempotent valve {time.time_ns()}"
    key = f"k-{time.time_ns()}"
    async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on")) as client:
        first, _, failed = await call(client, "create_asset", {"type": "VALVE", "name": name})
        assert not failed and first["version"] == 1
        # The model repeats the call (a retry, or it forgot it already did): the same asset, nothing new.
        again, _, failed = await call(client, "create_asset", {"type": "VALVE", "name": name})
        assert not failed and again["id"] == first["id"]
        assert count_named(stack, name) == 1
        # An explicit key: repeated, it answers its own asset; reused for other values, it is refused naming it.
        keyed, _, _ = await call(client, "create_asset", {"type": "VALVE", "name": name, "idempotency_key": key})
        assert keyed["id"] != first["id"] and keyed["idempotencyKey"] == key
    # The server restarted (or another replica answers): the assets service kept the keys, not this process.
    async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on")) as client:
        repeat, _, _ = await call(client, "create_asset", {"type": "VALVE", "name": name, "idempotency_key": key})
        assert repeat["id"] == keyed["id"]
        unkeyed, _, _ = await call(client, "create_asset", {"type": "VALVE", "name": name})
        assert unkeyed["id"] == first["id"]
        _, text, failed = await call(client, "create_asset", {"type": "FITTING", "name": name, "idempotency_key": key})
        assert failed and "already created asset" in text and keyed["id"] in text and "Nothing was created" in text
    assert count_named(stack, name) == 2


async def test_keys_are_per_caller(stack: Stack):
    """Two API keys of one tenant naming their keys alike ("valve-1") each create their own asset."""
    other = stack.create_key("assets:read,assets:write")["apiKey"]
    name = f"MCP per-caller valve {time.time_ns()}"
    made = []
    for api_key in (stack.api_key, other):
        async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on", LINEPACK_API_KEY=api_key)) as client:
            asset, text, failed = await call(client, "create_asset", {"type": "VALVE", "name": name,
                                                                      "idempotency_key": "valve-1"})
            assert not failed, text
            made.append(asset["id"])
    assert made[0] != made[1] and count_named(stack, name) == 2


async def test_a_destructive_update_is_applied_only_when_the_user_allows_it(stack: Stack):
    asked: list[str] = []
    answer = {"action": "decline"}

    async def user(_context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        if answer["action"] == "accept":
            return ElicitResult(action="accept", content={"confirm": True})
        return ElicitResult(action=answer["action"])

    name = f"MCP confirmed valve {time.time_ns()}"
    async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on"), elicitation_callback=user) as client:
        asset, _, _ = await call(client, "create_asset", {"type": "VALVE", "name": name, "status": "ACTIVE"})
        change = {"asset_id": asset["id"], "version": asset["version"], "status": "ABANDONED", "maop_kpa": 5000}
        _, text, failed = await call(client, "update_asset", change)
        assert failed and "Nothing was changed" in text
        # The user saw which asset, each value from what to what, and that abandoning is final.
        assert name in asked[0] and "status: ACTIVE -> ABANDONED" in asked[0] and "maopKpa: (not set) -> 5000" in asked[0]
        assert "final" in asked[0]
        unchanged = stack.graphql("query($id: ID!) { asset(id: $id) { status version } }", {"id": asset["id"]})
        assert unchanged["asset"] == {"status": "ACTIVE", "version": asset["version"]}
        answer["action"] = "cancel"
        assert (await call(client, "update_asset", change))[2]
        answer["action"] = "accept"
        updated, _, failed = await call(client, "update_asset", change)
        assert not failed and updated["status"] == "ABANDONED" and len(asked) == 3


async def test_a_client_that_cannot_ask_is_not_asked(stack: Stack):
    async with mcp_client(stack.env(LINEPACK_MCP_WRITES="on")) as client:  # no elicitation capability
        asset, _, _ = await call(client, "create_asset", {"type": "VALVE", "name": f"MCP plain {time.time_ns()}"})
        updated, text, failed = await call(client, "update_asset", {"asset_id": asset["id"], "version": asset["version"],
                                                                    "status": "ACTIVE"})
        assert not failed, text
        assert updated["status"] == "ACTIVE"
