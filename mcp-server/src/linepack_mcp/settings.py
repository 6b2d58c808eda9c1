"""Configuration from the environment.

Every problem is reported as a :class:`ConfigError` whose message is one line a
person can act on; the CLI prints it on stderr and exits with status 2. The API
key never appears in a message, a ``repr`` or a log line.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .budget import DEFAULT_RESULT_TOKENS

DEFAULT_API_URL = "http://localhost:4000/graphql"

_LOG_LEVELS = {
    "DEBUG": "DEBUG",
    "INFO": "INFO",
    "WARN": "WARNING",
    "WARNING": "WARNING",
    "ERROR": "ERROR",
}

# `${VAR}`, `${VAR:-default}`, `${input:id}`, `${env:VAR}`: what a client left unexpanded.
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}")
# `<paste your Linepack API key here>` as printed by `linepack-mcp config`.
_ANGLE_PLACEHOLDER = re.compile(r"^<[^>]*>$")
# Tenant ids are UUIDs (DESIGN.md, Tenancy); anything else would be dropped or refused by the gateway.
_TENANT_ID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


class ConfigError(Exception):
    """A configuration problem, with a one-line message for a person."""


@dataclass(frozen=True)
class Settings:
    api_url: str
    #: The stdio server's credential. None when serving over HTTP, where every MCP client sends its own.
    api_key: str | None = field(default=None, repr=False)
    tenant_id: str | None = None
    log_level: str = "INFO"
    #: LINEPACK_MCP_WRITES: whether the tools that change data are offered at all.
    writes: bool = False
    #: How many times a read is retried after a 429 (or a 502/503/504).
    max_retries: int = 3
    #: A Retry-After longer than this is not waited for: the tool answers "try again in N s".
    max_retry_wait_s: float = 30.0
    timeout_s: float = 30.0
    #: Cap on the JSON text of one tool result, in characters.
    max_result_chars: int = 60_000
    #: LINEPACK_MCP_RESULT_TOKENS: no tool result is longer than this many tokens (budget.estimate_tokens).
    result_tokens: int = DEFAULT_RESULT_TOKENS
    # Hosted (streamable HTTP) session limits; see sessions.py. Over stdio there is one session and they do not apply.
    #: Open MCP sessions one credential (one bearer) may hold; at the cap its session idle the longest is closed.
    max_sessions_per_credential: int = 16
    #: Open MCP sessions all credentials of one tenant may hold together; at the cap the tenant's idlest is closed.
    max_sessions_per_tenant: int = 64
    #: Open MCP sessions in all; larger than the per-tenant cap, so no single tenant can fill the server.
    max_sessions: int = 1000
    #: A session without a request for this long is closed (an open listening GET stream does not count as use).
    session_idle_timeout_s: float = 900.0
    # Hosted sign-in with Linepack (OAuth 2.1; streamable HTTP only): this server as a resource server. See oauth.py.
    #: LINEPACK_MCP_PUBLIC_URL: the MCP endpoint's URL as clients reach it, in canonical form: the resource indicator
    #: (RFC 8707) tokens for this server are bound to, and what its protected-resource metadata names. None: OAuth off.
    public_url: str | None = None
    #: LINEPACK_MCP_OAUTH_ISSUER: the authorization server's issuer (the gateway's public origin).
    oauth_issuer: str | None = None
    #: LINEPACK_MCP_OAUTH_EXCHANGE_SECRET: what this server authenticates with at the token endpoint to exchange a
    #: user's token for a gateway token (RFC 8693); the auth service's OAUTH_PROTECTED_RESOURCES holds the same.
    oauth_exchange_secret: str | None = field(default=None, repr=False)

    @property
    def origin(self) -> str:
        parts = urlsplit(self.api_url)
        return urlunsplit((parts.scheme, parts.netloc, "", "", ""))

    @property
    def oauth(self) -> bool:
        """Whether users sign in with Linepack (OAuth) to use this server."""
        return self.public_url is not None

    @property
    def introspect_url(self) -> str:
        """`GET <origin>/auth/introspect`: the key's scopes, tenant and expiry."""
        return self.origin + "/auth/introspect"


def _placeholder_hint(var: str, value: str) -> str:
    return (
        f"{var} is the literal placeholder {value!r}, not a real value: your MCP client did not "
        f"substitute it. Export {var} in the environment the client is started from, or put the "
        f"value itself in the client's \"env\" block (never in a file you commit)."
    )


def _get(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def validate_api_url(value: str | None, var: str = "LINEPACK_API_URL") -> str:
    if value is None:
        raise ConfigError(
            f"{var} is not set: set it to the Linepack gateway's GraphQL endpoint, "
            f"e.g. {DEFAULT_API_URL}"
        )
    if _PLACEHOLDER.search(value) or _ANGLE_PLACEHOLDER.match(value):
        raise ConfigError(_placeholder_hint(var, value))
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{var} must be an http:// or https:// URL of the GraphQL endpoint, "
            f"e.g. {DEFAULT_API_URL} (got {value!r})"
        )
    if parts.username or parts.password:
        raise ConfigError(f"{var} must not contain credentials; put the key in LINEPACK_API_KEY")
    return value


