"""Who is calling, over streamable HTTP: the bearer of each request, and the check that answers 401 before a session."""

from __future__ import annotations

import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from .client import (Credential, LinepackClient, LinepackError, LinepackRateLimited, LinepackUnauthenticated,
                     LinepackUnavailable)
from .oauth import OAuthResourceServer, looks_like_jwt
from .operations import operations
from .sessions import Unverified, _bearer, _OncePerPeriod, credential_digest
from .settings import ConfigError, Settings, validate_tenant_id

log = logging.getLogger("linepack_mcp.server")

# The credential of the MCP request being handled, when serving over HTTP (set by RequestCredentials).
_request_credential: ContextVar[Credential | None] = ContextVar("linepack_request_credential", default=None)
# The credential check's answer for the HTTP request being handled: (digest of the bearer, answer). Every HTTP
# request runs in a task of its own, with a context of its own, so an answer never reaches another request.
_verified_in_request: ContextVar[tuple[str, AccessToken | Unverified | None] | None] = ContextVar(
    "linepack_verified", default=None)


def credential_from_headers(headers: Any, oauth: OAuthResourceServer | None = None) -> Credential | None:
    """`Authorization: Bearer <API key or user token>` and an optional `X-Tenant-ID` of an HTTP request. A user's token
    (hosted sign-in) is never sent to the gateway: its credential carries the exchange that replaces it."""
    if headers is None:
        return None
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    try:
        tenant = validate_tenant_id((headers.get("x-tenant-id") or "").strip() or None)
    except ConfigError:
        tenant = None  # answered 400 at the HTTP layer (SessionGate) before any message gets here; never guess one
    if oauth is not None and looks_like_jwt(token):
        return Credential(token, tenant, gateway_token=functools.partial(oauth.gateway_token, token))
    return Credential(token, tenant)


class RequestCredentials:
    """MCP server middleware (HTTP only): each request runs with the credential its own HTTP request carried.

    The credential is read per MCP message, not per session, so two clients can never act with each
    other's key, and a client that changes its key is served with the new one at once.
    """

    def __init__(self, oauth: OAuthResourceServer | None = None) -> None:
        self.oauth = oauth

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        credential = credential_from_headers(getattr(ctx.request, "headers", None), self.oauth)
        token = _request_credential.set(credential)
        try:
            return await call_next(ctx)
        finally:
            _request_credential.reset(token)


class GatewayTokenVerifier:
    """Answers 401 at the MCP endpoint for a credential that is not good here, before any session starts.

    An API key is judged by the gateway: every tool call sends it again, so a key revoked after this check is
    refused there. A positive answer is remembered for `ttl_s` (one `{ me }` request of the caller's budget per
    period). A token (anything shaped like a JWT) is never shown to the gateway: with hosted sign-in on (`oauth`) it
    must be a user token Linepack issued for this server, and it is exchanged for the gateway's token (a sign-in that
    has ended fails the exchange: 401); without it, no token is accepted. An inconclusive check (gateway or auth keys
    unreachable, 5xx, 429) is no 401: it opens no session (the session limits answer 503, see `check`), and in a
    session already open the tools then say what is wrong.
    """

    def __init__(self, settings: Settings, pool: Callable[[], Any], ttl_s: float = 30.0, size: int = 1024,
                 oauth: OAuthResourceServer | None = None) -> None:
        self.settings = settings
        self.oauth = oauth
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
        if looks_like_jwt(token):
            return await self._verify_user_token(token)
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

    async def _verify_user_token(self, token: str) -> AccessToken | Unverified | None:
        if self.oauth is None:
            return None  # no sign-in configured here: a token would have to be passed through, which is not done
        access = await self.oauth.verify(token)
        if not isinstance(access, AccessToken):
            return access
        try:
            await self.oauth.gateway_token(token)  # cached: one exchange per token
        except LinepackUnauthenticated:
            return None
        except LinepackError as exc:
            # The auth service's Retry-After, when it is down for a while, is the one the refused client is given.
            return Unverified(exc.message, exc.retry_after_s if isinstance(exc, LinepackUnavailable) else None)
        return access


class BearerChallenge:
    """ASGI middleware in front of the MCP endpoint: a request without a credential that is good here is answered 401
    (and a signed-in user's token granting no scope 403) before a session is counted or the SDK sees it.

    With hosted sign-in the challenge names the protected-resource metadata and the scopes to ask for, which is how a
    client that knows only this server's URL finds Linepack's authorization server (MCP authorization, RFC 9728 §5.1).
    The answer to the check is remembered for the rest of the request (`_verified_in_request`), so the session limits
    and the SDK's own authentication behind this do not check again.
    """

    def __init__(self, app: Any, verifier: GatewayTokenVerifier, oauth: OAuthResourceServer | None,
                 path: str = "/mcp") -> None:
        self.app = app
        self.verifier = verifier
        self.oauth = oauth
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path or scope["method"] == "OPTIONS":
            await self.app(scope, receive, send)
            return
        token = _bearer(Headers(scope=scope))
        if token is None:
            await self._refuse(401, None, "Sign in with Linepack, or send a Linepack API key as "
                               "'Authorization: Bearer <key>'.", scope, receive, send)
            return
        access = await self.verifier.check(token)
        if access is None:
            if looks_like_jwt(token):
                why = ("The token was not issued by Linepack for this MCP server, or it has expired: sign in again."
                       if self.oauth else
                       "This server accepts Linepack API keys only; tokens are never passed on to the gateway.")
            else:
                why = "Linepack rejected this credential (mistyped, revoked or expired)."
            await self._refuse(401, "invalid_token", why, scope, receive, send)
            return
        if isinstance(access, AccessToken) and looks_like_jwt(token) and not access.scopes:
            await self._refuse(403, "insufficient_scope", "The sign-in granted no scope this server can use.",
                               scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _refuse(self, status: int, error: str | None, description: str, scope: Scope, receive: Receive,
                      send: Send) -> None:
        # RFC 6750 §3.1: a request that carried no credential gets no error code (nor a description of one).
        if self.oauth is not None:
            challenge = await self.oauth.challenge(error, description if error else None)
        elif error:
            challenge = f'Bearer error="{error}", error_description="{description}"'
        else:
            challenge = 'Bearer realm="linepack-mcp"'
        body = {"error": error or "invalid_request", "error_description": description}
        await JSONResponse(body, status_code=status, headers={"WWW-Authenticate": challenge})(scope, receive, send)
