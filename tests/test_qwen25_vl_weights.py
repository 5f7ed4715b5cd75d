"""The Qwen2.5-VL vision tower's parameters as vLLM builds it (kvlint.models.weights._qwen2_5_vl_vision_params;
vllm@0.11.0:vllm/model_executor/models/qwen2_5_vl.py): a gated MLP (gate_up + down, with biases) in every block and a
two-linear patch merger of width hidden x merge^2. The generic ViT estimate counted two MLP matrices and one projector
matrix, 0.17 B parameters short for Qwen2.5-VL-7B-Instruct."""

from __future__ import annotations

import copy

from kvlint.models import resolve_model
from kvlint.models.weights import _vision_params


def _vision(**changes: int) -> int:
    m = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    cfg = copy.deepcopy(m.config or {})
    cfg["vision_config"].update(changes)
    return _vision_params(cfg, m.hidden_size)


def test_gated_mlp_three_matrices_with_biases_per_block() -> None:
    m = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    vc = (m.config or {})["vision_config"]
    h, depth, inter = vc["hidden_size"], vc["depth"], vc["intermediate_size"]
    # one more intermediate channel: gate and up rows (h + 1 bias each) and a down column (h)
    assert _vision(intermediate_size=inter + 1) - _vision() == depth * (3 * h + 2)


def test_merger_is_two_linears_of_the_merged_width() -> None:
    m = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    vc = (m.config or {})["vision_config"]
    wide = vc["hidden_size"] * vc["spatial_merge_size"] ** 2
    # the projector's output width adds a column of the merged width and a bias; the text model does not enter
    assert _vision(out_hidden_size=vc["out_hidden_size"] + 1) - _vision() == wide + 1
