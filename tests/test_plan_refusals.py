"""Typed plan refusals (kvlint.memory.refusal): each start-up refusal an engine memory model recognises travels as a
:class:`~kvlint.memory.refusal.PlanRefusal` from the memory model to KV502, which reports it by that kind, never by the
wording of the message. Manifests run the real pipeline (run_check) and the real rules (check_container) offline,
on the catalogue's configs and fixtures/plan/models.
"""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from kvlint.memory.refusal import PlanError, PlanRefusal
from kvlint.memory.vllm import model_facts
from kvlint.models import resolve_model
from kvlint.pipeline import Options, run_check
from kvlint.rules.runner import check_container
from kvlint.types import ContainerResult, Diagnostic

FIX = Path(__file__).resolve().parent.parent / "fixtures"
SGLANG = '["python3", "-m", "sglang.launch_server"]'
VLLM = '["vllm", "serve"]'


def _container(
    tmp_path: Path,
    image: str,
    command: str,
    args: list[str],
    env: dict[str, str] | None = None,
    gpus: int = 2,
) -> tuple[ContainerResult, Options]:
    """The serving container of a one-Deployment manifest, analysed offline on H100s."""
    listed = ", ".join(f"'{a}'" for a in args)
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n        - name: engine\n          image: {image}\n"
        f"          command: {command}\n          args: [{listed}]\n"
        + (
            "          env: [" + ", ".join(f"{{name: {k}, value: '{v}'}}" for k, v in env.items()) + "]\n"
            if env
            else ""
        )
        + f"          resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n",
        encoding="utf-8",
    )
    opts = Options(allow_hub=False, accelerator="h100", model_dirs=(str(FIX / "plan" / "models"),))
    (cr,) = run_check([str(manifest)], opts).containers
    return cr, opts


def _kv502(cr: ContainerResult, opts: Options) -> Diagnostic:
    (d,) = [d for d in check_container(cr, opts) if d.rule == "KV502"]
    return d


LLAMA_1B = "meta-llama/Llama-3.2-1B-Instruct"  # 16 decoder layers
STEP = "stepfun-ai/Step-3.7-Flash"  # MTP layers in its config (vLLM's n_predict)
#: an MTP count vLLM refuses for STEP: above its MTP layers and not a multiple of them
STEP_MTP = model_facts(resolve_model(STEP, allow_hub=False)).mtp_config_layers + 1

