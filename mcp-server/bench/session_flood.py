"""The hosted MCP session flood, measured: one tenant's key opens sessions and abandons them; another tenant opens
sessions before, during and after.

    mcp-server/.venv/bin/python mcp-server/bench/session_flood.py                 # starts an ephemeral stack
    mcp-server/.venv/bin/python mcp-server/bench/session_flood.py --dev-json .linepack/dev.json --flood 9697
    ... --compare-before          # also the same flood against the server as it was before the limits: the
                                  # same build_server() on the SDK's own session manager (10,000 sessions in all)

For each configuration it starts `linepack-mcp serve --transport streamable-http` on loopback, and prints the open
sessions (the server's /healthz) and the server's resident memory (VmRSS) before and after the flood, how the
flood's openings were answered, and tenant B's session-open latency (median of --probes openings: initialize and
the initialized notification, with the SDK's own client) during and after the flood as a ratio to its baseline,
taken on the same server before the flood. The flood runs in a process of its own; on one machine it still takes
CPU from the server and from B. Numbers are measured, not asserted; `--json` adds one `BENCH_JSON {...}`
line. Tenant A is the stack's demo tenant; tenant B is created for the run. Linux only (VmRSS from /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

MCP_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = MCP_DIR.parent
EXE = Path(sys.executable).parent / "linepack-mcp"
# The server before the limits, as `serve --transport streamable-http` built it then: build_server() and the SDK's
# streamable HTTP app with its defaults (at most 10,000 sessions, 30 min idle timeout deferred by a GET stream).
# Only /healthz's session count is added, read from the SDK's table, so both servers are measured alike.
BEFORE = """
import sys, uvicorn
from linepack_mcp.cli import transport_security
from linepack_mcp.server import AppState, build_server
from linepack_mcp.settings import load_settings
settings = load_settings(per_request_credentials=True)
state = AppState(settings, per_request_credentials=True)
server = build_server(settings, per_request_credentials=True, state=state)
port = int(sys.argv[1])
app = server.streamable_http_app(host="127.0.0.1", transport_security=transport_security("127.0.0.1", port, [], []))
state.session_health = lambda: {"open": len(server.session_manager._server_instances), "closedToAdmit": 0,
                                "refused": 0, "limits": {"perCredential": "-", "perTenant": "-",
                                                         "total": server.session_manager.max_sessions}}
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
"""


@dataclass
class Run:
    name: str
    command: list[str]
    limits: dict[str, Any] = field(default_factory=dict)
    before: dict[str, float] = field(default_factory=dict)
    after: dict[str, float] = field(default_factory=dict)
    flood_answers: Counter[str] = field(default_factory=Counter)
    flood_s: float = 0.0
    b_baseline_ms: float = 0.0
    b_during_ms: float = 0.0
    b_after_ms: float = 0.0
    b_refused: int = 0
    b_tool_ok: bool = False


# -- the stack and the keys --------------------------------------------------------------------------------------


@contextmanager
def stack(dev_json: str | None) -> Iterator[dict[str, Any]]:
    """The Linepack stack: the one `dev_json` describes, or an ephemeral one started (and stopped) here."""
    if dev_json:
        dev = json.loads(Path(dev_json).read_text())
        yield dev | {"stateDir": str(Path(dev_json).resolve().parent)}
        return
    state_dir = Path(tempfile.mkdtemp(prefix="linepack-mcp-bench-"))
    log = open(state_dir / "stack.log", "wb")
    proc = subprocess.Popen(["npx", "tsx", "scripts/start.ts", "--ephemeral", "--state-dir", str(state_dir)],
                            cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not (state_dir / "dev.json").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the Linepack stack did not start; see {state_dir / 'stack.log'}")
            time.sleep(0.25)
        time.sleep(0.5)  # dev.json is written in one go, but give it a moment
        yield json.loads((state_dir / "dev.json").read_text()) | {"stateDir": str(state_dir)}
    finally:
        _stop(proc)
        log.close()
        shutil.rmtree(state_dir, ignore_errors=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def linepack_cli(dev: dict[str, Any], *args: str) -> dict[str, Any]:
    proc = subprocess.run(["npx", "linepack", *args, "--json"], cwd=REPO_ROOT, capture_output=True, text=True,
                          env=os.environ | {"LINEPACK_STATE_DIR": dev["stateDir"]}, timeout=120)
    if proc.returncode != 0:
        raise SystemExit(f"npx linepack {' '.join(args)} failed: {proc.stderr[-2000:]}")
    return json.loads([line for line in proc.stdout.splitlines() if line.strip().startswith("{")][-1])


def tenant_b_key(dev: dict[str, Any]) -> str:
    tenant = linepack_cli(dev, "tenants", "create", "--name", f"MCP flood bench B {time.time_ns()}", "--tier", "pro")
    return str(linepack_cli(dev, "keys", "create", "--tenant", tenant["id"], "--scopes", "assets:read",
                            "--tier", "pro")["apiKey"])


# -- the MCP server ----------------------------------------------------------------------------------------------


@contextmanager
def mcp_server(dev: dict[str, Any], command: list[str], log_path: Path) -> Iterator[tuple[str, int]]:
    """The server `command` starts (its port appended), on loopback, with the settings' defaults."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ} | {
        "LINEPACK_API_URL": dev["gatewayUrl"], "LINEPACK_LOG_LEVEL": "WARN"}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([*command, str(port)], env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"linepack-mcp did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.2)
        yield base, proc.pid
    finally:
        _stop(proc)


def observe(base: str, pid: int) -> dict[str, float]:
    sessions = httpx.get(f"{base}/healthz", timeout=30).json()["sessions"]
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return {"open": sessions["open"], "rss_mb": rss_kb / 1024, "closedToAdmit": sessions["closedToAdmit"],
            "refused": sessions["refused"]}


# -- sessions ------------------------------------------------------------------------------------------------------


async def open_session(base: str, http: httpx2.AsyncClient, *, keep: bool) -> tuple[float, int]:
    """Open one session with the SDK's client (handshake protocol, as deployed clients). Returns the seconds it took
    and the status the opening request got. `keep=True` leaves it open on the server (the flood); otherwise the
    client ends it (DELETE) after the timing."""
    statuses: list[int] = []

    async def record(response: httpx2.Response) -> None:
        if not statuses:
            statuses.append(response.status_code)

    http.event_hooks = {"response": [record]}
    started = time.perf_counter()
    try:
        transport = streamable_http_client(f"{base}/mcp", http_client=http, terminate_on_close=not keep)
        async with Client(transport, mode="legacy"):
            elapsed = time.perf_counter() - started
    except Exception:  # noqa: BLE001 - a refusal surfaces as an error; its status says which
        elapsed = time.perf_counter() - started
    return elapsed, statuses[0] if statuses else 0


async def probe_b(base: str, key: str, count: int) -> tuple[float, int]:
    """Median milliseconds for tenant B to open a session, over `count` openings; and how many were refused."""
    times: list[float] = []
    refused = 0
    for _ in range(count):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
            elapsed, status = await open_session(base, http, keep=False)
        if status == 200:
            times.append(elapsed * 1000)
        else:
            refused += 1
    return (statistics.median(times) if times else float("nan")), refused


async def b_calls_a_tool(base: str, key: str) -> bool:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        try:
            async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as client:
                result = await client.call_tool("list_assets", {"first": 5})
                return not result.is_error
        except Exception:  # noqa: BLE001 - refused or failed: that is the measurement
            return False


async def flood(base: str, key: str, count: int, concurrency: int, answers: Counter[str]) -> None:
    """`count` sessions opened with one key by `concurrency` workers, each abandoned open (never ended)."""
    left = count

    async def worker() -> None:
        nonlocal left
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60,
                                      limits=httpx2.Limits(max_connections=4)) as http:
            while left > 0:
                left -= 1
                _, status = await open_session(base, http, keep=True)
                answers[str(status)] += 1

    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)


