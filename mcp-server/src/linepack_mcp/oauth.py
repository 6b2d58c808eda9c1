"""Hosted sign-in with Linepack: this server as an OAuth 2.1 resource server (streamable HTTP only).

A client that knows only this server's URL is answered 401 with `WWW-Authenticate: Bearer resource_metadata=...`;
it reads the protected-resource metadata (RFC 9728) served here, which names Linepack's authorization server (the
gateway's origin), signs the user in there and comes back with an access token bound to this server's URL (RFC 8707).
Such a token is checked here (signature by the auth service's keys, issuer, audience, expiry, scopes, one tenant) and
never sent on: for the gateway it is exchanged (RFC 8693) for a token of the same user, tenant and scopes that the
gateway accepts, with this server's own credentials. The gateway refuses the user's token, and this server refuses
the gateway's. API keys stay accepted for server-to-server use; they are checked by the gateway as before.

The MCP authorization specification (2025-11-25 and 2026-07-28) asks for exactly this: "MCP servers MUST validate
that access tokens were issued specifically for them as the intended audience" and "MUST NOT accept or transit any
other tokens".
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from mcp.server.auth.provider import AccessToken

from .client import LinepackError, LinepackUnauthenticated, LinepackUnavailable, LinepackUnreachable, parse_retry_after
from .sessions import Unverified, credential_digest
from .settings import Settings, validate_tenant_id, ConfigError

log = logging.getLogger("linepack_mcp.oauth")

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
# The auth service signs user tokens with ES256 (lib/identity.ts USER_TOKEN_ALGORITHM); nothing else is accepted.
ALGORITHM = "ES256"
# As the gateway reads the JWKS: an unknown kid refetches it at most this often, and keys are re-read at least this
# often, so a key dropped from it stops being trusted.
JWKS_MIN_REFETCH_S = 5.0
JWKS_MAX_AGE_S = 300.0
# The authorization server's metadata (its scopes) is read again after this long.
METADATA_MAX_AGE_S = 300.0
# An exchanged token is used until this long before it expires, then exchanged again.
EXCHANGE_MARGIN_S = 30.0


def looks_like_jwt(token: str) -> bool:
    """Three base64url parts whose first is a JSON header: a token, not an API key (which never has a dot)."""
    parts = token.split(".")
    if len(parts) != 3:
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(header, dict) and "alg" in header


def subject_of(token: str) -> str:
    """The `sub` of a user token already verified (BearerChallenge): whose request it is, across refreshed tokens."""
    import jwt  # PyJWT and cryptography: only a hosted server with sign-in needs them
    return str(jwt.decode(token, options={"verify_signature": False}).get("sub"))


def resource_metadata_url(public_url: str) -> str:
    """RFC 9728 §3.1: /.well-known/oauth-protected-resource inserted between the host and the resource's path."""
    parts = urlsplit(public_url)
    return f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path.rstrip('/')}"


