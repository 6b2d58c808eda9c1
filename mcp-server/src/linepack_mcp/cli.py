"""Command line: `linepack-mcp` (serve over stdio), `linepack-mcp check`, `linepack-mcp config`."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from . import __version__
from .config_cmd import CLIENTS, ConfigCommandError, build_config, guidance
from .fast_start import start_front
from .logs import register_secret, setup_logging
from .settings import ConfigError, Settings, load_settings

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2

log = logging.getLogger("linepack_mcp")

ENV_HELP = """\
environment:
  LINEPACK_API_URL     required; the gateway's GraphQL endpoint, e.g. http://localhost:4000/graphql
  LINEPACK_API_KEY     required over stdio; API key, sent as 'Authorization: Bearer <key>'
                       (over HTTP every MCP client sends its own and this is not used)
  LINEPACK_TENANT_ID   optional; tenant to act in, sent as X-Tenant-ID (stdio)
  LINEPACK_MCP_WRITES  optional; off (default): the tools that change data are not offered; on: they are
  LINEPACK_LOG_LEVEL   optional; DEBUG, INFO (default) or WARN. Logs go to stderr only.
streamable-http only (hosted sessions; a credential at its cap loses its session unused the longest):
  LINEPACK_MCP_MAX_SESSIONS_PER_CREDENTIAL  default 16; open sessions per bearer credential
  LINEPACK_MCP_MAX_SESSIONS_PER_TENANT      default 64; per tenant, all its credentials together
  LINEPACK_MCP_MAX_SESSIONS                 default 1000; in all, larger than the per-tenant cap (last resort: 503)
  LINEPACK_MCP_SESSION_IDLE_TIMEOUT_S       default 900; a session without a request this long is closed
