"""Write kvlint/engines/vllm_flags_data.py from extract.py's JSON. Usage: gen_module.py OPTS_JSON OUT_PY"""

import json
import sys

d = json.load(open(sys.argv[1]))


def vkey(v):
    return tuple(int(x) for x in v.replace(".post", ".").split("."))


vs = sorted(d, key=vkey)
opts = {}
for i, v in enumerate(vs):
    for name, o in d[v].items():
        if name.startswith("__") or not name.startswith("-"):
            continue
        e = opts.setdefault(name, {"dest": o["dest"], "kind": o["kind"], "mask": 0})
        e["mask"] |= 1 << i
        e["dest"] = o["dest"]
        e["kind"] = o["kind"]
choices = {}
OPT_OF = {
    "dtype": "--dtype",
    "kv_cache_dtype": "--kv-cache-dtype",
    "block_size": "--block-size",
    "runner": "--runner",
    "convert": "--convert",
    "task": "--task",
}
for dest, opt in OPT_OF.items():
    per = []
    for v in vs:
        per.append(tuple(d[v].get(opt, {}).get("choices") or ()))
    choices[dest] = per
hr = [tuple(x for x in d[v]["__hr__"]["dest"].split(",") if x) for v in vs]
auto = [("__auto_max_model_len__" in d[v]) for v in vs]
out = []
out.append(
    '"""vLLM command-line options per release, generated from the vLLM wheels (do not edit by hand).\n'
)
out.append(
    "SOURCE: the ``add_argument`` calls (and the config dataclasses they read through ``get_kwargs``) in"
)
out.append(
    "``vllm/engine/arg_utils.py``, ``vllm/entrypoints/openai/cli_args.py``, ``vllm/entrypoints/common/cli_args.py``,"
)
out.append(
    "``vllm/entrypoints/cli/serve.py``, ``vllm/scripts.py`` and ``vllm/entrypoints/{,openai/}api_server.py`` of the"
)
out.append(
    "PyPI wheels ``vllm==V`` for each V in :data:`VERSIONS`, read with Python's ``ast`` (no vLLM import)."
)
out.append(
    "Choices of ``--dtype``/``--kv-cache-dtype``/``--block-size`` come from the ``choices=`` literals or the"
)
out.append(
    "``ModelDType``/``CacheDType``/``BlockSize`` ``Literal`` aliases in ``vllm/config``, those of ``--task``/"
)
out.append(
    "``--runner``/``--convert`` from ``TaskOption``/``RunnerOption``/``ConvertOption``. Human-readable integer"
)
out.append(
    "options come from ``_compute_kwargs``/``get_kwargs`` (``human_readable_int``) in ``arg_utils.py``."
)
out.append(
    "Generator: kvlint maintainers' ``extract.py`` (AST walk), run 2026-11 against the wheels listed below."
)
out.append('"""\n')
out.append("from __future__ import annotations\n")
out.append("#: Sampled vLLM releases, oldest first; bit i of an option's mask means present in VERSIONS[i].")
out.append("VERSIONS: tuple[str, ...] = " + repr(tuple(vs)))
out.append("")
out.append(
    "#: option string -> (argparse dest, kind, version mask). kind: ``value`` (takes a value), ``bool``"
)
out.append("#: (BooleanOptionalAction: bare flag or ``--no-X``), ``flag`` (store_true), ``multi`` (nargs=+),")
out.append("#: ``optvalue`` (nargs=?).")
out.append("OPTIONS: dict[str, tuple[str, str, int]] = {")
for name in sorted(opts):
    e = opts[name]
    out.append(f"    {name!r}: ({e['dest']!r}, {e['kind']!r}, {e['mask']:#x}),")
out.append("}")
out.append("")
out.append("#: dest -> choices per VERSIONS entry (empty tuple: not a closed set in that release).")
out.append("CHOICES: dict[str, tuple[tuple[str, ...], ...]] = {")
for k, per in choices.items():
    out.append(f"    {k!r}: (")
    for c in per:
        out.append(f"        {c!r},")
    out.append("    ),")
out.append("}")
out.append("")
out.append("#: dests parsed with ``human_readable_int`` per VERSIONS entry.")
out.append("HUMAN_READABLE: tuple[tuple[str, ...], ...] = (")
for h in hr:
    out.append(f"    {h!r},")
out.append(")")
out.append("")
out.append(
    "#: whether ``--max-model-len`` accepts ``-1``/``auto`` (``human_readable_int_or_auto``) per VERSIONS entry."
)
out.append("MAX_MODEL_LEN_AUTO: tuple[bool, ...] = " + repr(tuple(auto)))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print(len(opts))
