"""Pure functions: configuration, redaction, Retry-After, read-only detection, client configs."""

from __future__ import annotations

import email.utils
import json
import logging
from pathlib import Path

import pytest
from graphql import GraphQLError

from linepack_mcp.client import backoff_delay, format_graphql_error, parse_retry_after
from linepack_mcp.config_cmd import CLIENTS, KEY_PLACEHOLDER, ConfigCommandError, build_config
from linepack_mcp.logs import RedactingFormatter, redact, register_secret
from linepack_mcp.schema import inspect_document
from linepack_mcp.settings import ConfigError, load_settings

GOOD = {"LINEPACK_API_URL": "http://localhost:4000/graphql", "LINEPACK_API_KEY": "lpk_test_0123456789"}


def test_settings_minimal():
    s = load_settings(GOOD)
    assert s.api_url == GOOD["LINEPACK_API_URL"]
    assert s.tenant_id is None and s.log_level == "INFO"
    assert s.origin == "http://localhost:4000"
    assert s.introspect_url == "http://localhost:4000/auth/introspect"
    assert "lpk_test" not in repr(s)


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({}, "LINEPACK_API_URL is not set"),
        ({"LINEPACK_API_URL": "http://x/graphql"}, "LINEPACK_API_KEY is not set"),
        ({"LINEPACK_API_URL": "   ", "LINEPACK_API_KEY": "k"}, "LINEPACK_API_URL is not set"),
        (GOOD | {"LINEPACK_API_URL": "ftp://host/graphql"}, "must be an http:// or https:// URL"),
        (GOOD | {"LINEPACK_API_URL": "localhost:4000/graphql"}, "must be an http:// or https:// URL"),
        (GOOD | {"LINEPACK_API_URL": "http:///graphql"}, "must be an http:// or https:// URL"),
        (GOOD | {"LINEPACK_API_URL": "${LINEPACK_API_URL}"}, "literal placeholder"),
        (GOOD | {"LINEPACK_API_KEY": "${LINEPACK_API_KEY}"}, "literal placeholder '${LINEPACK_API_KEY}'"),
        (GOOD | {"LINEPACK_API_KEY": "${input:linepack-api-key}"}, "did not substitute"),
        (GOOD | {"LINEPACK_API_KEY": KEY_PLACEHOLDER}, "literal placeholder"),
        (GOOD | {"LINEPACK_API_KEY": "Bearer lpk_abc"}, "whitespace"),
        (GOOD | {"LINEPACK_TENANT_ID": "${LINEPACK_TENANT_ID}"}, "LINEPACK_TENANT_ID is the literal placeholder"),
        (GOOD | {"LINEPACK_LOG_LEVEL": "LOUD"}, "DEBUG, INFO or WARN"),
        (GOOD | {"LINEPACK_MAX_RETRIES": "many"}, "LINEPACK_MAX_RETRIES must be an integer"),
    ],
)
def test_settings_errors_are_one_clear_line(env, needle):
    with pytest.raises(ConfigError) as info:
        load_settings(env)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message
    assert "lpk_abc" not in message  # a key with a stray character is never echoed


def test_settings_optional_values():
    s = load_settings(GOOD | {"LINEPACK_TENANT_ID": " 2b7c0f8e-1111-4222-8333-944445555666 ", "LINEPACK_LOG_LEVEL": "warn"})
    assert s.tenant_id == "2b7c0f8e-1111-4222-8333-944445555666"
    assert s.log_level == "WARNING"
    assert load_settings(GOOD | {"LINEPACK_TENANT_ID": ""}).tenant_id is None  # ${VAR:-} expands to empty
    assert load_settings(GOOD | {"LINEPACK_LOG_LEVEL": "DEBUG"}).log_level == "DEBUG"
    assert load_settings(GOOD | {"LINEPACK_API_URL": "https://api.example.com/graphql"}).origin == "https://api.example.com"


def test_redaction():
    register_secret("lpk_supersecret_value")
    assert "supersecret" not in redact("key lpk_supersecret_value used")
    assert redact("Authorization: Bearer abc.def.ghi") == "Authorization: Bearer ***"
    assert "lpk_other" not in redact("another lpk_other_key123")
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "sent %s", ("lpk_supersecret_value",), None)
    assert "supersecret" not in RedactingFormatter("%(message)s").format(record)


def test_retry_after():
    assert parse_retry_after("7") == 7
    assert parse_retry_after("0.2") == 1
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    now = 1_700_000_000.0
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == 30
    assert backoff_delay(0, 12) == 12.0
    assert 0.5 <= backoff_delay(0, None) <= 0.75
    assert 2.0 <= backoff_delay(2, None) <= 3.0


def test_graphql_error_keeps_code():
    text = format_graphql_error({"message": "stale", "path": ["updateAsset"], "extensions": {"code": "CONFLICT"}})
    assert text == "[CONFLICT] stale (at updateAsset)"


@pytest.mark.parametrize(
    ("doc", "read_only"),
    [
        ("{ me { id } }", True),
        ("query A { me { id } } query B { pipelineSummary { totalAssets } }", True),
        ("mutation { createAsset(input: {type: PIPELINE, name: \"x\"}) { id } }", False),
        ("query A { me { id } } mutation B { updateAsset(id: 1, version: 1, input: {}) { id } }", False),
        ("subscription { x }", False),
    ],
)
def test_read_only_detection(doc, read_only):
    assert inspect_document(doc).read_only is read_only


