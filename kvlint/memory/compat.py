"""Does the engine start at all on this accelerator? The compatibility tests of rules KV301, KV302, KV304 and
KV305.

The hardware rules (:mod:`kvlint.rules.families.hardware`) report these tests for the GPU a pod lands on; the
"where would it fit" answers ask them for GPUs the pod might land on: the fleet verdict of KV501
(:func:`kvlint.memory.stage.plan_fleet`) and ``kvlint plan --compare`` / ``--sweep``
(:mod:`kvlint.capacity.compare`, :mod:`kvlint.capacity.sweep`). One implementation serves both, so a GPU the
rules say the engine refuses is never called a fit:

* :func:`image_platform_mismatch` -- KV304: a CUDA build on a non-NVIDIA accelerator (AMD, TPU, Gaudi,
  Trainium), a ROCm build on NVIDIA. The engine finds no device of its platform and exits.
* :func:`bf16_refusal` -- KV301 (vLLM): bfloat16 on an NVIDIA GPU below compute capability 8.0, explicitly or
  through ``--dtype auto`` before 0.9.2 (``vllm/platforms/cuda.py::CudaPlatformBase.check_if_supports_dtype``;
  ``vllm/config/model.py`` auto-dtype fallback to float16 from 0.9.2, docs/engine-memory-model.md §1.7).
* :func:`fp8_kv_support_on` -- KV302 (vLLM): an fp8 KV cache this release cannot run on this GPU
  (:func:`kvlint.memory.fp8kv.fp8_kv_support`, release by release).
* :func:`quantization_refusal` -- KV305 (vLLM, SGLang): a quantization method whose kernels need a newer NVIDIA
  GPU (``VllmConfig._get_quantization_config``: the method's ``get_min_capability()``; SGLang's model loader
  likewise), release by release (:data:`QUANT_MIN_CC_STEPS`, :data:`SGLANG_QUANT_MIN_CC_STEPS`), and for a
  compressed-tensors checkpoint its layers' schemes (:data:`CT_SCHEME_MIN_CC_STEPS`). The method and its minimum
  do not depend on the GPU (:func:`quantization_need`); only the compute capability is compared per GPU.
* :func:`startup_refusal` -- the four together for one engine configuration, as a :class:`Refusal` with a
  short reason (``bfloat16 needs compute capability 8.0; Tesla T4 is 7.5``). Each test applies to the
  engines its catalogue entry declares (``engines:`` in ``rules/KV301.yaml`` etc.).

Pure functions of the parsed engine settings, the model and the accelerator; nothing here reads a PodSpec.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kvlint.engines.images import (
    accelerator_build,
    build_is_evidenced,
    is_known_cuda_build,
    platform_of,
    pypi_cuda_wheel,
    rocm_build_target,
)
from kvlint.memory.fp8kv import Fp8KvSupport, forced_backend, fp8_kv_support
from kvlint.memory.versions import (
    NEWEST_VLLM,
    ReleaseVersion,
    Version,
    fmt_version,
    parse_version,
    release_shown,
    resolve_version,
)
from kvlint.types import Accelerator, ModelSpec, ServingConfig
from kvlint.values import parse_cc, truthy
from kvlint.wording import platform_name, vendor_name, with_article

__all__ = [
    "Refusal",
    "bf16_refusal",
    "fp8_kv_support_on",
    "build_target_mismatch",
    "image_platform_mismatch",
    "QUANT_MIN_CC",
    "QUANT_MIN_CC_STEPS",
    "SGLANG_QUANT_MIN_CC_STEPS",
    "CT_SCHEME_MIN_CC_STEPS",
    "compressed_tensors_scheme",
    "platform_refusal",
    "quant_min_cc",
    "quant_min_cc_range",
    "quantization_need",
    "quantization_refusal",
    "startup_refusal",
]

#: vLLM keeps a bf16 config's dtype under ``--dtype auto`` before this release (then falls back to float16).
_AUTO_BF16_FALLBACK = (0, 9, 2)


#: vLLM quantization methods and the compute capability each release needs, as ``(release, minimum)`` steps: the
#: first step's minimum holds from its release (the first wheel read that has the method), each later step's in
#: every release after its release (the last wheel read with the previous minimum), so the releases between two
#: wheels read, which were not read, take the lower value.
#:
#: vLLM compares the NVIDIA GPU's compute capability with the method's ``QuantizationConfig.get_min_capability()``
#: and raises "The quantization method {method} is not supported for the current GPU. Minimum capability: {n}.
#: Current capability: {cc}." (``VllmConfig._get_quantization_config``: vllm/config/vllm.py from 0.12.0,
#: vllm/config/__init__.py in 0.11.0, vllm/config.py in 0.7.3 - 0.9.2; the model loader's
#: ``_get_quantization_config``, vllm/model_executor/model_loader/loader.py, in 0.4.2 and 0.6.3.post1). The method is ``--quantization`` when given, else the checkpoint's
#: ``quantization_config.quant_method`` (``vllm/config/model.py::ModelConfig._verify_quantization``, whose
#: overrides only swap ``awq``/``gptq`` for their Marlin or Auto variants, of the same minimum or a lower one).
#: Every value below is the ``return`` of ``get_min_capability`` of the class vLLM's method table
#: (vllm/model_executor/layers/quantization/__init__.py::get_quantization_config) maps the method to, read in the
#: vLLM wheels 0.4.2, 0.4.3, 0.5.0, 0.5.0.post1, 0.6.3.post1, 0.7.3, 0.8.5, 0.9.2, 0.10.1, 0.10.2, 0.11.0, 0.12.0,
#: 0.13.0, 0.14.0, 0.16.0, 0.17.0, 0.18.0, 0.19.0, 0.20.0, 0.20.1, 0.21.0, 0.22.0, 0.23.0, 0.24.0, 0.25.0, 0.26.0,
#: 0.27.0, 0.28.0, 0.30.0, 0.32.0 and 0.34.0; where a value changed between two wheels read, the releases between them (not read) take the lower of
#: the two, so no refusal is said that a release might not make:
#:
#: * ``awq`` 7.5 in every wheel (``AWQConfig``: "The AWQ kernel only supports Turing or newer GPUs"; from 0.24.0
#:   ``AutoAWQConfig``, vllm/model_executor/layers/quantization/auto_awq.py). vllm-project/vllm issue #1282 shows
#:   the 8.0 of the first AWQ release, higher still.
#: * ``awq_marlin`` (``AWQMarlinConfig``, from 0.24.0 ``AutoAWQConfig``) 8.0 in 0.6.3.post1 - 0.13.0, 7.5 from
#:   0.14.0 (the Marlin kernels' Turing support, vllm-project/vllm#29901).
#: * ``gptq_marlin`` (``GPTQMarlinConfig``) 8.0 in 0.4.2 - 0.13.0, 7.5 in 0.14.0 - 0.21.0; from 0.22.0 the method
#:   maps to ``AutoGPTQConfig`` (vllm/model_executor/layers/quantization/auto_gptq.py), 6.0.
#: * ``fp8`` (``Fp8Config``) 8.9 in 0.4.2 - 0.5.0.post1, 8.0 in 0.6.3.post1 - 0.13.0 (FP8 Marlin runs it weight-only
#:   below 8.9), 7.5 from 0.14.0.
#: * ``mxfp4`` (``Mxfp4Config``; ``GptOssMxfp4Config``, its subclass, for gpt-oss in newer releases) 8.0 from its
#:   introduction (0.10.1, gpt-oss) to 0.34.0; its only activation dtype is bfloat16 (``get_supported_act_dtypes``,
#:   the test that follows the capability one).
#: * ``modelopt`` (``ModelOptFp8Config``: NVIDIA ModelOpt FP8 checkpoints, ``quant_method: modelopt`` or
#:   ``hf_quant_config.json`` with an FP8 ``quant_algo``) 8.9 in 0.6.3.post1 - 0.26.0, 8.0 from 0.27.0.
#:
#: * ``fbgemm_fp8`` (``FBGEMMFp8Config``: FBGEMM FP8 checkpoints, e.g. Meta's Llama 3.1 405B FP8) 8.0 in every wheel
#:   from 0.6.3.post1 to 0.34.0 (weight-only FP8 Marlin below 8.9, none below 8.0).
#: * ``experts_int8`` (``ExpertsInt8Config``: on-the-fly int8 MoE experts, ``--quantization experts_int8``) 8.0 in
#:   every wheel from 0.6.3.post1 to 0.34.0.
#: * ``modelopt_fp4`` (``ModelOptNvFp4Config``: NVIDIA ModelOpt NVFP4 checkpoints) 8.0 in 0.9.2 - 0.13.0, 7.5 from
#:   0.14.0 (its Marlin FP4 fallback, ``marlin_utils_fp4.is_fp4_marlin_supported``: 7.5). The 0.8.5 wheel names
#:   the class ``nvfp4`` (minimum 10.0), a method name no later wheel has: not listed.
#: * ``modelopt_mxfp8`` (``ModelOptMxFp8Config``) 10.0 in 0.16.0 - 0.19.0, 8.0 from 0.20.0.
#: * ``modelopt_mixed`` (``ModelOptMixedPrecisionConfig``: ModelOpt ``quant_algo: MIXED_PRECISION`` exports) 8.9 in
#:   0.17.0 - 0.23.0, 7.5 from 0.24.0.
#:
#: A method before its first step (``awq_marlin`` before 0.6.3, ``mxfp4`` before 0.10.1) is not tested. Methods
#: whose minimum is at most 7.0 in every wheel read are not listed, as no NVIDIA GPU kvlint knows is below 7.0
#: (``gptq`` and ``gguf`` 6.0; ``bitsandbytes``, ``moe_wna16`` and ``compressed-tensors`` 7.0, the last 6.0 in
#: 0.5.0 - 0.5.0.post1, whose schemes are tested again when layers are built: not modelled, docs/rules.md
#: KV305), nor ``mxfp8``, a name that maps to another class in 0.19.0 (``Mxfp8Config``, 10.0), 0.20.0 - 0.23.0
#: and from 0.24.0 (``ModelOptMxFp8Config``).
QUANT_MIN_CC_STEPS: dict[str, tuple[tuple[str, tuple[int, int]], ...]] = {
    "awq": (("0.0.0", (7, 5)),),
    "awq_marlin": (("0.6.3", (8, 0)), ("0.13.0", (7, 5))),
    "gptq_marlin": (("0.4.2", (8, 0)), ("0.13.0", (7, 5)), ("0.21.0", (6, 0))),
    "fp8": (("0.4.2", (8, 9)), ("0.5.0.post1", (8, 0)), ("0.13.0", (7, 5))),
    "mxfp4": (("0.10.1", (8, 0)),),
    "modelopt": (("0.6.3", (8, 9)), ("0.26.0", (8, 0))),
    "fbgemm_fp8": (("0.6.3", (8, 0)),),
    "experts_int8": (("0.6.3", (8, 0)),),
    "modelopt_fp4": (("0.9.2", (8, 0)), ("0.13.0", (7, 5))),
    "modelopt_mxfp8": (("0.16.0", (10, 0)), ("0.19.0", (8, 0))),
    "modelopt_mixed": (("0.17.0", (8, 9)), ("0.23.0", (7, 5))),
}

#: SGLang's quantization methods and the compute capability each release needs on an NVIDIA GPU, as
#: :data:`QUANT_MIN_CC_STEPS` (same step semantics), read in the SGLang wheels 0.4.6, 0.4.10 and 0.5.3 - 0.5.23.
#: SGLang makes the same test as vLLM, later: the model loader's ``_get_quantization_config``
#: (sglang/srt/model_loader/loader.py, every wheel read) raises "The quantization method {method} is not supported
#: for the current GPU. Minimum capability: {n}. Current capability: {cc}." before loading weights. The method is
#: ``--quantization``, else the checkpoint's ``quant_method``, whose overrides
#: (``ModelConfig._verify_quantization``, sglang/srt/configs/model_config.py) pick ``awq_marlin`` for an AWQ
#: checkpoint only on a GPU Marlin runs on (``AWQMarlinConfig.is_awq_marlin_compatible``). Values are the
#: ``get_min_capability`` of the class ``BASE_QUANTIZATION_METHODS`` (sglang/srt/layers/quantization/__init__.py)
#: maps the method to on CUDA:
#:
#: * ``awq`` 7.5 (``AWQConfig``) and ``w8a8_int8`` 7.5 (``W8A8Int8Config``) in every wheel read.
#: * ``fp8`` 8.0 (``Fp8Config``) in every wheel read: unlike vLLM from 0.14, SGLang refuses an FP8 checkpoint on
#:   a T4. (From 0.5.9 the ``mxfp8`` name maps to the same class with 10.0: not listed.)
#: * ``gptq_marlin`` 8.0 (``GPTQMarlinConfig``) in every wheel read; ``awq_marlin`` 8.0 (``AWQMarlinConfig``) from
#:   0.4.10 (0.4.6 imports vLLM's class).
#: * ``mxfp4`` 8.0 (``Mxfp4Config``, gpt-oss) from 0.5.3.
#: * ``w8a8_fp8`` 8.9 (``W8A8Fp8Config``) in every wheel read.
#:
#: ModelOpt checkpoints are not tested for SGLang: SGLang maps ``hf_quant_config.json`` to ``modelopt_fp8``,
#: ``modelopt_fp4`` or ``modelopt_mixed`` by rules of its own that changed across the wheels
#: (``ModelConfig._parse_modelopt_quant_config``), and ``--quantization modelopt`` is resolved from the checkpoint.
SGLANG_QUANT_MIN_CC_STEPS: dict[str, tuple[tuple[str, tuple[int, int]], ...]] = {
    "awq": (("0.4.6", (7, 5)),),
    "awq_marlin": (("0.4.10", (8, 0)),),
    "gptq_marlin": (("0.4.6", (8, 0)),),
    "fp8": (("0.4.6", (8, 0)),),
    "mxfp4": (("0.5.3", (8, 0)),),
    "w8a8_fp8": (("0.4.6", (8, 9)),),
    "w8a8_int8": (("0.4.6", (7, 5)),),
}

#: The minimum tables by engine (``ServingConfig.engine``).
_STEPS_BY_ENGINE = {"vllm": QUANT_MIN_CC_STEPS, "sglang": SGLANG_QUANT_MIN_CC_STEPS}

#: Each listed vLLM method's lowest minimum over every release (:data:`QUANT_MIN_CC_STEPS`): the compute capability
#: below which every vLLM release that has the method refuses it. KV305 tests this one when the release is
#: unknown.
QUANT_MIN_CC: dict[str, tuple[int, int]] = {
    method: min(cc for _, cc in steps) for method, steps in QUANT_MIN_CC_STEPS.items()
}


def quant_min_cc(method: str, version: str | None, engine: str = "vllm") -> tuple[int, int] | None:
    """The compute capability release ``version`` of ``engine`` (``vllm``: :data:`QUANT_MIN_CC_STEPS`, ``sglang``:
    :data:`SGLANG_QUANT_MIN_CC_STEPS`) needs for quantization ``method`` (``get_min_capability() / 10``), or, when
    the release is unknown (:func:`kvlint.memory.versions.resolve_version` assumes one), the lowest any release
    needs; None for another engine, a method not listed or a release before the method's first step."""
    steps = _STEPS_BY_ENGINE.get(engine, {}).get(method)
    if steps is None:
        return None
    return _step_minimum(steps, *resolve_version(version))


