#!/usr/bin/env bash
# Installs everything Linepack needs on a Debian machine, idempotently:
# Node.js 24, system packages (JDK 17 + Maven for the embedded MongoDB, redis-server for the tests, nginx for the
# scale-out test, Python 3.11+ for the MCP companion, stress-ng to check a suite under load), the npm dependencies, the
# embedded MongoDB launcher, the MCP companion package, and the tools of the offline Helm chart check.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# nginx: the load balancer of the scale-out test (two gateway and two subgraph replicas behind it).
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)
# chromium-headless-shell: the console's browser tests; chromium: bench:console and lighthouse (playwright-core drives
# Debian's builds; its own downloads are not reachable).
command -v chromium-headless-shell >/dev/null 2>&1 || missing+=(chromium-headless-shell)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# stress-ng: the README's check that a suite means the same on a busy machine (`stress-ng --cpu 2`).
command -v stress-ng >/dev/null 2>&1 || missing+=(stress-ng)
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m venv --help >/dev/null 2>&1; then missing+=(python3 python3-venv); fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The tests run their own nginx and redis-server on free ports; the packages' system services are not wanted.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    as_root systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
fi

# Node.js 24 LTS (Node 20 is end of life). The npm registry's `node` package carries the official
# binaries; /usr/local/bin comes before /usr/bin on Debian's PATH, so it takes over from a system Node.
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 24 ]; then
  echo "setup: installing Node.js 24 LTS (found ${node_major})"
  as_root npm install -g --prefix /usr/local --no-audit --no-fund --loglevel=error node@24
  hash -r
  node_major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$node_major" -lt 24 ]; then
    echo "setup: Node.js 24 is in /usr/local/bin but $(command -v node) comes first on PATH; put /usr/local/bin first" >&2
    exit 1
  fi
fi

# The chart check's tools (helm v3.22.0 built from the Go module proxy — it needs Go 1.26+, which Debian's golang-go
# is not — and kubernetes-validate from PyPI) build in the background while npm and Maven download.
go_minor=$({ go env GOVERSION 2>/dev/null || true; } | sed -nE 's/^go1\.([0-9]+).*/\1/p')
mkdir -p .linepack
chart_tools=
if [ -z "$go_minor" ] || [ "$go_minor" -lt 26 ]; then
  # npm start needs no Go; only the chart check (npm test) does, and it says so when helm is missing.
  echo "setup: WARNING: Go 1.26+ not found (${go_minor:+go1.$go_minor}${go_minor:-none}): helm for the chart check is not built; install Go from https://go.dev/dl and run setup again" >&2
else
  echo "setup: chart validation tools (helm, kubernetes-validate) into .linepack/tools, in the background"
  bash scripts/validate-chart.sh --tools-only >.linepack/setup-chart-tools.log 2>&1 &
  chart_tools=$!
fi

# npm ci empties node_modules and installs the lockfile's whole tree again (minutes on a busy machine). Skipped when
# node_modules is what npm ci made from this very lockfile on this Node: the stamp is written only after it succeeded.
npm_ci_stamp=node_modules/.linepack-npm-ci
# The patches npm ci applies to dependencies (postinstall: patch-package, patches/) are part of what it made.
npm_ci_key="$(cat package-lock.json patches/*.patch | sha256sum | cut -d' ' -f1) node $(node -v)"
if [ -f "$npm_ci_stamp" ] && [ "$(cat "$npm_ci_stamp")" = "$npm_ci_key" ]; then
  echo "setup: npm ci: node_modules is current (package-lock.json unchanged since the last npm ci)"
else
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$npm_ci_key" >"$npm_ci_stamp"
fi

prometheus_parse=
if [ -n "$go_minor" ]; then
  echo "setup: Prometheus's exposition parser for the tests (tools/prometheus-parse) into .linepack/tools, in the background"
  npx tsx scripts/prometheus-parse.ts >.linepack/setup-prometheus-parse.log 2>&1 &
  prometheus_parse=$!
fi

echo "setup: web console (Vite build into console/dist)"
npm run --silent console:build

echo "setup: embedded MongoDB launcher (Maven)"
npm run --silent mongo:prepare

echo "setup: MCP companion (editable install with test extras in mcp-server/.venv)"
[ -x mcp-server/.venv/bin/python ] || python3 -m venv mcp-server/.venv
mcp-server/.venv/bin/python -m pip install --quiet --disable-pip-version-check -e "mcp-server[test]"
if [ -n "$prometheus_parse" ]; then
  # npm start needs no parser; the tests that read scrapes build it again themselves, and say why they cannot.
  if wait "$prometheus_parse"; then sed 's/^/setup: prometheus-parse: /' .linepack/setup-prometheus-parse.log; else
    sed 's/^/setup: WARNING: prometheus-parse: /' .linepack/setup-prometheus-parse.log >&2
  fi
fi
if [ -n "$chart_tools" ]; then
  if ! wait "$chart_tools"; then
    cat .linepack/setup-chart-tools.log >&2
    echo "setup: building the chart validation tools failed" >&2
    exit 1
  fi
  sed 's/^/setup: /' .linepack/setup-chart-tools.log
fi
echo "setup: done"