async def flood_in_a_process(base: str, key: str, count: int, concurrency: int) -> Counter[str]:
    """The flood from a process of its own, so tenant B's client does not share an event loop (and a GIL) with it:
    B's latency then measures the server, as it would from another machine. The key travels in the environment."""
    proc = await anyio.run_process(
        [sys.executable, __file__, "--flood-worker", base, "--flood", str(count), "--concurrency", str(concurrency)],
        env=os.environ | {"LINEPACK_BENCH_FLOOD_KEY": key}, check=True)
    return Counter(json.loads(proc.stdout.decode().strip().splitlines()[-1]))


def flood_worker(base: str, count: int, concurrency: int) -> int:
    answers: Counter[str] = Counter()
    anyio.run(flood, base, os.environ["LINEPACK_BENCH_FLOOD_KEY"], count, concurrency, answers)
    print(json.dumps(answers))
    return 0


async def measure(run: Run, dev: dict[str, Any], b_key: str, args: argparse.Namespace, log_dir: Path) -> None:
    with mcp_server(dev, run.command, log_dir / f"{run.name.split()[0]}.log") as (base, pid):
        run.limits = httpx.get(f"{base}/healthz").json()["sessions"]["limits"]
        await probe_b(base, b_key, 3)  # warm-up: imports, connection pools, the credential cache
        run.b_baseline_ms, _ = await probe_b(base, b_key, args.probes)
        run.before = observe(base, pid)
        started = time.perf_counter()
        during: list[tuple[float, int]] = []

        async def b_during() -> None:
            await anyio.sleep(0.2)  # once the flood is under way
            during.append(await probe_b(base, b_key, args.probes))

        async with anyio.create_task_group() as tg:
            tg.start_soon(b_during)
            run.flood_answers = await flood_in_a_process(base, dev["apiKey"], args.flood, args.concurrency)
        run.flood_s = time.perf_counter() - started
        run.after = observe(base, pid)
        run.b_during_ms, refused_during = during[0]
        run.b_after_ms, refused_after = await probe_b(base, b_key, args.probes)
        run.b_refused = refused_during + refused_after
        run.b_tool_ok = await b_calls_a_tool(base, b_key)