def _step_minimum(
    steps: tuple[tuple[str, tuple[int, int]], ...], v: Version, assumed: bool
) -> tuple[int, int] | None:
    """The minimum of ``(release, minimum)`` ``steps`` (:data:`QUANT_MIN_CC_STEPS` semantics) in release ``v``: the
    lowest of all when the release is ``assumed`` (unknown), None before the first step's release."""
    if assumed:
        return min(cc for _, cc in steps)
    (first, found), *later = steps
    if v < ReleaseVersion(first):
        return None
    for after, cc in later:
        if v > ReleaseVersion(after):
            found = cc
    return found


def quant_min_cc_range(method: str, engine: str = "vllm") -> tuple[tuple[int, int], tuple[int, int]] | None:
    """``(lowest, highest)`` minimum compute capability of ``method`` over the releases of ``engine`` listed in
    :data:`QUANT_MIN_CC_STEPS` or :data:`SGLANG_QUANT_MIN_CC_STEPS`; None for a method not listed."""
    steps = _STEPS_BY_ENGINE.get(engine, {}).get(method)
    if steps is None:
        return None
    ccs = [cc for _, cc in steps]
    return min(ccs), max(ccs)


@dataclass(frozen=True)
class Refusal:
    """Why the engine does not start on an accelerator.

    Attributes:
        rule: the rule whose test says so (``KV301``, ``KV302``, ``KV304`` or ``KV305``).
        certain: True when the engine's source makes start-up fail; False when it most likely fails but
            nothing in the engine checks it (KV302 on ROCm GPUs without fp8 hardware: reported as a warning).
        reason: one short clause naming the cause and the GPU (``bfloat16 needs compute capability 8.0;
            Tesla T4 is 7.5``).
    """

    rule: str
    certain: bool
    reason: str


