"""Pooling models (embedding / reranker / reward) on vLLM and SGLang (kvlint.memory.pooling, docs §1.15).

Expected values come from the model's config.json and the shapes the engine source gives (the forward pass's
activation, the LM head's ``vocab x hidden`` matrix), or from the same start-up planned as a generative model:
nothing here is an engine number written down by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory.pooling import sglang_embedding, vllm_pooling
from kvlint.memory.sglang import plan_sglang
from kvlint.memory.vllm import (
    VllmSettings,
    plan_vllm_detailed,
    resolve_startup,
    settings_from_config,
    split_weights,
    stage_memory,
)
from kvlint.models import resolve_model
from kvlint.models.catalogue import load_config
from kvlint.models.catalogue import lookup as catalogue_lookup

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "plan" / "models"
GiB = 1 << 30
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
H100_TOTAL = int(79.18 * GiB)
E5 = "intfloat/e5-mistral-7b-instruct"  # architectures ["MistralModel"]: the decoder without an LM head


def _e5():
    return resolve_model(E5, allow_hub=False)


def _e5_config() -> dict:
    entry = catalogue_lookup(E5)
    assert entry is not None
    return load_config(entry)[0]


@pytest.mark.parametrize(
    "archs,pooling",
    [
        (["MistralModel"], True),  # "Model" suffix: E5-Mistral
        (["Qwen2ForRewardModel"], True),
        (["XLMRobertaForSequenceClassification"], True),  # bge-reranker-v2-m3
        (["Qwen3ForCausalLM"], False),  # Qwen3-Embedding's config: pooling only through modules.json
        (["GPT2LMHeadModel"], False),  # "LMHeadModel" comes before the bare "Model"
        (["ChatGLMModel"], False),  # registered as generative although it ends in "Model"
        (["GritLM"], True),  # registered as an embedding model, no suffix
        ([], False),
    ],
)
def test_vllm_runner_auto_by_architecture(archs: list[str], pooling: bool) -> None:
    assert vllm_pooling((0, 12, 0), archs)[0] is pooling


def test_vllm_runner_task_and_convert_by_release() -> None:
    causal = ["Qwen3ForCausalLM"]
    assert vllm_pooling((0, 12, 0), causal, runner="pooling")[0]
    assert not vllm_pooling((0, 12, 0), ["MistralModel"], runner="generate")[0]
    # --task: up to 0.12.0, and it overrides --runner there
    assert vllm_pooling((0, 12, 0), causal, task="embed")[0]
    assert vllm_pooling((0, 8, 5), causal, task="score")[0]
    assert not vllm_pooling((0, 13, 0), causal, task="embed")[0]
    assert not vllm_pooling((0, 12, 0), ["MistralModel"], task="generate", runner="pooling")[0]
    # --convert alone turns --runner auto into pooling from 0.22.0; before, the checkpoint decides and kvlint
    # assumes pooling (the converted class has no LM head for the generate runner), and says so
    pooled, why = vllm_pooling((0, 21, 0), causal, convert="embed")
    assert pooled and "[assumed]" in why
    pooled, why = vllm_pooling((0, 22, 0), causal, convert="embed")
    assert pooled and "[assumed]" not in why
    assert not vllm_pooling((0, 34, 0), causal, convert="none")[0]


def test_vllm_runner_and_convert_are_not_read_before_0_10_1() -> None:
    """``--runner``/``--convert`` first appear in the 0.10.1 wheel's ``arg_utils.py`` (0.10.0 has ``--task`` only):
    before, argparse stops the server (KV205), and they decide nothing; the architecture and ``--task`` still do."""
    causal = ["Qwen3ForCausalLM"]
    assert vllm_pooling((0, 10, 1), causal, runner="pooling")[0]
    assert vllm_pooling((0, 10, 1), causal, convert="embed")[0]
    assert not vllm_pooling((0, 10, 0), causal, runner="pooling")[0]
    assert not vllm_pooling((0, 10, 0), causal, convert="embed")[0]
    assert vllm_pooling((0, 10, 0), ["MistralModel"], runner="generate")[0]
    assert vllm_pooling((0, 10, 0), causal, task="embed", runner="generate")[0]


@pytest.mark.parametrize("option", ["--runner", "--convert"])
def test_vllm_runner_and_convert_are_unknown_before_0_10_1(option: str) -> None:
    """The option tables sample 0.9.2 and 0.10.1.1 and are generous between them; the two flags' first release,
    read in the wheels, makes them KV205 at 0.10.0 (and 0.9.2), known from 0.10.1."""
    from kvlint.engines.vllm import known_options, option_versions

    value = "pooling" if option == "--runner" else "embed"
    argv = ["vllm", "serve", "m", option, value]
    for version in ("0.9.2", "0.10.0"):
        assert option not in known_options(version)
        found = [f for f in parse_command_line(argv, version).findings if f.rule == "KV205"]
        assert len(found) == 1 and option in found[0].message, version
    for version in ("0.10.1", "0.10.1.1", "0.12.0", None):
        assert option in known_options(version)
        assert not [f for f in parse_command_line(argv, version).findings if f.rule == "KV205"], version
    assert option_versions(option) is not None and option_versions(option)[0] == "0.10.1"


def test_settings_read_runner_task_and_convert() -> None:
    s = settings_from_config(parse_command_line("vllm serve m --runner pooling --convert embed".split()))
    assert (s.runner, s.convert, s.task) == ("pooling", "embed", None)
    plain = settings_from_config(parse_command_line("vllm serve m".split()))
    assert (plain.runner, plain.convert, plain.task) == (None, None, None)


@pytest.mark.parametrize("version", ["0.9.2", "0.12.0", "0.20.0"])
def test_vllm_pooling_plan_has_no_sampler_and_no_lm_head(version: str) -> None:
    """E5-Mistral as vLLM runs it (pooling, --runner auto) against the same start-up forced onto the generate
    runner: the weights lose the untied ``vocab x hidden`` LM head, the profile's activation is the forward pass
    alone (no sampled logits), and the KV cache gains exactly what the two free."""
    c = _e5_config()
    model = _e5()
    pooled = VllmSettings(version=version, max_model_len=8192)
    # 0.9.2 has no --runner (0.10.1 on): --task generate is its way to the generate runner
    generative = pooled.changed(task="generate") if version == "0.9.2" else pooled.changed(runner="generate")
    p = plan_vllm_detailed(pooled, model, H100_TOTAL, **H100)
    g = plan_vllm_detailed(generative, model, H100_TOTAL, **H100)
    pc = resolve_startup(pooled, model, H100_TOTAL, **H100)
    gc = resolve_startup(generative, model, H100_TOTAL, **H100)
    assert p.plan.era == g.plan.era == "v1"
    dbytes = 2  # float16 config, --dtype auto
    lm_head = c["vocab_size"] * c["hidden_size"] * dbytes
    assert not c["tie_word_embeddings"]
    assert g.plan.weights_bytes - p.plan.weights_bytes == lm_head
    forward = pc.max_num_batched_tokens * (3 * c["intermediate_size"] + 4 * c["hidden_size"]) * dbytes
    assert p.plan.activation_bytes == forward
    assert pc.sampled_rows == 0 and gc.sampled_rows > 0
    assert g.plan.activation_bytes >= p.plan.activation_bytes
    # and the FULL decode CUDA graphs a pooling model does not capture (0.20.0 deducts the estimate; review47A)
    assert p.plan.kv_cache_bytes - g.plan.kv_cache_bytes == (
        g.plan.weights_bytes - p.plan.weights_bytes + g.plan.activation_bytes - p.plan.activation_bytes
        + g.plan.cudagraph_bytes - p.plan.cudagraph_bytes
    )  # fmt: skip
    assert any("architecture MistralModel is a pooling model" in n for n in p.plan.assumptions)
    assert any("profile with the pooler, no sampler" in n for n in p.plan.assumptions)
    assert not any("pooling" in n for n in g.plan.assumptions)


def test_vllm_pooling_model_on_the_v2_runner_holds_no_penalty_state() -> None:
    """From 0.29.0 every model runs vLLM's V2 model runner, which builds its sampler (and the sampler's penalty
    state, ``max_num_seqs x vocab`` counts) only for a generative model (0.34.0 ``GPUModelRunner.__init__``:
    ``if self.is_last_pp_rank and not self.is_pooling_model``): the pooling plan's non-torch memory lacks it."""
    from kvlint.memory import vllm_runner as vr

    model = _e5()
    for version in ("0.29.0", "0.34.0"):
        pooled = VllmSettings(version=version, max_model_len=8192)
        p = plan_vllm_detailed(pooled, model, H100_TOTAL, **H100)
        g = plan_vllm_detailed(pooled.changed(runner="generate"), model, H100_TOTAL, **H100)
        pc = resolve_startup(pooled, model, H100_TOTAL, **H100)
        assert pc.v2_runner and pc.pooling
        penalty = vr.penalty_state_bytes(pc.max_num_seqs, model.vocab_size)
        assert g.plan.non_torch_bytes - p.plan.non_torch_bytes == penalty, version
        assert not any("penalty state" in n for n in p.plan.assumptions)
        assert any("penalty state" in n for n in g.plan.assumptions)


