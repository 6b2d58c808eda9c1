#!/usr/bin/env bash
# `npm test`: everything CI checks. Static checks first (types, generated code, supergraph, schema changes
# against the published baseline and real client operations, the API reference, lint), then the
# jest suites against real servers, then the MCP companion's pytest suite against the real stack.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .linepack

step() { echo; echo "== $*"; }

step "typecheck" && npm run --silent typecheck || exit 1
step "codegen:check" && npm run --silent codegen:check || exit 1
step "compose:check" && npm run --silent compose:check || exit 1
step "registry-files:check" && npm run --silent registry-files:check || exit 1
step "schema:check" && npm run --silent schema:check || exit 1
step "docs:check" && npm run --silent docs:check || exit 1
step "lint (eslint: TypeScript layering and the SDL; prettier)" && npm run --silent lint || exit 1
# The browser tests drive the console as built: build it from the current source (its type check included).
step "console:build" && npm run --silent console:build || exit 1

step "jest"
# --forceExit: a test that fails part-way can leave a client open; a failing run must still end (CI has a time limit).
npx jest --forceExit --json --outputFile=.linepack/jest-results.json "$@"
jest_status=$?
read -r jest_passed jest_failed < <(node -e '
  try { const r = require("./.linepack/jest-results.json"); console.log(r.numPassedTests, r.numFailedTests + r.numRuntimeErrorTestSuites); }
  catch { console.log(0, 1); }')

step "pytest (mcp-server)"
mcp-server/.venv/bin/python -m pytest -q mcp-server/tests
pytest_status=$?

echo
echo "jest: ${jest_passed} passed, ${jest_failed} failed"
if [ "$jest_status" -ne 0 ] || [ "$pytest_status" -ne 0 ]; then exit 1; fi