#: An argument the caller has not computed (None is one of the answers): ``quant_need`` of
#: :func:`quantization_refusal` and :func:`startup_refusal` (:func:`quantization_need`), ``build`` of
#: :func:`image_platform_mismatch` and :func:`platform_refusal` (:func:`kvlint.engines.images.accelerator_build`).
UNSET: object = object()


def image_platform_mismatch(
    serving: ServingConfig,
    acc: Accelerator,
    resource: str | None = None,
    *,
    platform: str | None = None,
    build: object = UNSET,
) -> str | None:
    """KV304's test: the container's platform (:func:`kvlint.engines.images.platform_of`) when it is a build for
    another vendor than ``acc``: a ROCm build on NVIDIA, or a CUDA build on a non-NVIDIA accelerator when the
    image is known to be one (an engine's own image, :func:`kvlint.engines.images.is_known_cuda_build`; a custom
    image such as a vendor's Gaudi build is no evidence), or a build for another accelerator (Ascend, TPU, Gaudi,
    Neuron, Intel GPU: :func:`kvlint.engines.images.accelerator_build`) on an NVIDIA or AMD GPU, named as that
    accelerator; None when they match or nothing says. The ROCm and accelerator builds counted are those
    :func:`kvlint.engines.images.build_is_evidenced` takes, as KV304 does with no GPU named
    (:func:`kvlint.engines.images.gpu_build_on_other_accelerator`): a vendor's published image or engine tag suffix,
    or vLLM's ``--device``; a platform word in a custom image's name (``openeuler/vllm-ascend``,
    ``nirmalsenthil/vllm-rocm``) is not (KV501's warning says the container is not sized). ``platform``:
    ``platform_of(serving, resource)`` when the caller has it (a fleet tests every GPU against one container);
    ``build``: ``accelerator_build(serving)``, likewise (it does not depend on the GPU)."""
    if platform is None:
        platform = platform_of(serving, resource)
    vendor = acc.vendor
    if vendor in ("nvidia", "amd"):
        if build is UNSET:
            build = accelerator_build(serving)
        if build is not None and build_is_evidenced(serving):
            assert isinstance(build, str)
            return build  # an Ascend, TPU, Gaudi, Neuron or Intel GPU build on an NVIDIA or AMD GPU
    if platform == "cuda" and vendor == "amd" and pypi_cuda_wheel(serving):
        return platform  # vLLM's CUDA wheel from PyPI, installed by the script on a plain image
    if platform == "cuda" and vendor != "nvidia" and is_known_cuda_build(serving.image):
        return platform
    if platform == "rocm" and vendor == "nvidia" and build_is_evidenced(serving):
        return platform
    return None


