"""Hosted sign-in settings, the resource server's pure parts and what it says while the auth service is down (the flow
itself: test/auth/oauth-mcp.test.ts, with the TypeScript SDK's OAuth client against the real stack)."""

from __future__ import annotations

import base64
import json
import logging
from urllib.parse import parse_qs

import httpx
import pytest

from linepack_mcp.client import LinepackUnavailable
from linepack_mcp.oauth import OAuthResourceServer, looks_like_jwt, resource_metadata_url
from linepack_mcp.settings import ConfigError, canonical_resource, load_settings

HOSTED = {"LINEPACK_API_URL": "http://127.0.0.1:4000/graphql"}
SECRET = "s" * 24


def hosted(**env: str) -> dict[str, str]:
    return HOSTED | {"LINEPACK_MCP_PUBLIC_URL": "https://mcp.example.com/mcp",
                     "LINEPACK_MCP_OAUTH_EXCHANGE_SECRET": SECRET} | env


def test_sign_in_is_off_unless_the_public_url_is_set():
    s = load_settings(HOSTED, per_request_credentials=True)
    assert not s.oauth and s.public_url is None


def test_sign_in_settings_default_the_issuer_to_the_gateway_origin_and_keep_the_secret_out_of_repr():
    s = load_settings(hosted(), per_request_credentials=True)
    assert s.oauth and s.public_url == "https://mcp.example.com/mcp"
    assert s.oauth_issuer == "http://127.0.0.1:4000"
    assert SECRET not in repr(s)
    s = load_settings(hosted(LINEPACK_MCP_OAUTH_ISSUER="https://Linepack.example.com/"), per_request_credentials=True)
    assert s.oauth_issuer == "https://linepack.example.com"
    # Over stdio the server acts with its own key: none of this is read.
    assert not load_settings(hosted(LINEPACK_API_KEY="lpk_x")).oauth


@pytest.mark.parametrize(("env", "needle"), [
    (HOSTED | {"LINEPACK_MCP_PUBLIC_URL": "https://mcp.example.com/mcp"}, "LINEPACK_MCP_OAUTH_EXCHANGE_SECRET is not set"),
    (hosted(LINEPACK_MCP_OAUTH_EXCHANGE_SECRET="short"), "at least 16 characters"),
    (hosted(LINEPACK_MCP_OAUTH_EXCHANGE_SECRET="${MCP_SECRET}"), "literal placeholder"),
    (hosted(LINEPACK_MCP_PUBLIC_URL="http://mcp.example.com/mcp"), "must be https://"),
    (hosted(LINEPACK_MCP_PUBLIC_URL="https://mcp.example.com/"), "must name the MCP endpoint"),
    (hosted(LINEPACK_MCP_PUBLIC_URL="https://mcp.example.com/mcp#x"), "without a fragment"),
    (hosted(LINEPACK_MCP_OAUTH_ISSUER="https://linepack.example.com/auth"), "public origin"),
    (HOSTED | {"LINEPACK_MCP_OAUTH_EXCHANGE_SECRET": SECRET}, "need LINEPACK_MCP_PUBLIC_URL"),
])
def test_sign_in_settings_refuse_what_would_not_work_in_one_line(env, needle):
    with pytest.raises(ConfigError) as err:
        load_settings(env, per_request_credentials=True)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert SECRET not in str(err.value)


def test_resource_urls_are_compared_as_the_authorization_server_compares_them():
    # RFC 3986 §6.2.2 as JavaScript's URL normalises (the auth service's canonicalResource): case, default port, slash.
    assert canonical_resource("HTTPS://MCP.Example.com:443/mcp") == "https://mcp.example.com/mcp"
    assert canonical_resource("http://127.0.0.1:8765/mcp") == "http://127.0.0.1:8765/mcp"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    # RFC 9728 §3.1: the well-known path goes between host and the resource's path.
    assert resource_metadata_url("https://mcp.example.com/team/mcp") == \
        "https://mcp.example.com/.well-known/oauth-protected-resource/team/mcp"


def test_tokens_are_told_from_api_keys_by_shape():
    header = base64.urlsafe_b64encode(json.dumps({"alg": "ES256", "kid": "k"}).encode()).decode().rstrip("=")
    assert looks_like_jwt(f"{header}.e30.c2ln")
    assert not looks_like_jwt("lpk_Ab12Cd34_0123456789abcdef")
    assert not looks_like_jwt("a.b.c")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_an_auth_database_outage_is_told_as_temporary_with_its_retry_after_and_logged_once(caplog):
    # What the auth service answers a token exchange while its database is down (subgraphs/auth/src/oauth/routes.ts:
    # RFC 6749's temporarily_unavailable, 503, Retry-After: DATABASE_RETRY_AFTER_SECONDS of lib/http.ts).
    exchanges: list[dict[str, list[str]]] = []

    def auth(request: httpx.Request) -> httpx.Response:
        assert request.url == "http://127.0.0.1:4000/auth/oauth/token"
        exchanges.append(parse_qs(request.content.decode()))
        return httpx.Response(503, headers={"Retry-After": "5"}, json={
            "error": "temporarily_unavailable", "error_description": "the database is unavailable; retry shortly"})

    pool = httpx.AsyncClient(transport=httpx.MockTransport(auth))
    server = OAuthResourceServer(load_settings(hosted(), per_request_credentials=True), lambda: pool)
    try:
        with caplog.at_level(logging.INFO, logger="linepack_mcp"):
            with pytest.raises(LinepackUnavailable) as err:
                await server.gateway_token("user-token")
    finally:
        await pool.aclose()
    assert exchanges[0]["grant_type"] == ["urn:ietf:params:oauth:grant-type:token-exchange"]
    assert err.value.retry_after_s == 5 and err.value.status == 503
    assert err.value.message == ("Linepack's sign-in service is temporarily unavailable and could not exchange the "
                                 "sign-in for a gateway token (503 temporarily_unavailable): retry after 5 s.")
    assert "operator" not in err.value.message
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [("WARNING", "token exchange refused by the auth service as temporarily unavailable (503 "
                                 "temporarily_unavailable); the caller was told to retry after 5 s")]
    assert SECRET not in caplog.text and "user-token" not in caplog.text