def test_vllm_pooling_model_runs_on_v0_before_0_9_2() -> None:
    """0.8.5's V1 oracle sends a pooling model to V0 ("No Embedding Models so far"), where chunked prefill stays
    off by default; the generative runner of the same model stays on V1."""
    model = _e5()
    pooled = VllmSettings(version="0.8.5", max_model_len=8192)
    p = plan_vllm_detailed(pooled, model, H100_TOTAL, **H100)
    pc = resolve_startup(pooled, model, H100_TOTAL, **H100)
    assert p.plan.era == "v0" and not pc.chunked_prefill and pc.sampled_rows == 0
    assert any("V0 fallback: a pooling model" in n for n in p.plan.assumptions)
    generative = resolve_startup(pooled.changed(task="generate"), model, H100_TOTAL, **H100)
    assert generative.era == "v1"


def test_vllm_checkpoint_size_is_kept() -> None:
    """A pooling model whose weights come from a checkpoint size keeps it: the checkpoint may hold no LM head."""
    from dataclasses import replace

    model = replace(_e5(), weight_bytes=14 * GiB)
    p = plan_vllm_detailed(VllmSettings(version="0.12.0", max_model_len=8192), model, H100_TOTAL, **H100)
    g = plan_vllm_detailed(
        VllmSettings(version="0.12.0", max_model_len=8192, runner="generate"), model, H100_TOTAL, **H100
    )
    assert p.plan.weights_bytes == g.plan.weights_bytes


