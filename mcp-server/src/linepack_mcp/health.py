"""`/healthz` and `/readyz` of the hosted server: whether it can serve anyone, which depends on the gateway.

The server holds no data: a tool call is requests to the gateway. So readiness is the gateway's own (`GET <origin>/
readyz`, probed at most every `PROBE_INTERVAL_S`): unreachable or `unavailable` there is `unavailable` here (503:
take this replica out of the load balancer, it can answer nothing but errors); `degraded` there, or sign-in with
Linepack not working (the auth service's keys or the authorization server's metadata unreadable, or its issuer not
the one configured), is `degraded` here (200: API keys still work). `/healthz` is liveness (always 200 while the
process serves HTTP) and carries the last readiness seen, for a person reading it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx

from . import __version__
from .oauth import OAuthResourceServer
from .settings import Settings

PROBE_INTERVAL_S = 2.0


class Readiness:
    def __init__(self, settings: Settings, pool: Callable[[], httpx.AsyncClient],
                 oauth: OAuthResourceServer | None) -> None:
        self.settings = settings
        self._pool = pool
        self._oauth = oauth
        self._last: dict[str, Any] | None = None
        self._at = 0.0
        self._lock = asyncio.Lock()

    @property
    def last(self) -> dict[str, Any] | None:
        return self._last

    async def report(self) -> dict[str, Any]:
        async with self._lock:  # one probe at a time, however many probes arrive
            if self._last is None or time.monotonic() - self._at >= PROBE_INTERVAL_S:
                self._last = await self._probe()
                self._at = time.monotonic()
            return self._last

    async def _probe(self) -> dict[str, Any]:
        gateway = await self._gateway()
        report: dict[str, Any] = {"server": "linepack-mcp", "version": __version__, "gateway": gateway}
        problems = [] if gateway["status"] == "ready" else [f"gateway {gateway['status']}"]
        if self._oauth is not None:
            sign_in = await self._sign_in(self._oauth)
            report["signIn"] = sign_in
            if sign_in["status"] != "ready":
                problems.append("sign-in with Linepack unavailable")
        if gateway["status"] == "unavailable":
            report["status"] = "unavailable"
        else:
            report["status"] = "degraded" if problems else "ready"
        if problems:
            report["problems"] = problems
        return report

    async def _gateway(self) -> dict[str, Any]:
        url = self.settings.origin + "/readyz"
        try:
            response = await self._pool().get(url, timeout=5.0)
        except httpx.HTTPError as exc:
            return {"status": "unavailable", "url": url, "reason": f"unreachable ({type(exc).__name__})"}
        try:
            body = response.json()
        except ValueError:
            body = None
        status = body.get("status") if isinstance(body, dict) else None
        if response.status_code >= 500 or status == "unavailable":
            return {"status": "unavailable", "url": url, "reason": f"answered {response.status_code} {status or ''}".strip()}
        if status not in ("ready", "degraded"):
            return {"status": "unavailable", "url": url,
                    "reason": f"answered {response.status_code} without a readiness report: is LINEPACK_API_URL the "
                              f"Linepack gateway?"}
        return {"status": status, "url": url}

    async def _sign_in(self, oauth: OAuthResourceServer) -> dict[str, Any]:
        scopes = await oauth.scopes()
        if scopes is None:
            return {"status": "unavailable", "reason": f"the authorization server's metadata ({oauth.as_metadata_url}) "
                                                       f"could not be read"}
        if oauth.metadata_problem:
            return {"status": "misconfigured", "reason": oauth.metadata_problem}
        try:
            response = await self._pool().get(oauth.jwks_url, timeout=5.0)
            ok = response.status_code == 200 and bool(response.json().get("keys"))
        except (httpx.HTTPError, ValueError, AttributeError):
            ok = False
        if not ok:
            return {"status": "unavailable", "reason": f"the auth service's keys ({oauth.jwks_url}) could not be read"}
        return {"status": "ready", "issuer": oauth.issuer, "resource": oauth.resource}
