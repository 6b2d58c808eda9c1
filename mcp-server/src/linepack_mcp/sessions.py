"""Hosted MCP sessions: caps per credential and per tenant, an idle timeout, and a last-resort cap on the server.

Over streamable HTTP every MCP client of the handshake protocol (`initialize`; protocol versions up to 2025-11-25)
holds a session on the server: a transport with its streams and a task, some 40 kB each. The SDK caps only their
total (10,000 by default) and counts an open listening GET stream as use, so sessions opened and never closed stay
for good: 9,697 of them opened with one tenant's key grew the server to 458 MB, and then every new session, of
every tenant, was refused with 503 "Too many open sessions". Here sessions are counted per credential (the SHA-256
of the bearer, never the bearer itself) and per tenant (as the gateway named it when it checked the credential), so
a flood costs only the tenant that sends it:

- At a credential's or a tenant's cap, that credential's or tenant's session unused the longest is closed to admit
  the new one (its client gets 404 on its next request, which the spec tells it to answer with a new session).
  Other tenants' sessions are never touched. A session serving a request is not idle and is never closed; when
  none is idle the new session is refused with 429 and Retry-After, naming the limit.
- A session that has not had a request for the idle timeout is closed, listening stream or not.
- The server-wide cap stays as the last resort (503). Settings refuse one that is not larger than a tenant's cap,
  so no single tenant can reach it alone.
- A credential the gateway gave no definitive answer on (unreachable, 5xx, 429) opens no session: it is answered 503
  with Retry-After. Counted as a tenant of its own, every made-up bearer would have been one more tenant with a
  full budget (the gateway answers 429 to every unknown key from an address that failed too often, so a flood of
  random bearers is exactly what turns inconclusive), and some sixty of them filled the server for everyone.

Clients of the 2026-07-28 protocol hold no session (every request stands alone) and pass through untouched.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS  # where the SDK reads it to route requests
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .settings import ConfigError, Settings, validate_tenant_id

log = logging.getLogger("linepack_mcp.sessions")

SESSION_HEADER = "mcp-session-id"
PROTOCOL_HEADER = "mcp-protocol-version"
PER_CREDENTIAL = "LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL"
PER_TENANT = "LINEPACK_MCP_MAX_SESSIONS_PER_TENANT"
TOTAL = "LINEPACK_MCP_MAX_SESSIONS"
# When every session of a credential or tenant is serving a request: those are tool calls, over in seconds.
BUSY_RETRY_AFTER_S = 5
# When the credential check was inconclusive and the gateway named no wait of its own: a restart or a blip.
UNVERIFIED_RETRY_AFTER_S = 5


def credential_digest(token: str) -> str:
    """What the server keeps of a bearer: enough to tell credentials apart, useless to replay."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Unverified:
    """The gateway gave no definitive answer on a credential (unreachable, 5xx, 429, an answer naming no tenant):
    neither valid nor invalid. Such a credential may not open a session, since nothing says whose budget it would
    be charged to; the requests of a session already open go on, and the gateway decides each of them."""

    #: For the log only (it may name the gateway's address): what the check ran into.
    reason: str
    #: The gateway's Retry-After, when it gave one.
    retry_after_s: int | None = None


@dataclass(frozen=True)
class SessionLimits:
    per_credential: int
    per_tenant: int
    total: int
    idle_timeout_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> SessionLimits:
        return cls(settings.max_sessions_per_credential, settings.max_sessions_per_tenant, settings.max_sessions,
                   settings.session_idle_timeout_s)


@dataclass
class _Session:
    id: str
    credential: str
    tenant: str
    last_used: float
    #: POST requests being served. A listening GET stream is not counted: it is held open whether or not the
    #: client does anything, so counting it would keep an abandoned session alive for ever.
    in_flight: int = 0


@dataclass(frozen=True)
class Refusal:
    status: int
    limit: str
    message: str
    retry_after_s: int


@dataclass(frozen=True)
class Admission:
    """The decision on a request that would open a session. Unless refused it holds a reserved slot (so concurrent
    openings cannot overshoot a cap) until `SessionTable.opened` or `SessionTable.cancel`."""

    credential: str
    tenant: str
    closed: list[_Session] = field(default_factory=list)
    refusal: Refusal | None = None