def test_sglang_embedding_mode() -> None:
    v = (0, 5, 23)
    assert sglang_embedding(["MistralModel"], False, v)[0]
    assert sglang_embedding(["XLMRobertaForSequenceClassification"], False, v)[0]
    assert sglang_embedding(["Qwen3ForCausalLM"], True, v) == (True, "--is-embedding")
    assert not sglang_embedding(["Qwen3ForCausalLM"], False, v)[0]


@pytest.mark.parametrize(
    "arch,first,before",
    [
        ("Qwen3ForRewardModel", (0, 5, 9), (0, 5, 8)),
        ("Gemma2ForSequenceClassification", (0, 5, 9), (0, 5, 8)),
        ("Qwen3Model", (0, 5, 17), (0, 5, 16)),
        ("Lfm2BidirectionalModel", (0, 5, 17), (0, 5, 16)),
        ("EmbeddingGemma2Model", (0, 5, 22), (0, 5, 21)),
        ("Qwen3ForSequenceClassification", (0, 5, 1), (0, 4, 10)),
        ("BertModel", (0, 4, 8), (0, 4, 7)),
    ],
)
def test_sglang_embedding_architectures_by_release(arch: str, first: tuple, before: tuple) -> None:
    """``is_generation_model``'s list grew release by release (read in the wheels 0.4.6 - 0.5.23): an architecture
    the release does not list is served as a generative model there unless ``--is-embedding`` says otherwise."""
    assert sglang_embedding([arch], False, first) == (True, f"architecture {arch}")
    assert sglang_embedding([arch], False, (0, 5, 23))[0]
    assert not sglang_embedding([arch], False, before)[0]
    assert sglang_embedding([arch], True, before) == (True, "--is-embedding")
    # in every release since 0.4.6
    assert sglang_embedding(["MistralModel", arch], False, before) == (True, "architecture MistralModel")