#: (image, command, args, env, gpus, the refusal the memory model makes)
CASES = {
    "vllm-pp-layers": (
        "vllm/vllm-openai:v0.11.0",
        VLLM,
        [LLAMA_1B, "--pipeline-parallel-size=20"],
        None,
        20,
        PlanRefusal.VLLM_PP_EXCEEDS_LAYERS,
    ),
    "vllm-pp-partition": (
        "vllm/vllm-openai:v0.11.0",
        VLLM,
        [LLAMA_1B, "--pipeline-parallel-size=2"],
        {"VLLM_PP_LAYER_PARTITION": "1,1"},
        2,
        PlanRefusal.VLLM_PP_PARTITION,
    ),
    "vllm-mtp-count": (
        "vllm/vllm-openai:v0.34.0",
        VLLM,
        [
            STEP,
            "--tensor-parallel-size=8",
            "--speculative-config",
            f'{{"method": "mtp", "num_speculative_tokens": {STEP_MTP}}}',
        ],
        None,
        8,
        PlanRefusal.VLLM_MTP_COUNT,
    ),
    "vllm-v1-pooling": (
        "vllm/vllm-openai:v0.8.5",
        VLLM,
        ["intfloat/e5-mistral-7b-instruct"],  # MistralModel: a pooling model by its architecture
        {"VLLM_USE_V1": "1"},
        1,
        PlanRefusal.VLLM_V1_POOLING,
    ),
    "vllm-v2-runner-env": (
        "vllm/vllm-openai:v0.34.0",
        VLLM,
        [LLAMA_1B],
        {"VLLM_USE_V2_MODEL_RUNNER": "0"},
        1,
        PlanRefusal.VLLM_V2_RUNNER_ENV,
    ),
    "vllm-v2-runner-unsupported": (
        "vllm/vllm-openai:v0.31.0",
        VLLM,
        [
            LLAMA_1B,
            "--speculative-config",
            '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}',
        ],
        {"VLLM_USE_V2_MODEL_RUNNER": "1"},
        1,
        PlanRefusal.VLLM_V2_RUNNER_UNSUPPORTED,
    ),
    "vllm-dbo-unsupported": (
        "vllm/vllm-openai:v0.34.0",
        VLLM,
        [LLAMA_1B, "--enable-dbo", "--enable-lora"],
        None,
        1,
        PlanRefusal.VLLM_DBO_UNSUPPORTED,
    ),
    "sglang-pp-layers": (
        "lmsysorg/sglang:v0.5.23",
        SGLANG,
        [f"--model-path={LLAMA_1B}", "--pp-size=20"],
        None,
        20,
        PlanRefusal.SGLANG_PP_EXCEEDS_LAYERS,
    ),
    "sglang-pp-partition": (
        "lmsysorg/sglang:v0.5.23",
        SGLANG,
        [f"--model-path={LLAMA_1B}", "--pp-size=2"],
        {"SGLANG_PP_LAYER_PARTITION": "1,1"},
        2,
        PlanRefusal.SGLANG_PP_PARTITION,
    ),
    "sglang-pp-mla": (
        "lmsysorg/sglang:v0.4.10",
        SGLANG,
        ["--model-path=deepseek-ai/DeepSeek-V3", "--pp-size=2", "--tp-size=8"],
        None,
        16,
        PlanRefusal.SGLANG_PP_MLA,
    ),
    "sglang-pp-speculative": (
        "lmsysorg/sglang:v0.5.13",
        SGLANG,
        [
            "--model-path=meta-llama/Llama-3.1-8B",
            "--pp-size=2",
            "--speculative-algorithm=EAGLE",
            "--speculative-draft-model-path=meta-llama/Llama-3.2-1B-Instruct",
        ],
        None,
        2,
        PlanRefusal.SGLANG_PP_SPECULATIVE,
    ),
    "sglang-pp-speculative-setup": (
        "lmsysorg/sglang:v0.5.23",
        SGLANG,
        [
            "--model-path=meta-llama/Llama-3.1-8B",
            "--pp-size=2",
            "--speculative-algorithm=EAGLE",
            "--speculative-draft-model-path=meta-llama/Llama-3.2-1B-Instruct",
        ],
        None,
        2,
        PlanRefusal.SGLANG_PP_SPECULATIVE_SETUP,
    ),
    "sglang-pp-mixed-chunk": (
        "lmsysorg/sglang:v0.5.10",
        SGLANG,
        ["--model-path=meta-llama/Llama-3.1-8B", "--pp-size=2", "--enable-mixed-chunk"],
        None,
        2,
        PlanRefusal.SGLANG_PP_MIXED_CHUNK,
    ),
    "sglang-mamba-ratio": (
        "lmsysorg/sglang:v0.5.23",
        SGLANG,
        ["--model-path=nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--mamba-full-memory-ratio=-1"],
        None,
        1,
        PlanRefusal.SGLANG_MAMBA_RATIO,
    ),
    "tgi-attention": (
        "ghcr.io/huggingface/text-generation-inference:3.3.0",
        '["text-generation-launcher"]',
        ["--model-id=meta-llama/Llama-3.1-8B"],
        {"ATTENTION": "flash"},
        1,
        PlanRefusal.TGI_ATTENTION,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_refusal_reaches_the_result_typed_and_kv502_reports_it_as_an_error(
    tmp_path: Path, case: str
) -> None:
    image, command, args, env, gpus, refusal = CASES[case]
    cr, opts = _container(tmp_path, image, command, args, env, gpus)
    assert cr.plan is None and cr.plan_error
    assert cr.plan_refusal is refusal
    d = _kv502(cr, opts)
    assert d.severity == "error" and cr.plan_error in d.message
    assert not d.message.startswith(
        "kvlint could not size"
    )  # the generic finding, for what kvlint cannot size


def test_every_refusal_kind_has_a_case() -> None:
    assert {c[-1] for c in CASES.values()} == set(PlanRefusal)


def test_kv502_reads_the_kind_not_the_wording(tmp_path: Path) -> None:
    """The message is the engine's quoted check; KV502 chooses its finding by the refusal the plan carries. The same
    text without the kind is the generic finding, and the kind with other text is still the refusal's."""
    image, command, args, env, gpus, _ = CASES["sglang-pp-layers"]
    cr, opts = _container(tmp_path, image, command, args, env, gpus)
    refused = _kv502(cr, opts)
    assert "set --pp-size to at most 16" in refused.fix
    untyped = dataclasses.replace(cr, plan_refusal=None)
    assert _kv502(untyped, opts).message.startswith(
        f"kvlint could not size {cr.model.id} for sglang: --pp-size 20 "
    )
    reworded = dataclasses.replace(cr, plan_error="twenty stages, sixteen layers")
    d = _kv502(reworded, opts)
    assert d.severity == "error" and d.fix == refused.fix and d.loc == refused.loc


def test_sglang_pipeline_with_speculative_decoding_gets_its_own_fix(tmp_path: Path) -> None:
    """SGLang 0.5.3 - 0.5.20 refuse pp > 1 with a speculative algorithm (0.5.3 - 0.5.10 also with mixed chunked
    prefill). The refusal began with ``--pp-size`` as the MLA one does, and KV502 told the user to "serve the MLA
    model with --pp-size 1 ... or use SGLang 0.5.5 or later": a Llama model, on a release past 0.5.5."""
    for case, drop in (
        ("sglang-pp-speculative", "--speculative-algorithm"),
        ("sglang-pp-mixed-chunk", "--enable-mixed-chunk"),
    ):
        image, command, args, env, gpus, _ = CASES[case]
        cr, opts = _container(tmp_path, image, command, args, env, gpus)
        d = _kv502(cr, opts)
        assert "MLA" not in d.fix and f"drop {drop}" in d.fix and "--pp-size 1" in d.fix


def test_plan_error_keeps_its_refusal_across_processes() -> None:
    err = pickle.loads(pickle.dumps(PlanError("--pp-size 3 ...", PlanRefusal.SGLANG_PP_EXCEEDS_LAYERS)))
    assert isinstance(err, PlanError) and str(err) == "--pp-size 3 ..."
    assert err.refusal is PlanRefusal.SGLANG_PP_EXCEEDS_LAYERS
    assert pickle.loads(pickle.dumps(PlanError("no KV"))).refusal is None
