"""KV411: vLLM refuses a block-quantized FP8 checkpoint whose tensor-parallel slices are not whole blocks.

The expected figures are derived here from the catalogued config.json files themselves (``moe_intermediate_size``,
``weight_block_size``) with the partition vLLM builds (``Fp8MoEMethod.create_weights``: ``intermediate_size //
tp_size``, ``tp_size`` = TP x DP without expert parallelism from 0.8.0, 1 with it), not copied from kvlint's output.
"""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path

import pytest

from kvlint.models.config import parse_config
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.families.parallelism import block_partition_refusal, fp8_weight_blocks

MODELS = Path(__file__).resolve().parent.parent / "kvlint" / "data" / "models"


def _spec(name: str, **changes: object):
    cfg = json.loads((MODELS / name / "config.json").read_text())
    cfg = copy.deepcopy(cfg)
    for k, val in changes.items():
        if k == "weight_block_size":
            cfg["quantization_config"]["weight_block_size"] = val
        else:
            cfg[k] = val
    return parse_config(cfg, model_id=name.replace("--", "/"), source="test"), cfg


@pytest.mark.parametrize(
    "name", ["Qwen--Qwen3-30B-A3B-FP8", "Qwen--Qwen3-235B-A22B-FP8", "MiniMaxAI--MiniMax-M2.5"]
)
@pytest.mark.parametrize("tp", [1, 2, 4, 8])
@pytest.mark.parametrize("dp", [1, 2])
@pytest.mark.parametrize("ep", [False, True])
def test_expert_partition_against_the_config(name: str, tp: int, dp: int, ep: bool) -> None:
    spec, cfg = _spec(name)
    width = cfg.get("moe_intermediate_size") or cfg["intermediate_size"]
    bn, bk = cfg["quantization_config"]["weight_block_size"]
    ranks = 1 if ep and tp * dp > 1 else tp * dp
    part = width // ranks
    found = block_partition_refusal(spec, tp, dp, ep, (0, 11, 0))
    if width % ranks:
        assert found is not None and "AssertionError" in found[1]
    elif part % bn:
        assert found is not None
        assert found[1] == (
            f"The output_size of gate's and up's weight = {part} is not divisible by weight quantization "
            f"block_n = {bn}."
        )
    elif tp > 1 and part % bk:
        assert found is not None and f"down's weight = {part}" in found[1]
    else:
        assert found is None


def test_the_reported_cases_refuse() -> None:
    # the shapes users report: Qwen3-30B-A3B-FP8 at TP 4, Qwen3-235B-A22B-FP8 and MiniMax-M2.5 at TP 8 (192)
    for name, tp in (
        ("Qwen--Qwen3-30B-A3B-FP8", 4),
        ("Qwen--Qwen3-235B-A22B-FP8", 8),
        ("MiniMaxAI--MiniMax-M2.5", 8),
    ):
        spec, _ = _spec(name)
        found = block_partition_refusal(spec, tp, 1, False, (0, 11, 0))
        assert found is not None and "weight = 192 is not divisible" in found[1], name
        assert block_partition_refusal(spec, tp, 1, True, (0, 11, 0)) is None


def test_data_parallel_splits_experts_only_from_0_8_0() -> None:
    spec, _ = _spec("Qwen--Qwen3-30B-A3B-FP8")  # 768 wide: TP 2 gives 384, TP 2 x DP 2 gives 192
    assert block_partition_refusal(spec, 2, 1, False, (0, 11, 0)) is None
    assert block_partition_refusal(spec, 2, 2, False, (0, 11, 0)) is not None
    assert block_partition_refusal(spec, 2, 2, False, (0, 7, 3)) is None


