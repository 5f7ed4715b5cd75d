"""KV209: an explicit ``--max-num-batched-tokens`` whose model-runner input buffers alone exceed the GPU is reported
at the value, as the engine would stop (``torch.OutOfMemoryError`` in ``GPUModelRunner.__init__``, before the
weights), instead of being priced as a profile forward pass (a KV102 of thousands of GiB of activation). The
buffer bytes per token follow the runner (V1 runner: ids, positions and ``inputs_embeds``; V2 runner, 0.34.0:
ids, positions and a padding mask); V0 allocates no such buffers. Beneath KV209, a KV102 whose profile exceeds the
device itself says the worker stops in ``profile_run``. Real pipeline runs on bundled models; every threshold is
computed from the run's own model and GPU."""

from __future__ import annotations

from pathlib import Path

from kvlint.memory.kv import dtype_bytes
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.families.limits import V1_RUNNER_TOKEN_BYTES, V2_RUNNER_TOKEN_BYTES, runner_buffer_bytes
from kvlint.types import CheckResult, ContainerResult

_MODEL = "meta-llama/Llama-3.2-1B-Instruct"


def _run(tmp_path: Path, tag: str, gpu: str, *extra: str) -> CheckResult:
    argv = ", ".join(f'"{a}"' for a in ["--model", _MODEL, "--max-model-len", "4096", *extra])
    p = tmp_path / f"{tag}-{gpu}-{'-'.join(extra)}.yaml"
    p.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\nspec:\n  nodeSelector: {{nvidia.com/gpu.product: {gpu}}}\n"
        f"  containers:\n  - name: vllm\n    image: vllm/vllm-openai:{tag}\n    args: [{argv}]\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def _rules(r: CheckResult) -> list[str]:
    return [d.rule for d in r.diagnostics]


def _container(r: CheckResult) -> ContainerResult:
    (cr,) = r.containers
    assert isinstance(cr, ContainerResult) and cr.plan is not None and cr.model is not None
    return cr


def test_buffers_above_the_gpu_are_kv209_at_the_value_and_withdraw_the_plan(tmp_path: Path) -> None:
    # 10^9 tokens on an H100: before KV209, a KV102 with about 110,000 GiB of activation
    r = _run(tmp_path, "v0.11.0", "NVIDIA-H100-80GB-HBM3", "--max-num-batched-tokens", "1000000000")
    cr = _container(r)
    per_token = V1_RUNNER_TOKEN_BYTES + cr.model.hidden_size * dtype_bytes(cr.plan.dtype)
    assert 10**9 * per_token > cr.plan.total_bytes
    (d,) = [d for d in r.diagnostics if d.rule == "KV209"]
    assert d.severity == "error"
    assert f"{per_token:,} B" in d.message and "torch.OutOfMemoryError" in d.message
    assert f"{10**9 * per_token / 2**30:,.2f} GiB" in d.message
    # at the value: the line and column of "1000000000" in the args
    assert d.loc is not None
    line = Path(d.loc.file).read_text().splitlines()[d.loc.line - 1]
    assert line[d.loc.column - 1 :].startswith('"1000000000"') or line[d.loc.column - 1 :].startswith(
        "1000000000"
    )
    assert not {"KV101", "KV102", "KV103", "KV104", "KV105"} & set(_rules(r))


def test_buffers_that_fit_are_not_kv209(tmp_path: Path) -> None:
    # the largest count whose V1 buffers fit the L4, and one more token: the boundary is the GPU's total
    r0 = _run(tmp_path, "v0.11.0", "NVIDIA-L4", "--max-num-batched-tokens", "16384")
    cr = _container(r0)
    assert "KV209" not in _rules(r0)
    per_token = V1_RUNNER_TOKEN_BYTES + cr.model.hidden_size * dtype_bytes(cr.plan.dtype)
    fits = cr.plan.total_bytes // per_token
    assert "KV209" not in _rules(
        _run(tmp_path, "v0.11.0", "NVIDIA-L4", "--max-num-batched-tokens", str(fits))
    )
    assert "KV209" in _rules(
        _run(tmp_path, "v0.11.0", "NVIDIA-L4", "--max-num-batched-tokens", str(fits + 1))
    )