"""
LOOPBACK = ("127.0.0.1", "localhost", "::1")


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
    srv = sub.add_parser(
        "serve", help="serve MCP over stdio (the default) or streamable HTTP",
        description="Serve MCP. Over stdio (the default) an MCP client starts this process and it acts with "
        "LINEPACK_API_KEY. Over streamable HTTP it is a shared server: every MCP client sends its own Linepack "
        "credential as 'Authorization: Bearer ...', which is passed on to the gateway; the server holds none.",
    )
    srv.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    srv.add_argument("--host", default="127.0.0.1",
                     help="address to listen on (streamable-http; default 127.0.0.1, this machine only)")
    srv.add_argument("--port", type=int, default=8765, help="port to listen on (streamable-http; default 8765)")
    srv.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                     help="a Host header clients may use besides localhost (streamable-http; repeatable; "
                     "HOST:* for any port). Needed when listening beyond localhost.")
    srv.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                     help="a browser Origin allowed besides http://localhost:* (streamable-http; repeatable)")
    sub.add_parser("check", help="test the connection and the key: POST { __typename } to LINEPACK_API_URL")
    c = sub.add_parser(
        "config",
        help="print a ready-to-paste MCP client configuration (JSON on stdout, advice on stderr)",
        description="Print the configuration an MCP client needs to start linepack-mcp.",
    )
    c.add_argument("--client", required=True, choices=CLIENTS,
                   help="claude-desktop: claude_desktop_config.json; claude-code: .mcp.json for Claude Code; "
                   "vscode: .vscode/mcp.json; project: a secret-free .mcp.json to commit")
    c.add_argument("--launcher", choices=("uv", "path"), default="uv",
                   help="uv (default): start from the package source with uv ('uv run --locked --project "
                   "<mcp-server>' for a directory); path: the absolute path of this installation's linepack-mcp "
                   "executable (claude-desktop only: it is a path of this machine)")
    c.add_argument("--from", dest="from_spec", metavar="SPEC",
                   help="package source: the mcp-server directory, a wheel, or a pinned release linepack-mcp==X.Y.Z "
                   "(once published); by default the directory or wheel this copy was installed from. For the "
                   "committed configs (claude-code, vscode, project) a path must lie inside the project root.")
    c.add_argument("--project-root", type=Path, default=None,
                   help="the repository the configuration is committed to (default: the current directory); "
                   "paths in committed configs are written relative to it")
    c.add_argument("--writes", choices=("off", "on"), default="off",
                   help="off (default): LINEPACK_MCP_WRITES is left to each person's environment (project) or off; "
                   "on: the configuration turns the write tools on")
    c.add_argument("--name", default="linepack", help="server name in the configuration (default: linepack)")
    c.add_argument("--include-key", action="store_true",
                   help="claude-desktop only: put LINEPACK_API_KEY from the environment into the output")
    return p


def _config_error(err: ConfigError) -> int:
    print(f"linepack-mcp: {err}", file=sys.stderr)
    return EXIT_CONFIG


def _settings_or_exit(*, per_request_credentials: bool = False) -> Settings | int:
    try:
        settings = load_settings(per_request_credentials=per_request_credentials)
    except ConfigError as err:
        return _config_error(err)
    if settings.api_key:
        register_secret(settings.api_key)
    setup_logging(settings.log_level)
    return settings


def serve(settings: Settings) -> int:
    # Before the SDK is imported (seconds): the client's handshake is answered meanwhile (fast_start.py).
    front = start_front(settings.writes)
    from .server import build_server  # the MCP SDK is only imported to serve

    log.info("linepack-mcp %s serving MCP over stdio for %s%s (writes %s)", __version__, settings.api_url,
             f" (tenant {settings.tenant_id})" if settings.tenant_id else "", "on" if settings.writes else "off")
    # The schema is read in the background once the session runs (build_server's lifespan): a gateway that is slow
    # or down no longer holds up the client's handshake.
    server = build_server(settings)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        if front is not None:
            front.finish()
    return EXIT_OK


def transport_security(host: str, port: int, allowed_hosts: list[str], allowed_origins: list[str]) -> object:
    """Host and Origin checks (DNS rebinding protection) for the HTTP transport, always on."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", *allowed_hosts]
    if host not in LOOPBACK and host not in ("0.0.0.0", "::"):
        hosts.append(f"{host}:{port}")
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *allowed_origins]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def serve_http(settings: Settings, args: argparse.Namespace) -> int:
    import uvicorn

    from .server import build_http_app

    if args.host in ("0.0.0.0", "::") and not args.allowed_host:
        return _config_error(ConfigError(
            f"listening on {args.host} answers only requests whose Host header is allowed: give --allowed-host with "
            f"each name clients use (e.g. --allowed-host mcp.example.com:{args.port}), or listen on 127.0.0.1"))
    if os.environ.get("LINEPACK_API_KEY"):
        log.warning("LINEPACK_API_KEY is set but not used over HTTP: every MCP client sends its own credential")
    try:
        app = build_http_app(settings, host=args.host, transport_security=transport_security(
            args.host, args.port, args.allowed_host, args.allowed_origin))
    except RuntimeError as err:  # an MCP SDK without what the session limits need
        print(f"linepack-mcp: {err}", file=sys.stderr)
        return EXIT_CONFIG
    log.info("linepack-mcp %s serving MCP over streamable HTTP at http://%s:%d/mcp for %s (writes %s); "
             "health at /healthz", __version__, args.host, args.port, settings.api_url,
             "on" if settings.writes else "off")
    log.info("MCP sessions: at most %d per credential, %d per tenant, %d in all; closed after %g s without a request",
             settings.max_sessions_per_credential, settings.max_sessions_per_tenant, settings.max_sessions,
             settings.session_idle_timeout_s)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return EXIT_OK


def config(args: argparse.Namespace) -> int:
    if args.include_key and args.client != "claude-desktop":
        print("linepack-mcp: --include-key is for --client claude-desktop only; the other clients read the key "
              "from the environment or a secret prompt", file=sys.stderr)
        return EXIT_CONFIG
    try:
        cfg = build_config(args.client, launcher_kind=args.launcher, from_spec=args.from_spec, name=args.name,
                           include_key=args.include_key, project_root=args.project_root, writes=args.writes == "on")
    except ConfigCommandError as err:
        print(f"linepack-mcp: {err}", file=sys.stderr)
        return EXIT_CONFIG
    print(json.dumps(cfg, indent=2))
    print(guidance(args.client, cfg, args.include_key), file=sys.stderr)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = args.command or "serve"
    if command == "config":
        return config(args)
    http = command == "serve" and getattr(args, "transport", "stdio") == "streamable-http"
    settings = _settings_or_exit(per_request_credentials=http)
    if isinstance(settings, int):
        return settings
    if command == "check":
        from .check_cmd import check  # httpx and asyncio: not needed before a stdio server answers its client

        return check(settings)
    if http:
        return serve_http(settings, args)
    return serve(settings)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