def test_syntax_error_is_reported():
    with pytest.raises(GraphQLError):
        inspect_document("query {")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository holding the package source at mcp-server/ (a directory with a pyproject.toml)."""
    (tmp_path / "mcp-server").mkdir()
    (tmp_path / "mcp-server" / "pyproject.toml").write_text("[project]\nname = 'linepack-mcp'\n")
    return tmp_path


@pytest.mark.parametrize(
    ("client", "top"),
    [("claude-desktop", "mcpServers"), ("claude-code", "mcpServers"), ("vscode", "servers"), ("project", "mcpServers")],
)
def test_config_shapes(client, top, project: Path):
    env = GOOD | {"LINEPACK_TENANT_ID": "t-1"}
    cfg = json.loads(json.dumps(build_config(client, environ=env, from_spec=str(project / "mcp-server"),
                                             project_root=project)))
    assert top in cfg
    entry = cfg[top]["linepack"]
    assert {"command", "args", "env"} <= set(entry)
    assert Path(entry["command"]).name == "uv"
    assert entry["args"][:3] == ["run", "--locked", "--quiet"] and entry["args"][-1] == "linepack-mcp"
    where = entry["args"][entry["args"].index("--project") + 1]
    key = entry["env"]["LINEPACK_API_KEY"]
    assert GOOD["LINEPACK_API_KEY"] not in json.dumps(cfg)  # never unless asked for
    if client == "claude-desktop":
        # The user's own profile: an absolute path is right there.
        assert where == str((project / "mcp-server").resolve())
        assert key == KEY_PLACEHOLDER and "type" not in entry
        assert entry["env"]["LINEPACK_API_URL"] == GOOD["LINEPACK_API_URL"]
    else:
        # Committed: no path of this machine, the project root as the client names it.
        assert str(project) not in json.dumps(cfg)
        assert where == ("${workspaceFolder}/mcp-server" if client == "vscode" else "${CLAUDE_PROJECT_DIR:-.}/mcp-server")
    if client == "vscode":
        assert entry["type"] == "stdio" and key == "${input:linepack-api-key}"
        assert cfg["inputs"][0] == {"type": "promptString", "id": "linepack-api-key",
                                    "description": "Linepack API key", "password": True}
    elif client != "claude-desktop":
        assert entry["type"] == "stdio" and key == "${LINEPACK_API_KEY}"
    if client == "project":
        assert all(v.startswith("${") for v in entry["env"].values())
        assert entry["env"]["LINEPACK_MCP_WRITES"] == "${LINEPACK_MCP_WRITES:-off}"


def test_config_desktop_include_key(project: Path):
    cfg = build_config("claude-desktop", environ=GOOD, include_key=True, from_spec=str(project / "mcp-server"))
    assert cfg["mcpServers"]["linepack"]["env"]["LINEPACK_API_KEY"] == GOOD["LINEPACK_API_KEY"]


def test_config_path_launcher_only_where_a_machine_path_belongs(project: Path):
    entry = build_config("claude-desktop", environ=GOOD, launcher_kind="path")["mcpServers"]["linepack"]
    assert entry["command"].startswith("/")
    for client in ("claude-code", "vscode", "project"):
        with pytest.raises(ConfigCommandError, match="committed"):
            build_config(client, environ=GOOD, launcher_kind="path", project_root=project)


def test_committed_config_never_names_an_unpinned_package_or_a_path_outside_the_project(project: Path, tmp_path_factory):
    for spec in ("linepack-mcp", "linepack-mcp>=0.1", "some-other-package"):
        with pytest.raises(ConfigCommandError, match="pinned release"):
            build_config("project", environ=GOOD, from_spec=spec, project_root=project)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    with pytest.raises(ConfigCommandError, match="outside the project root"):
        build_config("project", environ=GOOD, from_spec=str(elsewhere), project_root=project)
    pinned = build_config("project", environ=GOOD, from_spec="linepack-mcp==1.2.3", project_root=project)
    assert pinned["mcpServers"]["linepack"]["args"] == ["--from", "linepack-mcp==1.2.3", "linepack-mcp"]
    wheel = project / "dist" / "linepack_mcp-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"")
    from_wheel = build_config("project", environ=GOOD, from_spec=str(wheel), project_root=project)
    assert from_wheel["mcpServers"]["linepack"]["args"] == [
        "--from", "${CLAUDE_PROJECT_DIR:-.}/dist/linepack_mcp-0.1.0-py3-none-any.whl", "linepack-mcp"]


def test_config_writes_switch(project: Path):
    src = str(project / "mcp-server")
    on = build_config("claude-code", environ=GOOD, from_spec=src, project_root=project, writes=True)
    assert on["mcpServers"]["linepack"]["env"]["LINEPACK_MCP_WRITES"] == "on"
    off = build_config("claude-code", environ=GOOD, from_spec=src, project_root=project)
    assert "LINEPACK_MCP_WRITES" not in off["mcpServers"]["linepack"]["env"]  # off is the default


def test_clients_list():
    assert CLIENTS == ("claude-desktop", "claude-code", "vscode", "project")
