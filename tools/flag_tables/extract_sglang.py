"""Extract SGLang server option strings per release from unpacked wheel sources (AST, no import).

Usage: ``python extract_sglang.py SRC_DIR OUT.json`` where SRC_DIR/<version>/sglang/srt/server_args.py (and, from
0.5.13, sglang/srt/arg_groups/*.py) were unzipped from ``pip download --no-deps sglang==<version>``.
Collects the option strings (``--x``) of every ``add_argument`` call and, from 0.5.16 where the options became
annotated dataclass fields (``ServerArgs`` in 0.5.16, ``sglang/srt/arg_groups/fields/*.py`` later: ``name:
A[type, "help"]`` or ``Annotated[type, Arg(cli_name=…, aliases=[…])]``,
CLI name ``--`` + the field name with dashes, ``arg_groups/arg_utils.py::_field_to_cli_name``), of those fields:
``{"versions": [...], "options": {opt: [versions]}}``.
"""

import ast
import glob
import json
import os
import sys


def options_of(root):
    files = [os.path.join(root, "sglang/srt/server_args.py")] + sorted(
        glob.glob(os.path.join(root, "sglang/srt/arg_groups/**/*.py"), recursive=True)
    )
    out = set()
    for f in files:
        if not os.path.exists(f):
            continue
        tree = ast.parse(open(f, encoding="utf-8").read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
                for a in node.args:
                    if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                        out.add(a.value)
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and not node.target.id.startswith("_")  # private bookkeeping fields are no CLI options
                and isinstance(node.annotation, ast.Subscript)
                and (
                    getattr(node.annotation.value, "id", "") == "A"
                    or getattr(node.annotation.value, "id", "") == "Annotated"
                    and any(
                        isinstance(c, ast.Call) and getattr(c.func, "id", "") == "Arg" for c in ast.walk(node)
                    )
                )
            ):
                name = "--" + node.target.id.replace("_", "-")
                for call in ast.walk(node.annotation):
                    if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Arg":
                        for kw in call.keywords:
                            if kw.arg == "cli_name" and isinstance(kw.value, ast.Constant):
                                name = kw.value.value
                            if kw.arg == "aliases" and isinstance(kw.value, (ast.List, ast.Tuple)):
                                for el in kw.value.elts:
                                    if isinstance(el, ast.Constant) and str(el.value).startswith("--"):
                                        out.add(el.value)
                out.add(name)
    return out


def main(src, out_path):
    def key(v):
        return [int(x) if x.isdigit() else x for x in v.replace("post", ".").split(".")]

    versions = sorted((d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d, "sglang"))), key=key)
    table = {}
    for v in versions:
        for opt in options_of(os.path.join(src, v)):
            table.setdefault(opt, []).append(v)
    json.dump({"versions": versions, "options": table}, open(out_path, "w"), indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
