"""break45: hostile inputs to the readers the last stop added (compressed-tensors ``ignore`` regexes, ...).

Each test fails before its fix. None asserts a wall-clock bound: a pattern that backtracks for hours is run in a
child process whose return is awaited (the timeout only stops a run that never ends), and work is counted.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from kvlint.memory.compat import compressed_tensors_scheme
from kvlint.models.resolve import resolve_model

HERE = str(Path(__file__).resolve().parent)


def _kimi():
    m = resolve_model("moonshotai/Kimi-K2.5", allow_hub=False)
    assert m.quant_method == "compressed-tensors" and isinstance(m.quant_config, dict)
    return m


def test_ct_ignore_regex_that_python_cannot_compile_matches_nothing() -> None:
    """A compressed-tensors ``ignore`` entry ``re:(`` (a config.json is pull-request input: a local model path,
    --model-dir) raised re.error out of the weights' pricing: the workload got "kvlint could not finish checking
    this workload ... please report this manifest" and no sizing. It now matches no layer, as GPTQ's ``dynamic``
    patterns that do not compile; the group is read as with the entry left out."""
    from kvlint.models.weights import skipped_params, weight_bytes

    m = _kimi()
    bad = replace(m, quant_config={**m.quant_config, "ignore": ["re:(", "lm_head"]})
    plain = replace(m, quant_config={**m.quant_config, "ignore": ["lm_head"]})
    assert weight_bytes(bad, dtype_bytes=2) == weight_bytes(plain, dtype_bytes=2)
    assert skipped_params(bad, "compressed-tensors", bad.quant_config) == skipped_params(
        plain, "compressed-tensors", plain.quant_config
    )
    assert compressed_tensors_scheme(bad, "0.11.0") == compressed_tensors_scheme(plain, "0.11.0") is not None


def test_ct_ignore_regex_with_unbounded_backtracking_is_not_matched() -> None:
    """``re:(.+)+Z`` in a compressed-tensors ``ignore`` list backtracks 2^30 times on each layer name before it
    fails: ``kvlint check`` of a Deployment serving such a checkpoint on a T4 never returned (KV305's group reach
    and the weights' skip list both matched it). The entry is not matched (GPTQ's ``dynamic`` bound,
    kvlint.models.weights._repeats), so the answers are those of the list without it. Run in a child process:
    before, it never returned."""
    code = (
        f"import sys; sys.path.insert(0, {HERE!r})\n"
        "from dataclasses import replace\n"
        "from test_break45 import _kimi\n"
        "from kvlint.memory.compat import compressed_tensors_scheme\n"
        "from kvlint.models.weights import weight_bytes\n"
        "m = _kimi()\n"
        "plain = replace(m, quant_config={**m.quant_config, 'ignore': ['lm_head']})\n"
        "for pat in ['re:(.+)+Z', 're:(.|.)*Z', 're:(\\\\w+\\\\.?)+Z', 're:' + '.*' * 40 + 'Z']:\n"
        "    bad = replace(m, quant_config={**m.quant_config, 'ignore': [pat, 'lm_head']})\n"
        "    assert compressed_tensors_scheme(bad, '0.11.0') == compressed_tensors_scheme(plain, '0.11.0'), pat\n"
        "    assert weight_bytes(bad, dtype_bytes=2) == weight_bytes(plain, dtype_bytes=2), pat\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_ct_ignore_list_is_matched_once_per_config_not_once_per_group(monkeypatch) -> None:
    """KV305's group reach matched the whole ``ignore`` list against every probe layer once per config group: a
    4 MiB config.json of 20,000 groups targeting ``Linear`` and 10,000 ignore entries is 6e9 comparisons. The
    list is now read into one matcher per config (counted here), and the answer is the same as for one group."""
    import kvlint.models.weights as weights

    m = _kimi()
    group = next(iter(m.quant_config["config_groups"].values()))
    many = {
        **m.quant_config,
        "ignore": [f"model.layers.{i}.nothing" for i in range(10_000)] + ["lm_head"],
        "config_groups": {f"g{i}": {**group, "targets": ["Linear"]} for i in range(20_000)},
    }
    one = {**many, "config_groups": {"g": {**group, "targets": ["Linear"]}}}
    built = []
    real = weights.ct_ignore_matcher

    def counted(*args, **kwargs):
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(weights, "ct_ignore_matcher", counted)
    got = compressed_tensors_scheme(replace(m, quant_config=many), "0.11.0")
    assert len(built) == 1
    assert got == compressed_tensors_scheme(replace(m, quant_config=one), "0.11.0") is not None
