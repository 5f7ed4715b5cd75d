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
if HERE not in sys.path:
    sys.path.insert(0, HERE)


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


def _sglang_pods(containers: int, pad_lines: int = 0) -> str:
    """tests/test_sglang_config_file.py's ConfigMap and pod (SGLang 0.5.5 reading ``--config`` from it), with
    ``containers`` engine containers mounting the one file, padded with ``pad_lines`` comment lines."""
    from test_sglang_config_file import CONFIGMAP, LAUNCH, POD

    pad = "".join(
        f"    # padding line {i:07d} of a config larger than a ConfigMap holds\n" for i in range(pad_lines)
    )
    cm = CONFIGMAP.replace("    disable-radix-cache: false\n", "    disable-radix-cache: false\n" + pad)
    pod = POD.replace("COMMAND", LAUNCH)
    start, end = pod.index("  - name: engine"), pod.index("  volumes:")
    one = pod[start:end]
    many = "".join(one.replace("name: engine", f"name: engine{i}", 1) for i in range(containers))
    return cm + pod[:start] + many + pod[end:]


def _count_sglang_reads(monkeypatch) -> list[int]:
    import kvlint.engines.sglang as S

    reads: list[int] = []
    real = S._config_file_argv

    def counting(*args, **kwargs):
        reads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(S, "_config_file_argv", counting)
    return reads


def test_sglang_containers_mounting_one_config_read_it_once(tmp_path: Path, monkeypatch) -> None:
    """SGLang's --config was composed again for every container mounting it, with PyYAML's pure-Python composer
    (a 1.3 MB flow list of --cuda-graph-bs took 15 CPU s, once per container), where vLLM's reader had a memo.
    Counted: one reading for five containers, each still sized with the file's --tp-size 2 (the pods' 2 GPUs)."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    reads = _count_sglang_reads(monkeypatch)
    path = tmp_path / "five.yaml"
    path.write_text(_sglang_pods(5))
    result = run_check([str(path)], Options(allow_hub=False))
    served = [c.serving for c in result.containers if c.serving is not None]
    assert len(served) == 5 and {s.get("tp_size") for s in served} == {2}
    assert len(reads) == 1


def test_sglang_config_larger_than_a_configmap_is_not_read(tmp_path: Path, monkeypatch) -> None:
    """A SGLang --config file of more than 1 MiB comes from no ConfigMap the API server accepts; it was read
    (seconds a MiB, per container). It is not read now, with a warning, as vLLM's --config reader does."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    reads = _count_sglang_reads(monkeypatch)
    path = tmp_path / "big.yaml"
    path.write_text(_sglang_pods(1, pad_lines=17_000))
    result = run_check([str(path)], Options(allow_hub=False))
    (note,) = [d for d in result.diagnostics if "more than a ConfigMap holds" in d.message]
    assert note.severity == "warning" and "not read" in note.message and "--config" in note.message
    assert not reads


def test_quantization_configs_of_the_wrong_shape_are_priced_not_raised() -> None:
    """A compressed-tensors group, or its ``weights``, that is not a mapping (``{"g0": ["x"]}``, ``{"weights":
    "tensor"}``), and a ModelOpt ``quantization`` that is not one, raised AttributeError out of the weights'
    pricing (found by a fuzzer of the quantization readers): the workload's check ended with "kvlint could not
    finish checking this workload ... please report this manifest". They are priced as a group that says nothing
    (8-bit) and an FP8 export without its algorithm named, as a missing one is."""
    from kvlint.models.weights import weight_bytes

    m = _kimi()
    said_nothing = replace(
        m, quant_config={"quant_method": "compressed-tensors", "config_groups": {"g0": None}}
    )
    expected = weight_bytes(said_nothing, dtype_bytes=2)
    for group in (["x"], "tensor", {"weights": "tensor"}, {"weights": ["int", 4]}):
        odd = replace(m, quant_config={"quant_method": "compressed-tensors", "config_groups": {"g0": group}})
        assert weight_bytes(odd, dtype_bytes=2) == expected, group
    fp8 = replace(m, quant_method="modelopt", quant_config={"quant_method": "modelopt", "quantization": None})
    for quant in ("FP8", ["FP8"]):
        odd = replace(fp8, quant_config={"quant_method": "modelopt", "quantization": quant})
        assert weight_bytes(odd, dtype_bytes=2) == weight_bytes(fp8, dtype_bytes=2), quant
