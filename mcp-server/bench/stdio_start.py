"""How long a client waits for linepack-mcp over stdio: to the opening answer, to the tool list, to a first tool answer.

    mcp-server/.venv/bin/python mcp-server/bench/stdio_start.py                  # 5 starts of each configuration
    mcp-server/.venv/bin/python mcp-server/bench/stdio_start.py --before main    # also the package as `main` has it
    ... --protocol modern        # server/discover with protocol 2026-07-28 instead of the initialize handshake
    ... --starts 9 --json

Configurations, measured in the same invocation, interleaved start by start (so a busier moment costs each alike):
  fast start    this package, the handshake cache warm (one start before the measured ones fills it)
  no cache      this package with LINEPACK_MCP_FAST_START=off: the SDK imported before anything is answered
  before        (--before REF) the package at git REF, run from an extracted copy with the same environment

Each start is a fresh process spoken to in raw JSON-RPC over its pipes (no client library in the way): `initialize`
(or `server/discover`), `tools/list`, then `tools/call get_asset` against a gateway that is not there (refused at
once), which needs the SDK loaded. Times are medians over the starts, with `python -c pass` as the floor, and each
configuration's ratio to "no cache". Numbers are measured, not asserted: on a busy machine all of them grow.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MCP_DIR = Path(__file__).resolve().parents[1]
REPO = MCP_DIR.parent
EXE = Path(sys.executable).parent / "linepack-mcp"


def one_start(command: list[str], env: dict[str, str], protocol: str) -> tuple[float, float, float]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"_meta": meta} if protocol == "modern" else {}
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin and proc.stdout

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def answer(wanted: int) -> dict:
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            message = json.loads(line)
            if message.get("id") == wanted and "method" not in message:
                return message

    if protocol == "modern":
        send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": params})
    else:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    answer(1)
    opened = time.perf_counter() - start
    if protocol != "modern":
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params})
    tools = answer(2)
    assert tools["result"]["tools"], tools
    listed = time.perf_counter() - start
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
          "params": {**params, "name": "get_asset", "arguments": {"asset_id": "x"}}})
    answer(3)
    called = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=60)
    return opened, listed, called


def floor(starts: int) -> float:
    times = []
    for _ in range(starts):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--before", metavar="REF", help="also measure the package at this git ref")
    parser.add_argument("--protocol", choices=["handshake", "modern"], default="handshake")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="linepack-mcp-start-"))
    base = {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "XDG_CACHE_HOME": str(work / "cache"),
            "LINEPACK_API_URL": "http://127.0.0.1:9/graphql", "LINEPACK_API_KEY": "lpk_bench_0123456789",
            "LINEPACK_LOG_LEVEL": "WARN"}
    configs: dict[str, tuple[list[str], dict[str, str]]] = {
        "fast start": ([str(EXE)], base),
        "no cache": ([str(EXE)], base | {"LINEPACK_MCP_FAST_START": "off"}),
    }
    try:
        if args.before:
            archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before, "mcp-server/src"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
            configs["before"] = ([sys.executable, "-m", "linepack_mcp"],
                                 base | {"PYTHONPATH": str(work / "mcp-server" / "src")})
        one_start(*configs["fast start"], args.protocol)  # fills the handshake cache
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in configs}
        for _ in range(args.starts):
            for name, (command, env) in configs.items():
                results[name].append(one_start(command, env, args.protocol))
        python = floor(args.starts)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    medians = {name: tuple(statistics.median(r[i] for r in runs) for i in range(3)) for name, runs in results.items()}
    reference = medians["no cache"]
    print(f"linepack-mcp over stdio, {args.protocol} protocol, median of {args.starts} starts "
          f"(python -c pass: {python:.2f} s)")
    print(f"{'configuration':<12} {'opening':>9} {'tools/list':>11} {'first tool':>11}   ratio to no cache (open/list/tool)")
    for name, (opened, listed, called) in medians.items():
        ratios = "/".join(f"{value / ref:.2f}" for value, ref in zip((opened, listed, called), reference))
        print(f"{name:<12} {opened:>8.2f}s {listed:>10.2f}s {called:>10.2f}s   {ratios}")
    if args.json:
        print("BENCH_JSON " + json.dumps({"protocol": args.protocol, "python_s": python, "medians_s": medians}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