def bf16_refusal(serving: ServingConfig, model: ModelSpec | None, acc: Accelerator) -> str | None:
    """KV301's test (vLLM): ``explicit`` when ``--dtype bfloat16``/``bf16`` meets an NVIDIA GPU of compute
    capability below 8.0, ``auto`` when ``--dtype auto`` keeps a bfloat16 ``config.json`` dtype there (vLLM
    before 0.9.2); None otherwise (also when the compute capability or the model is unknown)."""
    if model is None or acc.vendor != "nvidia":
        return None
    cc = parse_cc(acc.compute_capability)
    if cc is None or cc >= (8, 0):
        return None
    dtype = str(serving.get("dtype", "auto")).lower()
    if dtype in ("bfloat16", "bf16"):
        return "explicit"
    config_dtype = (model.torch_dtype or "").lower()
    if (
        dtype == "auto"
        and config_dtype == "bfloat16"
        and parse_version(serving.version) < _AUTO_BF16_FALLBACK
    ):
        return "auto"
    return None


#: First vLLM release read to take a ModelOpt checkpoint's ``hf_quant_config.json`` as its quantization config
#: (vllm@0.10.1:vllm/transformers_utils/config.py::get_config; not in the 0.9.2 wheel, nor in 0.8.5): before it a
#: checkpoint without a ``quantization_config`` in config.json runs ``modelopt`` only with ``--quantization
#: modelopt``. It is also the first release read whose ModelOpt configs map a config.json ``quant_method:
#: modelopt`` to a method by its ``quant_algo`` (``override_quantization_method`` of ``ModelOptFp8Config`` and
#: ``ModelOptNvFp4Config`` in vllm/model_executor/layers/quantization/modelopt.py; absent in 0.9.2).
_HF_QUANT_CONFIG_READ = (0, 10, 1)

#: The last vLLM wheel read that refuses a ``hf_quant_config.json`` of ``quant_algo: MIXED_PRECISION`` ("Unknown
#: ModelOpt quant algo", ``ModelArchConfigConvertorBase``'s quant_method mapping in
#: vllm/transformers_utils/model_arch_config_convertor.py, 0.14.0 - 0.32.0; ``ModelConfig._parse_quant_hf_config``
#: before); 0.34.0 maps it to ``modelopt_mixed``.
_HF_QUANT_MIXED_UNREAD_UNTIL = "0.32.0"


