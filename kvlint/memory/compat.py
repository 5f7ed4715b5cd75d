"""Does the engine start at all on this accelerator? The compatibility tests of rules KV301, KV302 and KV304.

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
* :func:`startup_refusal` -- the three together for one engine configuration, as a :class:`Refusal` with a
  short reason (``bfloat16 needs compute capability 8.0; Tesla T4 is 7.5``). Each test applies to the
  engines its catalogue entry declares (``engines:`` in ``rules/KV301.yaml`` etc.).

Pure functions of the parsed engine settings, the model and the accelerator; nothing here reads a PodSpec.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kvlint.engines.images import is_known_cuda_build, platform_of
from kvlint.memory.fp8kv import Fp8KvSupport, forced_backend, fp8_kv_support
from kvlint.memory.versions import fmt_version, parse_version, release_shown, resolve_version
from kvlint.types import Accelerator, ModelSpec, ServingConfig
from kvlint.values import parse_cc, truthy
from kvlint.wording import platform_name, vendor_name, with_article

__all__ = [
    "Refusal",
    "bf16_refusal",
    "fp8_kv_support_on",
    "image_platform_mismatch",
    "platform_refusal",
    "startup_refusal",
]

#: vLLM keeps a bf16 config's dtype under ``--dtype auto`` before this release (then falls back to float16).
_AUTO_BF16_FALLBACK = (0, 9, 2)


@dataclass(frozen=True)
class Refusal:
    """Why the engine does not start on an accelerator.

    Attributes:
        rule: the rule whose test says so (``KV301``, ``KV302`` or ``KV304``).
        certain: True when the engine's source makes start-up fail; False when it most likely fails but
            nothing in the engine checks it (KV302 on ROCm GPUs without fp8 hardware: reported as a warning).
        reason: one short clause naming the cause and the GPU (``bfloat16 needs compute capability 8.0;
            Tesla T4 is 7.5``).
    """

    rule: str
    certain: bool
    reason: str


def image_platform_mismatch(
    serving: ServingConfig, acc: Accelerator, resource: str | None = None, *, platform: str | None = None
) -> str | None:
    """KV304's test: the container's platform (:func:`kvlint.engines.images.platform_of`) when it is a build for
    another vendor than ``acc``: a ROCm build on NVIDIA, or a CUDA build on a non-NVIDIA accelerator when the
    image is known to be one (an engine's own image, :func:`kvlint.engines.images.is_known_cuda_build`; a custom
    image such as a vendor's Gaudi build is no evidence); None when they match or nothing says. ``platform``:
    ``platform_of(serving, resource)`` when the caller has it (a fleet tests every GPU against one container)."""
    if platform is None:
        platform = platform_of(serving, resource)
    vendor = acc.vendor
    if platform == "cuda" and vendor != "nvidia" and is_known_cuda_build(serving.image):
        return platform
    if platform == "rocm" and vendor == "nvidia":
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


def platform_refusal(
    serving: ServingConfig, acc: Accelerator, *, platform: str | None = None
) -> Refusal | None:
    """KV304's part of :func:`startup_refusal`: the image is a build for another vendor than ``acc``
    (``platform``: ``platform_of(serving)``, when the caller has it; see :func:`image_platform_mismatch`)."""
    platform = image_platform_mismatch(serving, acc, platform=platform)
    if platform is not None and _applies("KV304", serving.engine):
        return Refusal(
            "KV304",
            True,
            f"image is {with_article(platform_name(platform))} build of {serving.engine}; {acc.name} is "
            f"{with_article(vendor_name(acc.vendor))} accelerator",
        )
    return None


def startup_refusal(
    serving: ServingConfig,
    model: ModelSpec | None,
    acc: Accelerator,
    *,
    kv_cache_dtype: str | None = None,
    dtype: str | None = None,
    has_pod: bool = True,
) -> Refusal | None:
    """Whether ``serving`` (with ``model``) refuses to start on ``acc``, by the tests of KV304, KV301 and
    KV302 in that order; None when none of them says so.

    Args:
        serving: the parsed engine configuration (image, flags, env, version).
        model: the resolved model, or None (then only KV304 can apply).
        acc: the accelerator to test.
        kv_cache_dtype: the KV-cache dtype to test instead of the configured one (``--compare`` rows).
        dtype: the model dtype the memory plan resolved (default: bfloat16, as KV302 assumes without a plan).
        has_pod: False for an engine command line (``kvlint plan``): there is no container image, and KV304
            (``consumes: [pod, ...]``) does not apply. (:func:`kvlint.memory.stage.plan_fleet` passes False too:
            it tested KV304, :func:`platform_refusal`, before planning.)
    """
    refusal = platform_refusal(serving, acc) if has_pod else None
    if refusal is not None:
        return refusal
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