def test_v2_runner_counts_its_own_buffers(tmp_path: Path) -> None:
    # 0.34.0 runs only the V2 model runner: 13 B a token, no inputs_embeds for a text model
    cr = _container(_run(tmp_path, "v0.34.0", "NVIDIA-L4", "--max-num-batched-tokens", "16384"))
    total = cr.plan.total_bytes
    v1_only = (
        total // (V1_RUNNER_TOKEN_BYTES + cr.model.hidden_size * 2) + 1
    )  # beyond the V1 runner's buffers
    assert runner_buffer_bytes(v1_only, cr.model.hidden_size, 2, v2_runner=True) <= total
    assert "KV209" not in _rules(
        _run(tmp_path, "v0.34.0", "NVIDIA-L4", "--max-num-batched-tokens", str(v1_only))
    )
    over = total // V2_RUNNER_TOKEN_BYTES + 1
    r = _run(tmp_path, "v0.34.0", "NVIDIA-L4", "--max-num-batched-tokens", str(over))
    (d,) = [d for d in r.diagnostics if d.rule == "KV209"]
    assert "V2 model runner" in d.message and f"{V2_RUNNER_TOKEN_BYTES} B" in d.message


def test_v0_allocates_no_such_buffers(tmp_path: Path) -> None:
    r = _run(tmp_path, "v0.6.3", "NVIDIA-L4", "--max-num-batched-tokens", "1000000000")
    assert _container(r).plan.era == "v0"
    assert "KV209" not in _rules(r)


def test_a_huge_value_is_reported_without_sizing_anything_larger(tmp_path: Path) -> None:
    # 10^18 tokens (below the 2^63 - 1 kvlint reads at all): one finding, figures written out, no KV102
    r = _run(tmp_path, "v0.19.0", "NVIDIA-H100-80GB-HBM3", "--max-num-batched-tokens", str(10**18))
    assert "KV209" in _rules(r) and "KV102" not in _rules(r)


def test_below_kv209_a_profile_larger_than_the_device_is_an_oom_in_profile_run(tmp_path: Path) -> None:
    # 10^7 tokens of an 8B model on an H100: the runner's buffers fit (76 GiB), the profile's forward does not
    r = _run(tmp_path, "v0.11.0", "NVIDIA-H100-80GB-HBM3", "--max-num-batched-tokens", "10000000")
    cr = _container(r)
    assert "KV209" not in _rules(r)
    assert cr.plan.budget_bytes - cr.plan.kv_cache_bytes_high > cr.plan.total_bytes
    (d,) = [d for d in r.diagnostics if d.rule == "KV102"]
    assert "torch.OutOfMemoryError" in d.message and "profile_run" in d.message
    assert "No available memory for the cache blocks" not in d.message
    # a budget too small for the KV cache on a device that holds the profile keeps vLLM's own KV-cache refusal
    r2 = _run(tmp_path, "v0.11.0", "NVIDIA-L4", "--gpu-memory-utilization", "0.12")
    (d2,) = [d for d in r2.diagnostics if d.rule == "KV102"]
    assert "No available memory for the cache blocks" in d2.message


