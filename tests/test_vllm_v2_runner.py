"""vLLM's V2 GPU model runner (``vllm/v1/worker/gpu/model_runner.py``): which releases start it, and what its profile
costs against the V1 runner's (``vllm/v1/worker/gpu_model_runner.py``).

Source, read in the 0.21.0 - 0.34.0 wheels: ``vllm/config/vllm.py::VllmConfig.use_v2_model_runner`` (the choice),
``vllm/v1/worker/gpu/model_runner.py::GPUModelRunner._dummy_sampler_run`` (one default sampler pass before 0.33.0,
a ``SamplingParams.for_sampler_warmup()`` pass added from 0.33.0), ``vllm/v1/worker/gpu/sample/penalties.py``
(the penalty state allocated with the model) and ``vllm/utils/mem_utils.py::memory_profiling`` (``total_consumed``
from 0.27.0). Before this, kvlint priced the V1 runner's sampler at every release, 0.34.0 (its default) included.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.accelerators import lookup
from kvlint.engines.command import parse_command_line
from kvlint.memory import calibration as cal
from kvlint.memory import vllm_runner as vr
from kvlint.memory.versions import parse_version
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed, settings_from_config
from kvlint.models import resolve_model
from kvlint.types import Diagnostic

v = parse_version
QWEN2 = ("Qwen2ForCausalLM",)
LLAMA = ("LlamaForCausalLM",)


def test_release_table_of_the_v2_runner() -> None:
    # 0.21.0 reads VLLM_USE_V2_MODEL_RUNNER as a plain 0/1 defaulting to 0: the V1 runner
    assert not vr.uses_v2_runner(v("0.21.0"), LLAMA)
    # 0.22.0 - 0.28.x: by architecture list (Llama in 0.23.0 and 0.24.0 only, Qwen2 never)
    assert not vr.uses_v2_runner(v("0.22.0"), LLAMA) and vr.uses_v2_runner(v("0.22.0"), ("Qwen3ForCausalLM",))
    assert vr.uses_v2_runner(v("0.23.0"), LLAMA) and vr.uses_v2_runner(v("0.24.0"), LLAMA)
    assert not vr.uses_v2_runner(v("0.25.0"), LLAMA) and not vr.uses_v2_runner(v("0.28.0"), LLAMA)
    assert vr.uses_v2_runner(v("0.28.0"), ("DeepseekV4ForCausalLM",))
    assert not any(vr.uses_v2_runner(v(f"0.{m}.0"), QWEN2) for m in range(21, 29))
    # 0.29.0 on: every model
    assert all(vr.uses_v2_runner(v(f"0.{m}.0"), QWEN2) for m in range(29, 35))
    # the environment decides where the release reads it; 0.34.0 has no V1 runner left
    assert not vr.uses_v2_runner(v("0.31.0"), QWEN2, env=False)
    assert vr.uses_v2_runner(v("0.25.0"), QWEN2, env=True)
    assert not vr.uses_v2_runner(v("0.21.0"), QWEN2, env=True)  # opt-in before 0.22.0: not modelled
    assert vr.uses_v2_runner(v("0.34.0"), QWEN2, env=False)


def test_fallbacks_to_the_v1_runner() -> None:
    dsv32 = ("DeepseekV32ForCausalLM",)
    assert not vr.uses_v2_runner(v("0.30.0"), dsv32, vendor="amd") and vr.uses_v2_runner(v("0.30.0"), dsv32)
    assert vr.uses_v2_runner(v("0.32.0"), dsv32, vendor="amd")
    ngram = vr.spec_method_name("[ngram]", False)
    assert ngram == "ngram" and vr.spec_method_name("deepseek_mtp", False) == "mtp"
    assert vr.spec_method_name(None, True) == "draft_model" and vr.spec_method_name(None, False) is None
    assert not vr.uses_v2_runner(v("0.31.0"), QWEN2, spec_method=ngram)
    assert vr.uses_v2_runner(v("0.32.0"), QWEN2, spec_method=ngram)
    assert not vr.uses_v2_runner(v("0.30.0"), QWEN2, spec_method="draft_model")
    assert vr.uses_v2_runner(v("0.31.0"), QWEN2, spec_method="draft_model")
    assert not vr.uses_v2_runner(v("0.29.0"), QWEN2, spec_method="draft_model")
    assert vr.uses_v2_runner(v("0.29.0"), QWEN2, spec_method="mtp")
    # before 0.30.0 the V2 runner's speculative methods grew release by release (its unsupported-features list):
    # DFlash from 0.24.0, DSpark from 0.25.0, extract_hidden_states from 0.29.0 (models V2 runs by default there)
    qwen3 = ("Qwen3ForCausalLM",)
    assert not vr.uses_v2_runner(v("0.23.0"), qwen3, spec_method="dflash")
    assert vr.uses_v2_runner(v("0.24.0"), qwen3, spec_method="dflash")
    assert not vr.uses_v2_runner(v("0.24.0"), qwen3, spec_method="dspark")
    assert vr.uses_v2_runner(v("0.25.0"), ("Qwen2MoeForCausalLM",), spec_method="dspark")
    assert not vr.uses_v2_runner(v("0.24.0"), qwen3, spec_method="extract_hidden_states")
    assert vr.uses_v2_runner(v("0.29.0"), QWEN2, spec_method="extract_hidden_states")
    assert not vr.uses_v2_runner(v("0.33.0"), QWEN2, spec_method="suffix")
    assert not vr.uses_v2_runner(v("0.31.0"), QWEN2, elastic_ep=True)
    assert vr.uses_v2_runner(v("0.32.0"), QWEN2, elastic_ep=True)


def test_v2_sampler_paths_by_release() -> None:
    a100, t4 = (8, 0), (7, 5)
    assert cal.sampler_path("v1", v("0.31.0"), True, a100, v2_runner=True) == "v2_logits"
    assert cal.sampler_path("v1", v("0.32.0"), True, t4, v2_runner=True) == "v2_logits"
    assert cal.sampler_path("v1", v("0.33.0"), True, a100, v2_runner=True) == "v2_flashinfer"
    assert cal.sampler_path("v1", v("0.34.0"), True, t4, v2_runner=True) == "v2_triton"
    assert (
        cal.sampler_path("v1", v("0.34.0"), True, a100, flashinfer_env=False, v2_runner=True) == "v2_triton"
    )
    assert cal.sampler_path("v1", v("0.34.0"), True, None, vendor="amd", v2_runner=True) == "v2_triton"
    # the V1 runner keeps its paths
    assert cal.sampler_path("v1", v("0.34.0"), True, a100) == "v1_flashinfer"


def test_v2_sampler_holds_the_tensors_its_passes_build() -> None:
    rows, vocab = 256, 151936
    logits = cal.v2_sampler_bytes("v2_logits", rows, vocab, 2)
    # the default pass: the model-dtype logits and gumbel_sample's per-block arg-max/maximum, nothing vocab-wide more
    assert rows * vocab * 2 <= logits < rows * vocab * 2 + rows * vocab
    assert cal.v2_sampler_bytes("v2_logits", rows, vocab, 4) - logits == rows * vocab * 2
    # warm-up pass: the fp32 copy, then FlashInfer's masked logits and probabilities, or the Triton scratch buffer
    fi = cal.v2_sampler_bytes("v2_flashinfer", rows, vocab, 2)
    tr = cal.v2_sampler_bytes("v2_triton", rows, vocab, 2)
    assert fi - logits == 3 * rows * vocab * 4
    assert tr - logits == rows * vocab * 4 + cal.triton_buffer_rows(rows) * vocab * 4
    assert cal.triton_buffer_rows(rows) == cal.TRITON_SAMPLER_SMS and cal.triton_buffer_rows(5) == 8
    # far below the V1 runner's sort or FlashInfer rejection sampler at the same rows
    assert fi < cal.K_SAMPLER["v1_native"] * rows * vocab * 4
    assert logits < cal.K_SAMPLER["v1_flashinfer"] * rows * vocab * 4 / 4


def test_triton_runs_below_eight_rows_from_0_30_0() -> None:
    vocab = 151936
    for rows in (1, 7):
        before = cal.activation_bytes("v1_triton", rows, 1, vocab, 64, 64, 1, 2)
        after = cal.activation_bytes("v1_triton", rows, 1, vocab, 64, 64, 1, 2, triton_all_rows=True)
        assert before == cal.native_sampler_bytes(rows, vocab, 2, 1, 64)
        assert after == cal.triton_sampler_bytes(rows, vocab, 2, True, 1, 64) < before
    assert cal.TRITON_ALL_ROWS_FROM == v("0.30.0")


def _plan(version: str, model_id: str = "Qwen/Qwen2.5-7B", gpu: str = "h100", **kw):
    model = resolve_model(model_id, allow_hub=False)
    g = lookup(gpu)
    assert g is not None
    s = VllmSettings(
        version=version, max_model_len=8192, max_num_seqs=1024, max_num_batched_tokens=2048, **kw
    )
    return model, plan_vllm_detailed(
        s, model, g.memory_bytes, gpu_name=g.name, compute_capability=g.compute_capability
    )


def _forward(model, d) -> int:
    """The profile's activation with a sampler too small to matter: the forward pass alone."""
    return cal.activation_bytes("v2_logits", 1, 2048, 1, model.hidden_size, _inter(model), 1, _dbytes(d))


