"""The CLI as a process: configuration errors, `config`, `check` without a gateway, stdio hygiene."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from conftest import mcp_client, run_cli

KEY = "lpk_cli_test_secret_0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({}, "LINEPACK_API_URL is not set"),
        ({"LINEPACK_API_URL": "http://127.0.0.1:9/graphql"}, "LINEPACK_API_KEY is not set"),
        ({"LINEPACK_API_URL": "file:///etc/passwd", "LINEPACK_API_KEY": KEY}, "http:// or https://"),
        ({"LINEPACK_API_URL": "http://127.0.0.1:9/graphql", "LINEPACK_API_KEY": "${LINEPACK_API_KEY}"},
         "literal placeholder"),
        ({"LINEPACK_API_URL": "http://127.0.0.1:9/graphql", "LINEPACK_API_KEY": KEY, "LINEPACK_LOG_LEVEL": "TRACE"},
         "LINEPACK_LOG_LEVEL"),
    ],
)
@pytest.mark.parametrize("command", [[], ["check"]])
def test_bad_configuration_exits_with_one_line(env, needle, command):
    proc = run_cli(*command, env=env)
    assert proc.returncode == 2
    assert proc.stdout == ""  # stdout is the protocol: nothing on it
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("linepack-mcp: ") and needle in lines[0]
    assert KEY not in proc.stderr


@pytest.mark.parametrize(
    ("client", "top"),
    [("claude-desktop", "mcpServers"), ("claude-code", "mcpServers"), ("vscode", "servers"), ("project", "mcpServers")],
)
def test_config_prints_json_with_the_clients_top_level_key(client, top):
    proc = run_cli("config", "--client", client, env={"LINEPACK_API_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    cfg = json.loads(proc.stdout)
    assert top in cfg and "linepack" in cfg[top]
    entry = cfg[top]["linepack"]
    assert entry["command"] and isinstance(entry["args"], list) and "LINEPACK_API_KEY" in entry["env"]
    assert KEY not in proc.stdout and KEY not in proc.stderr
    assert proc.stderr.strip()  # the advice goes to stderr


def test_config_include_key_only_for_desktop():
    ok = run_cli("config", "--client", "claude-desktop", "--include-key", env={"LINEPACK_API_KEY": KEY})
    assert ok.returncode == 0 and json.loads(ok.stdout)["mcpServers"]["linepack"]["env"]["LINEPACK_API_KEY"] == KEY
    assert "never commit" in ok.stderr
    bad = run_cli("config", "--client", "vscode", "--include-key", env={"LINEPACK_API_KEY": KEY})
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_version_and_help():
    assert run_cli("--version").stdout.startswith("linepack-mcp ")
    help_text = run_cli("--help").stdout
    for word in ("check", "config", "LINEPACK_API_URL", "LINEPACK_API_KEY", "LINEPACK_TENANT_ID", "LINEPACK_LOG_LEVEL"):
        assert word in help_text


def test_check_connection_refused():
    url = f"http://127.0.0.1:{free_port()}/graphql"
    proc = run_cli("check", env={"LINEPACK_API_URL": url, "LINEPACK_API_KEY": KEY})
    assert proc.returncode == 1
    assert "connection refused" in proc.stderr and "Remedy: check LINEPACK_API_URL" in proc.stderr
    assert proc.stdout == ""
    assert KEY not in proc.stderr


@pytest.mark.anyio
async def test_server_without_gateway_still_serves_and_explains(tmp_path: Path):
    url = f"http://127.0.0.1:{free_port()}/graphql"
    env = {"LINEPACK_API_URL": url, "LINEPACK_API_KEY": KEY, "LINEPACK_LOG_LEVEL": "DEBUG"}
    errlog = tmp_path / "stderr.log"
    async with mcp_client(env, errlog) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"pipeline_summary", "graphql_query", "validate", "whoami"} <= names
        result = await client.call_tool("pipeline_summary", {})
        assert result.is_error
        text = result.content[0].text
        assert "connection refused" in text and "LINEPACK_API_URL" in text
    log = errlog.read_text()
    assert "linepack-mcp" in log  # it did log, to stderr, at DEBUG
    assert KEY not in log


def test_committed_mcp_json_is_what_config_prints_for_this_repository():
    """The repository's .mcp.json is `config --client project` run at its root: nothing of one machine in it."""
    import subprocess

    from conftest import REPO_ROOT, linepack_mcp_exe

    proc = subprocess.run([linepack_mcp_exe(), "config", "--client", "project", "--from", "mcp-server"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    committed = (REPO_ROOT / ".mcp.json").read_text()
    assert json.loads(committed) == json.loads(proc.stdout)
    assert str(REPO_ROOT) not in committed and "lpk_" not in committed
