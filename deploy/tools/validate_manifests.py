"""Validate rendered Kubernetes manifests offline against the API schemas of one or more Kubernetes versions.

Used by scripts/validate-chart.sh. Every document must:
  - parse as YAML without duplicate mapping keys (Helm renders them silently; the API server refuses them);
  - carry apiVersion, kind and metadata.name;
  - validate against the strict JSON schema of its kind in each pinned Kubernetes version (--kubernetes-version,
    repeatable), as bundled by the kubernetes-validate package: unknown fields (additionalProperties) and wrong types
    are errors.
Custom resources are validated against a JSON schema given with --crd-schema apiVersion/kind=file.json (e.g. the
PrometheusRule's, deploy/tools/crd-schemas/). Kinds in --skip (custom resources such as monitoring.coreos.com/v1
ServiceMonitor, for which no schema is at hand) are parsed and counted but not schema-validated; any other kind without
a schema is an error.

Prints one summary line on success; every problem, one per line, and exit status 1 otherwise.
"""

import argparse
import json
import sys

import jsonschema
import yaml
from kubernetes_validate import utils as kv


class StrictLoader(yaml.SafeLoader):
    """A SafeLoader that refuses duplicate keys in a mapping."""


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def describe(doc):
    return f"{doc.get('kind', '?')}/{(doc.get('metadata') or {}).get('name', '?')}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubernetes-version", required=True, action="append", help="e.g. 1.34.0; repeat for several")
    parser.add_argument("--crd-schema", action="append", default=[], help="apiVersion/kind=schema.json, e.g. monitoring.coreos.com/v1/PrometheusRule=deploy/tools/crd-schemas/monitoring.coreos.com-v1-PrometheusRule.json")
    parser.add_argument("--skip", action="append", default=[], help="apiVersion/kind not to schema-validate, e.g. monitoring.coreos.com/v1/ServiceMonitor")
    parser.add_argument("--json-out", help="also write the parsed documents here, as one JSON array per file (for tests)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    crd_validators = {}
    for entry in args.crd_schema:
        gvk, _, schema_file = entry.partition("=")
        with open(schema_file, encoding="utf-8") as f:
            schema = json.load(f)
        crd_validators[gvk] = jsonschema.Draft7Validator(schema)

    errors, validated, skipped, rendered = [], 0, {}, {}
    crd_validated = {}
    for filename in args.files:
        try:
            with open(filename, encoding="utf-8") as f:
                docs = [d for d in yaml.load_all(f, Loader=StrictLoader) if d is not None]
        except yaml.YAMLError as e:
            errors.append(f"{filename}: not valid YAML: {e}")
            continue
        rendered[filename] = docs
        for doc in docs:
            if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind") or not (doc.get("metadata") or {}).get("name"):
                errors.append(f"{filename}: a document without apiVersion, kind or metadata.name: {json.dumps(doc)[:120]}")
                continue
            gvk = f"{doc['apiVersion']}/{doc['kind']}"
            if gvk in args.skip:
                skipped[gvk] = skipped.get(gvk, 0) + 1
                continue
            if gvk in crd_validators:
                problems = sorted(crd_validators[gvk].iter_errors(doc), key=lambda e: list(e.path))
                for e in problems:
                    path = ".".join(str(p) for p in e.path) or "(document)"
                    errors.append(f"{filename}: {describe(doc)}: {path}: {e.message}")
                if not problems:
                    crd_validated[gvk] = crd_validated.get(gvk, 0) + 1
                continue
            ok = True
            for version in args.kubernetes_version:
                try:
                    kv.validate(doc, version, strict=True)
                except kv.ValidationError as e:
                    ok = False
                    path = ".".join(str(p) for p in e.path) or "(document)"
                    errors.append(f"{filename}: {describe(doc)}: {path}: {e.message} (Kubernetes {version})")
                except kv.SchemaNotFoundError as e:
                    ok = False
                    errors.append(f"{filename}: {describe(doc)}: {e.message} (pass --skip {gvk} if it is a custom resource)")
                    break
                except kv.VersionNotSupportedError as e:
                    print(f"kubernetes-validate does not bundle schemas for Kubernetes {e.version}", file=sys.stderr)
                    return 2
            validated += ok

    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(rendered, f)
    if errors:
        for line in errors:
            print(line, file=sys.stderr)
        return 1
    crd_text = "".join(f"; {n} {gvk} valid against its CRD schema (strict)" for gvk, n in sorted(crd_validated.items()))
    skipped_text = "".join(f"; {n} {gvk} not schema-validated (no schema at hand)" for gvk, n in sorted(skipped.items()))
    versions = " and ".join(args.kubernetes_version)
    print(f"{validated} manifests valid against the Kubernetes {versions} schemas (strict){crd_text}{skipped_text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