def test_sglang_qwen3_embedding_plan_names_the_mode_from_0_5_17_only() -> None:
    """Qwen3-Embedding's ``Qwen3Model`` (as some exports name it) is an embedding architecture for SGLang from
    0.5.17: the 0.5.5 plan is a generative one (no embedding-mode note)."""
    from dataclasses import replace

    model = replace(
        resolve_model(str(MODELS / "Qwen--Qwen3-0.6B"), allow_hub=False), architectures=("Qwen3Model",)
    )
    notes = {}
    for version in ("0.5.5", "0.5.17"):
        s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x"], version)
        s.version = version
        p = plan_sglang(s, model, lookup("h100-80gb").memory_bytes, gpus=1)
        notes[version] = any(n.startswith("embedding mode (architecture Qwen3Model)") for n in p.assumptions)
    assert notes == {"0.5.5": False, "0.5.17": True}


def test_sglang_is_embedding_sizes_the_same_pool_and_says_so() -> None:
    """--is-embedding changes no pool term (mem_fraction_static sizes it as for generation) but the plan names the
    mode and the decode CUDA graphs SGLang does not capture for it."""
    model = resolve_model(str(MODELS / "Qwen--Qwen3-0.6B"), allow_hub=False)
    total = lookup("h100-80gb").memory_bytes

    def cmd(*extra: str):
        s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x", *extra], "0.5.5")
        s.version = "0.5.5"
        return s

    e = plan_sglang(cmd("--is-embedding", "--mem-fraction-static", "0.9"), model, total, gpus=1)
    g = plan_sglang(cmd("--mem-fraction-static", "0.9"), model, total, gpus=1)
    assert e.kv_cache_bytes == g.kv_cache_bytes and e.capacity_tokens == g.capacity_tokens
    assert any(n.startswith("embedding mode (--is-embedding)") for n in e.assumptions)
    assert not any("embedding mode" in n for n in g.assumptions)


_TEI = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: embedding
spec:
  template:
    spec:
      containers:
      - name: main
        image: ghcr.io/huggingface/text-embeddings-inference:86-1.5
        args:
        - --model-id=BAAI/bge-m3
        resources:
          limits:
            nvidia.com/gpu: '1'
