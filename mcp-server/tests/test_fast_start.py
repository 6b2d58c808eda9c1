"""A stdio start the client does not wait for (issue 28 item 5): the opening requests are answered from the SDK's
own answers recorded at an earlier start, while the SDK loads. With the SDK's client over stdio, in both protocol
eras: 2026-07-28 (server/discover) and the initialize handshake. No stack needed: nothing here reaches the gateway
but one tool call, which fails as it should."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import mcp_client

pytestmark = pytest.mark.anyio


def env(cache: Path, **extra: str) -> dict[str, str]:
    return {"LINEPACK_API_URL": "http://127.0.0.1:9/graphql", "LINEPACK_API_KEY": "lpk_fast_start_0123456789",
            "LINEPACK_LOG_LEVEL": "DEBUG", "XDG_CACHE_HOME": str(cache)} | extra


async def session(cache: Path, log: Path, mode: str = "auto", **extra: str) -> dict[str, Any]:
    """What a client sees of the server's opening, and that a tool call still reaches the SDK."""
    async with mcp_client(env(cache, **extra), errlog_path=log, mode=mode) as client:
        seen = {
            "instructions": client.instructions,
            "tools": [t.model_dump(mode="json") for t in (await client.list_tools()).tools],
            "prompts": [p.model_dump(mode="json") for p in (await client.list_prompts()).prompts],
            "templates": [t.model_dump(mode="json")
                          for t in (await client.list_resource_templates()).resource_templates],
        }
        called = await client.call_tool("get_asset", {"asset_id": "a-1"})
        assert called.is_error and "Cannot reach Linepack" in called.content[0].text
    return seen


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_second_start_answers_the_opening_from_the_first_ones_answers(tmp_path: Path, mode: str):
    cache = tmp_path / "cache"
    first = await session(cache, tmp_path / "first.log", mode)
    assert "from the handshake cache" not in (tmp_path / "first.log").read_text()
    assert len(list((cache / "linepack-mcp").glob("handshake-*.json"))) == 1

    second = await session(cache, tmp_path / "second.log", mode)
    answered = (tmp_path / "second.log").read_text()
    opening = "server/discover@2026-07-28" if mode == "auto" else "initialize@"
    assert f"answered {opening}" in answered and "answered tools/list@" in answered
    assert "answered prompts/list@" in answered and "answered resources/templates/list@" in answered
    # Exactly what the SDK itself answers (the first start's answers came from it, and so do these without the cache).
    assert second == first
    plain = await session(tmp_path / "unused", tmp_path / "plain.log", mode, LINEPACK_MCP_FAST_START="off")
    assert plain == first and not (tmp_path / "unused").exists()


async def test_a_changed_configuration_is_not_answered_from_another_ones_cache(tmp_path: Path):
    cache = tmp_path / "cache"
    await session(cache, tmp_path / "off.log")
    writes_on = await session(cache, tmp_path / "on.log", LINEPACK_MCP_WRITES="on")
    assert "from the handshake cache" not in (tmp_path / "on.log").read_text()
    assert "create_asset" in {t["name"] for t in writes_on["tools"]}
    assert len(list((cache / "linepack-mcp").glob("handshake-*.json"))) == 2
