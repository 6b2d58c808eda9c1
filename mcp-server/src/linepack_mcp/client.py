"""The HTTP side: one GraphQL endpoint and the key-introspection route of a Linepack gateway.

Every failure becomes a :class:`LinepackError` whose message says what happened and what
to do about it. The server turns it into an MCP tool error, so the model reads that message.
(This module does not import the MCP SDK, so `check` and `config` start fast.)
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import json
import logging
import random
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from . import __version__
from .settings import Settings

log = logging.getLogger("linepack_mcp.client")

_RETRYABLE_STATUS = {429, 502, 503, 504}


class LinepackError(Exception):
    """A failed call to Linepack, with a message the model (or a person) can act on."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        request_id: str | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        if request_id:
            message = f"{message} (request id {request_id})"
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.errors = errors or []


class LinepackUnauthenticated(LinepackError):
    pass


class LinepackForbidden(LinepackError):
    def __init__(self, message: str, *, missing_scopes: list[str] | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.missing_scopes = missing_scopes or []


class LinepackRateLimited(LinepackError):
    def __init__(self, message: str, *, retry_after_s: int | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after_s = retry_after_s


class LinepackUnavailable(LinepackError):
    """Linepack answered that it cannot serve right now (503, e.g. its database is down) and when to try again."""

    def __init__(self, message: str, *, retry_after_s: int | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after_s = retry_after_s


class LinepackUnreachable(LinepackError):
    def __init__(self, message: str, *, reason: str = "", **kw: Any) -> None:
        super().__init__(message, **kw)
        self.reason = reason


class LinepackGraphQLError(LinepackError):
    """GraphQL `errors` with no usable data; each error keeps its `extensions.code`."""


@dataclass
class GraphQLResult:
    data: dict[str, Any] | None
    errors: list[dict[str, Any]] = field(default_factory=list)
    request_id: str | None = None
    status: int = 200


def _connect_failure(exc: BaseException) -> str:
    """'connection refused', 'host not found'... from the OS error under an httpx.ConnectError."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, socket.gaierror):
            return "host not found"
        if isinstance(cur, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cur, OSError) and cur.errno == errno.ECONNREFUSED:
            return "connection refused"
        for inner in getattr(cur, "exceptions", ()):  # ExceptionGroup from happy-eyeballs connects
            found = _connect_failure(inner)
            if found != "could not connect":
                return found
        cur = cur.__cause__ or cur.__context__
    text = str(exc).lower()
    if "refused" in text or "all connection attempts failed" in text:
        return "connection refused"
    if "name or service not known" in text or "nodename nor servname" in text:
        return "host not found"
    return "could not connect"


def parse_retry_after(value: str | None, *, now: float | None = None) -> int | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date), rounded up."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        return max(0, int(float(value) + 0.999))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    delta = when.timestamp() - (time.time() if now is None else now)
    return max(0, int(delta + 0.999))


def backoff_delay(attempt: int, retry_after_s: int | None) -> float:
    """Delay before retry number `attempt` (0-based): Retry-After when given, else 0.5·2^n s ± jitter."""
    if retry_after_s is not None:
        return float(retry_after_s)
    base = 0.5 * (2**attempt)
    return base + random.uniform(0, base / 2)


def format_graphql_error(err: dict[str, Any]) -> str:
    ext = err.get("extensions") or {}
    code = ext.get("code")
    text = str(err.get("message", "unknown error"))
    if code:
        text = f"[{code}] {text}"
    path = err.get("path")
    if path:
        text += f" (at {'.'.join(str(p) for p in path)})"
    return text


def clean_errors(errors: Any) -> list[dict[str, Any]]:
    """GraphQL errors as sent, minus anything that looks like a stack trace."""
    out: list[dict[str, Any]] = []
    if not isinstance(errors, list):
        return out
    for err in errors:
        if not isinstance(err, dict):
            out.append({"message": str(err)})
            continue
        e = {k: v for k, v in err.items() if k in ("message", "locations", "path", "extensions")}
        ext = e.get("extensions")
        if isinstance(ext, dict):
            e["extensions"] = {k: v for k, v in ext.items() if k not in ("stacktrace", "exception")}
        out.append(e)
    return out


@dataclass(frozen=True)
class Credential:
    """Whose request it is: the bearer credential and the tenant to act in.

    An API key is sent to the gateway as it is. A user's OAuth token (hosted sign-in) is bound to this MCP server and
    never leaves it: `gateway_token` gives the token the gateway accepts for that user instead (RFC 8693 exchange).
    """

    token: str = field(repr=False)
    tenant_id: str | None = None
    gateway_token: Callable[[], Awaitable[str]] | None = field(default=None, repr=False, compare=False)

    @property
    def signed_in(self) -> bool:
        """A user signed in with Linepack (OAuth), rather than an API key."""
        return self.gateway_token is not None

    async def bearer(self) -> str:
        """What goes in the gateway request's Authorization header."""
        return await self.gateway_token() if self.gateway_token is not None else self.token


def new_http_pool(settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """The HTTP connection pool to the gateway; credentials are added per request, never kept here."""
    return httpx.AsyncClient(
        headers={
            "Accept": "application/graphql-response+json, application/json",
            "User-Agent": f"linepack-mcp/{__version__}",
        },
        timeout=httpx.Timeout(settings.timeout_s, connect=min(10.0, settings.timeout_s)),
        transport=transport,
        follow_redirects=False,
    )


class LinepackClient:
    """Async client for one gateway and one credential.

    Over stdio the credential is the configured key; over HTTP each MCP request carries its own, and
    the clients made for them share one connection pool (`http`), which they do not close.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        credential: Credential | None = None,
        http: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        if credential is None:
            if not settings.api_key:
                raise ValueError("no credential: LINEPACK_API_KEY is not set and none was given")
            credential = Credential(settings.api_key, settings.tenant_id)
        self.credential = credential
        # The Authorization header is added per request (Credential.bearer): a signed-in user's is exchanged first.
        self._headers: dict[str, str] = {}
        if credential.tenant_id:
            self._headers["X-Tenant-ID"] = credential.tenant_id
        self._owns_http = http is None
        self._http = http if http is not None else new_http_pool(settings, transport=transport)

    async def __aenter__(self) -> LinepackClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    # -- transport ---------------------------------------------------------------------------

    async def _send(self, method: str, url: str, *, read_only: bool, **kw: Any) -> tuple[httpx.Response, int]:
        """Send with retries: reads retry 429/502/503/504 honouring Retry-After; writes never retry."""
        attempt = 0
        headers = {**self._headers, "Authorization": f"Bearer {await self.credential.bearer()}"}
        while True:
            try:
                response = await self._http.request(method, url, headers=headers, **kw)
            except httpx.ConnectError as exc:
                raise self._unreachable(exc, _connect_failure(exc)) from None
            except httpx.TimeoutException as exc:
                raise self._unreachable(exc, f"no answer within {self.settings.timeout_s:g} s") from None
            except httpx.HTTPError as exc:
                raise self._unreachable(exc, type(exc).__name__) from None
            if response.status_code not in _RETRYABLE_STATUS or not read_only:
                return response, attempt
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if attempt >= self.settings.max_retries:
                return response, attempt
            delay = backoff_delay(attempt, retry_after)
            if delay > self.settings.max_retry_wait_s:
                log.info("HTTP %s: Retry-After %ss exceeds the %gs wait limit; not retrying",
                         response.status_code, retry_after, self.settings.max_retry_wait_s)
                return response, attempt
            attempt += 1
            log.info("HTTP %s from Linepack; retry %d/%d in %.1fs",
                     response.status_code, attempt, self.settings.max_retries, delay)
            await asyncio.sleep(delay)

    def _unreachable(self, exc: Exception, what: str) -> LinepackUnreachable:
        log.info("Linepack unreachable at %s: %r", self.settings.api_url, exc)
        return LinepackUnreachable(
            f"Cannot reach Linepack at {self.settings.api_url}: {what}. Check LINEPACK_API_URL "
            f"(it must be the gateway's full GraphQL endpoint) and that the gateway is running; "
            f"'linepack-mcp check' tests the connection.",
            reason=what,
        )

    # -- error mapping -----------------------------------------------------------------------

    def _raise_for_status(self, response: httpx.Response, body: Any, *, read_only: bool, retries: int = 0) -> None:
        status = response.status_code
        if status < 400:
            return
        request_id = response.headers.get("X-Request-ID")
        errors = clean_errors(body.get("errors")) if isinstance(body, dict) else []
        first = errors[0] if errors else {}
        ext = first.get("extensions") or {}
        server_msg = first.get("message") or (body.get("detail") or body.get("title") if isinstance(body, dict) else None)
        server_msg = server_msg or response.reason_phrase
        code = ext.get("code") or (body.get("code") if isinstance(body, dict) else None)

        if status == 401:
            remedy = ("Your Linepack sign-in has ended (signed out, or your membership changed): reconnect this MCP "
                      "server to sign in again." if self.credential.signed_in else
                      "Check LINEPACK_API_KEY: it may be mistyped, revoked or expired; 'linepack-mcp check' tests it.")
            raise LinepackUnauthenticated(
                f"Linepack rejected the credential (401 {code or 'UNAUTHENTICATED'}: {server_msg}). {remedy}",
                status=status, code=code or "UNAUTHENTICATED", request_id=request_id, errors=errors,
            )
        if status == 403:
            missing = [str(s) for s in (ext.get("missingScopes") or [])]
            plural = "s" if len(missing) > 1 else ""
            if missing and self.credential.signed_in:
                text = (
                    f"Linepack refused this operation (403 {code or 'FORBIDDEN'}): your sign-in does not grant the "
                    f"scope{plural} {', '.join(missing)}: you did not allow it, or your role in this tenant does not "
                    f"hold it. Leave out the fields that need it, or reconnect and allow {' and '.join(missing)} "
                    f"(a tenant admin can change your role). Server said: {server_msg}"
                )
            elif missing:
                text = (
                    f"Linepack refused this operation (403 {code or 'FORBIDDEN'}): the API key lacks the "
                    f"scope{plural} {', '.join(missing)}. Use a key that carries "
                    f"{' and '.join(missing)} (a tenant admin can create one), or leave out the fields "
                    f"that need it. Server said: {server_msg}"
                )
            else:
                tenant = (
                    f" The tenant asked for is {self.credential.tenant_id!r} (LINEPACK_TENANT_ID or the "
                    f"X-Tenant-ID header): check that the credential belongs to that tenant."
                    if self.credential.tenant_id else ""
                )
                text = f"Linepack refused this operation (403 {code or 'FORBIDDEN'}: {server_msg}).{tenant}"
            raise LinepackForbidden(text, missing_scopes=missing, status=status, code=code or "FORBIDDEN",
                                    request_id=request_id, errors=errors)
        if status == 429:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            wait = f"Try again in {retry_after} s." if retry_after is not None else "Try again shortly."
            retried = f" (retried {retries} time{'s' if retries != 1 else ''})" if retries else ""
            kind = "" if read_only else " Writes are not retried automatically."
            raise LinepackRateLimited(
                f"Linepack rate limit reached for this API key (429 {code or 'RATE_LIMITED'}){retried}. "
                f"{wait}{kind}",
                retry_after_s=retry_after, status=status, code=code or "RATE_LIMITED",
                request_id=request_id, errors=errors,
            )
        if errors:
            raise LinepackGraphQLError(
                f"Linepack answered HTTP {status}: " + "; ".join(format_graphql_error(e) for e in errors),
                status=status, code=code, request_id=request_id, errors=errors,
            )
        if status >= 500:
            raise LinepackError(
                f"Linepack gateway error (HTTP {status} {response.reason_phrase}). Try again; if it "
                f"persists the gateway or a subgraph is down.",
                status=status, code=code, request_id=request_id,
            )
        if status == 404:
            raise LinepackError(
                f"Linepack answered 404 for {response.request.url}: check that LINEPACK_API_URL is the "
                f"full GraphQL endpoint, e.g. http://localhost:4000/graphql.",
                status=status, code=code, request_id=request_id,
            )
        raise LinepackError(f"Linepack answered HTTP {status}: {server_msg}",
                            status=status, code=code, request_id=request_id)

    @staticmethod
    def _json(response: httpx.Response) -> Any:
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None

    # -- API ---------------------------------------------------------------------------------

    async def graphql(
        self,
        query: str,
        variables: dict[str, Any] | None = None,
        *,
        read_only: bool = True,
        operation_name: str | None = None,
    ) -> GraphQLResult:
        """POST one operation. HTTP-level failures raise; GraphQL `errors` are returned as they came."""
        payload: dict[str, Any] = {"query": query}
        if variables:
            payload["variables"] = variables
        if operation_name:
            payload["operationName"] = operation_name
        response, retries = await self._send("POST", self.settings.api_url, json=payload, read_only=read_only)
        body = self._json(response)
        request_id = response.headers.get("X-Request-ID")
        log.debug("POST %s -> %s (request id %s)", self.settings.api_url, response.status_code, request_id)
        self._raise_for_status(response, body, read_only=read_only, retries=retries)
        if not isinstance(body, dict) or ("data" not in body and "errors" not in body):
            raise LinepackError(
                f"{self.settings.api_url} did not answer with a GraphQL response (HTTP "
                f"{response.status_code}, {response.headers.get('content-type', 'no content type')}). "
                f"Check that LINEPACK_API_URL is the gateway's GraphQL endpoint.",
                status=response.status_code, request_id=request_id,
            )
        return GraphQLResult(
            data=body.get("data"),
            errors=clean_errors(body.get("errors")),
            request_id=request_id,
            status=response.status_code,
        )

    async def query_data(
        self, query: str, variables: dict[str, Any] | None = None, *, read_only: bool = True
    ) -> dict[str, Any]:
        """Run an operation and return `data`; any GraphQL error raises with its code kept."""
        result = await self.graphql(query, variables, read_only=read_only)
        if result.errors:
            codes = [(e.get("extensions") or {}).get("code") for e in result.errors]
            raise LinepackGraphQLError(
                "Linepack returned GraphQL errors: "
                + "; ".join(format_graphql_error(e) for e in result.errors),
                status=result.status, code=next((c for c in codes if c), None),
                request_id=result.request_id, errors=result.errors,
            )
        return result.data or {}

    async def scope_requirements(self) -> dict[str, Any] | None:
        """`GET <origin>/schema/scopes`: the scope vocabulary and what each field demands; None if not served."""
        url = self.settings.origin + "/schema/scopes"
        response, retries = await self._send("GET", url, read_only=True)
        if response.status_code == 404:
            return None
        body = self._json(response)
        self._raise_for_status(response, body, read_only=True, retries=retries)
        return body if isinstance(body, dict) else None

    async def introspect_key(self) -> dict[str, Any]:
        """`GET <origin>/auth/introspect`: what the gateway knows about this key."""
        url = self.settings.introspect_url
        response, retries = await self._send("GET", url, read_only=True)
        body = self._json(response)
        self._raise_for_status(response, body, read_only=True, retries=retries)
        if not isinstance(body, dict):
            raise LinepackError(f"{url} did not answer with JSON (HTTP {response.status_code})",
                                status=response.status_code,
                                request_id=response.headers.get("X-Request-ID"))
        return body