"""


def _kv503(tmp_path: Path, text: str) -> list:
    from kvlint.pipeline import Options, run_check

    f = tmp_path / "tei.yaml"
    f.write_text(text)
    res = run_check([str(f)], Options(allow_hub=False))
    assert res.containers == []
    return [d for d in res.diagnostics if d.rule == "KV503"]


def test_tei_on_a_gpu_is_said_not_to_be_sized(tmp_path: Path) -> None:
    """A Text Embeddings Inference container (args only: the image's entrypoint is text-embeddings-router) on a GPU
    was a clean pass with 0 serving containers; it now gets the KV503 info of engines kvlint does not model, with
    what TEI's memory is made of. The same when the command names the router; not on a CPU."""
    (d,) = _kv503(tmp_path, _TEI)
    assert d.severity == "info" and "runs Text Embeddings Inference (TEI)" in d.message
    assert "text-embeddings-router, the image's entrypoint, nvidia.com/gpu: 1" in d.message
    assert d.fix is not None and "--max-batch-tokens" in d.fix
    own = _TEI.replace("        args:\n", "        command: [text-embeddings-router]\n        args:\n")
    (d,) = _kv503(tmp_path, own)
    assert "(text-embeddings-router, nvidia.com/gpu: 1)" in d.message
    assert _kv503(tmp_path, _TEI.replace("nvidia.com/gpu: '1'", "cpu: '4'")) == []
    other = _TEI.replace("        args:\n", "        command: [/app/serve]\n        args:\n")
    assert _kv503(tmp_path, other) == []


# A config of the XLM-RoBERTa cross-encoder shape (bge-reranker-v2-m3's architecture and model_type), written for
# this test: only the two keys that decide what kvlint does with it matter here.
_XLMR = {
    "architectures": ["XLMRobertaForSequenceClassification"],
    "model_type": "xlm-roberta",
    "hidden_size": 1024,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "vocab_size": 250002,
    "max_position_embeddings": 8194,
}

_SERVE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: rerank
spec:
  template:
    spec:
      containers:
      - name: main
        image: IMAGE
        command: COMMAND
        resources:
          limits:
            nvidia.com/gpu: '1'
"""


@pytest.mark.parametrize(
    "image,command,said",
    [
        ("vllm/vllm-openai:v0.12.0", '["vllm", "serve", "BAAI/bge-reranker-v2-m3"]', "holds no KV cache"),
        (
            "lmsysorg/sglang:v0.5.5",
            '["python3", "-m", "sglang.launch_server", "--model-path", "BAAI/bge-reranker-v2-m3", "--is-embedding"]',
            "embedding mode",
        ),
    ],
)
def test_an_encoder_only_reranker_says_what_the_engine_does(
    tmp_path: Path, image: str, command: str, said: str
) -> None:
    from kvlint.pipeline import Options, run_check

    d = tmp_path / "models" / "BAAI--bge-reranker-v2-m3"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(_XLMR))
    f = tmp_path / "rerank.yaml"
    f.write_text(_SERVE.replace("IMAGE", image).replace("COMMAND", command))
    res = run_check([str(f)], Options(allow_hub=False, model_dirs=(str(tmp_path / "models"),)))
    (kv502,) = [x for x in res.diagnostics if x.rule == "KV502"]
    assert "'xlm-roberta' model, not a decoder LLM" in kv502.message and said in kv502.message
    assert not any(x.rule.startswith("KV1") for x in res.diagnostics)  # no capacity finding on it


def test_vllm_pooling_last_pipeline_stage_holds_no_head() -> None:
    """Under pipeline parallelism the last stage of a generative model with tied embeddings holds a copy of the
    embedding as its LM head; a pooling model has no head, so that stage holds only its layers."""
    model = resolve_model(str(MODELS / "Qwen--Qwen3-0.6B"), allow_hub=False)  # tie_word_embeddings: true
    c = json.loads((MODELS / "Qwen--Qwen3-0.6B" / "config.json").read_text())
    assert c["tie_word_embeddings"]
    base = VllmSettings(version="0.12.0", max_model_len=8192, pipeline_parallel_size=2)
    pooled = plan_vllm_detailed(base.changed(runner="pooling"), model, H100_TOTAL, **H100)
    generative = plan_vllm_detailed(base, model, H100_TOTAL, **H100)
    assert pooled.plan.weights_bytes <= generative.plan.weights_bytes
    # the stage weights of both start-ups (the plan reports the limiting stage): the last loses the head copy
    pc = resolve_startup(base.changed(runner="pooling"), model, H100_TOTAL, **H100)
    gc = resolve_startup(base, model, H100_TOTAL, **H100)
    pw, gw = split_weights(base, model, pc), split_weights(base, model, gc)
    p_last = stage_memory(base.changed(runner="pooling"), model, pc, pw, 1)
    g_last = stage_memory(base, model, gc, gw, 1)
    assert p_last is not None and g_last is not None
    embed = c["vocab_size"] * c["hidden_size"] * 2
    assert g_last.weights - p_last.weights == embed


def test_sglang_e5_mistral_weights_have_no_lm_head() -> None:
    """SGLang builds E5-Mistral's ``MistralModel`` as ``LlamaEmbeddingModel`` (decoder and pooler, no LM head): the
    plan's weights are the architecture estimate less the untied ``vocab x hidden`` head, and the plan names the
    embedding mode although the command has no --is-embedding (SGLang takes it from the architecture)."""
    from kvlint.models.weights import weight_bytes

    c = _e5_config()
    model = _e5()
    s = parse_command_line(
        ["python", "-m", "sglang.launch_server", "--model-path", "x", "--mem-fraction-static", "0.85"],
        "0.5.5",
    )
    s.version = "0.5.5"
    p = plan_sglang(s, model, lookup("h100-80gb").memory_bytes, gpus=1)
    whole, _ = weight_bytes(model, dtype_bytes=2)
    assert p.weights_bytes == whole - c["vocab_size"] * c["hidden_size"] * 2
    assert any(n.startswith("embedding mode (architecture MistralModel)") for n in p.assumptions)


_E5_V1 = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: e5
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
      containers:
      - name: main
        image: vllm/vllm-openai:VERSION
        args: ["--model", "intfloat/e5-mistral-7b-instruct", "--max-model-len", "8192"]
        env:
        - name: VLLM_USE_V1
          value: "1"
        resources:
          limits:
            nvidia.com/gpu: '1'
"""


@pytest.mark.parametrize("version", ["v0.7.3", "v0.8.5"])
def test_vllm_use_v1_with_a_pooling_model_before_0_9_2_is_refused(tmp_path: Path, version: str) -> None:
    """``VLLM_USE_V1=1`` does not fall back: 0.8.5's ``_raise_or_fallback`` raises ``NotImplementedError`` for the
    V1 oracle's "No Embedding Models so far" check, and 0.7.3's V1 ``EngineCore`` asserts the runner is not
    pooling. Planned as a V0 fallback (0.8.5) or a V1 pooling run (0.7.3) before; now an error at the env value.
    From 0.9.2 V1 runs the model, and without the variable 0.8.5 falls back to V0."""
    from kvlint.pipeline import Options, run_check

    f = tmp_path / "e5.yaml"
    f.write_text(_E5_V1.replace("VERSION", version))
    res = run_check([str(f)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.plan is None and cr.plan_refusal is not None and cr.plan_refusal.value == "vllm-v1-pooling"
    (d,) = [x for x in res.diagnostics if "VLLM_USE_V1=1" in x.message]
    assert d.severity == "error" and "pooling model" in d.message and d.loc is not None and d.loc.line == 16
    f.write_text(_E5_V1.replace("VERSION", "v0.9.2"))
    assert run_check([str(f)], Options(allow_hub=False)).containers[0].plan is not None
    f.write_text(_E5_V1.replace("VERSION", version).replace('value: "1"', 'value: "0"'))
    assert run_check([str(f)], Options(allow_hub=False)).containers[0].plan is not None


def _qwen2_as(arch: str):
    from dataclasses import replace

    model = resolve_model(str(MODELS / "Qwen--Qwen2.5-7B"), allow_hub=False)
    return replace(model, architectures=(arch,), weight_bytes=None), json.loads(
        (MODELS / "Qwen--Qwen2.5-7B" / "config.json").read_text()
    )


@pytest.mark.parametrize("arch,labels", [("Qwen2ForRewardModel", 1), ("Qwen2ForProcessRewardModel", 2)])
def test_qwen2_reward_score_head_is_in_the_weights_estimate(arch: str, labels: int) -> None:
    """``qwen2_rm.py`` (vLLM and SGLang) builds ``score = Linear(h, h), ReLU, Linear(h, num_labels)``, both with a
    bias, over the Qwen2 decoder: the architecture estimate holds it, at the activation dtype."""
    from kvlint.models.weights import param_breakdown, weight_bytes

    causal, c = _qwen2_as("Qwen2ForCausalLM")
    reward, _ = _qwen2_as(arch)
    h = c["hidden_size"]
    head = h * h + h + h * labels + labels
    assert param_breakdown(reward)["other"] - param_breakdown(causal)["other"] == head
    assert weight_bytes(reward, dtype_bytes=2)[0] - weight_bytes(causal, dtype_bytes=2)[0] == head * 2


def test_qwen2_reward_model_plans_hold_the_score_head_and_no_lm_head() -> None:
    """vLLM (pooling runner: no LM head) and SGLang (``Qwen2ForRewardModel`` drops ``lm_head`` weights) plan the
    decoder plus the score head: the architecture estimate less the untied ``vocab x hidden`` LM head."""
    from kvlint.models.weights import weight_bytes

    reward, c = _qwen2_as("Qwen2ForRewardModel")
    causal, _ = _qwen2_as("Qwen2ForCausalLM")
    assert not c["tie_word_embeddings"]
    h = c["hidden_size"]
    lm_head = c["vocab_size"] * h * 2
    head = (h * h + 2 * h + 1) * 2
    whole, _ = weight_bytes(reward, dtype_bytes=2)
    base = VllmSettings(version="0.12.0", max_model_len=8192)
    v = plan_vllm_detailed(base, reward, H100_TOTAL, **H100).plan
    generate = plan_vllm_detailed(base, causal, H100_TOTAL, **H100).plan
    assert v.weights_bytes - generate.weights_bytes == head - lm_head
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x"], "0.5.5")
    s.version = "0.5.5"
    p = plan_sglang(s, reward, lookup("h100-80gb").memory_bytes, gpus=1)
    assert p.weights_bytes == whole - lm_head
    assert any(n.startswith("embedding mode (architecture Qwen2ForRewardModel)") for n in p.assumptions)