def _dbytes(d) -> int:
    assert d.plan.dtype in ("bfloat16", "float16")
    return 2


def _inter(model) -> int:
    from kvlint.memory.vllm import model_facts

    return model_facts(model).inter_eff


def test_plan_prices_the_v2_profile_from_0_29_0() -> None:
    """Qwen2 takes the V2 runner from 0.29.0: its default sampler pass leaves the forward pass as the peak, where the
    V1 runner's FlashInfer sampler set it; VLLM_USE_V2_MODEL_RUNNER=0 keeps the V1 figure."""
    model, v1 = _plan("0.28.0")
    _, v2 = _plan("0.29.0")
    _, forced_v1 = _plan("0.29.0", v2_model_runner=False)
    rows, vocab = 1024, model.vocab_size
    assert v1.plan.activation_bytes == forced_v1.plan.activation_bytes
    assert v1.plan.activation_bytes == int(cal.K_SAMPLER["v1_flashinfer"] * rows * vocab * 4)
    assert v2.plan.activation_bytes == max(
        _forward(model, v2),
        cal.v2_sampler_bytes("v2_logits", rows, vocab, _dbytes(v2), 2048, model.hidden_size),
    )
    assert v2.plan.activation_bytes < v1.plan.activation_bytes
    # 0.33.0 adds the warm-up pass (an H100 runs FlashInfer's sampler)
    _, warm = _plan("0.33.0")
    assert warm.plan.activation_bytes == max(
        _forward(model, warm),
        cal.v2_sampler_bytes("v2_flashinfer", rows, vocab, _dbytes(warm), 2048, model.hidden_size),
    )
    assert any("V2 model runner's warm-up sampler pass, FlashInfer" in n for n in warm.plan.assumptions)


