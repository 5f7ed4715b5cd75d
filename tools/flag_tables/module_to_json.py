"""Rebuild extract.py's JSON from the generated kvlint/engines/vllm_flags_data.py, so that adding one vLLM
release needs only that release's wheel, not the wheels of every sampled release.

Usage: module_to_json.py OUT_JSON [NEW_RELEASE_JSON ...]

The module keeps, per option, its dest and kind as the newest sampled release that has the option defines them,
plus a bit per release; extract.py's JSON keeps them per release. gen_module.py writes the dest and kind of the
newest release that has the option, so the rebuilt JSON regenerates the module byte for byte
(``module_to_json.py x.json && gen_module.py x.json out.py && ruff format out.py`` leaves ``out.py`` equal to
the module). Each NEW_RELEASE_JSON (extract.py's output for the new wheels alone) is merged in; a release present
in both must agree with the module on every option's dest and kind, the three choice lists, the human-readable
integers and ``--max-model-len auto``, or the script stops.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from kvlint.engines import vllm_flags_data as data  # noqa: E402

OPT_OF = {
    "dtype": "--dtype",
    "kv_cache_dtype": "--kv-cache-dtype",
    "block_size": "--block-size",
    "runner": "--runner",
    "convert": "--convert",
    "task": "--task",
}


def rebuild() -> dict:
    out = {}
    for i, v in enumerate(data.VERSIONS):
        opts = {}
        for name, (dest, kind, mask) in data.OPTIONS.items():
            if mask >> i & 1:
                opts[name] = {"dest": dest, "kind": kind}
        for dest, per in data.CHOICES.items():
            if per[i] and OPT_OF[dest] in opts:
                opts[OPT_OF[dest]]["choices"] = list(per[i])
        opts["__hr__"] = {"dest": ",".join(data.HUMAN_READABLE[i]), "kind": "meta"}
        if data.MAX_MODEL_LEN_AUTO[i]:
            opts["__auto_max_model_len__"] = {"dest": "", "kind": "meta"}
        out[v] = opts
    return out


def _comparable(opts: dict) -> dict:
    """What the module keeps of one release's options (extract.py also records other options' choices)."""
    out = {}
    for k, o in opts.items():
        if k.startswith("-"):
            keep = k in OPT_OF.values() and o.get("choices")
            out[k] = (o["dest"], o["kind"], tuple(o["choices"]) if keep else ())
        elif k.startswith("__"):
            out[k] = o["dest"]
    return out


def main() -> None:
    res = rebuild()
    for path in sys.argv[2:]:
        for v, opts in json.load(open(path)).items():
            if v in res:
                if _comparable(res[v]) != _comparable(opts):
                    sys.exit(
                        f"{path}: release {v} differs from the module; regenerate from all wheels instead"
                    )
            res[v] = opts
    json.dump(res, open(sys.argv[1], "w"), indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
