"""The three ways to install and run linepack-mcp, done for real but cheaply:

* ``pip install -e mcp-server``: this test session itself runs from it (checked below);
* ``uvx``: from a built wheel and from the source directory, including a full MCP session over
  stdio against the stack with the server started by ``uvx --from <wheel> linepack-mcp``;
* ``pip install <wheel>`` into a fresh virtual environment that already holds an old graphql-core, then
  ``config`` and ``check`` (which reads the schema);
* the committed project configuration (``config --client project``), started the way Claude Code starts it
  from a fresh copy of the repository, with no package index reachable.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import linepack_mcp
from conftest import MCP_DIR, Stack, mcp_client

pytestmark = pytest.mark.slow


def _tool(name: str) -> str | None:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def _base_python() -> str:
    return getattr(sys, "_base_executable", None) or sys.executable


def _uv_env() -> dict[str, str]:
    # Use this machine's Python; never download one.
    return os.environ | {"UV_PYTHON": _base_python(), "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}


def run(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    uv = _tool("uv")
    if uv:
        run([uv, "build", "--wheel", "--out-dir", str(out), str(MCP_DIR)], env=_uv_env())
    else:
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out), str(MCP_DIR)])
    (whl,) = out.glob("linepack_mcp-*.whl")
    return whl


def test_editable_install_runs_this_suite():
    src = (MCP_DIR / "src").resolve()
    if src not in Path(linepack_mcp.__file__).resolve().parents:
        pytest.skip(f"this session imports linepack_mcp from {linepack_mcp.__file__}, not an editable install")
    assert Path(sys.executable).parent.joinpath("linepack-mcp").exists()


def test_uvx_from_wheel_and_source(wheel: Path):
    uvx = _tool("uvx")
    if not uvx:
        pytest.skip("uv is not installed (pip install uv, or the [test] extra), so uvx cannot be tested")
    version = run([uvx, "--from", str(wheel), "linepack-mcp", "--version"], env=_uv_env())
    assert version.stdout.strip() == f"linepack-mcp {linepack_mcp.__version__}"
    cfg = run([uvx, "--from", str(wheel), "linepack-mcp", "config", "--client", "claude-desktop"], env=_uv_env())
    assert json.loads(cfg.stdout)["mcpServers"]["linepack"]["args"] == ["--from", str(wheel), "linepack-mcp"]
    # A wheel outside the project cannot go into a committed configuration.
    refused = subprocess.run([uvx, "--from", str(wheel), "linepack-mcp", "config", "--client", "project"],
                             env=_uv_env(), capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "outside the project root" in refused.stderr
    src = run([uvx, "--from", str(MCP_DIR), "linepack-mcp", "--version"], env=_uv_env())
    assert src.stdout.strip() == version.stdout.strip()


@pytest.mark.anyio
async def test_uvx_server_over_stdio(wheel: Path, stack: Stack):
    uvx = _tool("uvx")
    if not uvx:
        pytest.skip("uv is not installed (pip install uv, or the [test] extra), so uvx cannot be tested")
    # An MCP client passes only a small allow-list of its environment to the server it starts, so
    # uv's own settings and the machine's TLS trust settings are handed on explicitly here.
    passed = ("UV_", "SSL_CERT_", "REQUESTS_CA_BUNDLE", "PIP_", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
              "http_proxy", "https_proxy", "no_proxy")
    env = stack.env() | {k: v for k, v in _uv_env().items() if k.startswith(passed)}
    async with mcp_client(env, command=uvx, args=["--from", str(wheel), "linepack-mcp"]) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "pipeline_summary" in names
        result = await client.call_tool("pipeline_summary", {})
    assert not result.is_error, result.content
    assert result.structured_content["tenantId"] == stack.tenant_id


def test_pip_install_wheel_into_a_venv_with_an_old_graphql_core(wheel: Path, stack: Stack, tmp_path: Path):
    """graphql-core 3.2.8 cannot read the gateway's schema; installing linepack-mcp must move it on, and `check`
    must say so when the schema cannot be read."""
    venv = tmp_path / "venv"
    run([_base_python(), "-m", "venv", str(venv)])
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    pip = [str(bindir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    run([*pip, "graphql-core==3.2.8"])
    run([*pip, str(wheel)])
    version = run([str(bindir / "python"), "-c", "import graphql; print(graphql.__version__)"]).stdout.strip()
    assert tuple(int(p) for p in re.findall(r"\d+", version)[:3]) >= (3, 2, 11), version
    exe = str(bindir / "linepack-mcp")
    assert run([exe, "--version"]).stdout.strip() == f"linepack-mcp {linepack_mcp.__version__}"
    cfg = json.loads(run([exe, "config", "--client", "claude-desktop", "--launcher", "path"]).stdout)
    assert cfg["mcpServers"]["linepack"]["command"] == str(Path(exe).resolve())
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ} | stack.env()
    check = run([exe, "check"], env=env)
    assert check.stdout.startswith("OK:") and "Schema:" in check.stdout

    # Forced back to the old release (pip would not do this by itself), check fails and says what to do.
    run([*pip, "--no-deps", "graphql-core==3.2.8"])
    failed = subprocess.run([exe, "check"], env=env, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "schema could not be read" in failed.stderr and "graphql-core >= 3.2.11" in failed.stderr


def _expand(value: str, env: dict[str, str]) -> str:
    """${VAR} and ${VAR:-default}, as Claude Code expands them in .mcp.json."""
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}",
                  lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)


@pytest.mark.anyio
async def test_project_config_runs_from_a_fresh_copy_without_a_package_index(stack: Stack, tmp_path: Path):
    uv = _tool("uv")
    if not uv:
        pytest.skip("uv is not installed (the [test] extra brings it)")
    cache = tmp_path / "uv-cache"
    base_env = _uv_env() | {"UV_CACHE_DIR": str(cache)}
    # Someone used it once on this machine (with the index reachable): uv's cache holds the locked packages.
    warm = tmp_path / "warm"
    shutil.copytree(MCP_DIR, warm / "mcp-server", ignore=shutil.ignore_patterns(".venv", "__pycache__", "*.egg-info"))
    run([uv, "run", "--locked", "--quiet", "--project", str(warm / "mcp-server"), "linepack-mcp", "--version"],
        env=base_env)

    # A fresh copy of the repository; the configuration is generated there and holds nothing of this machine.
    clone = tmp_path / "clone"
    shutil.copytree(MCP_DIR, clone / "mcp-server", ignore=shutil.ignore_patterns(".venv", "__pycache__", "*.egg-info"))
    proc = subprocess.run([str(Path(sys.executable).parent / "linepack-mcp"), "config", "--client", "project",
                           "--from", "mcp-server"], cwd=clone, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    entry = json.loads(proc.stdout)["mcpServers"]["linepack"]
    assert str(tmp_path) not in proc.stdout and "linepack-mcp==" not in proc.stdout
    assert entry["command"] == "uv" and "--locked" in entry["args"]

    # No package index: every request to it goes to a proxy that refuses connections.
    offline = base_env | {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
                          "ALL_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost"}
    probe = subprocess.run([uv, "pip", "compile", "--no-cache", "-"], input="six==1.16.0\n", env=offline,
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode != 0  # the index really is out of reach

    # Launched as Claude Code launches a project server: in the project root, variables expanded from its env.
    person = {"LINEPACK_API_KEY": stack.api_key, "LINEPACK_API_URL": stack.gateway_url}
    server_env = {k: _expand(v, person) for k, v in entry["env"].items()}
    args = [_expand(a, person) for a in entry["args"]]
    env = offline | server_env
    async with mcp_client(env, command=uv, args=args, cwd=clone) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "pipeline_summary" in names and "create_asset" not in names
        result = await client.call_tool("pipeline_summary", {})
    assert not result.is_error, result.content
    assert result.structured_content["tenantId"] == stack.tenant_id
