#!/usr/bin/env bash
# `npm test`: everything CI checks. Static checks first (types, generated code, supergraph, schema changes
# against the published baseline and real client operations, the API reference, lint, the console's build), then the
# jest suites against real servers, with the MCP companion's pytest suite (against a real stack of its own) beside them.
#
# `npm run test:fast` (`scripts/test.sh --fast`): the type check and lint, then the unit tests and every subgraph
# package's in-process tests (the jest projects other than e2e): no gateway stack, no browser. Extra arguments go to jest.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .linepack

fast=false
if [ "${1:-}" = "--fast" ]; then
  fast=true
  shift
fi

step() { echo; echo "== $*"; }
elapsed() { echo "$(($(date +%s) - $1)) s"; }

# Runs lanes side by side, each lane its npm scripts one after another (a 2-core machine runs two at a time well);
# prints each script's output whole, in order, once all are done. Fails when any script failed.
lanes() {
  local dir
  dir=$(mktemp -d)
  local pids=()
  local lane
  for lane in "$@"; do
    (
      for script in $lane; do
        started=$(date +%s)
        if npm run --silent "$script" >"$dir/$script.log" 2>&1; then echo "ok $(elapsed "$started")" >"$dir/$script.status"; else
          echo "FAILED $(elapsed "$started")" >"$dir/$script.status"
          exit 1
        fi
      done
    ) &
    pids+=($!)
  done
  local failed=0 pid
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  for lane in "$@"; do
    for script in $lane; do
      [ -f "$dir/$script.status" ] || continue
      step "$script: $(cat "$dir/$script.status")"
      cat "$dir/$script.log"
    done
  done
  rm -rf "$dir"
  return "$failed"
}

started=$(date +%s)
if $fast; then
  lanes "typecheck" "lint" || exit 1
else
  # The console's build type-checks it too; the browser tests drive the console as built from the current source.
  lanes "typecheck console:build codegen:check compose:check registry-files:check schema:check docs:check" "lint" || exit 1
fi
step "static checks: $(elapsed "$started")"

pytest_pid=
if ! $fast; then
  # The MCP companion's suite starts its own stack (npm start --ephemeral): it runs beside jest, its output after.
  pytest_log=$(mktemp)
  mcp-server/.venv/bin/python -m pytest -q mcp-server/tests >"$pytest_log" 2>&1 &
  pytest_pid=$!
fi

step "jest"
jest_started=$(date +%s)
results=.linepack/jest-results.json
projects=()
if $fast; then
  results=.linepack/jest-fast-results.json
  projects=(--ignoreProjects e2e)
fi
# --forceExit: a test that fails part-way can leave a client open; a failing run must still end (CI has a time limit).
npx jest --forceExit --json --outputFile="$results" "${projects[@]}" "$@"
jest_status=$?
read -r jest_passed jest_failed < <(RESULTS="$results" node -e '
  try { const r = require(require("path").resolve(process.env.RESULTS)); console.log(r.numPassedTests, r.numFailedTests + r.numRuntimeErrorTestSuites); }
  catch { console.log(0, 1); }')
jest_time=$(elapsed "$jest_started")

pytest_status=0
if [ -n "$pytest_pid" ]; then
  wait "$pytest_pid"
  pytest_status=$?
  step "pytest (mcp-server)"
  cat "$pytest_log"
  rm -f "$pytest_log"
fi

echo
echo "jest: ${jest_passed} passed, ${jest_failed} failed (${jest_time}); total $(elapsed "$started")"
if [ "$jest_status" -ne 0 ] || [ "$pytest_status" -ne 0 ]; then exit 1; fi