def test_dense_layers_of_deepseek_at_tp32_message_by_release() -> None:
    # DeepSeek-V3's dense first layers: intermediate_size 18432 / 32 = 576 (the message DeepSeek's own README quotes)
    spec, cfg = _spec("deepseek-ai--DeepSeek-V3")
    part = cfg["intermediate_size"] // 32
    old = block_partition_refusal(spec, 32, 1, True, (0, 13, 0))
    new = block_partition_refusal(spec, 32, 1, True, (0, 14, 0))
    assert old is not None and old[1].startswith(f"Weight output_partition_size = {part} ")
    assert new is not None and new[1].startswith(f"Weight input_size_per_partition = {part} ")
    assert block_partition_refusal(spec, 8, 1, False, (0, 14, 0)) is None


def test_dense_model_block_fp8() -> None:
    spec, cfg = _spec("Qwen--Qwen3-32B-FP8")  # intermediate_size 25600 = 200 blocks
    width = cfg["intermediate_size"]
    for tp in (1, 2, 4, 8, 16, 32):
        found = block_partition_refusal(spec, tp, 1, False, (0, 19, 0))
        bad = tp > 1 and width % tp == 0 and (width // tp) % 128 != 0
        assert (found is not None) == bad, tp


@pytest.mark.parametrize(
    "bad", ["128", [0, 128], [-128, 128], [10**400, 128], [128], None, [[128], 128], [1.5, 2]]
)
def test_malformed_block_size_reads_as_no_blocks(bad: object) -> None:
    spec, _ = _spec("Qwen--Qwen3-30B-A3B-FP8", weight_block_size=bad)
    assert fp8_weight_blocks(spec, (0, 19, 0)) is None
    assert block_partition_refusal(spec, 4, 1, False, (0, 11, 0)) is None


def _manifest(tmp_path: Path, args: str, gpus: int) -> Path:
    p = tmp_path / "m.yaml"
    p.write_text(
        textwrap.dedent(
            f"""\
            apiVersion: apps/v1
            kind: Deployment
            metadata: {{name: q}}
            spec:
              selector: {{matchLabels: {{app: q}}}}
              template:
                metadata: {{labels: {{app: q}}}}
                spec:
                  nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L40S}}
                  containers:
                    - name: vllm
                      image: vllm/vllm-openai:v0.11.0
                      args: [{args}]
                      resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
            """
        )
    )
    return p


def test_rule_withdraws_the_plan_and_offers_sizes_that_work(tmp_path: Path) -> None:
    p = _manifest(tmp_path, '"--model", "Qwen/Qwen3-30B-A3B-FP8", "--tensor-parallel-size", "4"', 4)
    res = run_check([str(p)], Options())
    kv411 = [d for d in res.diagnostics if d.rule == "KV411"]
    assert len(kv411) == 1
    d = kv411[0]
    assert "768 / 4 = 192" in d.message
    # the remedies name only sizes whose partitions are whole: 1 and 2 (768/3, 768/6 split the 32 heads unevenly)
    assert "--tensor-parallel-size 1 (1 GPU), 2 (2 GPUs)" in d.fix
    assert "--enable-expert-parallel" in d.fix
    # a before-loading error: no capacity finding computed on a plan the engine never reaches
    assert not [x for x in res.diagnostics if x.rule.startswith("KV10")]


def test_expert_parallel_container_passes(tmp_path: Path) -> None:
    p = _manifest(
        tmp_path,
        '"--model", "Qwen/Qwen3-30B-A3B-FP8", "--tensor-parallel-size", "4", "--enable-expert-parallel"',
        4,
    )
    res = run_check([str(p)], Options())
    assert not [d for d in res.diagnostics if d.rule == "KV411"]


def test_compressed_tensors_block_scheme_from_0_13_0() -> None:
    # llm-compressor's FP8_BLOCK scheme (a -FP8-block build): strategy "block", block_structure [128, 128]
    spec, cfg = _spec("Qwen--Qwen3-30B-A3B-FP8")
    ct = {
        "quant_method": "compressed-tensors",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": {
                    "num_bits": 8,
                    "type": "float",
                    "strategy": "block",
                    "block_structure": [128, 128],
                },
            }
        },
    }
    cfg = dict(cfg, quantization_config=ct)
    spec = parse_config(cfg, model_id="example/Qwen3-30B-A3B-FP8-block", source="test")
    assert fp8_weight_blocks(spec, (0, 13, 0)) == (128, 128)
    assert fp8_weight_blocks(spec, (0, 10, 1)) is None  # 0.10.1's compressed-tensors schemes take no blocks
    found = block_partition_refusal(spec, 4, 1, False, (0, 19, 0))
    assert found is not None and "weight = 192 is not divisible" in found[1]
    ct["config_groups"]["group_0"]["weights"]["strategy"] = "channel"
    spec = parse_config(cfg, model_id="example/Qwen3-30B-A3B-FP8-dynamic", source="test")
    assert block_partition_refusal(spec, 4, 1, False, (0, 19, 0)) is None


