"""`linepack-mcp config`: ready-to-paste MCP client configuration.

What each client reads today:

* Claude Desktop: ``claude_desktop_config.json``, top-level ``mcpServers``; each entry has
  ``command``, ``args`` and ``env``. It expands no variables, so the key itself goes in ``env``
  (that file lives in the user's profile, outside any repository).
* Claude Code: project scope is ``.mcp.json`` at the project root, top-level ``mcpServers``,
  entries with ``"type": "stdio"``; ``${VAR}`` and ``${VAR:-default}`` are expanded from the
  environment Claude Code runs in, so the key stays out of the file. It starts servers in the
  directory it was started in and passes ``CLAUDE_PROJECT_DIR``.
* VS Code: ``.vscode/mcp.json``, top-level ``servers``, entries with ``"type": "stdio"``, and an
  ``inputs`` list whose ``promptString`` with ``password: true`` asks for the key once and keeps it
  in VS Code's secret storage (``${input:linepack-api-key}``); ``${workspaceFolder}`` is expanded.
* project: a client-neutral ``.mcp.json`` to commit to a repository: top-level ``mcpServers`` and
  nothing machine- or person-specific: every value is an environment reference.

How the server is launched. A configuration that is committed (claude-code, vscode, project) is run
by every teammate, so it must never name a package on an index that someone else could claim
(``uvx linepack-mcp`` while the name is unpublished) nor a path of the machine it was generated on.
It launches the package from the repository instead, with ``uv run --locked --project <dir>``: the
dependencies come pinned, with hashes, from ``mcp-server/uv.lock``, and once they are in uv's cache a
start needs no index at all. Only a pinned release (``--from linepack-mcp==X.Y.Z``) or a path inside
the project is accepted in their place.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from .settings import DEFAULT_API_URL

CLIENTS = ("claude-desktop", "claude-code", "vscode", "project")
COMMITTED = ("claude-code", "vscode", "project")
KEY_PLACEHOLDER = "<paste your Linepack API key here>"
VSCODE_KEY_INPUT = "linepack-api-key"
# How each committed client names the project root inside its config.
PROJECT_ROOT_VARIABLE = {
    "claude-code": "${CLAUDE_PROJECT_DIR:-.}",
    "project": "${CLAUDE_PROJECT_DIR:-.}",
    "vscode": "${workspaceFolder}",
}
_PINNED_RELEASE = re.compile(r"^linepack-mcp==\d+(\.\d+)*([a-z0-9.+-]*)$")


class ConfigCommandError(Exception):
    """`config` cannot produce a safe configuration from what it was given; the message says what to do."""


def local_source() -> Path | None:
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
    return path if path.exists() else None


def _inside(path: Path, root: Path) -> str | None:
    """`path` relative to `root` (POSIX spelling), or None when it is outside."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _source(from_spec: str | None) -> Path | str | None:
    if from_spec is None:
        return local_source()
    if _PINNED_RELEASE.match(from_spec):
        return from_spec
    candidate = Path(from_spec).expanduser()
    if candidate.exists():
        return candidate
    raise ConfigCommandError(
        f"--from {from_spec!r} is neither an existing path nor a pinned release (linepack-mcp==X.Y.Z). An unpinned "
        f"package name would run whatever the index serves under that name."
    )


def launcher(client: str, launcher_kind: str, from_spec: str | None, project_root: Path) -> tuple[str, list[str]]:
    """(command, args) that start the server for `client`."""
    committed = client in COMMITTED
    if launcher_kind == "path":
        if committed:
            raise ConfigCommandError(
                f"--launcher path writes this machine's absolute path into a file meant to be committed; use it "
                f"with --client claude-desktop only (--client {client} launches from the repository with uv)."
            )
        running = sys.argv[0] if sys.argv and sys.argv[0] else ""
        for exe in (running, shutil.which("linepack-mcp")):
            if exe and Path(exe).name.startswith("linepack-mcp") and Path(exe).exists():
                return str(Path(exe).resolve()), []
        return str(Path(sys.executable).resolve()), ["-m", "linepack_mcp"]

    source = _source(from_spec)
    if isinstance(source, str):  # a pinned release from the index
        return "uvx", ["--from", source, "linepack-mcp"]
    if source is None:
        raise ConfigCommandError(
            "this copy of linepack-mcp was not installed from a local directory or wheel, so there is nothing to "
            "launch it from: give --from with the mcp-server directory, a wheel inside the project, or a pinned "
            "release (linepack-mcp==X.Y.Z, once published)."
        )
    if committed:
        relative = _inside(source, project_root)
        if relative is None:
            raise ConfigCommandError(
                f"{source} is outside the project root {project_root.resolve()}: a committed configuration must not "
                f"hold a path of this machine. Run config from the root of the repository that holds mcp-server "
                f"(or pass --project-root), or use --from linepack-mcp==X.Y.Z once the package is published."
            )
        where = f"{PROJECT_ROOT_VARIABLE[client]}/{relative}" if relative != "." else PROJECT_ROOT_VARIABLE[client]
    else:
        where = str(source.resolve())
    if source.is_dir():
        # The lock file pins every dependency with its hash; --locked refuses to start if it is stale
        # instead of resolving again against the index.
        return "uv", ["run", "--locked", "--quiet", "--project", where, "linepack-mcp"]
    return "uvx", ["--from", where, "linepack-mcp"]


