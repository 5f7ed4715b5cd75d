#!/usr/bin/env python3
"""Generate ``kvlint/data/k8s_fields.json``: the field names of the Kubernetes ``core/v1`` types a PodSpec
is made of, read from the model classes of the official ``kubernetes`` Python client.

Each ``kubernetes/client/models/v1_*.py`` module declares a class with ``openapi_types`` (attribute ->
type) and ``attribute_map`` (attribute -> JSON field name). This script reads those two dictionaries
with :mod:`ast` (nothing is imported) and keeps every type reachable from ``V1PodSpec``: for each type,
JSON field name -> the named model type it holds (lists unwrapped), or null for scalars and maps.

Usage: python tools/gen_k8s_fields.py kubernetes-37.0.2-py2.py3-none-any.whl > kvlint/data/k8s_fields.json
(the wheel from ``pip download kubernetes==37.0.2 --no-deps``).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile

ROOTS = ("V1PodSpec",)


def _dict_literal(node: ast.AST) -> dict[str, str]:
    if not isinstance(node, ast.Dict):
        return {}
    out = {}
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and isinstance(v, ast.Constant):
            out[str(k.value)] = str(v.value)
    return out


def read_models(wheel: str) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    models: dict[str, tuple[dict[str, str], dict[str, str]]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if not re.fullmatch(r"kubernetes/client/models/v1_[a-z0-9_]+\.py", name):
                continue
            tree = ast.parse(zf.read(name).decode("utf-8"))
            for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
                types: dict[str, str] = {}
                amap: dict[str, str] = {}
                for stmt in cls.body:
                    target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
                    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                        target = stmt.targets[0]
                    value = stmt.value if isinstance(stmt, (ast.AnnAssign, ast.Assign)) else None
                    if isinstance(target, ast.Name) and value is not None:
                        if target.id == "openapi_types":
                            types = _dict_literal(value)
                        elif target.id == "attribute_map":
                            amap = _dict_literal(value)
                if amap:
                    models[cls.name] = (types, amap)
    return models


def inner_type(t: str) -> str | None:
    m = re.fullmatch(r"List\[(V1\w+)\]", t) or re.fullmatch(r"(V1\w+)", t)
    return m.group(1) if m else None


def main() -> int:
    wheel = sys.argv[1]
    models = read_models(wheel)
    out: dict[str, dict[str, str | None]] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in out or name not in models:
            continue
        types, amap = models[name]
        fields: dict[str, str | None] = {}
        for attr, json_name in sorted(amap.items(), key=lambda kv: kv[1]):
            child = inner_type(types.get(attr, ""))
            fields[json_name] = child
            if child and child not in out:
                todo.append(child)
        out[name] = fields
    doc = {
        "source": {
            "package": "kubernetes (PyPI), the official Kubernetes Python client",
            "file": wheel.rsplit("/", 1)[-1],
            "read": "openapi_types and attribute_map of kubernetes/client/models/v1_*.py",
            "licence": "Apache-2.0",
        },
        "types": dict(sorted(out.items())),
    }
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
