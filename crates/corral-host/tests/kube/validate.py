"""Validates Kubernetes manifests offline against the published schemas.

    validate.py FILE.json...

Each file holds one object, or a v1 List of them. Prints one line per
object, `valid KIND NAME` or `invalid KIND NAME: WHY`, and exits 1 when
any object is invalid (or has no schema here), 0 when all are valid.

- Built-in kinds (Job, NetworkPolicy, ...) are checked with
  kubernetes-validate's strict schemas (the Kubernetes OpenAPI as JSON
  schema, unknown fields refused, as `kubectl` refuses them by default)
  for every version in KUBERNETES_VERSIONS.
- A kind served by a CRD fixture beside this script (agent-sandbox-*.yaml:
  the published CustomResourceDefinition) is checked against the
  openAPIV3Schema of the version its apiVersion names, made strict the
  same way (an object schema with properties and no
  additionalProperties or x-kubernetes-preserve-unknown-fields refuses
  other fields), with formats checked (date-time). Its metadata is
  checked as ObjectMeta, and a Sandbox's podTemplate as a Pod, with the
  built-in schemas too. CEL rules (x-kubernetes-validations) are not
  evaluated: the Sandbox's only rule compares with the old object, on
  update.
"""

import copy
import glob
import json
import os
import sys

import jsonschema
import kubernetes_validate
import yaml

# The oldest Kubernetes still commonly run and the newest the pinned
# kubernetes-validate ships.
KUBERNETES_VERSIONS = ("1.30", "1.37")

HERE = os.path.dirname(os.path.abspath(__file__))


def strict(schema):
    """The schema with unknown fields refused wherever it lists fields."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if (
                "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def crd_schemas():
    """(group/version, kind) -> (strict openAPIV3Schema, deprecated)."""
    schemas = {}
    for path in sorted(glob.glob(os.path.join(HERE, "agent-sandbox-*.yaml"))):
        with open(path, encoding="utf-8") as f:
            crd = yaml.safe_load(f)
        assert crd["kind"] == "CustomResourceDefinition", path
        group = crd["spec"]["group"]
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if not version.get("served"):
                continue
            schema = strict(version["schema"]["openAPIV3Schema"])
            api_version = f"{group}/{version['name']}"
            schemas[(api_version, kind)] = (schema, version.get("deprecated", False))
    return schemas


def where(error):
    path = "/".join(str(p) for p in error.absolute_path)
    return f"{path or '(top)'}: {error.message}"


def builtin(obj):
    """Errors of a built-in kind's object, one per version it fails in."""
    errors = []
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            errors.append(f"Kubernetes {version}: {where(e)}")
        except kubernetes_validate.SchemaNotFoundError as e:
            errors.append(f"Kubernetes {version}: {e.message}")
    return errors


def as_meta(meta):
    """ObjectMeta checked through a kind that is nothing but it."""
    return builtin({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})


def custom(obj, schema):
    errors = []
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    for e in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
        errors.append(f"CRD schema: {where(e)}")
    errors += [f"metadata: {e}" for e in as_meta(obj.get("metadata", {}))]
    template = obj.get("spec", {}).get("podTemplate")
    if obj.get("kind") == "Sandbox" and isinstance(template, dict):
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": template.get("metadata", {}),
            "spec": template.get("spec"),
        }
        errors += [f"podTemplate as a Pod: {e}" for e in builtin(pod)]
    return errors


def objects(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("apiVersion") == "v1" and doc.get("kind") == "List":
        return doc["items"]
    return [doc]


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    schemas = crd_schemas()
    if not schemas:
        print("no CRD fixture (agent-sandbox-*.yaml) beside validate.py", file=sys.stderr)
        return 2
    all_valid = True
    for path in paths:
        for obj in objects(path):
            kind = obj.get("kind")
            name = obj.get("metadata", {}).get("name")
            key = (obj.get("apiVersion"), kind)
            if key in schemas:
                schema, deprecated = schemas[key]
                errors = custom(obj, schema)
                if deprecated:
                    print(f"note: {key[0]} {kind} is deprecated in the CRD", file=sys.stderr)
            else:
                # A kind neither built in nor in a fixture has no schema:
                # kubernetes-validate says so, and that is an error.
                errors = builtin(obj)
            if errors:
                all_valid = False
                for error in errors:
                    print(f"invalid {kind} {name}: {error}")
            else:
                print(f"valid {kind} {name}")
    return 0 if all_valid else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