def _modelopt_method(model: ModelSpec, version: str | None) -> str | None:
    """The vLLM method ``version`` builds ModelOpt checkpoint ``model`` with (``modelopt``, ``modelopt_fp4``,
    ``modelopt_mxfp8``, ``modelopt_mixed``), or None when that release does not read it as one, and, when the
    release is unknown, unless every release reads it the same way.

    From config.json (``quantization_config.quant_method`` present): a ``modelopt_*`` name as written; ``modelopt``
    with ``quant_algo`` FP8 in every release; from :data:`_HF_QUANT_CONFIG_READ` the overrides by ``quant_algo``
    (vllm@0.34.0:vllm/config/model.py::ModelConfig._verify_quantization, the ``override_quantization_method`` of
    each ModelOpt config: FP8 ``modelopt``, an algo naming FP4 ``modelopt_fp4``, MXFP8 ``modelopt_mxfp8``,
    MIXED_PRECISION ``modelopt_mixed``). From ``hf_quant_config.json`` (no ``quant_method``): only from
    :data:`_HF_QUANT_CONFIG_READ`, FP8 ``modelopt``, NVFP4 ``modelopt_fp4`` and, after
    :data:`_HF_QUANT_MIXED_UNREAD_UNTIL`, MIXED_PRECISION ``modelopt_mixed``
    (vllm@0.34.0:vllm/transformers_utils/model_arch_config_convertor.py; ``ModelConfig._parse_quant_hf_config`` in
    0.10.1 - 0.13.0). An MXFP8 or mixed-precision method older than its class is not tested
    (:func:`quant_min_cc` has no step for it)."""
    qc = model.quant_config
    if not isinstance(qc, dict):
        return None
    nested = qc.get("quantization")
    algo = str(qc.get("quant_algo") or (nested.get("quant_algo") if isinstance(nested, dict) else "") or "")
    algo = algo.upper()
    v, assumed = resolve_version(version)
    overrides = not assumed and v >= _HF_QUANT_CONFIG_READ
    written = qc.get("quant_method")
    if written is not None:  # config.json's quantization_config
        written = str(written).lower()
        if written != "modelopt":
            return written if written.startswith("modelopt") else None
        if algo == "FP8":
            return "modelopt"
        if not overrides:
            return None
        if "FP4" in algo:
            return "modelopt_fp4"
        if "MXFP8" in algo:
            return "modelopt_mxfp8"
        return "modelopt_mixed" if algo == "MIXED_PRECISION" else None
    if not overrides:
        return None
    if algo == "FP8":
        return "modelopt"
    if algo == "NVFP4":
        return "modelopt_fp4"
    if algo == "MIXED_PRECISION" and v > ReleaseVersion(_HF_QUANT_MIXED_UNREAD_UNTIL):
        return "modelopt_mixed"
    return None


def _modelopt_flag_override(flag: str, model: ModelSpec | None, version: str | None) -> str | None:
    """The method vLLM ``version`` tests when ``--quantization`` names a ModelOpt method (``flag``) and the
    checkpoint ``model`` is a ModelOpt export; None when that depends on a release kvlint does not know.

    From :data:`_HF_QUANT_CONFIG_READ` ``ModelConfig._verify_quantization`` asks each ModelOpt config's
    ``override_quantization_method(quant_cfg, user_quant)``, which answers by the checkpoint's ``quant_algo``
    alone and ignores the user's method, and sets ``self.quantization`` to that answer
    (vllm@0.34.0:vllm/config/model.py and vllm/model_executor/layers/quantization/modelopt.py; same in the 0.10.1,
    0.13.0 and 0.20.0 wheels): ``--quantization modelopt`` on an NVFP4 export is tested as ``modelopt_fp4``
    (:func:`_modelopt_method`). Before 0.10.1, or when no override matches, the flag is the method tested. When
    the release is unknown and a release from 0.10.1 would test another method than the flag, None (no release
    is known to refuse)."""
    if model is None or not str(model.quant_method or "").lower().startswith("modelopt"):
        return flag
    v, assumed = resolve_version(version)
    if assumed:
        newest = _modelopt_method(model, NEWEST_VLLM)
        return flag if newest in (None, flag) else None
    if v < _HF_QUANT_CONFIG_READ:
        return flag
    return _modelopt_method(model, version) or flag


#: vLLM's compressed-tensors schemes (the linear-layer scheme of a ``config_groups`` entry) and the compute
#: capability each release needs for it, as :data:`QUANT_MIN_CC_STEPS` (same step semantics). Besides the config's
#: own minimum (``CompressedTensorsConfig`` 7.0), vLLM tests each layer's scheme when it builds the model
#: (``CompressedTensorsConfig.get_scheme``: ``_check_scheme_supported(scheme.get_min_capability())`` raises
#: "Quantization scheme is not supported for the current GPU. Min capability: {n}. Current capability: {cc}.",
#: vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py, every wheel read from
#: 0.6.3.post1 to 0.34.0). Read there, scheme by scheme (``_get_scheme_from_parts``):
#:
#: * ``fp8``: FP8 weights, with FP8 activations (W8A8) or none (W8A16). W8A8 falls back to weight-only FP8 Marlin
#:   (``CompressedTensorsW8A16Fp8``) below 8.9 (``CompressedTensorsW8A8Fp8`` 89), so the floor is W8A16's: 8.0
#:   in 0.6.3.post1 - 0.14.0, 7.5 from 0.16.0.
#: * ``w8a8-int8``: int8 weights and int8 activations (``CompressedTensorsW8A8Int8``; ``CompressedTensorsWNA8Int``
#:   from 0.26.0): 7.5 in every wheel read.
#: * ``w4a16``: int4 weights, no activation quantization, per channel or group (``CompressedTensorsWNA16``, the
#:   Marlin kernels): 8.0 in 0.6.3.post1 - 0.11.0, 7.5 from 0.12.0.
#: * ``nvfp4``: NVFP4 weights (float, 4 bits, tensor_group of 16), with NVFP4 activations or none:
#:   ``CompressedTensorsW4A4Fp4`` needs 10.0 in 0.9.2 - 0.14.0 unless emulated, below which vLLM runs
#:   ``CompressedTensorsW4A16Fp4`` (8.0); from 0.16.0 both need 7.5.
#:
#: A config group of another kind (int8 weights without activations, asymmetric or dynamic weights, MXFP4,
#: W4A8 ...) is not tested, nor one that reaches no Linear layer (:func:`_ct_group_reaches_linear`: routed experts
#: only, whose MoE method makes no capability test); a model's floor is the highest of its tested groups (every
#: layer is built).
CT_SCHEME_MIN_CC_STEPS: dict[str, tuple[tuple[str, tuple[int, int]], ...]] = {
    "fp8": (("0.6.3", (8, 0)), ("0.14.0", (7, 5))),
    "w8a8-int8": (("0.6.3", (7, 5)),),
    "w4a16": (("0.6.3", (8, 0)), ("0.11.0", (7, 5))),
    "nvfp4": (("0.9.2", (8, 0)), ("0.14.0", (7, 5))),
}


