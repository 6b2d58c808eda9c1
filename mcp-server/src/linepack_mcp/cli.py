"""Command line: `linepack-mcp` (serve over stdio), `linepack-mcp check`, `linepack-mcp config`."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from dataclasses import replace

from . import __version__
from .client import (
    LinepackClient,
    LinepackError,
    LinepackForbidden,
    LinepackRateLimited,
    LinepackUnauthenticated,
    LinepackUnreachable,
)
from .config_cmd import CLIENTS, build_config, guidance
from .logs import register_secret, setup_logging
from .settings import ConfigError, Settings, load_settings

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2

log = logging.getLogger("linepack_mcp")

ENV_HELP = """\
environment:
  LINEPACK_API_URL     required; the gateway's GraphQL endpoint, e.g. http://localhost:4000/graphql
  LINEPACK_API_KEY     required; API key, sent as 'Authorization: Bearer <key>'
  LINEPACK_TENANT_ID   optional; tenant to act in, sent as X-Tenant-ID
  LINEPACK_LOG_LEVEL   optional; DEBUG, INFO (default) or WARN. Logs go to stderr only.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="linepack-mcp",
        description="MCP server for the Linepack pipeline-integrity API. Without a command it serves MCP "
        "over stdio, for an MCP client (Claude Desktop, Claude Code, VS Code...) to launch.",
        epilog=ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"linepack-mcp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("serve", help="serve MCP over stdio (the default)")
    sub.add_parser("check", help="test the connection and the key: POST { __typename } to LINEPACK_API_URL")
    c = sub.add_parser(
        "config",
        help="print a ready-to-paste MCP client configuration (JSON on stdout, advice on stderr)",
        description="Print the configuration an MCP client needs to start linepack-mcp.",
    )
    c.add_argument("--client", required=True, choices=CLIENTS,
                   help="claude-desktop: claude_desktop_config.json; claude-code: .mcp.json for Claude Code; "
                   "vscode: .vscode/mcp.json; project: a secret-free .mcp.json to commit")
    c.add_argument("--launcher", choices=("uvx", "path"), default="uvx",
                   help="uvx (default): start with 'uvx linepack-mcp'; path: the absolute path of this "
                   "installation's linepack-mcp executable")
    c.add_argument("--from", dest="from_spec", metavar="SPEC",
                   help="package source for uvx --from (a wheel, a directory or a requirement); by default the "
                   "local directory or wheel this copy was installed from, if any (not for --client project)")
    c.add_argument("--name", default="linepack", help="server name in the configuration (default: linepack)")
    c.add_argument("--include-key", action="store_true",
                   help="claude-desktop only: put LINEPACK_API_KEY from the environment into the output")
    return p


def _config_error(err: ConfigError) -> int:
    print(f"linepack-mcp: {err}", file=sys.stderr)
    return EXIT_CONFIG


def _settings_or_exit() -> Settings | int:
    try:
        settings = load_settings()
    except ConfigError as err:
        return _config_error(err)
    register_secret(settings.api_key)
    setup_logging(settings.log_level)
    return settings


def serve(settings: Settings) -> int:
    from .server import build_server, probe_schema  # the MCP SDK is only imported to serve

    log.info("linepack-mcp %s serving MCP over stdio for %s%s", __version__, settings.api_url,
             f" (tenant {settings.tenant_id})" if settings.tenant_id else "")
    schema = asyncio.run(probe_schema(settings))
    server = build_server(settings, schema)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    return EXIT_OK


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


def config(args: argparse.Namespace) -> int:
    if args.include_key and args.client != "claude-desktop":
        print("linepack-mcp: --include-key is for --client claude-desktop only; the other clients read the key "
              "from the environment or a secret prompt", file=sys.stderr)
        return EXIT_CONFIG
    cfg = build_config(args.client, launcher_kind=args.launcher, from_spec=args.from_spec, name=args.name,
                       include_key=args.include_key)
    print(json.dumps(cfg, indent=2))
    print(guidance(args.client, cfg, args.include_key), file=sys.stderr)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = args.command or "serve"
    if command == "config":
        return config(args)
    settings = _settings_or_exit()
    if isinstance(settings, int):
        return settings
    if command == "check":
        return check(settings)
    return serve(settings)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