def test_not_on_tpu(tmp_path: Path) -> None:
    # vLLM's TPU build quantizes in its own code (tpu-inference), whose checks are not the CUDA ones read here
    p = tmp_path / "tpu.yaml"
    p.write_text(
        textwrap.dedent(
            """\
            apiVersion: v1
            kind: Pod
            metadata: {name: q}
            spec:
              nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 2x2}
              containers:
                - name: vllm
                  image: vllm/vllm-tpu:v0.11.1
                  args: ["--model", "Qwen/Qwen3-30B-A3B-FP8", "--tensor-parallel-size", "4"]
                  resources: {limits: {google.com/tpu: 4}}
            """
        )
    )
    res = run_check([str(p)], Options())
    assert not [d for d in res.diagnostics if d.rule == "KV411"]


def test_a_huge_tensor_parallel_size_does_not_size_the_remedy_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kvlint.rules import remedies
    from kvlint.rules.families import parallelism

    plans: list[object] = []
    heads: list[int] = []
    real_plan, real_heads = remedies.replanned, parallelism._heads_allow

    def counting_plan(*args: object, **kwargs: object) -> object:
        plans.append(kwargs)
        return real_plan(*args, **kwargs)  # type: ignore[arg-type]

    def counting_heads(ctx: object, tp: int) -> object:
        heads.append(tp)
        return real_heads(ctx, tp)  # type: ignore[arg-type]

    monkeypatch.setattr(remedies, "replanned", counting_plan)
    monkeypatch.setattr(parallelism, "_heads_allow", counting_heads)
    p = _manifest(tmp_path, '"--model", "Qwen/Qwen3-30B-A3B-FP8", "--tensor-parallel-size", "65536"', 8)
    res = run_check([str(p)], Options())
    # 32 heads do not split over 65,536 (the largest size kvlint reads), nor 768-wide experts
    assert {"KV401", "KV411"} <= {d.rule for d in res.diagnostics}
    # KV411's candidates are the divisors of the 32 heads (1, 2, 4, 8, 16, 32), not every size up to 65,536
    assert len(heads) <= 64
    assert len(plans) <= 7


def test_unquantized_shared_experts_are_not_checked() -> None:
    # Qwen3.8's FP8 build keeps every mlp.shared_expert unquantized (modules_to_not_convert): its 2,048-wide shared
    # MLP at TP 32 (64 per rank) is no FP8 block split; the routed experts (2,048 / 32 = 64) still are
    spec, cfg = _spec("Qwen--Qwen3.8-2.4T-A95B-FP8")
    skip = cfg["quantization_config"]["modules_to_not_convert"]
    assert any("shared_expert.down_proj" in x for x in skip)
    found = block_partition_refusal(spec, 32, 1, True, (0, 19, 0))  # experts whole with expert parallelism
    assert found is None
    quantized, _ = _spec(
        "Qwen--Qwen3.8-2.4T-A95B-FP8",
        quantization_config=dict(cfg["quantization_config"], modules_to_not_convert=[]),
    )
    found = block_partition_refusal(quantized, 32, 1, True, (0, 19, 0))
    assert found is not None and "shared_expert_intermediate_size" in found[0]
