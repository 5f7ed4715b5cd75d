"""vLLM's hybrid refusal "max_num_seqs (N) exceeds available Mamba cache blocks (M)" (KV108).

vLLM (``vllm@0.34.0:vllm/config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes``; 0.22.0 the
same) raises it when FULL decode CUDA graphs are captured for a model with Mamba-style state layers and
``max_num_seqs > kv_cache_config.num_blocks``. The block count the tests expect is derived here from the plan's own
terms with the engine's formula (``num_blocks = available // bytes_per_block``; with the extensible KV cache the pool
reserved at profiling, ``budget - weights - activation - non-torch``), never written as a number.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.capacity.plan_command import plan_command
from kvlint.memory.vllm import VllmPlanDetail
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.remedies import replanned
from kvlint.verify import parse_log, verify_log

ROOT = Path(__file__).resolve().parents[1]
HYBRID = "Qwen/Qwen3.5-27B"  # bundled config (kvlint/data/models): 48 gated-DeltaNet + 16 attention layers
ARGS = ["--max-model-len", "131072"]


def _detail(version: str, *extra: str, model: str = HYBRID) -> VllmPlanDetail:
    out = plan_command(
        ["vllm", "serve", model, *ARGS, *extra],
        Options(allow_hub=False, accelerator="h100", engine_version=version),
    )
    d = out.result.plan_detail
    assert isinstance(d, VllmPlanDetail)
    return d


def _pool_blocks(d: VllmPlanDetail) -> int:
    """The engine's ``available_memory // bytes_per_block`` on the plan's own KV pool."""
    return d.plan.kv_cache_bytes // d.plan.bytes_per_block


def test_block_count_is_the_pools_block_count() -> None:
    d = _detail("0.22.0")
    assert any(g.kind == "mamba" for g in d.groups)
    assert d.mamba_blocks == _pool_blocks(d) == d.plan.num_blocks
    assert d.mamba_blocks_low == d.plan.kv_cache_bytes_low // d.plan.bytes_per_block
    assert d.mamba_blocks_high == d.plan.kv_cache_bytes_high // d.plan.bytes_per_block
    # the release's default max_num_seqs on an H100 (1,024) is above this pool's blocks: vLLM refuses
    assert d.plan.max_num_seqs > d.mamba_blocks
    assert d.mamba_refusal == (
        f"max_num_seqs ({d.plan.max_num_seqs}) exceeds available Mamba cache blocks ({d.mamba_blocks}). Each "
        "decode sequence requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower "
        f"max_num_seqs to at most {d.mamba_blocks} or increase gpu_memory_utilization."
    )


def test_the_threshold_is_strict() -> None:
    """``max_num_reqs > num_blocks``: exactly as many sequences as blocks starts."""
    m = _detail("0.22.0").mamba_blocks
    d = _detail("0.22.0", "--max-num-seqs", str(m))
    # fewer sequences shrink the CUDA-graph estimate and the sampler rows, so the pool can only grow
    assert d.mamba_blocks >= m and d.mamba_refusal is None


def test_extensible_kv_cache_checks_the_reserved_pool() -> None:
    """0.34.0's extensible KV cache: the runner's config holds the pool reserved from the profile, not the one
    committed after warm-up."""
    d = _detail("0.34.0")
    p = d.plan
    reserved = p.budget_bytes - p.weights_bytes - p.activation_bytes - p.non_torch_bytes
    assert d.mamba_blocks == reserved // p.bytes_per_block
    assert d.mamba_blocks >= _pool_blocks(d)
    off = _detail("0.34.0", "--no-enable-extensible-kv-cache")
    assert off.mamba_blocks == _pool_blocks(off)


def test_no_check_where_the_engine_makes_none() -> None:
    """Releases before 0.20.0 clamp the capture sizes instead (vllm-project/vllm#34571, #37416), --enforce-eager
    captures no graphs, and a model without state layers has no MambaSpec."""
    for d in (
        _detail("0.19.1"),
        _detail("0.22.0", "--enforce-eager"),
        _detail("0.22.0", model="Qwen/Qwen3-8B"),
    ):
        assert (d.mamba_blocks, d.mamba_blocks_low, d.mamba_blocks_high) == (0, 0, 0)
        assert d.mamba_refusal is None
    assert _detail("0.20.0").mamba_refusal is not None


def _manifest(tmp_path: Path, *args: str) -> Path:
    path = tmp_path / "hybrid.yaml"
    quoted = ", ".join(f'"{a}"' for a in ("--model", HYBRID, *ARGS, *args))
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hybrid\nspec:\n"
        "  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"
        "  containers:\n    - name: vllm\n      image: vllm/vllm-openai:v0.22.0\n"
        f"      args: [{quoted}]\n"
        "      resources:\n        limits:\n          nvidia.com/gpu: 1\n",
        encoding="utf-8",
    )
    return path


def test_kv108_at_the_flag_with_a_replanned_remedy(tmp_path: Path) -> None:
    res = run_check([str(_manifest(tmp_path, "--max-num-seqs", "1024"))], Options(allow_hub=False))
    found = [d for d in res.diagnostics if d.rule == "KV108"]
    assert len(found) == 1
    diag = found[0]
    cr = res.containers[0]
    d = cr.plan_detail
    assert isinstance(d, VllmPlanDetail)
    assert diag.loc is not None and diag.loc.line == cr.serving.loc("max_num_seqs").line
    assert f"available Mamba cache blocks ({d.mamba_blocks})" in diag.message
    # the offered --max-num-seqs starts at the low end of the band, and one more does not
    n = int(diag.fix.split("--max-num-seqs ", 1)[1].split()[0])
    ok = replanned(cr, max_num_seqs=n)
    assert isinstance(ok, VllmPlanDetail) and n <= ok.mamba_blocks_low
    over = replanned(cr, max_num_seqs=n + 1)
    assert isinstance(over, VllmPlanDetail) and n + 1 > over.mamba_blocks_low


def test_kv108_silent_below_the_blocks_and_for_the_default_line(tmp_path: Path) -> None:
    res = run_check([str(_manifest(tmp_path, "--max-num-seqs", "64"))], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV108"]
    res = run_check([str(_manifest(tmp_path))], Options(allow_hub=False))
    found = [d for d in res.diagnostics if d.rule == "KV108"]
    assert len(found) == 1 and "default" in found[0].message
    assert found[0].loc == res.containers[0].serving.command_loc


def test_verify_reads_the_refusal_as_a_predicted_failure() -> None:
    """gt-281's refusal (its model's config is not in the corpus) on a stand-in hybrid: the replay now predicts the
    failure and sets its block count against the log's."""
    text = (
        "INFO 05-01 12:48:00 [utils.py:299] vLLM server version 0.22.0, serving model Qwen/Qwen3.5-27B\n"
        + (ROOT / "fixtures" / "logs" / "gt-281.log").read_text(encoding="utf-8")
    )
    log = parse_log(text)
    assert log.failure["kind"] == "mamba_blocks_below_max_num_seqs"
    res = verify_log(log, Options(allow_hub=False, accelerator="h100"), model=HYBRID, extra_args=tuple(ARGS))
    d = res.plan
    assert isinstance(d, VllmPlanDetail)
    assert d.mamba_refusal is not None and res.verdict == "fail"
    fig = next(f for f in res.figures if f.key == "mamba_blocks")
    assert fig.reported == log.failure["mamba_blocks"]
    assert (fig.predicted, fig.low, fig.high) == (d.mamba_blocks, d.mamba_blocks_low, d.mamba_blocks_high)