def _run_limited(tmp_path: Path, tag: str, mbt: int, memory: str | None) -> CheckResult:
    argv = ", ".join(
        f'"{a}"' for a in ["--model", _MODEL, "--max-model-len", "4096", "--max-num-batched-tokens", str(mbt)]
    )
    limits = "{nvidia.com/gpu: 1" + (f", memory: {memory}" if memory else "") + "}"
    p = tmp_path / f"{tag}-{mbt}-{memory}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        f"  containers:\n  - name: vllm\n    image: vllm/vllm-openai:{tag}\n    args: [{argv}]\n"
        f"    resources: {{limits: {limits}}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def test_from_0_10_2_the_pinned_host_copies_come_first(tmp_path: Path) -> None:
    # vllm/v1/utils.py::CpuGpuBuffer (0.10.2 - 0.33.0): the pinned host tensor is allocated before its GPU twin, so a
    # container memory limit below the host copies is OOMKilled before the GPU is asked; 0.10.1 allocates on the GPU
    # first (torch.zeros(..., device=self.device)) and its pinned copies are only ids and positions
    cr = _container(_run_limited(tmp_path, "v0.11.0", 16384, None))
    mbt = (
        cr.plan.total_bytes // (V1_RUNNER_TOKEN_BYTES + cr.model.hidden_size * dtype_bytes(cr.plan.dtype)) + 1
    )
    host = mbt * (4 + cr.model.hidden_size * dtype_bytes(cr.plan.dtype))
    limit_gib = host // 2**30 // 2
    (d,) = [
        d for d in _run_limited(tmp_path, "v0.11.0", mbt, f"{limit_gib}Gi").diagnostics if d.rule == "KV209"
    ]
    assert "OOMKilled" in d.message and f"{host / 2**30:,.2f} GiB" in d.message
    (d,) = [d for d in _run_limited(tmp_path, "v0.11.0", mbt, None).diagnostics if d.rule == "KV209"]
    assert (
        "pinned host" in d.message and "OOMKilled" not in d.message and "torch.OutOfMemoryError" in d.message
    )
    (d,) = [
        d for d in _run_limited(tmp_path, "v0.10.1", mbt, f"{limit_gib}Gi").diagnostics if d.rule == "KV209"
    ]
    assert "pinned host" not in d.message and "torch.OutOfMemoryError" in d.message
    # the V2 runner's InputBuffers are GPU tensors only
    over = cr.plan.total_bytes // V2_RUNNER_TOKEN_BYTES + 1
    (d,) = [d for d in _run_limited(tmp_path, "v0.34.0", over, "1Gi").diagnostics if d.rule == "KV209"]
    assert "pinned host" not in d.message and "OOMKilled" not in d.message


# A made-up text model (values invented for the test): Llama shapes with a `projection_dim` narrower than the hidden
# size, as CLIP-style embedding configs carry one; vLLM's V1 runner sizes inputs_embeds by it from 0.12.0.
_PROJ_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "projection_dim": 512,
    "intermediate_size": 11008,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 4,
    "max_position_embeddings": 4096,
    "vocab_size": 32000,
    "torch_dtype": "bfloat16",
}


def _run_proj(tmp_path: Path, tag: str, mbt: int) -> CheckResult:
    import json

    d = tmp_path / "models" / "acme--proj-lm"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(_PROJ_CONFIG))
    argv = ", ".join(f'"{a}"' for a in ["--model", "acme/proj-lm", "--max-num-batched-tokens", str(mbt)])
    p = tmp_path / f"proj-{tag}-{mbt}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        f"  containers:\n  - name: vllm\n    image: vllm/vllm-openai:{tag}\n    args: [{argv}]\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False, model_dirs=(str(tmp_path / "models"),)))


def test_inputs_embeds_width_follows_get_inputs_embeds_size(tmp_path: Path) -> None:
    """vLLM 0.12.0+ sizes the V1 runner's inputs_embeds by ModelConfig.get_inputs_embeds_size() (the text config's
    projection_dim / projection_size, word_embed_proj_dim first from 0.33.0), 0.11.x by the hidden size: a token count
    whose buffers fit at the projection's width is KV209 under 0.11.0 and not under 0.19.0."""
    cr = _container(_run_proj(tmp_path, "v0.19.0", 16384))
    total = cr.plan.total_bytes
    hidden_per_token = V1_RUNNER_TOKEN_BYTES + 4096 * 2
    proj_per_token = V1_RUNNER_TOKEN_BYTES + 512 * 2
    mbt = total // hidden_per_token + 1
    assert mbt * proj_per_token <= total
    assert "KV209" in _rules(_run_proj(tmp_path, "v0.11.0", mbt))
    assert "KV209" not in _rules(_run_proj(tmp_path, "v0.19.0", mbt))
    over = total // proj_per_token + 1
    (d,) = [d for d in _run_proj(tmp_path, "v0.19.0", over).diagnostics if d.rule == "KV209"]
    assert f"{proj_per_token:,} B" in d.message and "projection_dim" in d.message


