"""The three ways to install and run linepack-mcp, done for real but cheaply:

* ``pip install -e mcp-server``: this test session itself runs from it (checked below);
* ``uvx``: from a built wheel and from the source directory, including a full MCP session over
  stdio against the stack with the server started by ``uvx --from <wheel> linepack-mcp``;
* ``pip install <wheel>`` into a fresh virtual environment, then ``config`` and ``check``.
"""

from __future__ import annotations

import json
import os
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
    cfg = run([uvx, "--from", str(wheel), "linepack-mcp", "config", "--client", "project"], env=_uv_env())
    assert "mcpServers" in json.loads(cfg.stdout)
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


def test_pip_install_wheel_into_fresh_venv(wheel: Path, stack: Stack, tmp_path: Path):
    venv = tmp_path / "venv"
    run([_base_python(), "-m", "venv", str(venv)])
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    run([str(bindir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(wheel)])
    exe = str(bindir / "linepack-mcp")
    assert run([exe, "--version"]).stdout.strip() == f"linepack-mcp {linepack_mcp.__version__}"
    cfg = json.loads(run([exe, "config", "--client", "claude-desktop", "--launcher", "path"]).stdout)
    assert cfg["mcpServers"]["linepack"]["command"] == str(Path(exe).resolve())
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ} | stack.env()
    check = run([exe, "check"], env=env)
    assert check.stdout.startswith("OK:")