class OAuthResourceServer:
    """Checks user tokens bound to this server, exchanges them for gateway tokens, and describes this resource."""

    def __init__(self, settings: Settings, pool: Callable[[], httpx.AsyncClient], *, cache_size: int = 1024) -> None:
        assert settings.public_url and settings.oauth_issuer and settings.oauth_exchange_secret
        self.settings = settings
        self.resource = settings.public_url
        self.issuer = settings.oauth_issuer
        self.metadata_url = resource_metadata_url(settings.public_url)
        self._pool = pool
        self._keys: dict[str, Any] = {}
        self._keys_read = 0.0
        self._keys_lock = asyncio.Lock()
        self._scopes: list[str] | None = None
        self._scopes_read = 0.0
        self.metadata_problem: str | None = None
        #: Exchanged gateway tokens by the digest of the user's token: (gateway token, monotonic time to exchange anew).
        self._exchanged: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._exchanging: dict[str, asyncio.Future[str]] = {}
        self._cache_size = cache_size
        origin = settings.origin
        self.jwks_url = f"{origin}/auth/.well-known/jwks.json"
        self.token_url = f"{origin}/auth/oauth/token"
        self.as_metadata_url = f"{origin}/.well-known/oauth-authorization-server"

    # -- this resource ---------------------------------------------------------------------------------------------

    async def scopes(self) -> list[str] | None:
        """The scopes this server's tools use: the authorization server's read scopes, and its write scopes when writes
        are on (never admin:*). None when its metadata cannot be read (clients then ask for none, and get what the
        user's role holds)."""
        now = time.monotonic()
        if self._scopes_read and now - self._scopes_read < METADATA_MAX_AGE_S:
            return self._scopes
        try:
            response = await self._pool().get(self.as_metadata_url, timeout=10.0)
            body = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("could not read the authorization server's metadata at %s (%s)", self.as_metadata_url,
                        type(exc).__name__)
            return self._scopes
        if not isinstance(body, dict):
            log.warning("the authorization server's metadata at %s answered %s", self.as_metadata_url,
                        response.status_code)
            return self._scopes
        issuer = body.get("issuer")
        self.metadata_problem = None if issuer == self.issuer else (
            f"the authorization server names its issuer {issuer!r}, not {self.issuer!r}: set LINEPACK_MCP_OAUTH_ISSUER "
            f"to the gateway's public origin (clients compare them and stop when they differ)")
        if self.metadata_problem:
            log.warning("%s", self.metadata_problem)
        wanted = (":read", ":write") if self.settings.writes else (":read",)
        self._scopes = [s for s in body.get("scopes_supported") or [] if isinstance(s, str) and s.endswith(wanted)]
        self._scopes_read = now
        return self._scopes

    async def metadata(self) -> dict[str, Any]:
        """RFC 9728 §2 protected-resource metadata."""
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "Linepack MCP server",
        }
        scopes = await self.scopes()
        if scopes:
            document["scopes_supported"] = scopes
        return document

    async def challenge(self, error: str | None = None, description: str | None = None) -> str:
        """The WWW-Authenticate value of a 401 (RFC 6750 §3, RFC 9728 §5.1): no error code when the request carried no
        token, and the scopes to ask for (MCP authorization, scope selection strategy)."""
        parts = []
        if error:
            parts.append(f'error="{error}"')
        if description:
            parts.append(f'error_description="{description}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        scopes = await self.scopes()
        if scopes:
            parts.append(f'scope="{" ".join(scopes)}"')
        return "Bearer " + ", ".join(parts)

    # -- tokens ----------------------------------------------------------------------------------------------------

    async def _key(self, kid: str) -> Any:
        import jwt

        now = time.monotonic()
        known = self._keys.get(kid)
        if known is not None and now - self._keys_read < JWKS_MAX_AGE_S:
            return known
        async with self._keys_lock:
            now = time.monotonic()
            if self._keys_read == 0 or now - self._keys_read >= JWKS_MIN_REFETCH_S:
                response = await self._pool().get(self.jwks_url, timeout=10.0)
                if response.status_code != 200:
                    raise LinepackError(f"the auth service's keys ({self.jwks_url}) answered {response.status_code}")
                keys = jwt.PyJWKSet.from_dict(response.json())
                self._keys = {k.key_id: k.key for k in keys.keys if k.key_id}
                self._keys_read = now
        return self._keys.get(kid)

    async def verify(self, token: str) -> AccessToken | Unverified | None:
        """The token's user, tenant and scopes when it is a valid access token issued by Linepack for this server;
        None when it is not (answered 401); Unverified when the auth service's keys cannot be read now."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        kid = header.get("kid")
        if header.get("alg") != ALGORITHM or not isinstance(kid, str):
            return None
        try:
            key = await self._key(kid)
        except (httpx.HTTPError, LinepackError, ValueError, jwt.PyJWTError) as exc:
            return Unverified(f"the auth service's keys could not be read: {exc}")
        if key is None:
            return None
        try:
            claims = jwt.decode(token, key, algorithms=[ALGORITHM], audience=self.resource, issuer=self.issuer,
                                options={"require": ["exp", "iat", "iss", "aud", "sub"]})
        except jwt.PyJWTError:
            # A gateway token (audience linepack-api), another resource's, expired, forged: none is for this server.
            return None
        tenants = claims.get("tenants")
        scope = claims.get("scope")
        client_id = claims.get("client_id")
        if (claims.get("typ") != "access" or not isinstance(scope, str) or not isinstance(client_id, str)
                or not isinstance(tenants, list) or len(tenants) != 1 or not isinstance(tenants[0], dict)):
            return None
        try:
            tenant_id = validate_tenant_id(str(tenants[0].get("id")))
        except ConfigError:
            return None
        return AccessToken(token=credential_digest(token), client_id=client_id, scopes=scope.split(),
                           expires_at=int(claims["exp"]), resource=self.resource, subject=str(claims["sub"]),
                           claims={"iss": claims["iss"], "tenant_id": tenant_id, "sid": claims.get("sid")})

    async def gateway_token(self, token: str) -> str:
        """A token the gateway accepts for the same user, tenant and scopes (RFC 8693 exchange), cached until shortly
        before it expires. Raises LinepackUnauthenticated when the sign-in has ended (signed out, membership gone)."""
        digest = credential_digest(token)
        hit = self._exchanged.get(digest)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
        pending = self._exchanging.get(digest)
        if pending is not None:  # one exchange per token, however many calls arrive at once
            return await asyncio.shield(pending)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._exchanging[digest] = future
        try:
            exchanged, lifetime = await self._exchange(token)
            self._exchanged[digest] = (exchanged, time.monotonic() + max(0.0, lifetime - EXCHANGE_MARGIN_S))
            self._exchanged.move_to_end(digest)
            while len(self._exchanged) > self._cache_size:
                self._exchanged.popitem(last=False)
            future.set_result(exchanged)
            return exchanged
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            del self._exchanging[digest]

    async def _exchange(self, token: str) -> tuple[str, float]:
        # RFC 6749 §2.3.1: client id and secret each form-urlencoded inside HTTP Basic.
        secret = self.settings.oauth_exchange_secret or ""
        basic = base64.b64encode(f"{quote(self.resource, safe='')}:{quote(secret, safe='')}".encode()).decode()
        try:
            response = await self._pool().post(self.token_url, data={
                "grant_type": TOKEN_EXCHANGE_GRANT, "subject_token": token, "subject_token_type": ACCESS_TOKEN_TYPE,
                "requested_token_type": ACCESS_TOKEN_TYPE, "resource": self.issuer,
            }, headers={"Authorization": f"Basic {basic}"}, timeout=self.settings.timeout_s)
        except httpx.HTTPError as exc:
            raise LinepackUnreachable(f"Cannot reach Linepack's token endpoint at {self.token_url}: "
                                      f"{type(exc).__name__}. Try again shortly.", reason=type(exc).__name__) from None
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code == 200 and isinstance(body.get("access_token"), str):
            return body["access_token"], float(body.get("expires_in") or 0)
        error = body.get("error") if isinstance(body, dict) else None
        if error == "invalid_grant":
            raise LinepackUnauthenticated("Your Linepack sign-in has ended (signed out, or your membership changed): "
                                          "reconnect this MCP server to sign in again.", status=401,
                                          code="UNAUTHENTICATED")
        if error == "temporarily_unavailable" or response.status_code == 503:
            # The auth service's outage answer (its database cannot be reached): RFC 6749's code, with a Retry-After.
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            wait = f"retry after {retry_after} s" if retry_after is not None else "retry shortly"
            log.warning("token exchange refused by the auth service as temporarily unavailable (%s %s); the caller "
                        "was told to %s", response.status_code, error or "error", wait)
            raise LinepackUnavailable(f"Linepack's sign-in service is temporarily unavailable and could not exchange "
                                      f"the sign-in for a gateway token ({response.status_code} {error or 'error'}): "
                                      f"{wait}.", retry_after_s=retry_after, status=response.status_code,
                                      code="TEMPORARILY_UNAVAILABLE")
        if error == "invalid_client":
            log.error("the auth service refused this server's credentials for token exchange: check that "
                      "LINEPACK_MCP_OAUTH_EXCHANGE_SECRET and LINEPACK_MCP_PUBLIC_URL match the auth service's "
                      "OAUTH_PROTECTED_RESOURCES")
        raise LinepackError(f"Linepack's token endpoint refused to exchange the sign-in for a gateway token "
                            f"({response.status_code} {error or 'error'}); the MCP server's operator has been told in "
                            f"its log.", status=response.status_code)