def validate_api_key(value: str | None) -> str:
    if value is None:
        raise ConfigError(
            "LINEPACK_API_KEY is not set: set it to a Linepack API key (it is sent as "
            "'Authorization: Bearer <key>'; create one with 'npx linepack keys create')"
        )
    if _PLACEHOLDER.search(value) or _ANGLE_PLACEHOLDER.match(value):
        raise ConfigError(_placeholder_hint("LINEPACK_API_KEY", value))
    if any(ch.isspace() for ch in value) or not value.isprintable():
        # Do not echo the value: it may be a real key with a stray character in it.
        raise ConfigError(
            "LINEPACK_API_KEY contains whitespace or control characters: paste the key alone, "
            "without 'Bearer ' or quotes"
        )
    return value


def validate_tenant_id(value: str | None, var: str = "LINEPACK_TENANT_ID") -> str | None:
    if value is None:
        return None
    if _PLACEHOLDER.search(value) or _ANGLE_PLACEHOLDER.match(value):
        raise ConfigError(_placeholder_hint(var, value))
    if not _TENANT_ID.match(value):
        shown = value if len(value) <= 60 and value.isprintable() else value[:60].encode("unicode_escape").decode()
        raise ConfigError(f"{var} must be a tenant id, a UUID such as 2b7c0f8e-1111-4222-8333-944445555666 "
                          f"(got {shown!r}); 'whoami' lists the tenants a credential belongs to")
    return value


def validate_log_level(value: str | None) -> str:
    if value is None:
        return "INFO"
    level = _LOG_LEVELS.get(value.upper())
    if level is None:
        raise ConfigError(f"LINEPACK_LOG_LEVEL must be DEBUG, INFO or WARN (got {value!r})")
    return level


def _number(environ: Mapping[str, str], name: str, default: float, *, integer: bool, minimum: float) -> float:
    raw = _get(environ, name)
    if raw is None:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ConfigError(f"{name} must be {kind} (got {raw!r})") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number (got {raw!r})")
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum:g} (got {raw!r})")
    return value


def validate_session_limits(per_credential: int, per_tenant: int, total: int) -> None:
    """The caps must nest: a credential's within its tenant's, a tenant's below the server's.

    The server-wide cap is only a last resort: if one tenant could reach it alone, that tenant's flood would
    refuse every other tenant's session, which is what the per-tenant cap exists to prevent.
    """
    if per_tenant < per_credential:
        raise ConfigError(
            f"LINEPACK_MCP_MAX_SESSIONS_PER_TENANT ({per_tenant}) must be at least "
            f"LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL ({per_credential}): a tenant's cap covers all its credentials"
        )
    if total <= per_tenant:
        raise ConfigError(
            f"LINEPACK_MCP_MAX_SESSIONS ({total}) must be larger than LINEPACK_MCP_MAX_SESSIONS_PER_TENANT "
            f"({per_tenant}): otherwise one tenant alone could fill the server and every other tenant's new session "
            f"would be refused"
        )


def canonical_resource(value: str) -> str:
    """A resource URL as the authorization server compares it (RFC 8707 §2, RFC 3986 §6.2.2): scheme and host in lower
    case, no default port, and a bare origin without its trailing slash."""
    parts = urlsplit(value)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = host if parts.port in (None, default) else f"{host}:{parts.port}"
    path = "" if parts.path in ("", "/") and not parts.query else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def validate_public_url(value: str | None) -> str | None:
    if value is None:
        return None
    var = "LINEPACK_MCP_PUBLIC_URL"
    if _PLACEHOLDER.search(value) or _ANGLE_PLACEHOLDER.match(value):
        raise ConfigError(_placeholder_hint(var, value))
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.fragment or parts.username:
        raise ConfigError(f"{var} must be the http(s) URL MCP clients connect to, e.g. https://mcp.example.com/mcp, "
                          f"without a fragment or credentials (got {value!r})")
    if parts.scheme.lower() == "http" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
        raise ConfigError(f"{var} must be https:// (tokens travel to it); http:// is for localhost only "
                          f"(got {value!r})")
    if not parts.path.rstrip("/").endswith("/mcp"):
        raise ConfigError(f"{var} must name the MCP endpoint, which this server serves at /mcp "
                          f"(e.g. https://mcp.example.com/mcp; got {value!r})")
    return canonical_resource(value)