def _ct_group_scheme(group: dict) -> str | None:
    """The :data:`CT_SCHEME_MIN_CC_STEPS` scheme of one compressed-tensors config group, or None."""
    w, a = group.get("weights"), group.get("input_activations")
    if not isinstance(w, dict) or (a is not None and not isinstance(a, dict)):
        return None
    wtype, bits = str(w.get("type") or "int").lower(), w.get("num_bits")
    atype, abits = (str(a.get("type") or "int").lower(), a.get("num_bits")) if a else (None, None)
    if wtype == "float" and bits == 4:
        nvfp4 = str(w.get("strategy") or "").lower() == "tensor_group" and w.get("group_size") == 16
        return "nvfp4" if nvfp4 and (a is None or (atype == "float" and abits == 4)) else None
    if wtype == "float" and bits == 8:
        return "fp8" if a is None or (atype == "float" and abits == 8) else None
    if wtype == "int" and bits == 8 and atype == "int" and abits == 8:
        return "w8a8-int8"
    channel_group = str(w.get("strategy") or "").lower() in ("channel", "group")
    static_symmetric = not w.get("dynamic") and w.get("symmetric", True) is not False
    if wtype == "int" and bits == 4 and a is None and channel_group and static_symmetric:
        return "w4a16"
    return None


#: Linear layers kvlint looks for in a compressed-tensors config group's reach (:func:`_ct_group_reaches_linear`),
#: by kind: the attention (Llama/Qwen and DeepSeek MLA layouts), dense-MLP and shared-expert projections, as vLLM
#: names them before fusing.
_CT_PROBE_LINEAR: dict[str, tuple[str, ...]] = {
    kind: tuple(f"model.layers.1.{name}" for name in names)
    for kind, names in {
        "attention": (
            "self_attn.q_proj",
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.o_proj",
            "self_attn.q_a_proj",
            "self_attn.q_b_proj",
            "self_attn.kv_a_proj_with_mqa",
            "self_attn.kv_b_proj",
        ),
        "dense MLP": ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"),
        "shared experts": (
            "mlp.shared_experts.gate_proj",
            "mlp.shared_experts.down_proj",
            "mlp.shared_expert.gate_proj",
            "mlp.shared_expert.down_proj",
        ),
    }.items()
}


def _ct_classes_ignored(ignore: list) -> bool:
    """Whether a compressed-tensors ``ignore`` list covers every kind of :data:`_CT_PROBE_LINEAR` (a kind counts
    as ignored when the list covers any of its names, the names of the other layouts maybe not existing in the
    model), matched as vLLM matches them (:func:`kvlint.models.weights.ct_ignore_matcher`: equal, or a ``re:``
    regex matching from the name's start; the regexes bounded, as the list comes from a config.json)."""
    from kvlint.models.weights import ct_ignore_matcher

    names = [n for kind in _CT_PROBE_LINEAR.values() for n in kind]
    matches = ct_ignore_matcher([str(i) for i in ignore], len(names), max(len(n) for n in names))
    return all(any(matches(n) for n in kind) for kind in _CT_PROBE_LINEAR.values())


def _ct_group_reaches_linear(group: dict, classes_ignored: bool) -> bool:
    """Whether a compressed-tensors config group quantizes a Linear layer, the only layers whose scheme vLLM tests
    (``CompressedTensorsConfig.get_quant_method``: an ignored ``LinearBase`` gets ``UnquantizedLinearMethod``, the
    others ``get_scheme`` and its capability test; a ``FusedMoE`` layer gets
    ``CompressedTensorsMoEMethod.get_moe_method``, which makes none, vllm@0.11.0 and 0.34.0). No when its targets
    are only routed experts (a target naming ``experts``), or a module class (``Linear``) whose every layer of
    :data:`_CT_PROBE_LINEAR` the ``ignore`` list covers (``classes_ignored``, :func:`_ct_classes_ignored`, read once
    per config; moonshotai/Kimi-K2.5: int4 routed experts, attention, dense MLPs and shared experts ignored).
    Another layer-name target is taken to reach a Linear layer."""
    targets = group.get("targets")
    if not isinstance(targets, list) or not targets:
        return True
    for target in targets:
        target = target if isinstance(target, str) else ""
        # a module class name (Linear): every layer of that class
        if not target.startswith("re:") and "." not in target:
            if not classes_ignored:
                return True
        elif "expert" not in target or "shared_expert" in target:
            return True
    return False


def compressed_tensors_scheme(
    model: ModelSpec | None, version: str | None
) -> tuple[str, tuple[int, int]] | None:
    """``(scheme, minimum)`` for a compressed-tensors checkpoint in vLLM ``version``: the config group of the
    highest minimum among those :data:`CT_SCHEME_MIN_CC_STEPS` lists (when the release is unknown, each scheme's
    lowest over the releases); None when no group is one of them or the model's ``quantization_config`` does not
    say ``quant_method: compressed-tensors``."""
    qc = model.quant_config if model is not None else None
    # a quant_method written out: kvlint also takes a config with config_groups and none for compressed-tensors,
    # where vLLM may read it otherwise (a ModelOpt export with producer modelopt and config_groups)
    if not isinstance(qc, dict) or str(qc.get("quant_method") or "").lower() != "compressed-tensors":
        return None
    groups = qc.get("config_groups")
    if not isinstance(groups, dict):
        return None
    v, assumed = resolve_version(version)
    ignore = qc.get("ignore")
    classes_ignored = _ct_classes_ignored(ignore if isinstance(ignore, list) else [])
    found: tuple[str, tuple[int, int]] | None = None
    for group in groups.values():
        reaches = isinstance(group, dict) and _ct_group_reaches_linear(group, classes_ignored)
        scheme = _ct_group_scheme(group) if reaches else None
        steps = CT_SCHEME_MIN_CC_STEPS.get(scheme or "")
        if scheme is None or steps is None:
            continue
        need = _step_minimum(steps, v, assumed)
        if need is not None and (found is None or need > found[1]):
            found = (scheme, need)
    return found