class SessionTable:
    """Who holds which session and since when it has been unused, and who may open one.

    No I/O and no awaits: every decision is made in one step of the event loop, so none interleaves with another.
    """

    def __init__(self, limits: SessionLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        # Sessions plus reserved slots, per credential and per tenant; `_reserved` is the reserved slots in all.
        self._per_credential: Counter[str] = Counter()
        self._per_tenant: Counter[str] = Counter()
        self._reserved = 0
        self.closed_to_admit = 0
        self.closed_idle = 0
        self.refused = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def now(self) -> float:
        return self._clock()

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def admit(self, credential: str, tenant: str) -> Admission:
        """Admit a new session for `credential` of `tenant`, closing that credential's or tenant's session unused
        the longest when it is at its cap, or refuse it. Sessions of other tenants are never chosen."""
        closing: list[_Session] = []
        for limit, cap, key, counts, of in (
            (PER_CREDENTIAL, self.limits.per_credential, credential, self._per_credential, "credential"),
            (PER_TENANT, self.limits.per_tenant, tenant, self._per_tenant, "tenant"),
        ):
            held = counts[key] - sum(1 for s in closing if getattr(s, of) == key)
            if held < cap:
                continue
            victim = self._idlest(lambda s, of=of, key=key: getattr(s, of) == key and s not in closing)
            if victim is None:
                return self._refuse(credential, tenant, Refusal(
                    429, limit, f"Too many open MCP sessions for this {of}: {cap} are open ({limit}) and each is "
                    f"serving a request, so none was closed to make room. Close a session you no longer use (HTTP "
                    f"DELETE) or retry after {BUSY_RETRY_AFTER_S} s.", BUSY_RETRY_AFTER_S))
            closing.append(victim)
        if len(self._sessions) + self._reserved - len(closing) >= self.limits.total:
            wait = self._soonest_expiry_s()
            return self._refuse(credential, tenant, Refusal(
                503, TOTAL, f"The server holds its maximum of {self.limits.total} open MCP sessions ({TOTAL}). "
                f"Retry after {wait} s.", wait))
        for victim in closing:
            self._drop(victim.id)
        self.closed_to_admit += len(closing)
        self._per_credential[credential] += 1
        self._per_tenant[tenant] += 1
        self._reserved += 1
        return Admission(credential, tenant, closed=closing)

    def opened(self, admission: Admission, session_id: str) -> None:
        """The reservation became a session; the request that opened it is still being answered."""
        self._reserved -= 1
        self._sessions[session_id] = _Session(session_id, admission.credential, admission.tenant, self._clock(),
                                              in_flight=1)

    def cancel(self, admission: Admission) -> None:
        """No session came of the reservation (the SDK refused or failed the request): free its slot."""
        self._reserved -= 1
        self._uncount(admission.credential, admission.tenant)

    def begin(self, session_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.in_flight += 1

    def end(self, session_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is not None:
            session.in_flight = max(0, session.in_flight - 1)
            session.last_used = self._clock()

    def forget(self, session_id: str) -> None:
        if session_id in self._sessions:
            self._drop(session_id)

    def retain(self, open_ids: set[str]) -> None:
        """Forget the sessions the SDK has ended on its own (a client's DELETE, its idle timeout, a crash)."""
        for session_id in [sid for sid in self._sessions if sid not in open_ids]:
            self._drop(session_id)

    def expired(self) -> list[_Session]:
        """Take out the sessions unused for the idle timeout; the caller closes them."""
        deadline = self._clock() - self.limits.idle_timeout_s
        stale = [s for s in self._sessions.values() if s.in_flight == 0 and s.last_used <= deadline]
        for session in stale:
            self._drop(session.id)
        self.closed_idle += len(stale)
        return stale

    def snapshot(self) -> dict[str, Any]:
        """Totals only: /healthz answers anyone, so it names no tenant and no credential."""
        return {
            "tracked": len(self._sessions),
            "serving": sum(1 for s in self._sessions.values() if s.in_flight),
            "opening": self._reserved,
            "limits": {"perCredential": self.limits.per_credential, "perTenant": self.limits.per_tenant,
                       "total": self.limits.total, "idleTimeoutS": self.limits.idle_timeout_s},
            "closedToAdmit": self.closed_to_admit,
            "closedIdle": self.closed_idle,
            "refused": self.refused,
        }

    def _idlest(self, eligible: Callable[[_Session], bool]) -> _Session | None:
        idle = [s for s in self._sessions.values() if s.in_flight == 0 and eligible(s)]
        return min(idle, key=lambda s: s.last_used, default=None)

    def _soonest_expiry_s(self) -> int:
        idlest = self._idlest(lambda _: True)
        if idlest is None:
            return BUSY_RETRY_AFTER_S
        return max(1, math.ceil(idlest.last_used + self.limits.idle_timeout_s - self._clock()))

    def _refuse(self, credential: str, tenant: str, refusal: Refusal) -> Admission:
        self.refused += 1
        return Admission(credential, tenant, refusal=refusal)

    def _drop(self, session_id: str) -> None:
        session = self._sessions.pop(session_id)
        self._uncount(session.credential, session.tenant)

    def _uncount(self, credential: str, tenant: str) -> None:
        for counts, key in ((self._per_credential, credential), (self._per_tenant, tenant)):
            counts[key] -= 1
            if counts[key] <= 0:
                del counts[key]  # a tenant that has gone leaves nothing behind


class SdkSessions:
    """The SDK's session manager, for the two things it offers no public API for: which sessions are open, and
    closing one from the server's side (it closes one only on the client's DELETE, or after its own idle timeout,
    which an open listening stream defers for ever). Checked when the server starts, so an SDK that changes them
    stops the server with a clear message instead of leaving sessions unbounded."""

    def __init__(self, manager: Any) -> None:
        if not isinstance(getattr(manager, "_server_instances", None), dict) or not callable(
                getattr(manager, "_discard_session", None)):
            raise RuntimeError(
                "this version of the MCP SDK does not keep streamable HTTP sessions where linepack-mcp closes idle "
                "ones (StreamableHTTPSessionManager._server_instances / _discard_session); install the mcp version "
                "pinned in mcp-server/uv.lock")
        self._manager = manager

    def _open(self) -> dict[str, Any]:
        return self._manager._server_instances  # type: ignore[no-any-return]

    def count(self) -> int:
        return len(self._open())

    def open_ids(self) -> set[str]:
        return set(self._open())

    def is_open(self, session_id: str) -> bool:
        return session_id in self._open()

    async def close(self, session_id: str) -> None:
        """End the session: its id answers 404 at once, its streams and task are released."""
        transport = self._open().get(session_id)
        if transport is not None:
            await self._manager._discard_session(session_id, transport)


def _bearer(headers: Headers) -> str | None:
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


class _OncePerPeriod:
    """Lets a log line through once per period per key and counts the rest: a flood of thousands of sessions should
    show in the log as a few lines saying how many, not as thousands of lines."""

    def __init__(self, period_s: float = 60.0, keys: int = 1024) -> None:
        self.period_s = period_s
        self.keys = keys
        self._seen: dict[str, tuple[float, int]] = {}

    def __call__(self, key: str, now: float) -> int | None:
        """None to stay quiet; otherwise how many lines for `key` were held back since the last one."""
        last = self._seen.get(key)
        if last is not None and now - last[0] < self.period_s:
            self._seen[key] = (last[0], last[1] + 1)
            return None
        if len(self._seen) >= self.keys:  # bounded: forget keys quiet for a whole period, or all if none is
            self._seen = {k: v for k, v in self._seen.items() if now - v[0] < self.period_s}
            if len(self._seen) >= self.keys:
                self._seen.clear()
        self._seen[key] = (now, 0)
        return last[1] if last is not None else 0


def _held_back(count: int) -> str:
    return f" ({count} more like it in the last minute)" if count else ""


def _who(tenant: str, credential: str) -> str:
    """For logs: the tenant, and a prefix of the credential's digest (never the credential)."""
    return f"tenant {tenant}, credential {credential[:8]}"


class SessionGate:
    """ASGI middleware in front of the SDK's streamable HTTP app that holds its sessions to a `SessionTable`.

    `identify` is the server's own credential check (remembered per credential), which tells the tenant; a
    request it rejects passes through for the SDK to answer 401, one it could not decide on (`Unverified`) is
    answered 503 here and opens no session.
    """

    def __init__(self, app: ASGIApp, table: SessionTable, sessions: SdkSessions,
                 identify: Callable[[str], Awaitable[AccessToken | Unverified | None]], path: str = "/mcp") -> None:
        self.app = app
        self.table = table
        self.sessions = sessions
        self._identify = identify
        self.path = path
        self._log_once = _OncePerPeriod()
        self.refused_unverified = 0

    def health(self) -> dict[str, Any]:
        return {"open": self.sessions.count(), **self.table.snapshot(), "refusedUnverified": self.refused_unverified}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            validate_tenant_id((headers.get("x-tenant-id") or "").strip() or None, "X-Tenant-ID")
        except ConfigError as err:
            # Dropped silently, the request would act in the credential's default tenant: not the one asked for.
            body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": str(err)}}
            await JSONResponse(body, status_code=400)(scope, receive, send)
            return
        session_id = headers.get(SESSION_HEADER)
        if session_id is not None:
            await self._in_session(session_id, scope, receive, send)
        elif scope["method"] == "POST" and headers.get(PROTOCOL_HEADER) in (None, *HANDSHAKE_PROTOCOL_VERSIONS):
            # As the SDK routes it: no session id and a handshake-era (or no) protocol version opens a session.
            await self._opening(headers, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _in_session(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        # Only POSTs (client messages) are use; the GET stream just listens and DELETE ends the session.
        using = scope["method"] == "POST"
        if using:
            self.table.begin(session_id)
        try:
            await self.app(scope, receive, send)
        finally:
            if using:
                self.table.end(session_id)
            if session_id in self.table and not self.sessions.is_open(session_id):
                self.table.forget(session_id)  # the client's DELETE, or the SDK ended it

    async def _opening(self, headers: Headers, scope: Scope, receive: Receive, send: Send) -> None:
        token = _bearer(headers)
        access = await self._identify(token) if token else None
        if token is None or access is None:
            await self.app(scope, receive, send)  # the SDK answers 401
            return
        credential = credential_digest(token)
        tenant_id = access.claims.get("tenant_id") if isinstance(access, AccessToken) and access.claims else None
        if not tenant_id:
            # Nothing is counted for it: neither a tenant of its own (made-up bearers are free, and each would come
            # with a whole budget) nor a tenant it may not belong to.
            await self._refuse_unverified(
                access if isinstance(access, Unverified) else Unverified("the credential check named no tenant"),
                credential, scope, receive, send)
            return
        tenant = str(tenant_id)
        admission = self.table.admit(credential, tenant)
        if admission.refusal is not None:
            await self._refuse(admission, scope, receive, send)
            return
        for victim in admission.closed:
            await self.sessions.close(victim.id)
            held = self._log_once("closed:" + victim.credential, self.table.now())
            if held is not None:
                log.info("closed MCP session %s… (%s), unused for %.0f s, to admit a new one at its cap%s",
                         victim.id[:8], _who(victim.tenant, victim.credential), self.table.now() - victim.last_used,
                         _held_back(held))
        opened: str | None = None

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if opened is not None:
                    self.table.opened(admission, opened)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if opened is None:
                self.table.cancel(admission)
            else:
                self.table.end(opened)

    async def _refuse(self, admission: Admission, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = admission.refusal
        assert refusal is not None
        held = self._log_once("refused:" + admission.credential, self.table.now())
        if held is not None:
            log.warning("refused a new MCP session (%s): %s reached%s", _who(admission.tenant, admission.credential),
                        refusal.limit, _held_back(held))
        # A JSON-RPC error body, as the SDK answers its own refusals, so a client shows the message.
        body = {"jsonrpc": "2.0", "id": None, "error": {
            "code": INTERNAL_ERROR if refusal.status >= 500 else INVALID_REQUEST, "message": refusal.message}}
        response = JSONResponse(body, status_code=refusal.status, headers={"Retry-After": str(refusal.retry_after_s)})
        await response(scope, receive, send)

    async def _refuse_unverified(self, unverified: Unverified, credential: str, scope: Scope, receive: Receive,
                                 send: Send) -> None:
        self.refused_unverified += 1
        wait = max(1, unverified.retry_after_s) if unverified.retry_after_s is not None else UNVERIFIED_RETRY_AFTER_S
        # One key for all: a flood of made-up bearers is one line a minute saying how many, not one per bearer.
        held = self._log_once("unverified", self.table.now())
        if held is not None:
            log.warning("refused a new MCP session (credential %s): the gateway could not verify the credential "
                        "(%s)%s", credential[:8], unverified.reason, _held_back(held))
        # The reason stays in the log: it can name the gateway's address, which is no business of an unknown caller.
        message = (f"This credential could not be verified right now: the Linepack gateway gave no definitive answer "
                   f"(it may be unreachable, failing or limiting credential checks), so no MCP session was opened. "
                   f"Retry after {wait} s.")
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": INTERNAL_ERROR, "message": message}}
        response = JSONResponse(body, status_code=503, headers={"Retry-After": str(wait)})
        await response(scope, receive, send)

    async def reap(self) -> None:
        """Forget what the SDK ended on its own, then close the sessions unused for the idle timeout."""
        self.table.retain(self.sessions.open_ids())
        expired = self.table.expired()
        for session in expired:
            await self.sessions.close(session.id)
        if expired:
            log.info("closed %d MCP session(s) of %d tenant(s): no request for %g s", len(expired),
                     len({s.tenant for s in expired}), self.table.limits.idle_timeout_s)

    async def _reap_forever(self) -> None:
        # Often enough that a session outlives the timeout by a quarter of it at most, and at least twice a minute.
        interval = min(max(self.table.limits.idle_timeout_s / 4, 0.25), 30.0)
        while True:
            await anyio.sleep(interval)
            try:
                await self.reap()
            except Exception:  # noqa: BLE001 - one failed sweep must not end the sweeping
                log.exception("sweeping idle MCP sessions failed")

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The sweeper lives exactly as long as the app (and the SDK's session manager, which the app's lifespan runs).
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._reap_forever)
            try:
                await self.app(scope, receive, send)
            finally:
                tg.cancel_scope.cancel()