def build_config(
    client: str,
    *,
    environ: Mapping[str, str] | None = None,
    launcher_kind: str = "uv",
    from_spec: str | None = None,
    name: str = "linepack",
    include_key: bool = False,
    project_root: Path | None = None,
    writes: bool = False,
) -> dict[str, Any]:
    env = os.environ if environ is None else environ
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    command, args = launcher(client, launcher_kind, from_spec, project_root or Path.cwd())
    if client == "claude-desktop" and command in ("uv", "uvx"):
        # Claude Desktop starts servers with a minimal PATH: name uv by its absolute path.
        command = shutil.which(command) or command
    url = (env.get("LINEPACK_API_URL") or "").strip() or DEFAULT_API_URL
    tenant = (env.get("LINEPACK_TENANT_ID") or "").strip()
    write_switch = {"LINEPACK_MCP_WRITES": "on"} if writes else {}

    if client == "claude-desktop":
        key = (env.get("LINEPACK_API_KEY") or "").strip() if include_key else ""
        server_env = {"LINEPACK_API_URL": url, "LINEPACK_API_KEY": key or KEY_PLACEHOLDER, **write_switch}
        if tenant:
            server_env["LINEPACK_TENANT_ID"] = tenant
        return {"mcpServers": {name: {"command": command, "args": args, "env": server_env}}}

    if client == "claude-code":
        server_env = {
            "LINEPACK_API_URL": url,
            "LINEPACK_API_KEY": "${LINEPACK_API_KEY}",
            "LINEPACK_TENANT_ID": tenant or "${LINEPACK_TENANT_ID:-}",
            **write_switch,
        }
        return {"mcpServers": {name: {"type": "stdio", "command": command, "args": args, "env": server_env}}}

    if client == "vscode":
        server_env = {"LINEPACK_API_URL": url, "LINEPACK_API_KEY": f"${{input:{VSCODE_KEY_INPUT}}}", **write_switch}
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
        "LINEPACK_MCP_WRITES": "on" if writes else "${LINEPACK_MCP_WRITES:-off}",
    }
    return {"mcpServers": {name: {"type": "stdio", "command": command, "args": args, "env": server_env}}}


def guidance(client: str, config: dict[str, Any], include_key: bool) -> str:
    """What to do with the printed JSON (goes to stderr, so stdout stays pure JSON)."""
    lines: list[str] = []
    entry = next(iter((config.get("mcpServers") or config.get("servers")).values()))
    if client == "claude-desktop":
        lines.append("Merge this into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, "
                     "Windows: %APPDATA%\\Claude\\), then quit Claude Desktop fully and reopen it.")
        if include_key:
            lines.append("This output contains your API key: paste it only into that file and never commit it.")
        else:
            lines.append(f"Replace {KEY_PLACEHOLDER} with your key there (or rerun with --include-key); "
                         f"never commit a file that holds a key.")
    elif client == "claude-code":
        env_flags = " ".join(
            f'-e {k}="${k}"' if k != "LINEPACK_API_URL" else f"-e {k}={v}"
            for k, v in entry["env"].items() if not v.startswith("${LINEPACK_TENANT_ID")
        )
        launch = " ".join([entry["command"], *entry["args"]]).replace(PROJECT_ROOT_VARIABLE["claude-code"], "$PWD")
        lines.append("Save as .mcp.json in your project root (Claude Code's project scope; it asks you to approve "
                     "the server on first use). Claude Code expands ${LINEPACK_API_KEY} from the environment it "
                     "was started in: export LINEPACK_API_KEY first. Never put the key itself in .mcp.json.")
        lines.append(f"Or, for yourself only (stored in ~/.claude.json, not in the project; run from the project "
                     f"root): claude mcp add linepack --scope user {env_flags} -- {launch}")
    elif client == "vscode":
        lines.append("Save as .vscode/mcp.json; VS Code asks for the key once and keeps it in its secret storage.")
    else:
        lines.append("Commit this as .mcp.json at the repository root: it holds no secret and no path of this "
                     "machine. Each person exports LINEPACK_API_KEY (and LINEPACK_API_URL / LINEPACK_TENANT_ID / "
                     "LINEPACK_MCP_WRITES=on if needed) in their own environment.")
    if entry["command"].endswith("uv"):
        lines.append("It starts the server from the repository with uv (pip install uv, or see docs.astral.sh/uv): "
                     "dependencies pinned by mcp-server/uv.lock; after the first start it needs no package index.")
    writes = entry["env"].get("LINEPACK_MCP_WRITES")
    if writes is None:
        lines.append("Read-only: the tools that change data are not offered (rerun with --writes on to offer them).")
    elif writes != "on":
        lines.append("Read-only unless a person exports LINEPACK_MCP_WRITES=on: only then are the tools that change "
                     "data offered.")
    return "\n".join(lines)
