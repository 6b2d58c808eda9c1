"""Offline checks of the compose observability profile (scripts/validate-chart.sh runs it; promtool is not available).

docker-compose.yml, deploy/observability/prometheus.yml and the Grafana provisioning files parse as YAML, the
dashboards as JSON; every Linepack service in docker-compose.yml sets METRICS_PORT 9464 without publishing it, and
Prometheus scrapes each of them; Prometheus and Grafana are in the `observability` profile and bound to 127.0.0.1.
Prints one summary line, or every problem and exit status 1.
"""

import glob
import json
import sys

import yaml

INFRA = {"mongo", "redis", "prometheus", "grafana"}


def main():
    errors = []
    compose = yaml.safe_load(open("docker-compose.yml", encoding="utf-8"))
    prometheus = yaml.safe_load(open("deploy/observability/prometheus.yml", encoding="utf-8"))
    for f in glob.glob("deploy/observability/grafana/provisioning/**/*.yml", recursive=True):
        yaml.safe_load(open(f, encoding="utf-8"))
    dashboards = sorted(glob.glob("deploy/observability/grafana/dashboards/*.json"))
    if not dashboards:
        errors.append("no dashboard under deploy/observability/grafana/dashboards")
    for f in dashboards:
        try:
            dashboard = json.load(open(f, encoding="utf-8"))
            if not dashboard.get("panels") or not dashboard.get("uid"):
                errors.append(f"{f}: a dashboard needs a uid and panels")
        except json.JSONDecodeError as e:
            errors.append(f"{f}: not valid JSON: {e}")

    services = compose["services"]
    linepack = sorted(name for name in services if name not in INFRA)
    targets = {t for job in prometheus["scrape_configs"] for sc in job.get("static_configs", []) for t in sc["targets"]}
    for name in linepack:
        env = services[name].get("environment") or {}
        if str(env.get("METRICS_PORT")) != "9464":
            errors.append(f"docker-compose.yml: {name} does not set METRICS_PORT: \"9464\"")
        if any("9464" in str(p) for p in services[name].get("ports", [])):
            errors.append(f"docker-compose.yml: {name} publishes its metrics port")
        if f"{name}:9464" not in targets:
            errors.append(f"deploy/observability/prometheus.yml: no target {name}:9464")
    for name, port in (("prometheus", 9090), ("grafana", 3000)):
        service = services.get(name) or {}
        if "observability" not in (service.get("profiles") or []):
            errors.append(f"docker-compose.yml: {name} is not in the observability profile")
        if service.get("ports") != [f"127.0.0.1:{port}:{port}"]:
            errors.append(f"docker-compose.yml: {name} must publish 127.0.0.1:{port}:{port} only")

    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    print(f"compose metrics on {len(linepack)} services, Prometheus scrapes them all, {len(dashboards)} Grafana dashboard(s) parse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
