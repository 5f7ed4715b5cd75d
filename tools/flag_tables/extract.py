"""Extract vLLM CLI options per version from unpacked wheel sources (AST, no import)."""

import ast
import glob
import json
import os
import re
import sys


def load(path):
    try:
        return ast.parse(open(path).read())
    except Exception:
        return None


BASES = {}


def dataclass_fields(trees):
    out = {}
    for t in trees:
        for node in ast.walk(t):
            if isinstance(node, ast.ClassDef):
                BASES[node.name] = [ast.unparse(b).split(".")[-1] for b in node.bases]
                fields = {}
                for st in node.body:
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                        fields[st.target.id] = ast.unparse(st.annotation)
                if fields:
                    out.setdefault(node.name, {}).update(fields)
    return out


def kind_of_annotation(ann):
    a = ann.replace(" ", "")
    import re as _re

    toks = set(_re.findall(r"[A-Za-z_]+", a)) - {"Optional", "Union", "None", "SkipValidation", "Annotated"}
    if toks == {"bool"}:
        return "bool"
    return "value"


#: the files whose ``add_argument`` calls make the OpenAI server's parser, relative to the unpacked wheel
PARSER_FILES = (
    "vllm/entrypoints/api_server.py",
    "vllm/entrypoints/openai/api_server.py",
    "vllm/entrypoints/cli/serve.py",
    "vllm/scripts.py",
    "vllm/entrypoints/common/cli_args.py",
    "vllm/entrypoints/openai/cli_args.py",
    "vllm/engine/arg_utils.py",
)


