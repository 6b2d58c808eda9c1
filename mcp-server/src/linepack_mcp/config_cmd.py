"""`linepack-mcp config`: ready-to-paste MCP client configuration.

What each client reads today:

* Claude Desktop: ``claude_desktop_config.json``, top-level ``mcpServers``; each entry has
  ``command``, ``args`` and ``env``. It expands no variables, so the key itself goes in ``env``
  (that file lives in the user's profile, outside any repository).
* Claude Code: project scope is ``.mcp.json`` at the project root, top-level ``mcpServers``,
  entries with ``"type": "stdio"``; ``${VAR}`` and ``${VAR:-default}`` are expanded from the
  environment Claude Code runs in, so the key stays out of the file.
* VS Code: ``.vscode/mcp.json``, top-level ``servers``, entries with ``"type": "stdio"``, and an
  ``inputs`` list whose ``promptString`` with ``password: true`` asks for the key once and keeps it
  in VS Code's secret storage (``${input:linepack-api-key}``).
* project: a client-neutral ``.mcp.json`` to commit to a repository: top-level ``mcpServers`` (the
  key Claude Code and the other ``.mcp.json`` readers use) and nothing machine- or person-specific:
  every value is an environment reference, the key is ``${LINEPACK_API_KEY}``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from .settings import DEFAULT_API_URL

CLIENTS = ("claude-desktop", "claude-code", "vscode", "project")
KEY_PLACEHOLDER = "<paste your Linepack API key here>"
VSCODE_KEY_INPUT = "linepack-api-key"


def local_source() -> str | None:
    """Where this installation came from when it was installed from a local directory or wheel."""
    try:
        raw = metadata.distribution("linepack-mcp").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not raw:
        return None
    try:
        info = json.loads(raw)
    except json.JSONDecodeError:
        return None
    url = info.get("url", "")
    if not url.startswith("file://"):
        return None
    path = Path(unquote(urlsplit(url).path))
    return str(path) if path.exists() else None


def launcher(kind: str, from_spec: str | None) -> tuple[str, list[str]]:
    """(command, args) that start the server."""
    if kind == "path":
        running = sys.argv[0] if sys.argv and sys.argv[0] else ""
        for exe in (running, shutil.which("linepack-mcp")):
            if exe and Path(exe).name.startswith("linepack-mcp") and Path(exe).exists():
                return str(Path(exe).resolve()), []
        return str(Path(sys.executable).resolve()), ["-m", "linepack_mcp"]
    if from_spec:
        return "uvx", ["--from", from_spec, "linepack-mcp"]
    return "uvx", ["linepack-mcp"]


def build_config(
    client: str,
    *,
    environ: Mapping[str, str] | None = None,
    launcher_kind: str = "uvx",
    from_spec: str | None = None,
    name: str = "linepack",
    include_key: bool = False,
) -> dict[str, Any]:
    env = os.environ if environ is None else environ
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    if launcher_kind == "uvx" and from_spec is None and client != "project":
        from_spec = local_source()
    command, args = launcher(launcher_kind, from_spec)
    if client == "claude-desktop" and command == "uvx":
        # Claude Desktop starts servers with a minimal PATH: name uvx by its absolute path.
        command = shutil.which("uvx") or command
    url = (env.get("LINEPACK_API_URL") or "").strip() or DEFAULT_API_URL
    tenant = (env.get("LINEPACK_TENANT_ID") or "").strip()

    if client == "claude-desktop":
        key = (env.get("LINEPACK_API_KEY") or "").strip() if include_key else ""
        server_env = {"LINEPACK_API_URL": url, "LINEPACK_API_KEY": key or KEY_PLACEHOLDER}
        if tenant:
            server_env["LINEPACK_TENANT_ID"] = tenant
        return {"mcpServers": {name: {"command": command, "args": args, "env": server_env}}}

    if client == "claude-code":
        server_env = {
            "LINEPACK_API_URL": url,
            "LINEPACK_API_KEY": "${LINEPACK_API_KEY}",
            "LINEPACK_TENANT_ID": tenant or "${LINEPACK_TENANT_ID:-}",
        }
        return {"mcpServers": {name: {"type": "stdio", "command": command, "args": args, "env": server_env}}}

    if client == "vscode":
        server_env = {"LINEPACK_API_URL": url, "LINEPACK_API_KEY": f"${{input:{VSCODE_KEY_INPUT}}}"}
        if tenant:
            server_env["LINEPACK_TENANT_ID"] = tenant
        return {
            "inputs": [{
                "type": "promptString",
                "id": VSCODE_KEY_INPUT,
                "description": "Linepack API key",
                "password": True,
            }],
            "servers": {name: {"type": "stdio", "command": command, "args": args, "env": server_env}},
        }

    # project: committed to a repository; only environment references.
    server_env = {
        "LINEPACK_API_URL": f"${{LINEPACK_API_URL:-{DEFAULT_API_URL}}}",
        "LINEPACK_API_KEY": "${LINEPACK_API_KEY}",
        "LINEPACK_TENANT_ID": "${LINEPACK_TENANT_ID:-}",
    }
    return {"mcpServers": {name: {"type": "stdio", "command": command, "args": args, "env": server_env}}}


def guidance(client: str, config: dict[str, Any], include_key: bool) -> str:
    """What to do with the printed JSON (goes to stderr, so stdout stays pure JSON)."""
    lines: list[str] = []
    if client == "claude-desktop":
        lines.append("Merge this into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, "
                     "Windows: %APPDATA%\\Claude\\), then quit Claude Desktop fully and reopen it.")
        if include_key:
            lines.append("This output contains your API key: paste it only into that file and never commit it.")
        else:
            lines.append(f"Replace {KEY_PLACEHOLDER} with your key there (or rerun with --include-key); "
                         f"never commit a file that holds a key.")
    elif client == "claude-code":
        entry = next(iter(config["mcpServers"].values()))
        env_flags = " ".join(
            f'-e {k}="${k}"' if k != "LINEPACK_API_URL" else f"-e {k}={v}"
            for k, v in entry["env"].items() if k != "LINEPACK_TENANT_ID" or not v.startswith("${")
        )
        launch = " ".join([entry["command"], *entry["args"]])
        lines.append("Save as .mcp.json in your project root (Claude Code's project scope; it asks you to approve "
                     "the server on first use). Claude Code expands ${LINEPACK_API_KEY} from the environment it "
                     "was started in: export LINEPACK_API_KEY first. Never put the key itself in .mcp.json.")
        lines.append(f"Or, for yourself only (stored in ~/.claude.json, not in the project): "
                     f"claude mcp add linepack --scope user {env_flags} -- {launch}")
    elif client == "vscode":
        lines.append("Save as .vscode/mcp.json; VS Code asks for the key once and keeps it in its secret storage.")
    else:
        lines.append("Commit this as .mcp.json at the repository root: it holds no secret. Each person exports "
                     "LINEPACK_API_KEY (and LINEPACK_API_URL / LINEPACK_TENANT_ID if needed) in their own "
                     "environment.")
    args = next(iter((config.get("mcpServers") or config.get("servers")).values()))["args"]
    if "--from" in args:
        lines.append(f"The server is started from the local source {args[args.index('--from') + 1]} with uvx.")
    return "\n".join(lines)