def test_penalty_state_leaves_the_budget_from_0_27_0() -> None:
    """The V2 sampler's penalty state is allocated after the weights are measured: memory_profiling counts it from
    0.27.0 (total_consumed, printed as part of "consumed memory (weights + non-torch)") and not before. Llama starts
    the V2 runner at 0.24.0."""
    _, on = _plan("0.24.0", "meta-llama/Llama-3.1-8B")
    _, off = _plan("0.24.0", "meta-llama/Llama-3.1-8B", v2_model_runner=False)
    assert on.plan.non_torch_bytes == off.plan.non_torch_bytes
    model, on = _plan("0.29.0")
    _, off = _plan("0.29.0", v2_model_runner=False)
    extra = vr.penalty_state_bytes(1024, model.vocab_size)
    assert extra == 1024 * (model.vocab_size + -(-model.vocab_size // 32)) * 4
    # not in "Model loading took": the weights row is the V1 runner's
    assert on.plan.weights_bytes == off.plan.weights_bytes
    assert on.plan.non_torch_bytes - off.plan.non_torch_bytes == extra
    budget_rest = on.plan.budget_bytes - on.plan.weights_bytes - on.plan.cudagraph_bytes
    assert on.plan.kv_cache_bytes == budget_rest - on.plan.activation_bytes - on.plan.non_torch_bytes
    assert any("penalty state" in n for n in on.plan.assumptions)
    assert not any("penalty state" in n for n in off.plan.assumptions)
    # every tensor-parallel rank samples, so every rank holds it whole
    _, tp2 = _plan("0.29.0", tensor_parallel_size=2)
    _, tp2_off = _plan("0.29.0", tensor_parallel_size=2, v2_model_runner=False)
    assert tp2.plan.non_torch_bytes - tp2_off.plan.non_torch_bytes == extra


def test_environment_switch_is_read_from_the_container() -> None:
    cfg = parse_command_line(["env", "VLLM_USE_V2_MODEL_RUNNER=0", "vllm", "serve", "X"])
    assert settings_from_config(cfg).v2_model_runner is False
    assert settings_from_config(parse_command_line(["vllm", "serve", "X"])).v2_model_runner is None


_V2_ENV = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
      - name: main
        image: vllm/vllm-openai:VERSION
        args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct"]
        env:
        - name: VLLM_USE_V2_MODEL_RUNNER
          value: "VALUE"
        resources:
          limits:
            nvidia.com/gpu: '1'
"""


def test_v2_runner_variable_other_than_1_is_refused_from_0_34_0(tmp_path: Path) -> None:
    """0.34.0's ``Platform.validate_environ`` raises ``ValueError`` for ``VLLM_USE_V2_MODEL_RUNNER`` set to anything
    but the exact string ``1`` (the V1 runner is gone); before it the variable picks the runner. Planned as a V2
    start-up before (uses_v2_runner ignores the variable at 0.34.0); now a KV502 error at the env value."""
    from kvlint.pipeline import Options, run_check

    assert vr.v2_env_refused(v("0.34.0"), None) is None and vr.v2_env_refused(v("0.34.0"), "1") is None
    assert all(vr.v2_env_refused(v("0.34.0"), x) for x in ("0", "true", "", " 1"))
    assert vr.v2_env_refused(v("0.33.0"), "0") is None
    f = tmp_path / "m.yaml"
    for version, value, refused in (("v0.34.0", "0", True), ("v0.34.0", "true", True), ("v0.34.0", "1", False),
                                    ("v0.33.0", "0", False)):  # fmt: skip
        f.write_text(_V2_ENV.replace("VERSION", version).replace("VALUE", value))
        res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
        (cr,) = res.containers
        if not refused:
            assert cr.plan is not None, (version, value)
            continue
        assert (
            cr.plan is None and cr.plan_refusal is not None and cr.plan_refusal.value == "vllm-v2-runner-env"
        )
        (d,) = [x for x in res.diagnostics if _quotes(x, value)]
        assert d.rule == "KV502" and d.severity == "error" and d.loc is not None and d.loc.line == 14


def _quotes(d: Diagnostic, value: str) -> bool:
    """A diagnostic quoting the refused assignment."""
    return f"VLLM_USE_V2_MODEL_RUNNER={value} " in d.message


def test_v2_runner_variable_is_read_as_an_integer_from_0_21_0_to_0_33(tmp_path: Path) -> None:
    """0.21.0 - 0.33.x read ``VLLM_USE_V2_MODEL_RUNNER`` with ``bool(int(value))`` (``vllm/envs.py``): ``true``,
    ``yes`` or an empty value raise ``ValueError`` at start-up, ``2`` is on. kvlint read them with ``truthy``
    (``true`` on, ``2`` off) and planned a start-up; now a KV502 error at the env value, and ``2`` takes V2."""
    from kvlint.pipeline import Options, run_check

    for ver in ("0.21.0", "0.22.0", "0.33.0"):
        assert all(vr.v2_env_refused(v(ver), x) for x in ("true", "yes", "", "on")), ver
        assert not any(vr.v2_env_refused(v(ver), x) for x in ("0", "1", "2", " 1")), ver
    assert vr.v2_env_value(v("0.25.0"), "2") is True and vr.v2_env_value(v("0.25.0"), "0") is False
    # Qwen2 is not on 0.25.0's V2 list: only the variable takes it to V2, and 2 does as 1 does
    _, two = _plan("0.25.0", v2_model_runner_env="2")
    _, one = _plan("0.25.0", v2_model_runner_env="1")
    _, unset = _plan("0.25.0")
    assert two.plan.activation_bytes == one.plan.activation_bytes != unset.plan.activation_bytes
    f = tmp_path / "m.yaml"
    for version, value, refused in (("v0.33.0", "true", True), ("v0.22.0", "", True), ("v0.21.0", "yes", True),
                                    ("v0.29.0", "2", False), ("v0.21.0", "0", False)):  # fmt: skip
        f.write_text(_V2_ENV.replace("VERSION", version).replace("VALUE", value))
        res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
        (cr,) = res.containers
        if not refused:
            assert cr.plan is not None, (version, value)
            continue
        assert (
            cr.plan is None and cr.plan_refusal is not None and cr.plan_refusal.value == "vllm-v2-runner-env"
        )
        (d,) = [x for x in res.diagnostics if _quotes(x, value)]
        assert d.rule == "KV502" and d.severity == "error" and d.loc is not None and d.loc.line == 14
        assert (
            "bool(int(value))" in d.message
            and d.fix is not None
            and "set VLLM_USE_V2_MODEL_RUNNER to 0" in d.fix
        )


_V2_SPEC = _V2_ENV.replace(
    '["--model", "Qwen/Qwen2.5-0.5B-Instruct"]',
    '["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--speculative-config", '
    '"{\\"method\\": \\"ngram\\", \\"num_speculative_tokens\\": 3, \\"prompt_lookup_max\\": 4}"]',
)


def test_v2_runner_forced_on_for_a_feature_it_does_not_run_is_refused() -> None:
    """0.22.0 - 0.33.x: an explicit ``VLLM_USE_V2_MODEL_RUNNER=1`` skips ``use_v2_model_runner``'s fallback to V1 and
    ``_validate_v2_model_runner`` raises "Model Runner V2 does not yet support: ..." (an n-gram method up to 0.31.x,
    elastic EP 0.24.0 - 0.31.x). kvlint planned a V1 start-up; now a KV502 error naming the feature."""
    assert "speculative method 'ngram'" in (vr.v2_unsupported(v("0.31.0"), "1", "ngram") or "")
    assert "ngram/ngram_gpu speculative decoding" in (vr.v2_unsupported(v("0.29.0"), "1", "ngram") or "")
    assert "VLLM_USE_V2_MODEL_RUNNER does not yet support" in (
        vr.v2_unsupported(v("0.22.0"), "1", "ngram") or ""
    )
    assert vr.v2_unsupported(v("0.32.0"), "1", "ngram") is None
    # 0.21.0 validates alike when the variable is on (no n-gram wording of its own)
    assert "VLLM_USE_V2_MODEL_RUNNER does not yet support: speculative method 'ngram'" in (
        vr.v2_unsupported(v("0.21.0"), "2", "ngram") or ""
    )
    assert vr.v2_unsupported(v("0.20.0"), "1", "ngram") is None
    assert (
        vr.v2_unsupported(v("0.31.0"), "0", "ngram") is None
        and vr.v2_unsupported(v("0.31.0"), None, "ngram") is None
    )
    assert vr.v2_unsupported(v("0.29.0"), "1", "mtp") is None
    assert "elastic expert parallelism" in (vr.v2_unsupported(v("0.31.0"), "1", elastic_ep=True) or "")
    assert vr.v2_unsupported(v("0.32.0"), "1", elastic_ep=True) is None
    # 0.34.0 has no V1 runner: the variable cannot force what is already the only runner
    assert vr.v2_unsupported(v("0.34.0"), "1", "suffix") is None


def test_v2_runner_forced_on_with_ngram_through_the_pipeline(tmp_path: Path) -> None:
    from kvlint.pipeline import Options, run_check

    f = tmp_path / "m.yaml"
    for version, value, refused in (("v0.31.0", "1", True), ("v0.31.0", "0", False), ("v0.32.0", "1", False)):
        f.write_text(_V2_SPEC.replace("VERSION", version).replace("VALUE", value))
        res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
        (cr,) = res.containers
        if not refused:
            assert cr.plan is not None, (version, value, [x.message for x in res.diagnostics])
            continue
        assert cr.plan is None and cr.plan_refusal is not None
        assert cr.plan_refusal.value == "vllm-v2-runner-unsupported"
        (d,) = [x for x in res.diagnostics if _quotes(x, value)]
        assert d.rule == "KV502" and d.severity == "error" and d.loc is not None and d.loc.line == 14
        assert "speculative method 'ngram'" in d.message


def test_v2_runner_deducts_no_cuda_graph_estimate_before_0_29_0() -> None:
    """The V2 runner's ``profile_cudagraph_memory`` returns 0 in the 0.22.0 - 0.28.0 wheels
    (``vllm/v1/worker/gpu/model_runner.py``; a throwaway capture from 0.29.0, ``gpu/cudagraph_utils.py``), so
    ``Worker.determine_available_memory`` deducts nothing for the graphs although
    ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` is on: Llama takes the V2 runner at 0.23.0 and 0.24.0."""
    for version in ("0.23.0", "0.24.0"):
        _, v2 = _plan(version, "meta-llama/Llama-3.1-8B")
        _, v1 = _plan(version, "meta-llama/Llama-3.1-8B", v2_model_runner=False)
        assert v1.plan.cudagraph_bytes > 0 and v2.plan.cudagraph_bytes == 0, version
        p = v2.plan
        assert p.kv_cache_bytes == p.budget_bytes - p.weights_bytes - p.activation_bytes - p.non_torch_bytes
        assert any("profile_cudagraph_memory returns 0" in n for n in v2.plan.assumptions)
    # from 0.29.0 the V2 runner estimates them: deducted as on the V1 runner
    _, v2 = _plan("0.29.0")
    _, v1 = _plan("0.29.0", v2_model_runner=False)
    assert v2.plan.cudagraph_bytes == v1.plan.cudagraph_bytes > 0
    assert vr.V2_CUDAGRAPH_PROFILED_FROM == v("0.29.0")
    # --enforce-eager: nothing to deduct on either runner
    _, eager = _plan("0.23.0", "meta-llama/Llama-3.1-8B", enforce_eager=True)
    assert eager.plan.cudagraph_bytes == 0


def test_v2_profile_keeps_the_forward_output_and_sampled_hidden_states() -> None:
    """``profile_run`` holds ``hidden_states`` (``tokens x hidden``) and ``sample_hidden_states`` (``rows x
    hidden``) until after ``_dummy_sampler_run``, which feeds them to ``compute_logits`` without the V1 runner's
    ``rand_like`` copy (``vllm@0.31.0``/``vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py``)."""
    rows, vocab, tokens, hidden = 256, 151936, 2048, 1536
    for path in ("v2_logits", "v2_flashinfer", "v2_triton"):
        bare = cal.v2_sampler_bytes(path, rows, vocab, 2)
        held = cal.v2_sampler_bytes(path, rows, vocab, 2, tokens, hidden)
        assert held - bare == (tokens + rows) * hidden * 2, path
        assert cal.activation_bytes(path, rows, tokens, vocab, hidden, 0, 1, 2) == held, path
