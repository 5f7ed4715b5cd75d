"""Write kvlint/engines/vllm_json_data.py from extract_json.py's JSON (its kinds, and its "optional" lists).

usage: gen_json_module.py json_opts.json ../../kvlint/engines/vllm_json_data.py   (then ruff format it)
The JSON must hold every release of vllm_flags_data.VERSIONS.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from kvlint.engines.vllm_flags_data import VERSIONS  # noqa: E402

src, out = sys.argv[1], sys.argv[2]
data = json.load(open(src))
optional = data.get("optional", {})
missing = [v for v in VERSIONS if v not in data or v not in optional]
if missing:
    sys.exit(f"releases missing from {src}: {missing}")
options = sorted({o for v in VERSIONS for o in data[v]})
lines = [
    '"""vLLM options whose argparse ``type`` reads the value as JSON, per sampled release (generated, do not edit).',
    "",
    "SOURCE: ``vllm/engine/arg_utils.py`` (``add_argument(type=...)``, ``get_kwargs``/``_compute_kwargs``,",
    "``parse_type``, ``optional_type``, ``union_dict_and_str``, ``nullable_kvs``), the config dataclasses of",
    "``vllm/config`` and ``vllm/entrypoints/openai/cli_args.py`` of the PyPI wheels ``vllm==V`` for each V in",
    ":data:`kvlint.engines.vllm_flags_data.VERSIONS`, read with Python's ``ast`` by",
    "``tools/flag_tables/extract_json.py`` (kinds explained there and in :mod:`kvlint.engines.vllm_json`).",
    '"""',
    "",
    "from __future__ import annotations",
    "",
    "#: option string -> the parser kind in each sampled release (index as VERSIONS), None when the release does",
    "#: not read that option's value as JSON (or lacks the option).",
    "JSON_PARSERS: dict[str, tuple[str | None, ...]] = {",
]
for o in options:
    kinds = ", ".join(repr(data[v].get(o)) for v in VERSIONS)
    lines.append(f"    {o!r}: ({kinds},),")
lines.append("}")
lines += [
    "",
    '#: option string -> whether each sampled release wraps its parser in ``optional_type`` (``""`` and',
    '#: ``"None"`` leave the option unset): an ``Optional`` config field from 0.8.5 (get_kwargs), or an explicit',
    "#: ``type=optional_type(...)``. Options never so wrapped are absent.",
    "OPTIONAL_TYPE: dict[str, tuple[bool, ...]] = {",
]
for o in options:
    flags = [o in optional.get(v, ()) for v in VERSIONS]
    if any(flags):
        lines.append(f"    {o!r}: ({', '.join(map(repr, flags))},),")
lines.append("}")
open(out, "w").write("\n".join(lines) + "\n")