def quantization_need(
    serving: ServingConfig, model: ModelSpec | None
) -> tuple[str, str, tuple[int, int]] | None:
    """The GPU-independent part of KV305's test (:func:`quantization_refusal`): ``(method, source, minimum)``, the
    quantization method the engine builds its configuration with and the compute capability its kernels need in
    the release ``serving`` runs (or in every release when it is unknown); None when there is no method or no
    minimum for it. It reads only ``serving`` and ``model``, so a caller testing one container on several GPUs
    (:func:`kvlint.memory.stage.plan_fleet`) computes it once and passes it to :func:`startup_refusal`
    (``quant_need``).

    The method is ``--quantization`` (``source`` ``"flag"``; a ModelOpt name on a ModelOpt export as vLLM's
    override reads it, :func:`_modelopt_flag_override`) when given, else the checkpoint's
    ``quantization_config.quant_method`` (``source`` ``"checkpoint"``), as
    ``vllm/config/model.py::ModelConfig._verify_quantization`` takes it; a checkpoint's ``awq`` is tested as
    ``awq``, the method vLLM keeps on a GPU without Marlin support (its Marlin and Auto variants never need
    more); a ModelOpt checkpoint as the method the release reads it as (:func:`_modelopt_method`: ``modelopt``,
    ``modelopt_fp4``, ``modelopt_mxfp8`` or ``modelopt_mixed`` by its ``quant_algo``), untested when it reads it as
    none; a compressed-tensors checkpoint (vLLM) with the higher of the config's minimum and its layers' scheme's
    (:func:`compressed_tensors_scheme`)."""
    flag = serving.get("quantization")
    if isinstance(flag, str) and flag.strip():
        method, source = flag.strip().lower(), "flag"
    elif model is not None and model.quant_method:
        method, source = model.quant_method.lower(), "checkpoint"
    else:
        return None
    if source == "checkpoint" and method.startswith("modelopt"):
        assert model is not None
        found = _modelopt_method(model, serving.version) if serving.engine == "vllm" else None
        if found is None:
            return None
        method = found
    elif source == "flag" and method.startswith("modelopt") and serving.engine == "vllm":
        overridden = _modelopt_flag_override(method, model, serving.version)
        if overridden is None:
            return None
        method = overridden
    minimum = quant_min_cc(method, serving.version, serving.engine)
    if method == "compressed-tensors" and serving.engine == "vllm":
        scheme = compressed_tensors_scheme(model, serving.version)
        if scheme is not None and (minimum is None or scheme[1] > minimum):
            minimum = scheme[1]
    if minimum is None:
        return None
    return method, source, minimum


def quantization_refusal(
    serving: ServingConfig,
    model: ModelSpec | None,
    acc: Accelerator,
    *,
    quant_need: object = UNSET,
) -> tuple[str, str, tuple[int, int]] | None:
    """KV305's test (vLLM, SGLang): ``(method, source, minimum)`` when the quantization method the engine builds its
    configuration with needs a higher compute capability than the NVIDIA GPU ``acc`` has in the release
    ``serving`` runs, or in every release when it is unknown (:func:`quant_min_cc`; vLLM
    :data:`QUANT_MIN_CC_STEPS`, SGLang :data:`SGLANG_QUANT_MIN_CC_STEPS`); None otherwise, also when the GPU is
    not NVIDIA or its compute capability unknown. The method and its minimum are :func:`quantization_need`'s
    (``quant_need``: its answer for ``serving`` and ``model`` when the caller has it); here only the GPU's compute
    capability is compared with them."""
    if acc.vendor != "nvidia":
        return None
    cc = parse_cc(acc.compute_capability)
    if cc is None:
        return None
    need = quantization_need(serving, model) if quant_need is UNSET else quant_need
    if need is None:
        return None
    assert isinstance(need, tuple)
    if cc >= need[2]:
        return None
    return need


def fp8_kv_support_on(
    serving: ServingConfig,
    model: ModelSpec | None,
    acc: Accelerator,
    kv_cache_dtype: str,
    dtype: str = "bfloat16",
) -> Fp8KvSupport:
    """KV302's test (vLLM): :func:`kvlint.memory.fp8kv.fp8_kv_support` for this engine configuration with
    ``kv_cache_dtype`` on ``acc``; ``dtype`` is the model dtype the plan resolved (FlashInfer takes fp16/bf16
    only). The release, ``VLLM_USE_V1``, the forced attention backend (``VLLM_ATTENTION_BACKEND``,
    ``--attention-backend``) and ``VLLM_MLA_DISABLE`` come from ``serving``."""
    v, _ = resolve_version(serving.version)
    return fp8_kv_support(
        v,
        kv_cache_dtype,
        vendor=acc.vendor,
        cc=parse_cc(acc.compute_capability),
        gpu_has_fp8=acc.fp8,
        is_mla=bool(model is not None and model.is_mla),
        head_size=model.head_size if model is not None else None,
        dtype=dtype,
        architectures=tuple(model.architectures) if model is not None else (),
        use_v1_env=truthy(serving.env.get("VLLM_USE_V1")),
        backend=forced_backend(
            v, serving.env.get("VLLM_ATTENTION_BACKEND"), serving.get("attention_backend")
        ),
        mla_disabled=bool(truthy(serving.env.get("VLLM_MLA_DISABLE"))),
    )