def extract(root, parser_files=PARSER_FILES):
    """The options the ``add_argument`` calls of ``parser_files`` (default :data:`PARSER_FILES`) register."""
    files = [f"{root}/{f}" for f in parser_files]
    files = [f for f in files if os.path.exists(f)]
    cfg_files = (
        glob.glob(f"{root}/vllm/config*.py")
        + glob.glob(f"{root}/vllm/config/**/*.py", recursive=True)
        + files
    )
    trees = {f: load(f) for f in files}
    classes = dataclass_fields([t for t in (load(f) for f in cfg_files) if t])
    # map of NAME = get_kwargs(Cls)
    kwvars = {}
    for t in trees.values():
        if not t:
            continue
        for node in ast.walk(t):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
                fn = ast.unparse(node.value.func)
                if fn.endswith("get_kwargs") and node.value.args and isinstance(node.targets[0], ast.Name):
                    kwvars[node.targets[0].id] = ast.unparse(node.value.args[0]).split(".")[-1]
    opts = {}

    def add(names, dest, kind, choices=None):
        if not names:
            return
        longs = [n for n in names if n.startswith("--")]
        if dest is None:
            dest = (longs[0] if longs else names[0]).lstrip("-").replace("-", "_")
        for n in names:
            opts[n] = {"dest": dest, "kind": kind, **({"choices": choices} if choices else {})}

    for _f, t in trees.items():
        if not t:
            continue
        # loops: for key, value in X.items(): group.add_argument(f"--{key...}", **value)
        for node in ast.walk(t):
            if (
                isinstance(node, ast.For)
                and isinstance(node.iter, ast.Call)
                and ast.unparse(node.iter).endswith(".items()")
            ):
                var = ast.unparse(node.iter.func.value)
                cls = kwvars.get(var)
                has_add = any(
                    isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "add_argument"
                    for n in ast.walk(node)
                )
                if cls == "cls":
                    cands = [c for c in classes if "FrontendArgs" in c]
                    flds = {}
                    for c in cands:
                        flds.update(classes[c])
                else:
                    flds = dict(classes.get(cls, {}))
                    for b in BASES.get(cls, []):
                        flds = {**classes.get(b, {}), **flds}
                if cls and has_add and flds:
                    for fld, ann in flds.items():
                        if fld.startswith("_"):
                            continue
                        add(["--" + fld.replace("_", "-")], fld, kind_of_annotation(ann))
        for node in ast.walk(t):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
                continue
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if not names:
                continue
            if not names[0].startswith("-"):
                add(names, names[0], "positional")
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            dest = kw["dest"].value if "dest" in kw and isinstance(kw["dest"], ast.Constant) else None
            if dest is None:
                longs = [n for n in names if n.startswith("--")]
                dest = (longs[0] if longs else names[0]).lstrip("-").replace("-", "_")
            kind = "value"
            act = ast.unparse(kw["action"]) if "action" in kw else ""
            if "store_true" in act or "store_false" in act:
                kind = "flag"
            elif "BooleanOptional" in act or "StoreBoolean" in act:
                kind = "bool"
            if "nargs" in kw and ast.unparse(kw["nargs"]).strip("'\"") in ("?",) and kind == "value":
                kind = "optvalue"
            if "nargs" in kw and ast.unparse(kw["nargs"]).strip("'\"") in ("+", "*"):
                kind = "multi"
            choices = None
            if "choices" in kw:
                try:
                    choices = ast.literal_eval(kw["choices"])
                    choices = [str(c) for c in choices]
                except Exception:
                    choices = None
            subs = []
            for k in node.keywords:
                if k.arg is None and isinstance(k.value, ast.Subscript):
                    subs.append(k.value)
                elif k.arg is None and isinstance(k.value, ast.Dict):
                    subs += [
                        vv
                        for kk, vv in zip(k.value.keys, k.value.values, strict=False)
                        if kk is None and isinstance(vv, ast.Subscript)
                    ]
            for sub in subs:
                if True:
                    var = ast.unparse(sub.value)
                    fld = ast.unparse(sub.slice).strip("'\"")
                    dest = dest or fld
                    cls = kwvars.get(var)
                    if cls and fld in classes.get(cls, {}):
                        kind = kind_of_annotation(classes[cls][fld]) if kind == "value" else kind
            add(names, dest, kind, choices)
    lits = {}
    lit_nodes = {}
    hr = set()
    for f in glob.glob(f"{root}/vllm/config*.py") + glob.glob(f"{root}/vllm/config/*.py"):
        t = load(f)
        for node in ast.walk(t):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Subscript)
                and ast.unparse(node.value.value) in ("Literal", "typing.Literal")
            ):
                # every Literal alias, its elements unresolved: ConvertOption = Literal["auto", ConvertType]
                # (0.14.0+) names another alias, expanded below
                sl = node.value.slice
                lit_nodes[node.targets[0].id] = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]

    def expand(elts, seen=()):
        out = []
        for e in elts:
            if isinstance(e, ast.Constant):
                out.append(str(e.value))
            elif isinstance(e, ast.Name) and e.id in lit_nodes and e.id not in seen:
                out.extend(expand(lit_nodes[e.id], (*seen, e.id)))
            else:
                raise ValueError(ast.unparse(e))
        return out

    for name, elts in lit_nodes.items():
        if name in ("BlockSize", "CacheDType", "ModelDType", "TaskOption", "RunnerOption", "ConvertOption"):
            try:
                lits[name] = expand(elts)
            except ValueError:
                pass
    src = open(f"{root}/vllm/engine/arg_utils.py").read()
    for m in re.finditer(r"human_readable_int(?:s|_args)\s*=\s*\{([^}]*)\}", src):
        hr.update(re.findall(r'"(\w+)"', m.group(1)))
    for m in re.finditer(
        r'name in [{(]([^})]*)[})]:\s*\n\s*kwargs\[name\]\["type"\] = human_readable_int\b', src
    ):
        hr.update(re.findall(r'"(\w+)"', m.group(1)))
    if 'if name == "max_model_len"' in src and "human_readable_int_or_auto" in src:
        hr.add("max_model_len")
        opts["__auto_max_model_len__"] = {"dest": "", "kind": "meta"}
    for m in re.finditer(r"'--([\w-]+)',\s*\n?\s*type=human_readable_int", src):
        hr.add(m.group(1).replace("-", "_"))
    for m in re.finditer(r'"--([\w-]+)",\s*\n?\s*type=human_readable_int', src):
        hr.add(m.group(1).replace("-", "_"))
    for name, dest in (
        ("BlockSize", "block_size"),
        ("CacheDType", "kv_cache_dtype"),
        ("ModelDType", "dtype"),
        # --task (0.6.6-0.12.0: choices=get_args(TaskOption), then get_kwargs(ModelConfig)), --runner and
        # --convert (0.10.1+: get_kwargs(ModelConfig), whose Literal fields become argparse choices)
        ("TaskOption", "task"),
        ("RunnerOption", "runner"),
        ("ConvertOption", "convert"),
    ):
        for o in opts.values():
            if o["dest"] == dest and name in lits and "choices" not in o:
                o["choices"] = lits[name]
    opts["__hr__"] = {"dest": ",".join(sorted(hr)), "kind": "meta"}
    return opts


if __name__ == "__main__":
    # usage: extract.py SRC_DIR OUT_JSON  (SRC_DIR holds one unpacked wheel per version: SRC_DIR/0.11.0/vllm/...)
    src_dir, out_json = sys.argv[1], sys.argv[2]
    res = {}
    for d in sorted(glob.glob(os.path.join(src_dir, "*"))):
        v = os.path.basename(d)
        res[v] = extract(d)
        print(v, len(res[v]), file=sys.stderr)
    json.dump(res, open(out_json, "w"), indent=0, sort_keys=True)