def test_compare_marks_the_cell_refused_by_kv108() -> None:
    """``kvlint plan --compare``: the TP 1 cell on an H100 is refused (the default max_num_seqs is above its blocks),
    and a cell is refused by KV108 exactly when its own plan predicts the refusal."""
    from kvlint.capacity.compare import compare
    from kvlint.capacity.context import plan_detail, resolve

    ctx = resolve(
        ["vllm", "serve", HYBRID, *ARGS],
        Options(allow_hub=False, accelerator="h100", engine_version="0.22.0"),
    )
    assert ctx.accelerator is not None
    rows = compare(ctx, accelerators=["h100"], tp_sizes=(1, 2), kv_dtypes=("auto",))
    for row in rows:
        d = plan_detail(ctx, ctx.accelerator, tensor_parallel_size=row.tp)
        assert (row.refused_by == "KV108") == (d.mamba_refusal is not None and d.verdict != "fail")
    assert [r.refused_by for r in rows if r.tp == 1] == ["KV108"]


def test_num_gpu_blocks_override_is_the_count_checked() -> None:
    """``--num-gpu-blocks-override`` sets ``kv_cache_config.num_blocks`` (``may_override_num_blocks``)."""
    base = _detail("0.22.0")
    n = base.mamba_blocks + 1
    d = _detail("0.22.0", "--num-gpu-blocks-override", str(n), "--max-num-seqs", str(n))
    assert (d.mamba_blocks, d.mamba_blocks_low, d.mamba_blocks_high) == (n, n, n)
    assert d.mamba_refusal is None
    assert _detail("0.22.0", "--num-gpu-blocks-override", str(n), "--max-num-seqs", str(n + 1)).mamba_refusal
