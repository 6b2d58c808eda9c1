"""Tokens a model reads per typical task, this server against an earlier one (issue 28 item 3).

    mcp-server/.venv/bin/python mcp-server/bench/answer_tokens.py                      # an ephemeral stack
    mcp-server/.venv/bin/python mcp-server/bench/answer_tokens.py --before a168bca~1  # also the server at that ref
    ... --dev-json .linepack/dev.json     # a running stack instead; --json adds a BENCH_JSON line

It seeds a gas HCA segment with 1,000 assessed ILI anomalies (as the issue's measurement did), then runs three tasks
with the SDK's client over stdio, each as the server's own prompt or answers lead a model through it:

  triage a 1,000-anomaly segment   before: the anomaly_triage prompt's "first=100 and page through everything"
                                   (10 calls); now: the summary page, then response_category=IMMEDIATE
  find overdue obligations         list_compliance_status(state=OVERDUE, first=100), every page
  summarise a pipeline             pipeline_summary, search_assets for it, its segments, the risk register

Tokens are budget.estimate_tokens of each answer's text (UTF-8 bytes / 2.5), summed per task; also the calls and
the largest single answer. `--before REF` runs the package as it was at REF (extracted with `git archive`) with the
same environment; a call that REF's server does not know is reported, not retried. Measured, not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from session_flood import REPO_ROOT, stack  # noqa: E402 - the same ephemeral stack the flood benchmark starts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from linepack_mcp.budget import estimate_tokens  # noqa: E402

EXE = Path(sys.executable).parent / "linepack-mcp"


def graphql(dev: dict[str, Any], query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    r = httpx.post(dev["gatewayUrl"], json={"query": query, "variables": variables or {}},
                   headers={"Authorization": f"Bearer {dev['apiKey']}"}, timeout=120)
    body = r.json()
    if body.get("errors"):
        raise SystemExit(f"seeding failed: {body['errors']}")
    return body["data"]


def seed(dev: dict[str, Any]) -> dict[str, str]:
    tag = f"TOKENS-{time.time_ns() % 10**9}"
    pipe = graphql(dev, "mutation($i: CreateAssetInput!) { createAsset(input: $i) { id name } }", {"i": {
        "type": "PIPELINE", "name": f"{tag} Gas Line", "status": "ACTIVE", "product": "NATURAL_GAS",
        "regulation": "CFR_192", "outsideDiameterMm": 610, "wallThicknessMm": 9.5, "smysMpa": 359, "maopKpa": 6200,
        "classLocation": 3, "inHca": True, "beginStationM": 0, "endStationM": 20000}})["createAsset"]
    seg = graphql(dev, "mutation($i: CreateAssetInput!) { createAsset(input: $i) { id name } }", {"i": {
        "type": "SEGMENT", "name": f"{tag} segment", "parentId": pipe["id"], "status": "ACTIVE", "product": "NATURAL_GAS",
        "regulation": "CFR_192", "outsideDiameterMm": 610, "wallThicknessMm": 9.5, "smysMpa": 359, "maopKpa": 6200,
        "classLocation": 3, "inHca": True, "beginStationM": 0, "endStationM": 20000}})["createAsset"]
    items = [{"idempotencyKey": f"{tag}-{i}", "assetId": seg["id"], "type": "ILI_ANOMALY",
              "observedAt": "2026-03-02T00:00:00Z", "source": "ILI", "runId": f"{tag}-R1", "featureType": "METAL_LOSS",
              "surface": "EXTERNAL", "odometerM": 10 + i * 17.3, "clockDeg": (i * 37) % 360,
              "depthPctWt": 82 + i % 5 if i % 83 == 0 else 10 + (i * 7) % 50, "lengthMm": 20 + (i * 13) % 300,
              "widthMm": 15 + i % 90} for i in range(1000)]
    graphql(dev, "mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }", {"i": items})
    query = "query($id: ID!) { asset(id: $id) { anomalyAssessments(first: 1) { totalCount } } }"
    deadline = time.monotonic() + 180
    while graphql(dev, query, {"id": seg["id"]})["asset"]["anomalyAssessments"]["totalCount"] < 1000:
        if time.monotonic() > deadline:
            raise SystemExit("the 1,000 anomalies were not assessed within 3 minutes")
        time.sleep(1)
    return {"pipeline": pipe["id"], "pipeline_name": pipe["name"], "segment": seg["id"]}


async def run_tasks(command: list[str], env: dict[str, str], ids: dict[str, str], before: bool) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with Client(StdioServerParameters(command=command[0], args=command[1:], env=env)) as client:
        async def call(task: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any] | None:
            answer = await client.call_tool(name, args)
            text = "".join(c.text for c in answer.content if c.type == "text")
            tokens = estimate_tokens(text)
            task["calls"] += 1
            task["tokens"] += tokens
            task["largest"] = max(task["largest"], tokens)
            if answer.is_error:
                task["errors"].append(f"{name}: {text[:120]}")
                return None
            return answer.structured_content or json.loads(text)

        async def pages(task: dict[str, Any], name: str, args: dict[str, Any]) -> None:
            after = None
            while True:
                page = await call(task, name, {**args, **({"after": after} if after else {})})
                info = (page or {}).get("pageInfo") or {}
                if not info.get("hasNextPage"):
                    return
                after = info["endCursor"]

        def task() -> dict[str, Any]:
            return {"calls": 0, "tokens": 0, "largest": 0, "errors": []}

        triage = results["triage a 1,000-anomaly segment"] = task()
        if before:
            await pages(triage, "list_anomaly_assessments", {"asset_id": ids["segment"], "first": 100})
        else:
            await call(triage, "list_anomaly_assessments", {"asset_id": ids["segment"]})
            await call(triage, "list_anomaly_assessments", {"asset_id": ids["segment"], "response_category": "IMMEDIATE",
                                                            "first": 100})
        overdue = results["find overdue obligations"] = task()
        await pages(overdue, "list_compliance_status", {"state": "OVERDUE", "first": 100})
        summary = results["summarise a pipeline"] = task()
        await call(summary, "pipeline_summary", {})
        await call(summary, "search_assets", {"text": ids["pipeline_name"], "type": "PIPELINE"})
        await call(summary, "list_assets", {"parent_id": ids["pipeline"], "first": 100})
        await call(summary, "risk_register", {"first": 20})
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev-json", help="a running stack's dev.json (default: start an ephemeral one)")
    parser.add_argument("--before", metavar="REF", help="also run the server as it was at this git ref")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="linepack-mcp-tokens-"))
    try:
        with stack(args.dev_json) as dev:
            ids = seed(dev)
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "LINEPACK_API_URL": dev["gatewayUrl"],
                   "LINEPACK_API_KEY": dev["apiKey"], "LINEPACK_LOG_LEVEL": "WARN"}
            measured = {"now": anyio.run(run_tasks, [str(EXE)], env, ids, False)}
            if args.before:
                archive = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", args.before, "mcp-server/src"],
                                         check=True, capture_output=True).stdout
                subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
                old = env | {"PYTHONPATH": str(work / "mcp-server" / "src")}
                measured["before"] = anyio.run(run_tasks, [sys.executable, "-m", "linepack_mcp"], old, ids, True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"tokens a model reads per task (UTF-8 bytes / 2.5){f', now against {args.before}' if args.before else ''}")
    print(f"{'task':<32} {'server':<7} {'calls':>5} {'tokens':>8} {'largest':>8}  ratio")
    for name in measured["now"]:
        for server in ("before", "now"):
            if server not in measured:
                continue
            t = measured[server][name]
            ratio = ""
            if server == "now" and "before" in measured and measured["before"][name]["tokens"]:
                ratio = f"{t['tokens'] / measured['before'][name]['tokens']:.2f}"
            print(f"{name:<32} {server:<7} {t['calls']:>5} {t['tokens']:>8} {t['largest']:>8}  {ratio}")
            for error in t["errors"][:3]:
                print(f"{'':<32} {'':<7} error: {error}")
    if args.json:
        print("BENCH_JSON " + json.dumps(measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
