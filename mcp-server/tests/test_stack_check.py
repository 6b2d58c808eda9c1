"""`linepack-mcp check` against the real stack: OK, 401, 403, 429 (refused is in test_cli.py)."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest

from conftest import Stack, mcp_client, run_cli

pytestmark = pytest.mark.stack


def test_check_ok(stack: Stack):
    proc = run_cli("check", env=stack.env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"OK: {stack.gateway_url} answered")
    assert f"tenant {stack.tenant_id}" in proc.stdout and "assets:read" in proc.stdout
    assert stack.api_key not in proc.stdout + proc.stderr


def test_check_bad_key(stack: Stack):
    bad = "lpk_wrong_key_for_check_0000000000000"
    proc = run_cli("check", env=stack.env(LINEPACK_API_KEY=bad))
    assert proc.returncode == 1
    assert "401 UNAUTHENTICATED" in proc.stderr and "Remedy: set LINEPACK_API_KEY" in proc.stderr
    assert bad not in proc.stdout + proc.stderr


def test_check_foreign_tenant(stack: Stack):
    other = str(uuid.uuid4())
    proc = run_cli("check", env=stack.env(LINEPACK_TENANT_ID=other))
    assert proc.returncode == 1
    assert "403" in proc.stderr and "Remedy: check LINEPACK_TENANT_ID" in proc.stderr


@pytest.fixture(scope="module")
def rate_limited_key(stack: Stack) -> str:
    """A free-tier key whose per-minute allowance (60) is used up."""
    key = stack.create_key("assets:read", tier="free")["apiKey"]
    with httpx.Client(timeout=10) as http:
        for _ in range(80):
            r = http.post(stack.gateway_url, json={"query": "{ __typename }"}, headers={"Authorization": f"Bearer {key}"})
            if r.status_code == 429:
                assert r.headers.get("Retry-After"), r.headers
                return key
    pytest.fail("the free tier never answered 429 after 80 requests")


def test_check_rate_limited(stack: Stack, rate_limited_key: str):
    key = rate_limited_key
    proc = run_cli("check", env=stack.env(LINEPACK_API_KEY=key))
    assert proc.returncode == 1
    assert "429 RATE_LIMITED" in proc.stderr and "try again in" in proc.stderr
    assert key not in proc.stdout + proc.stderr


@pytest.mark.anyio
async def test_tool_rate_limited_says_when_to_retry(stack: Stack, rate_limited_key: str):
    # Retry-After (up to a minute) is longer than the wait limit set here, so the read is not
    # retried and the model is told when to try again.
    env = stack.env(LINEPACK_API_KEY=rate_limited_key, LINEPACK_MAX_RETRY_WAIT_S="0")
    async with mcp_client(env) as client:
        result = await client.call_tool("list_assets", {})
    assert result.is_error
    text = result.content[0].text
    assert "429" in text and "RATE_LIMITED" in text and re.search(r"Try again in \d+ s", text), text
