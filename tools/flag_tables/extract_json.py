"""Which vLLM options parse their value as JSON, per release, from unpacked wheel sources (AST, no import).

usage: extract_json.py SRC_DIR OUT_JSON   (SRC_DIR/<version>/vllm/... as for extract.py)

For each option of the OpenAI server's parser (extract.PARSER_FILES) it finds the argparse ``type`` the release
gives it and names the parser kind kvlint restates (kvlint/engines/vllm_json.py):

* ``loads``: ``type=json.loads`` (argparse: "invalid loads value: '...'");
* ``from_json`` / ``from_cli``: ``type=Cls.from_json`` / ``Cls.from_cli`` whose body reads JSON with
  ``json.loads`` or pydantic's ``model_validate_json``/``validate_json`` (argparse: "invalid from_cli value");
  a ``from_cli`` that reads the text with ``ast.literal_eval`` (CompilationConfig, 0.6.x) is not JSON: left out;
* ``parse_type`` / ``parse_type_kvs``: ``parse_type(json.loads)``/``optional_type(json.loads)``; ``_kvs`` when that
  release's wrapper sends a value not matching ``^{.*}$`` to ``nullable_kvs`` (0.8.5, 0.9.2);
* ``dict_or_str`` / ``dict_or_str_dotall``: ``union_dict_and_str`` (JSON only when the value is ``{...}``;
  ``_dotall`` when its regex is ``(?s)^\\s*{.*}\\s*$``);
* ``dataclass:<Cls>``: get_kwargs's ``parse_dataclass`` (``TypeAdapter(Cls).validate_json``); ``dataclass_hr:<Cls>``
  when it first expands bare human-readable numbers (``_expand_json_human_readable_numbers``: ``80G``);
* ``kvs``: ``type=nullable_kvs`` (key=value pairs only: a JSON object is refused); ``kvs_plain`` for 0.5.5's
  ``nullable_kvs``, which raises ``ValueError`` (argparse: "invalid nullable_kvs value") and has no key check.

Separately, the options whose parser is wrapped in ``optional_type`` (``""`` and ``"None"`` leave them unset): an
explicit ``type=optional_type(...)``, get_kwargs's dict branch in 0.8.5 (``optional_type(json.loads)``), and from
0.8.5 get_kwargs's wrap of any field whose annotation admits ``None`` and not ``bool``
(``kwargs[name]["type"] = optional_type(kwargs[name]["type"])``). Written under the JSON's ``"optional"`` key.

A get_kwargs field's type is classified as ``_compute_kwargs``/``get_kwargs`` of the release does, in its order
(dataclass, bool, Literal, tuple, list, set, int, float, dict with str or a non-builtin, dict, str), from the
field's annotation with module-level aliases expanded; ``X["field"]["type"] = ...`` assignments override it.
"""

import ast
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from extract import PARSER_FILES, load  # noqa: E402

WRAPPERS = {"Optional", "Annotated", "SkipValidation", "Required", "NotRequired", "ClassVar", "InitVar"}
BUILTIN_ORIGINS = {
    "dict",
    "Dict",
    "list",
    "List",
    "tuple",
    "Tuple",
    "set",
    "Set",
    "int",
    "float",
    "str",
    "bool",
}