def report(runs: list[Run], args: argparse.Namespace) -> None:
    print(f"\nFlood: {args.flood} sessions opened with tenant A's key by {args.concurrency} workers, each abandoned "
          f"open; tenant B opens {args.probes} sessions (median) before, during and after.\n")
    head = f"{'':34}" + "".join(f"{r.name:>26}" for r in runs)
    print(head)
    rows: list[tuple[str, list[str]]] = [
        ("caps (credential/tenant/total)", [f"{r.limits['perCredential']}/{r.limits['perTenant']}/{r.limits['total']}"
                                            for r in runs]),
        ("open sessions before → after", [f"{r.before['open']:.0f} → {r.after['open']:.0f}" for r in runs]),
        ("server RSS MB before → after", [f"{r.before['rss_mb']:.1f} → {r.after['rss_mb']:.1f}" for r in runs]),
        ("flood answers (HTTP status: n)", [" ".join(f"{k}:{v}" for k, v in sorted(r.flood_answers.items()))
                                            for r in runs]),
        ("flood sessions closed to admit", [f"{r.after['closedToAdmit']:.0f}" for r in runs]),
        ("flood duration s", [f"{r.flood_s:.1f}" for r in runs]),
        ("B open ms: baseline", [f"{r.b_baseline_ms:.1f}" for r in runs]),
        ("B open ms: during flood (ratio)", [f"{r.b_during_ms:.1f} ({r.b_during_ms / r.b_baseline_ms:.2f}×)"
                                             for r in runs]),
        ("B open ms: after flood (ratio)", [f"{r.b_after_ms:.1f} ({r.b_after_ms / r.b_baseline_ms:.2f}×)"
                                            for r in runs]),
        ("B sessions refused", [str(r.b_refused) for r in runs]),
        ("B calls list_assets after", ["ok" if r.b_tool_ok else "FAILED" for r in runs]),
    ]
    for label, cells in rows:
        print(f"{label:34}" + "".join(f"{c:>26}" for c in cells))
    if args.json:
        print("BENCH_JSON " + json.dumps({"flood": args.flood, "concurrency": args.concurrency, "probes": args.probes,
                                          "runs": [{k: v for k, v in r.__dict__.items() if k != "command"}
                                                   | {"flood_answers": dict(r.flood_answers)} for r in runs]}))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dev-json", default=os.environ.get("LINEPACK_TEST_DEV_JSON"),
                   help="a running stack's dev.json (default: start an ephemeral stack)")
    p.add_argument("--flood", type=int, default=2000, help="sessions tenant A opens (default 2000)")
    p.add_argument("--concurrency", type=int, default=8, help="tenant A's concurrent openers (default 8)")
    p.add_argument("--probes", type=int, default=15, help="tenant B's openings per measurement (default 15)")
    p.add_argument("--compare-before", action="store_true",
                   help="also run the flood against the server as it was before the limits (the SDK's session "
                   "manager alone)")
    p.add_argument("--json", action="store_true", help="also print one BENCH_JSON line")
    p.add_argument("--flood-worker", metavar="URL", help=argparse.SUPPRESS)  # the flood's own process
    args = p.parse_args()
    if args.flood_worker:
        return flood_worker(args.flood_worker, args.flood, args.concurrency)
    if not 1 <= args.flood <= 20_000 or not 1 <= args.concurrency <= 64 or not 1 <= args.probes <= 200:
        p.error("--flood 1..20000, --concurrency 1..64, --probes 1..200")
    runs = [Run("with limits (defaults)", [str(EXE), "serve", "--transport", "streamable-http", "--port"])]
    if args.compare_before:
        runs.append(Run("before the limits", [sys.executable, "-c", BEFORE]))
    with stack(args.dev_json) as dev, tempfile.TemporaryDirectory(prefix="linepack-mcp-bench-logs-") as logs:
        b_key = tenant_b_key(dev)
        for run in runs:
            print(f"running: {run.name} …", file=sys.stderr)
            anyio.run(measure, run, dev, b_key, args, Path(logs))
    report(runs, args)
    return 0 if all(r.b_tool_ok and r.b_refused == 0 for r in runs[:1]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
