"""Who is calling, over streamable HTTP: the bearer of each request, and the check that answers 401 before a session."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from .client import Credential, LinepackClient, LinepackError, LinepackRateLimited, LinepackUnauthenticated
from .operations import operations
from .sessions import Unverified, _OncePerPeriod, credential_digest
from .settings import ConfigError, Settings, validate_tenant_id

log = logging.getLogger("linepack_mcp.server")

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
