"""`linepack-mcp check`: the connection, the key and the schema, tested against the gateway."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace

from .cli import EXIT_FAILED, EXIT_OK
from .client import (
    LinepackClient,
    LinepackError,
    LinepackForbidden,
    LinepackRateLimited,
    LinepackUnauthenticated,
    LinepackUnreachable,
)
from .settings import Settings


async def _check(settings: Settings) -> tuple[bool, list[str]]:
    once = replace(settings, max_retries=0, timeout_s=min(settings.timeout_s, 15.0))
    async with LinepackClient(once) as client:
        try:
            result = await client.graphql("{ __typename }", read_only=True)
        except LinepackUnauthenticated as exc:
            return False, [f"FAILED: {settings.api_url} answered 401 {exc.code}: the API key was rejected.",
                           f"Server said: {_server_said(exc)}",
                           "Remedy: set LINEPACK_API_KEY to a valid Linepack API key (not revoked, not expired); "
                           "create one with 'npx linepack keys create' or ask a tenant admin."]
        except LinepackForbidden as exc:
            remedy = ("Remedy: check LINEPACK_TENANT_ID: unset it, or set a tenant this key belongs to."
                      if settings.tenant_id else
                      f"Remedy: use a key with the scope(s) {', '.join(exc.missing_scopes) or 'it needs'}.")
            return False, [f"FAILED: {settings.api_url} answered 403 {exc.code}: the key may not do this.",
                           f"Server said: {_server_said(exc)}", remedy]
        except LinepackRateLimited as exc:
            wait = f"{exc.retry_after_s} s" if exc.retry_after_s is not None else "a moment"
            return False, [f"FAILED: {settings.api_url} answered 429 {exc.code}: this key's rate limit is used up.",
                           f"Remedy: try again in {wait} (Retry-After); a key of a higher tier has higher limits."]
        except LinepackUnreachable as exc:
            return False, [f"FAILED: cannot connect to {settings.api_url}: {exc.reason}.",
                           "Remedy: check LINEPACK_API_URL (scheme, host, port and the /graphql path) and that the "
                           "Linepack gateway is running ('npm start' in the Linepack repository)."]
        except LinepackError as exc:
            return False, [f"FAILED: {settings.api_url} answered {exc.status or 'unexpectedly'}.", exc.message]
        if result.errors or not result.data:
            return False, ["FAILED: the gateway answered { __typename } with errors: "
                           + "; ".join(str(e.get("message")) for e in result.errors)]
        lines = [f"OK: {settings.api_url} answered {{ __typename }} = {result.data.get('__typename')!r} with this "
                 f"key (request id {result.request_id or 'n/a'})."]
        from .schema import fetch_schema  # graphql-core is only needed from here on

        try:
            schema = await fetch_schema(client)
        except LinepackError as exc:
            return False, [*lines, f"FAILED: the schema could not be read: {exc.message}",
                           "Remedy: the schema tools (validate, search_schema, describe_type, the schema resource) "
                           "need it; fix the cause above."]
        lines.append(f"Schema: {len(schema.type_map)} types read by introspection.")
        try:
            key = await client.introspect_key()
            scopes = key.get("scopes") or []
            lines.append(
                f"Key: active={key.get('active')}, tenant {key.get('tenant_id')}, "
                f"scopes {' '.join(scopes) if scopes else '(none)'}, expires {key.get('expires_at') or 'never'}."
            )
        except LinepackError as exc:
            lines.append(f"(Key introspection unavailable: {exc.message})")
        return True, lines


def _server_said(exc: LinepackError) -> str:
    if exc.errors:
        return str(exc.errors[0].get("message"))
    return exc.message


def check(settings: Settings) -> int:
    ok, lines = asyncio.run(_check(settings))
    stream = sys.stdout if ok else sys.stderr
    for line in lines:
        print(line, file=stream)
    return EXIT_OK if ok else EXIT_FAILED
