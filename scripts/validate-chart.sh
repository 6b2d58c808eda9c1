#!/usr/bin/env bash
# Offline validation of the Helm chart deploy/helm/linepack (no cluster, no GitHub: the Go module proxy and PyPI only).
#
#   1. files/supergraph.graphql in the chart is schema/supergraph.graphql (Helm cannot read files outside the chart);
#   2. helm v3.22.0 (built with `go install` into .linepack/tools/bin, reused when present) lints the chart with
#      --strict and renders it with the default values and with ci/full-values.yaml (everything on), without
#      --kube-version (the templates do not depend on the cluster's version; this helm build defaults to 1.20);
#   3. every rendered manifest validates against the strict JSON schemas of Kubernetes 1.34 and 1.37 (bundled by
#      the PyPI package kubernetes-validate, installed into .linepack/tools/kubernetes-validate): an unknown field or a
#      wrong type fails. The PrometheusRule validates against its CRD's schema made strict (deploy/tools/crd-schemas);
#      ServiceMonitors (a custom resource; no schema at hand) are parsed but not schema-validated;
#   4. the docker-compose observability profile: every service's METRICS_PORT is scraped, the dashboards parse.
#
# Quiet on success (one line per check), idempotent, and safe to run concurrently (the tool installs take a lock).
# Environment: LINEPACK_CHART_DIR (default deploy/helm/linepack), LINEPACK_CHART_OUT (where the renders go, default
# .linepack/chart-render), LINEPACK_TOOLS_DIR (default .linepack/tools). `--tools-only`: build/install the tools and stop
# (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

HELM_VERSION=v3.22.0
KUBE_VERSIONS=(1.34.0 1.37.0)
chart=$(realpath -m "${LINEPACK_CHART_DIR:-deploy/helm/linepack}")
out=$(realpath -m "${LINEPACK_CHART_OUT:-.linepack/chart-render}")
tools=$(realpath -m "${LINEPACK_TOOLS_DIR:-.linepack/tools}")
helm=$tools/bin/helm
venv=$tools/kubernetes-validate
requirements=deploy/tools/requirements-validate.txt

say() { echo "validate-chart: $*"; }
fail() {
  echo "validate-chart: FAILED: $*" >&2
  exit 1
}
started=$(date +%s)

# 1. The supergraph copy.
if [ "${1:-}" != "--tools-only" ]; then
  [ -f "$chart/files/supergraph.graphql" ] || fail "$chart/files/supergraph.graphql is missing; fix: npm run chart:sync"
  cmp -s schema/supergraph.graphql "$chart/files/supergraph.graphql" ||
    fail "$chart/files/supergraph.graphql differs from schema/supergraph.graphql; fix: npm run chart:sync"
  say "ok: the chart's supergraph is schema/supergraph.graphql"
fi

# 2. Tools, built or installed once into $tools (git-ignored: .linepack/).
mkdir -p "$tools/bin" "$tools/logs" "$out"
exec 9>"$tools/.lock"
flock 9
if [ "$("$helm" version --template '{{.Version}}' 2>/dev/null || true)" != "$HELM_VERSION" ]; then
  command -v go >/dev/null 2>&1 || fail "helm $HELM_VERSION is built from the Go module proxy and Go is not installed (helm v3.22.0 needs Go 1.26+; scripts/setup.sh)"
  t0=$(date +%s)
  if ! GOBIN="$tools/bin" GOFLAGS=-buildvcs=false go install \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
    >"$tools/logs/helm-build.log" 2>&1; then
    tail -20 "$tools/logs/helm-build.log" >&2
    fail "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION failed (log: $tools/logs/helm-build.log)"
  fi
  say "built helm $HELM_VERSION in $(($(date +%s) - t0)) s"
fi
stamp=$(sha256sum "$requirements" | cut -c1-16)
if [ "$(cat "$venv/.installed" 2>/dev/null || true)" != "$stamp" ]; then
  command -v python3 >/dev/null 2>&1 || fail "python3 is needed for kubernetes-validate (scripts/setup.sh installs it)"
  t0=$(date +%s)
  rm -rf "$venv"
  if ! { python3 -m venv "$venv" && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements"; } \
    >"$tools/logs/kubernetes-validate-install.log" 2>&1; then
    tail -20 "$tools/logs/kubernetes-validate-install.log" >&2
    fail "installing kubernetes-validate from PyPI failed (log: $tools/logs/kubernetes-validate-install.log)"
  fi
  echo "$stamp" >"$venv/.installed"
  say "installed kubernetes-validate in $(($(date +%s) - t0)) s"
fi
flock -u 9
if [ "${1:-}" = "--tools-only" ]; then
  say "ok: helm $HELM_VERSION and kubernetes-validate are in $tools"
  exit 0
fi

# 3. Lint and render: the default values, and everything switched on.
declare -A value_sets=([default]="" [full]="$chart/ci/full-values.yaml")
renders=()
for name in default full; do
  args=()
  [ -n "${value_sets[$name]}" ] && args=(-f "${value_sets[$name]}")
  if ! log=$("$helm" lint --strict "$chart" "${args[@]}" 2>&1); then
    echo "$log" >&2
    fail "helm lint --strict ($name values)"
  fi
  if ! "$helm" template linepack "$chart" --namespace linepack "${args[@]}" \
    >"$out/$name.yaml" 2>"$out/$name.err"; then
    cat "$out/$name.err" >&2
    fail "helm template ($name values)"
  fi
  renders+=("$out/$name.yaml")
done
say "ok: helm $HELM_VERSION lint --strict and template (default values; ${value_sets[full]#"$root"/})"

# 4. Schema validation of every rendered manifest.
versions=()
for version in "${KUBE_VERSIONS[@]}"; do versions+=(--kubernetes-version "$version"); done
if ! summary=$("$venv/bin/python" deploy/tools/validate_manifests.py "${versions[@]}" \
  --crd-schema monitoring.coreos.com/v1/PrometheusRule=deploy/tools/crd-schemas/monitoring.coreos.com-v1-PrometheusRule.json \
  --skip monitoring.coreos.com/v1/ServiceMonitor --json-out "$out/rendered.json" "${renders[@]}"); then
  fail "rendered manifests do not validate against the Kubernetes ${KUBE_VERSIONS[*]} schemas (above)"
fi
say "ok: $summary"

# 5. The compose observability profile (no promtool here: YAML/JSON parses and cross-references).
summary=$("$venv/bin/python" deploy/tools/check_observability.py) || fail "docker-compose.yml / deploy/observability (above)"
say "ok: $summary"
say "all checks passed in $(($(date +%s) - started)) s"