@functools.lru_cache(maxsize=64)
def _applies(rule: str, engine: str) -> bool:
    """Whether ``rule``'s catalogue entry declares ``engine`` (``engines:`` in ``rules/KVnnn.yaml``). Memoised: the
    catalogue is read once per process (:func:`kvlint.rules.catalog.load_catalog`), and a fleet asks for each of
    its GPUs."""
    from kvlint.rules.catalog import get_rule

    engines = get_rule(rule).engines
    return "any" in engines or engine in engines


def rule_applies(rule: str, engine: str) -> bool:
    """Whether ``rule``'s catalogue entry declares ``engine``, as :func:`startup_refusal` tests it before each of
    its tests (memoised)."""
    return _applies(rule, engine)


def build_target_mismatch(serving: ServingConfig, acc: Accelerator) -> str | None:
    """KV304's test of an image built for one AMD architecture (:func:`kvlint.engines.images.rocm_build_target`,
    SGLang's ``-mi30x``/``-mi35x``/``-mi45x`` tags) on an AMD GPU of another one (the catalogue's ``llvm_target``):
    one clause saying so, else None (another vendor's GPU is :func:`image_platform_mismatch`'s; an AMD GPU whose
    target the catalogue does not record is not judged). sgl-project/sglang ``docker/rocm.Dockerfile`` (at
    004ae46f) compiles sgl-kernel (``AMDGPU_TARGET=$GPU_ARCH_LIST``) and AITER's prebuilt kernels
    (``GPU_ARCHS=$GPU_ARCH_LIST``) for the ``GPU_ARCH`` of that tag alone: they hold no code for another
    architecture."""
    if acc.vendor != "amd":
        return None
    built = rocm_build_target(serving.image)
    if built is None:
        return None
    from kvlint.accelerators.registry import llvm_target

    target = llvm_target(acc.id)
    if target is None or target == built[0]:
        return None
    return f"the {built[1]} image's sgl-kernel and AITER are compiled for {built[0]} alone; {acc.name} is {target}"


def platform_refusal(
    serving: ServingConfig, acc: Accelerator, *, platform: str | None = None, build: object = UNSET
) -> Refusal | None:
    """KV304's part of :func:`startup_refusal`: the image is a build for another vendor than ``acc``
    (``platform``: ``platform_of(serving)``, ``build``: ``accelerator_build(serving)``, when the caller has them;
    see :func:`image_platform_mismatch`), or for another AMD architecture (:func:`build_target_mismatch`)."""
    if not _applies("KV304", serving.engine):
        return None
    platform = image_platform_mismatch(serving, acc, platform=platform, build=build)
    if platform is not None:
        return Refusal(
            "KV304",
            True,
            f"image is {with_article(platform_name(platform))} build of {serving.engine}; {acc.name} is "
            f"{with_article(vendor_name(acc.vendor))} accelerator",
        )
    other_target = build_target_mismatch(serving, acc)
    if other_target is not None:
        return Refusal("KV304", True, other_target)
    return None


def startup_refusal(
    serving: ServingConfig,
    model: ModelSpec | None,
    acc: Accelerator,
    *,
    kv_cache_dtype: str | None = None,
    dtype: str | None = None,
    has_pod: bool = True,
    quant_need: object = UNSET,
) -> Refusal | None:
    """Whether ``serving`` (with ``model``) refuses to start on ``acc``, by the tests of KV304, KV305, KV301 and
    KV302 in that order (KV305's test runs when vLLM builds its configuration, before the GPU worker's dtype
    test of KV301); None when none of them says so.

    Args:
        serving: the parsed engine configuration (image, flags, env, version).
        model: the resolved model, or None (then only KV304 can apply).
        acc: the accelerator to test.
        kv_cache_dtype: the KV-cache dtype to test instead of the configured one (``--compare`` rows).
        dtype: the model dtype the memory plan resolved (default: bfloat16, as KV302 assumes without a plan).
        has_pod: False for an engine command line (``kvlint plan``): there is no container image, and KV304
            (``consumes: [pod, ...]``) does not apply. (:func:`kvlint.memory.stage.plan_fleet` passes False too:
            it tested KV304, :func:`platform_refusal`, before planning.)
        quant_need: :func:`quantization_need` for ``serving`` and ``model``, when the caller computed it once for
            several accelerators (:func:`kvlint.memory.stage.plan_fleet`); otherwise computed here.
    """
    refusal = platform_refusal(serving, acc) if has_pod else None
    if refusal is not None:
        return refusal
    if _applies("KV305", serving.engine):
        quant = quantization_refusal(serving, model, acc, quant_need=quant_need)
        if quant is not None:
            method, _source, minimum = quant
            return Refusal(
                "KV305",
                True,
                f"quantization {method} needs compute capability {minimum[0]}.{minimum[1]}; {acc.name} is "
                f"{acc.compute_capability}",
            )
    if _applies("KV301", serving.engine):
        how = bf16_refusal(serving, model, acc)
        if how is not None:
            reason = f"bfloat16 needs compute capability 8.0; {acc.name} is {acc.compute_capability}"
            if how == "auto":
                reason += (
                    f" (--dtype auto keeps the config's bfloat16 in vLLM {release_shown(serving.version)}; "
                    f"float16 fallback from {fmt_version(_AUTO_BF16_FALLBACK)})"
                )
            return Refusal("KV301", True, reason)
    kvd = str(kv_cache_dtype or serving.get("kv_cache_dtype") or "auto").lower()
    if kvd.startswith("fp8") and _applies("KV302", serving.engine):
        sup = fp8_kv_support_on(serving, model, acc, kvd, dtype or "bfloat16")
        if sup.outcome in ("raises", "likely_raises"):
            cc = f", compute capability {acc.compute_capability}" if acc.compute_capability else ""
            return Refusal(
                "KV302",
                sup.outcome == "raises",
                f"--kv-cache-dtype {kvd} on {acc.name}{cc}: {sup.why}",
            )
    return None
