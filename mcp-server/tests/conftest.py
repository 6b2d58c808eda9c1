"""Fixtures: the real Linepack stack, keys made with the project's CLI, and MCP stdio sessions.

The stack is started once per test session from the repository root with
``npx tsx scripts/start.ts --ephemeral --state-dir <tmp>``; it writes ``<tmp>/dev.json`` when
ready and is stopped with SIGTERM to its process group at the end. To reuse a stack that is
already running, point ``LINEPACK_TEST_DEV_JSON`` at its ``dev.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters, stdio_client

MCP_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = MCP_DIR.parent
STACK_TIMEOUT_S = 120.0


def linepack_mcp_exe() -> str:
    """The `linepack-mcp` script of the environment running the tests."""
    exe = Path(sys.executable).parent / ("linepack-mcp.exe" if os.name == "nt" else "linepack-mcp")
    if exe.exists():
        return str(exe)
    found = shutil.which("linepack-mcp")
    if not found:
        pytest.fail("linepack-mcp is not installed in this environment: pip install -e 'mcp-server[test]'")
    return found


@dataclass
class Stack:
    gateway_url: str
    api_key: str
    tenant_id: str
    state_dir: Path
    dev: dict[str, Any]

    def env(self, **overrides: str | None) -> dict[str, str]:
        """Environment for a linepack-mcp process talking to this stack."""
        env = {
            "LINEPACK_API_URL": self.gateway_url,
            "LINEPACK_API_KEY": self.api_key,
            "LINEPACK_LOG_LEVEL": "INFO",
        }
        for k, v in overrides.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def graphql(self, query: str, variables: dict[str, Any] | None = None, key: str | None = None) -> dict[str, Any]:
        r = httpx.post(
            self.gateway_url,
            json={"query": query, "variables": variables or {}},
            headers={"Authorization": f"Bearer {key or self.api_key}"},
            timeout=30,
        )
        body = r.json()
        assert r.status_code == 200 and not body.get("errors"), (r.status_code, body)
        return body["data"]

    def create_key(self, scopes: str, tier: str = "pro") -> dict[str, Any]:
        """A key made by the project's own CLI: `npx linepack keys create ... --json`."""
        env = os.environ | {"LINEPACK_STATE_DIR": str(self.state_dir)}
        proc = subprocess.run(
            ["npx", "linepack", "keys", "create", "--tenant", self.tenant_id, "--scopes", scopes,
             "--tier", tier, "--json"],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=90,
        )
        assert proc.returncode == 0, f"linepack keys create failed ({proc.returncode}): {proc.stderr[-2000:]}"
        for line in reversed(proc.stdout.strip().splitlines()):
            line = line.strip()
            if line.startswith("{"):
                return json.loads(line)
        raise AssertionError(f"no JSON object in the output of linepack keys create: {proc.stdout[-2000:]}")

    def create_tenant(self, name: str) -> dict[str, Any]:
        """A tenant of its own (`npx linepack tenants create`) with a key of every read scope and assets:write."""
        proc = subprocess.run(
            ["npx", "linepack", "tenants", "create", "--name", f"{name} {time.time_ns()}", "--tier", "pro", "--json"],
            cwd=REPO_ROOT, env=os.environ | {"LINEPACK_STATE_DIR": str(self.state_dir)}, capture_output=True,
            text=True, timeout=90,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        tenant_id = json.loads(proc.stdout.strip().splitlines()[-1])["id"]
        key = Stack(self.gateway_url, self.api_key, tenant_id, self.state_dir, self.dev).create_key(
            "assets:read,assets:write,measurements:read,analytics:read,compliance:read")["apiKey"]
        return {"tenantId": tenant_id, "apiKey": key}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_server(stack: Stack, log_path: Path, **env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`linepack-mcp serve --transport streamable-http` on a free loopback port; yields its base URL and process.

    Its environment holds the stack's demo key, which it must never use for anyone, nor log (checked at the end).
    """
    port = free_port()
    full_env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ} | stack.env() | env
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [linepack_mcp_exe(), "serve", "--transport", "streamable-http", "--port", str(port)],
            env=full_env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, f"the HTTP server exited: {log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"the HTTP server did not start: {log_path.read_text()[-3000:]}"
            time.sleep(0.2)
        yield base, proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log_text = log_path.read_text(errors="replace")
        assert stack.api_key not in log_text and "lpk_" not in log_text


def _tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_process_group(proc: subprocess.Popen[bytes], grace_s: float = 15.0) -> None:
    """SIGTERM the stack's process group; SIGKILL whatever is left of it after `grace_s`."""
    pgid = proc.pid  # started with start_new_session=True: the leader's pid is the group id
    proc.poll()
    if not _group_alive(pgid):
        return
    os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        proc.poll()  # reap the leader (npx) so a zombie does not count as alive
        if not _group_alive(pgid):
            return
        time.sleep(0.2)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    reuse = os.environ.get("LINEPACK_TEST_DEV_JSON")
    if reuse:
        dev = json.loads(Path(reuse).read_text())
        yield Stack(dev["gatewayUrl"], dev["apiKey"], dev["tenantId"], Path(reuse).parent, dev)
        return

    if not (REPO_ROOT / "scripts" / "start.ts").exists():
        pytest.fail(f"{REPO_ROOT}/scripts/start.ts not found: the integration tests need the Linepack stack")
    state_dir = Path(tempfile.mkdtemp(prefix="linepack-mcp-stack-"))
    log_path = state_dir / "stack.log"
    dev_json = state_dir / "dev.json"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            ["npx", "tsx", "scripts/start.ts", "--ephemeral", "--state-dir", str(state_dir)],
            cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + STACK_TIMEOUT_S
        dev: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            if dev_json.exists():
                try:
                    dev = json.loads(dev_json.read_text())
                    break
                except json.JSONDecodeError:
                    pass  # being written
            if proc.poll() is not None:
                pytest.fail(f"the Linepack stack exited with {proc.returncode} before it was ready:\n{_tail(log_path)}")
            time.sleep(0.25)
        if dev is None:
            pytest.fail(f"the Linepack stack was not ready within {STACK_TIMEOUT_S:.0f} s:\n{_tail(log_path)}")
        yield Stack(dev["gatewayUrl"], dev["apiKey"], dev["tenantId"], state_dir, dev)
    finally:
        stop_process_group(proc)
        shutil.rmtree(state_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def narrow_key(stack: Stack) -> dict[str, Any]:
    """A key with assets:read only."""
    return stack.create_key("assets:read")


@pytest.fixture(scope="session")
def seeded(stack: Stack) -> dict[str, Any]:
    """A pipeline with geometry, a segment, and ILI measurements, made through the API."""
    tag = f"MCP-{int(time.time() * 1000) % 10_000_000}"
    pipe = stack.graphql(
        "mutation($i: CreateAssetInput!) { createAsset(input: $i) { id name version } }",
        {"i": {"type": "PIPELINE", "name": f"{tag} Gas Line", "status": "ACTIVE", "product": "NATURAL_GAS",
               "regulation": "CFR_192", "beginStationM": 0, "endStationM": 12500, "outsideDiameterMm": 610,
               "wallThicknessMm": 9.5, "smysMpa": 448, "maopKpa": 7000, "classLocation": 2, "inHca": True}},
    )["createAsset"]
    seg = stack.graphql(
        "mutation($i: CreateAssetInput!) { createAsset(input: $i) { id name } }",
        {"i": {"type": "SEGMENT", "name": f"{tag} Segment A", "parentId": pipe["id"], "status": "ACTIVE",
               "beginStationM": 0, "endStationM": 2500, "outsideDiameterMm": 610, "wallThicknessMm": 9.5,
               "smysMpa": 448, "maopKpa": 7000, "classLocation": 2}},
    )["createAsset"]
    rec = stack.graphql(
        "mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount ids } }",
        {"i": [
            {"idempotencyKey": f"{tag}-run", "assetId": pipe["id"], "type": "ILI_RUN",
             "observedAt": "2025-05-01T00:00:00.000Z", "source": "ILI", "runId": f"{tag}-R1"},
            {"idempotencyKey": f"{tag}-a1", "assetId": pipe["id"], "type": "ILI_ANOMALY",
             "observedAt": "2025-05-01T00:00:00.000Z", "source": "ILI", "runId": f"{tag}-R1",
             "featureType": "METAL_LOSS", "surface": "EXTERNAL", "stationM": 1234.5, "odometerM": 1234.5,
             "clockDeg": 180, "depthPctWt": 45, "lengthMm": 200, "widthMm": 80},
            {"idempotencyKey": f"{tag}-cp", "assetId": pipe["id"], "type": "CP_PIPE_TO_SOIL",
             "observedAt": "2025-06-01T00:00:00.000Z", "source": "FIELD", "stationM": 500, "value": -950,
             "unit": "MV"},
        ]},
    )["recordMeasurements"]
    return {"tag": tag, "pipeline": pipe, "segment": seg, "measurement_ids": rec["ids"]}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def mcp_client(
    env: dict[str, str], errlog_path: Path | None = None, command: str | None = None, args: list[str] | None = None,
    cwd: Path | None = None, **client_options: Any,
) -> AsyncIterator[Client]:
    """An MCP client from the SDK that launches linepack-mcp over stdio (`client_options`: the SDK Client's, e.g. an
    elicitation_callback)."""
    params = StdioServerParameters(command=command or linepack_mcp_exe(), args=args or [], env=env, cwd=cwd)
    if errlog_path is None:
        async with Client(params, **client_options) as client:
            yield client
        return
    with open(errlog_path, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), **client_options) as client:
            yield client


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the linepack-mcp CLI with exactly `env` (plus PATH/HOME) as its environment."""
    base = {k: os.environ[k] for k in ("PATH", "HOME", "SYSTEMROOT", "TMPDIR") if k in os.environ}
    return subprocess.run([linepack_mcp_exe(), *args], env=base | (env or {}), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