def union_members(node, aliases, seen=()):
    """Top-level members of an annotation (Union/Optional/``|`` split, wrappers removed, aliases expanded)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union_members(node.left, aliases, seen) + union_members(node.right, aliases, seen)
    if isinstance(node, ast.Subscript):
        origin = ast.unparse(node.value).split(".")[-1]
        elts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if origin == "Union":
            return [m for e in elts for m in union_members(e, aliases, seen)]
        if origin == "Optional":
            return union_members(elts[0], aliases, seen) + ["None"]
        if origin in WRAPPERS:
            return union_members(elts[0], aliases, seen)
        return [origin]
    name = ast.unparse(node).split(".")[-1]
    if name in aliases and name not in seen:
        return union_members(aliases[name], aliases, (*seen, name))
    return [name]


def classify_field(members, dataclasses, has_parse_dataclass, kvs_in_parse_type, has_union_dict_and_str):
    m = set(members)
    if has_parse_dataclass:
        dc = [x for x in members if x in dataclasses]
        if dc:
            return f"dataclass:{dc[0]}"
    for skip in ("bool", "Literal", "tuple", "Tuple", "list", "List", "set", "Set", "int", "float"):
        if skip in m:
            return None
    if m & {"dict", "Dict"}:
        others = m - {"dict", "Dict", "None", "Any"}
        if has_union_dict_and_str and ("str" in m or any(x not in BUILTIN_ORIGINS for x in others)):
            return "dict_or_str"
        return "parse_type_kvs" if kvs_in_parse_type else "parse_type"
    return None


def extract_json(root):
    files = [f for f in (f"{root}/{p}" for p in PARSER_FILES) if os.path.exists(f)]
    cfg_files = glob.glob(f"{root}/vllm/config*.py") + glob.glob(
        f"{root}/vllm/config/**/*.py", recursive=True
    )
    trees = {f: load(f) for f in files}
    cfg_trees = [t for t in (load(f) for f in cfg_files + files) if t]
    # classes: fields (annotation nodes), bases, whether a dataclass, methods' source
    fields, bases, dataclasses, methods, aliases = {}, {}, set(), {}, {}
    for t in cfg_trees:
        top = [n for n in t.body if not isinstance(n, (ast.If, ast.Try))]
        for blk in (n for n in t.body if isinstance(n, (ast.If, ast.Try))):
            top += [n for part in (blk.body, getattr(blk, "orelse", [])) for n in part]
        for node in top:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                if isinstance(node.value, (ast.Subscript, ast.BinOp)):
                    aliases[node.targets[0].id] = node.value
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
            ):
                if "TypeAlias" in ast.unparse(node.annotation):
                    aliases[node.target.id] = node.value
        for node in ast.walk(t):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [ast.unparse(b).split("[")[0].split(".")[-1] for b in node.bases]
                decos = " ".join(ast.unparse(d) for d in node.decorator_list)
                if "dataclass" in decos or re.search(r"\bconfig\b", decos):
                    dataclasses.add(node.name)
                fl = {}
                for st in node.body:
                    if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                        fl[st.target.id] = st.annotation
                    if isinstance(st, ast.FunctionDef):
                        methods[(node.name, st.name)] = ast.unparse(st)
                fields.setdefault(node.name, {}).update(fl)

    def all_fields(cls, seen=()):
        if cls == "cls":  # FrontendArgs.add_cli_args: get_kwargs(cls)
            out = {}
            for c in fields:
                if c.endswith("FrontendArgs") and not c.startswith("Batch"):
                    out.update(all_fields(c))
            return out
        out = {}
        for b in bases.get(cls, []):
            if b not in seen:
                out.update(all_fields(b, (*seen, cls)))
        out.update(fields.get(cls, {}))
        return out

    src = "\n".join(open(f).read() for f in files)
    au = open(f"{root}/vllm/engine/arg_utils.py").read()

    def body_of(fn):
        m = re.search(rf"\ndef {fn}\(.*?(?=\n(?:def |class |@|[A-Za-z_]+ *[:=]))", au, re.S)
        return m.group(0) if m else ""

    kvs_in_parse_type = "nullable_kvs" in body_of("parse_type")
    kvs_in_optional = "nullable_kvs" in body_of("optional_type")
    uds = body_of("union_dict_and_str")
    has_uds = bool(uds)
    uds_kind = "dict_or_str_dotall" if "(?s)" in uds else "dict_or_str"
    has_parse_dataclass = "def parse_dataclass" in au
    # parse_dataclass expands bare k/m/g/t, K/M/G/T numbers (``{"cpu_bytes_to_use": 80G}``) before validate_json
    # (``_expand_json_human_readable_numbers``, 0.20.0 on among the sampled releases)
    m_pd = re.search(r"def parse_dataclass\(.*?raise argparse", au, re.S)
    dataclass_hr = bool(m_pd) and "_expand_json_human_readable_numbers" in m_pd.group(0)

    optional_wrap = 'optional_type(kwargs[name]["type"])' in au
    dict_optional = "optional_type(json.loads)" in body_of("get_kwargs")

    def type_kind(expr):
        e = expr.replace(" ", "")
        if e == "json.loads":
            return "loads"
        if e in ("optional_type(json.loads)", "parse_type(json.loads)"):
            if kvs_in_parse_type or (e.startswith("optional") and kvs_in_optional):
                return "parse_type_kvs"
            return "parse_type"
        if e == "union_dict_and_str":
            return uds_kind if has_uds else None
        if e == "nullable_kvs":
            # 0.5.5's nullable_kvs raises ValueError (argparse: "invalid nullable_kvs value"), neither lower-cases
            # nor strips keys and has no conflicting-key check; from 0.6 it raises ArgumentTypeError with its text
            return "kvs" if "ArgumentTypeError" in body_of("nullable_kvs") else "kvs_plain"
        m = re.fullmatch(r"(\w+)\.(from_cli|from_json)", e)
        if m:
            body = methods.get((m.group(1), m.group(2)), "")
            if "literal_eval" in body:
                return None
            if "json.loads" in body or "validate_json" in body:
                return m.group(2)
        return None

    kwvars = {}
    for t in trees.values():
        for node in ast.walk(t or ast.Module(body=[], type_ignores=[])):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1:
                if ast.unparse(node.value.func).endswith("get_kwargs") and node.value.args:
                    if isinstance(node.targets[0], ast.Name):
                        kwvars[node.targets[0].id] = ast.unparse(node.value.args[0]).split(".")[-1]
    # X["field"]["type"] = expr overrides
    overrides = {}
    for m in re.finditer(r'(\w+)\["(\w+)"\]\["type"\]\s*=\s*([^\n]+)', src):
        overrides[(m.group(1), m.group(2))] = m.group(3).strip()

    def field_optional(var, fld):
        """Whether the release wraps the field's parser in optional_type (see the module docstring)."""
        if (var, fld) in overrides:
            return "optional_type(" in overrides[(var, fld)].replace(" ", "")
        cls = kwvars.get(var)
        ann = all_fields(cls).get(fld) if cls else None
        if ann is None:
            return False
        members = union_members(ann, aliases)
        kind = field_kind(var, fld)
        if dict_optional and kind in ("parse_type", "parse_type_kvs"):
            return True
        return optional_wrap and "None" in members and "bool" not in members

    def field_kind(var, fld):
        if (var, fld) in overrides:
            return type_kind(overrides[(var, fld)])
        cls = kwvars.get(var)
        ann = all_fields(cls).get(fld) if cls else None
        if ann is None:
            return None
        members = union_members(ann, aliases)
        if "def is_dict_subclass" in au:  # subclasses of dict (MultiModalDummyOptions) are CLI dicts
            members = ["dict" if any(b in ("dict", "Dict") for b in bases.get(x, [])) else x for x in members]
        # get_kwargs's dict branch: optional_type(json.loads) (0.8.5, whose wrapper has the nullable_kvs
        # fallback) or parse_type(json.loads) (0.9.2 on; the fallback in its parse_type until 0.10)
        kvs = kvs_in_parse_type or ("optional_type(json.loads)" in body_of("get_kwargs") and kvs_in_optional)
        kind = classify_field(members, dataclasses, has_parse_dataclass, kvs, has_uds)
        if kind and kind.startswith("dataclass:") and dataclass_hr:
            kind = "dataclass_hr:" + kind.split(":", 1)[1]
        return uds_kind if kind == "dict_or_str" else kind

    out, optional = {}, set()
    for t in trees.values():
        if not t:
            continue
        for node in ast.walk(t):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
                continue
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if not names or not names[0].startswith("-"):
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            kind = type_kind(ast.unparse(kw["type"])) if "type" in kw else None
            opt = "type" in kw and ast.unparse(kw["type"]).replace(" ", "").startswith("optional_type(")
            if "type" not in kw:
                subs = [
                    k.value for k in node.keywords if k.arg is None and isinstance(k.value, ast.Subscript)
                ]
                for sub in subs:
                    var = ast.unparse(sub.value)
                    fld = ast.unparse(sub.slice).strip("'\"")
                    if field_kind(var, fld):
                        kind, opt = field_kind(var, fld), field_optional(var, fld)
            if kind:
                for n in names:
                    if n.startswith("--"):
                        out[n] = kind
                        if opt:
                            optional.add(n)
        # loops: for name, value in X.items(): add_argument(f"--{name...}", **value)
        for node in ast.walk(t):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
                if not ast.unparse(node.iter).endswith(".items()"):
                    continue
                var = ast.unparse(node.iter.func.value)
                cls = kwvars.get(var)
                if not cls or not any(
                    isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "add_argument"
                    for n in ast.walk(node)
                ):
                    continue
                for fld in all_fields(cls):
                    if not fld.startswith("_"):
                        k = field_kind(var, fld)
                        if k:
                            out["--" + fld.replace("_", "-")] = k
                            if field_optional(var, fld):
                                optional.add("--" + fld.replace("_", "-"))
    return out, optional


if __name__ == "__main__":
    src_dir, out_json = sys.argv[1], sys.argv[2]
    res = {"optional": {}}
    for d in sorted(glob.glob(os.path.join(src_dir, "*"))):
        v = os.path.basename(d)
        res[v], opt = extract_json(d)
        res["optional"][v] = sorted(opt & set(res[v]))
        print(v, len(res[v]), len(opt), file=sys.stderr)
    json.dump(res, open(out_json, "w"), indent=1, sort_keys=True)