def test_word_embed_proj_dim_is_read_from_0_33() -> None:
    import json
    import tempfile

    from kvlint.models import resolve_model
    from kvlint.rules.families.limits import inputs_embeds_size

    cfg = {**{k: v for k, v in _PROJ_CONFIG.items() if k != "projection_dim"}, "word_embed_proj_dim": 256}

    with tempfile.TemporaryDirectory() as t:
        d = Path(t) / "acme--opt-like"
        d.mkdir()
        (d / "config.json").write_text(json.dumps(cfg))
        m = resolve_model(str(d), allow_hub=False)
    assert inputs_embeds_size(m, (0, 32, 0)) == (4096, "hidden_size")
    assert inputs_embeds_size(m, (0, 33, 0)) == (256, "word_embed_proj_dim")
    assert inputs_embeds_size(m, (0, 11, 1)) == (4096, "hidden_size")


def _run_long(tmp_path: Path, tag: str, mml: int, memory: str | None) -> CheckResult:
    argv = ", ".join(f'"{a}"' for a in ["--model", _MODEL, "--max-model-len", str(mml)])
    limits = "{nvidia.com/gpu: 1" + (f", memory: {memory}" if memory else "") + "}"
    p = tmp_path / f"long-{tag}-{mml}-{memory}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        f"  containers:\n  - name: vllm\n    image: vllm/vllm-openai:{tag}\n"
        '    env: [{name: VLLM_ALLOW_LONG_MAX_MODEL_LEN, value: "1"}]\n'
        f"    args: [{argv}]\n    resources: {{limits: {limits}}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def test_request_tables_of_a_huge_max_model_len_come_first(tmp_path: Path) -> None:
    """InputBatch (GPUModelRunner.__init__, before the per-token buffers and the weights): host token tables of
    max_num_seqs x max_model_len (int32, + a bool table from 0.11.1) and a GPU block table of max_num_seqs x
    max_model_len / block_size int32. The boundaries are the container's memory limit and the GPU's total."""
    from kvlint.rules.families.limits import request_tables

    cr = _container(_run_long(tmp_path, "v0.19.0", 4096, None))
    rows, total, block = cr.plan.max_num_seqs, cr.plan.total_bytes, cr.plan.block_size
    # the block table alone: the first max_model_len (a multiple of the block size) whose GPU table exceeds the GPU
    mml = (total // (rows * 4) + 1) * block
    assert request_tables((0, 19, 0), rows, mml, block)[1] > total
    assert "KV209" in _rules(_run_long(tmp_path, "v0.19.0", mml, None))
    assert "KV209" not in _rules(_run_long(tmp_path, "v0.19.0", mml - block, None))
    # the host tables beyond the container's memory limit: 5 B per (request, position) from 0.11.1, 4 B in 0.11.0
    small = 10**7
    host19, gpu19 = request_tables((0, 19, 0), rows, small, block)
    assert gpu19 <= total and host19 == rows * small * 5
    limit = f"{host19 // 2**30 - 1}Gi"
    (d,) = [d for d in _run_long(tmp_path, "v0.19.0", small, limit).diagnostics if d.rule == "KV209"]
    assert "OOMKilled" in d.message and "is_token_ids" in d.message
    assert "KV209" not in _rules(_run_long(tmp_path, "v0.19.0", small, f"{host19 // 2**30 + 1}Gi"))
    cr11 = _container(_run_long(tmp_path, "v0.11.0", 4096, None))
    host11 = request_tables((0, 11, 0), cr11.plan.max_num_seqs, small, cr11.plan.block_size)[0]
    assert host11 == cr11.plan.max_num_seqs * small * 4


def test_kv209_declares_the_plan_it_reads_and_runs_first_of_the_plan_rules() -> None:
    """KV209 reads the plan (its dtype, era, device total, release) and says nothing without it: its catalogue
    entry consumes ``plan`` (it said ``[model, gpu]``), so the runner schedules it with the plan rules, first
    among them as a before-loading rule, whose error withdraws the plan from the capacity rules."""
    from kvlint.rules.catalog import load_catalog
    from kvlint.rules.runner import _schedule

    assert "plan" in load_catalog()["KV209"].consumes
    order = [rule for rule, _info, _needs, _plan in _schedule("vllm", None, False)]
    plan_rules = [rule for rule, _info, _needs, uses_plan in _schedule("vllm", None, False) if uses_plan]
    assert "KV209" in plan_rules
    before = [r for r in plan_rules if load_catalog()[r].before_loading]
    assert plan_rules[: len(before)] == before, plan_rules
    assert order.index("KV209") < min(order.index(r) for r in plan_rules if r.startswith("KV1"))


def test_another_error_before_loading_comes_first(tmp_path: Path) -> None:
    """vLLM validates the parallel layout against the model (``ModelConfig.verify_with_parallel_config``, KV401)
    when it builds its config, before any worker's model runner allocates a buffer: with both, the engine stops at
    KV401, and KV209 (a consumer of the withdrawn plan) is not said. It was, because it ran among the rules that
    read no plan, before KV401."""
    r = _run(
        tmp_path,
        "v0.11.0",
        "NVIDIA-L4",
        "--max-num-batched-tokens",
        "10000000",
        "--tensor-parallel-size",
        "3",
    )
    assert "KV401" in _rules(r) and "KV209" not in _rules(r), _rules(r)
    r = _run(tmp_path, "v0.11.0", "NVIDIA-L4", "--max-num-batched-tokens", "10000000")
    assert "KV209" in _rules(r), _rules(r)


def test_is_token_ids_table_from_0_11_1() -> None:
    """The bool ``is_token_ids_tensor`` (max_num_reqs x max_model_len) came with V1's prompt embeddings in 0.11.1:
    ``vllm@0.11.1:vllm/v1/worker/gpu_input_batch.py::InputBatch.__init__`` allocates it after
    ``token_ids_cpu_tensor``, ``vllm@0.11.0`` (and 0.10.x) does not. Host bytes per (request, position): 4 in 0.11.0,
    5 from 0.11.1."""
    from kvlint.rules.families.limits import request_tables

    assert request_tables((0, 11, 0), 256, 10**6, 16)[0] == 256 * 10**6 * 4
    assert request_tables((0, 11, 1), 256, 10**6, 16)[0] == 256 * 10**6 * 5
    assert request_tables((0, 12, 0), 256, 10**6, 16)[0] == 256 * 10**6 * 5


def test_v2_runner_token_table_is_pinned_on_the_host(tmp_path: Path) -> None:
    """The V2 model runner (0.34.0 only runs it) builds RequestState.all_token_ids, int32 of max_num_seqs x
    max_model_len, as a pinned host tensor read through UVA, in GPUModelRunner.__init__ before the weights
    (vllm/v1/worker/gpu/states.py, buffer_utils.py::UvaBuffer): beyond the container's memory limit the zero-fill is
    an OOMKill; no block table is allocated at that point, so a GPU smaller than V1's block table is no finding."""
    from kvlint.rules.families.limits import v2_request_table

    cr = _container(_run_long(tmp_path, "v0.34.0", 4096, None))
    rows = cr.plan.max_num_seqs
    small = 10**7
    host, gpu = v2_request_table((0, 34, 0), rows, small, None)
    assert (host, gpu) == (rows * small * 4, 0)
    limit = f"{host // 2**30 - 1}Gi"
    (d,) = [d for d in _run_long(tmp_path, "v0.34.0", small, limit).diagnostics if d.rule == "KV209"]
    assert "V2 model runner" in d.message and "all_token_ids" in d.message and "OOMKilled" in d.message
    assert "KV209" not in _rules(_run_long(tmp_path, "v0.34.0", small, f"{host // 2**30 + 1}Gi"))
    # with the n-gram speculator from 0.32.0 (and suffix from 0.34.0) the table is dense on the GPU
    assert v2_request_table((0, 32, 0), rows, small, "ngram") == (0, rows * small * 4)
    assert v2_request_table((0, 33, 0), rows, small, "suffix") == (rows * small * 4, 0)
    assert v2_request_table((0, 34, 0), rows, small, "suffix") == (0, rows * small * 4)
    assert v2_request_table((0, 31, 0), rows, small, "ngram") == (rows * small * 4, 0)