def _oauth_settings(env: Mapping[str, str], api_url: str) -> dict[str, Any]:
    """Sign-in with Linepack (streamable HTTP only): off unless LINEPACK_MCP_PUBLIC_URL is set; then the exchange
    secret is required, and the issuer defaults to the gateway's origin."""
    public_url = validate_public_url(_get(env, "LINEPACK_MCP_PUBLIC_URL"))
    secret = _get(env, "LINEPACK_MCP_OAUTH_EXCHANGE_SECRET")
    issuer = _get(env, "LINEPACK_MCP_OAUTH_ISSUER")
    if public_url is None:
        if secret or issuer:
            raise ConfigError("LINEPACK_MCP_OAUTH_EXCHANGE_SECRET and LINEPACK_MCP_OAUTH_ISSUER need "
                              "LINEPACK_MCP_PUBLIC_URL, the URL clients reach this server at")
        return {}
    if secret is None:
        raise ConfigError("LINEPACK_MCP_OAUTH_EXCHANGE_SECRET is not set: with LINEPACK_MCP_PUBLIC_URL this server "
                          "exchanges each user's token for a gateway token and needs the secret the auth service "
                          "lists for it in OAUTH_PROTECTED_RESOURCES")
    if _PLACEHOLDER.search(secret) or _ANGLE_PLACEHOLDER.match(secret):
        raise ConfigError(_placeholder_hint("LINEPACK_MCP_OAUTH_EXCHANGE_SECRET", secret))
    if len(secret) < 16:
        raise ConfigError("LINEPACK_MCP_OAUTH_EXCHANGE_SECRET must be at least 16 characters (the auth service "
                          "refuses shorter ones)")
    if issuer is None:
        issuer = Settings(api_url=api_url).origin
    else:
        validate_api_url(issuer, "LINEPACK_MCP_OAUTH_ISSUER")
        parts = urlsplit(issuer)
        if parts.path not in ("", "/") or parts.query:
            raise ConfigError(f"LINEPACK_MCP_OAUTH_ISSUER must be the gateway's public origin, e.g. "
                              f"https://linepack.example.com, with no path (got {issuer!r})")
        issuer = canonical_resource(issuer)
    return {"public_url": public_url, "oauth_issuer": issuer, "oauth_exchange_secret": secret}


def validate_writes(value: str | None) -> bool:
    if value is None:
        return False
    choice = value.lower()
    if choice not in ("on", "off"):
        raise ConfigError(f"LINEPACK_MCP_WRITES must be 'on' or 'off' (got {value!r}); with 'off' (the default) "
                          f"the tools that change data are not offered")
    return choice == "on"


def load_settings(environ: Mapping[str, str] | None = None, *, per_request_credentials: bool = False) -> Settings:
    """Read and validate the configuration; raise :class:`ConfigError` on the first problem.

    With `per_request_credentials` (serving over HTTP) no key is read: each MCP client sends its own,
    and a key or tenant in the server's environment is ignored rather than shared by everyone.
    """
    env = os.environ if environ is None else environ
    api_url = validate_api_url(_get(env, "LINEPACK_API_URL"))
    if per_request_credentials:
        api_key, tenant_id = None, None
    else:
        api_key = validate_api_key(_get(env, "LINEPACK_API_KEY"))
        tenant_id = validate_tenant_id(_get(env, "LINEPACK_TENANT_ID"))
    log_level = validate_log_level(_get(env, "LINEPACK_LOG_LEVEL"))
    sessions = {**_session_settings(env), **_oauth_settings(env, api_url)} if per_request_credentials else {}
    return Settings(
        api_url=api_url,
        api_key=api_key,
        tenant_id=tenant_id,
        log_level=log_level,
        writes=validate_writes(_get(env, "LINEPACK_MCP_WRITES")),
        max_retries=int(_number(env, "LINEPACK_MAX_RETRIES", 3, integer=True, minimum=0)),
        max_retry_wait_s=_number(env, "LINEPACK_MAX_RETRY_WAIT_S", 30.0, integer=False, minimum=0),
        timeout_s=_number(env, "LINEPACK_TIMEOUT_S", 30.0, integer=False, minimum=1),
        max_result_chars=int(_number(env, "LINEPACK_MAX_RESULT_CHARS", 60_000, integer=True, minimum=1000)),
        # Below about 1000 tokens a single asset or a page's summary would no longer fit.
        result_tokens=int(_number(env, "LINEPACK_MCP_RESULT_TOKENS", DEFAULT_RESULT_TOKENS, integer=True, minimum=1000)),
        **sessions,
    )


def _session_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The hosted session limits (streamable HTTP only), read and checked together once at start-up."""
    default = Settings(api_url=DEFAULT_API_URL)
    per_credential = int(_number(env, "LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL", default.max_sessions_per_credential,
                                 integer=True, minimum=1))
    per_tenant = int(_number(env, "LINEPACK_MCP_MAX_SESSIONS_PER_TENANT", default.max_sessions_per_tenant,
                             integer=True, minimum=1))
    total = int(_number(env, "LINEPACK_MCP_MAX_SESSIONS", default.max_sessions, integer=True, minimum=1))
    validate_session_limits(per_credential, per_tenant, total)
    return {
        "max_sessions_per_credential": per_credential,
        "max_sessions_per_tenant": per_tenant,
        "max_sessions": total,
        # At least a second: shorter, a client would lose its session between two messages of one exchange.
        "session_idle_timeout_s": _number(env, "LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S", default.session_idle_timeout_s,
                                          integer=False, minimum=1),
    }
