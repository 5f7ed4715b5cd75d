"""Resolution family (KV501-KV503): what kvlint could not determine, and so did not check.

These findings keep "not sized" visible: a serving container whose GPU (KV501), model config (KV502) or
engine command (KV503) is unknown gets one of them, naming what is missing and how to supply it. The engine
parsers also report KV503 for commands they cannot read; the runner passes those on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kvlint.accelerators.site import NO_SITE, default_fleet
from kvlint.engines.images import (
    Unsized,
    accelerator_build,
    engine_of_image,
    gpu_build_on_other_accelerator,
    gpu_vendor_of_resource,
    image_placeholder,
    image_platform,
    path_placeholder,
    platform_evidence,
    rocm_build_target,
    rocm_family_target,
)
from kvlint.engines.layout import MEMORY_FRACTION
from kvlint.gpu_resources import AMD_GPU, NVIDIA_GPU, amd_partition_of
from kvlint.memory import sglang_mamba
from kvlint.memory.compat import image_platform_mismatch
from kvlint.memory.pooling import encoder_only_clause
from kvlint.memory.refusal import PlanRefusal
from kvlint.memory.sglang import PP_PARTITION_REFUSED
from kvlint.memory.vllm import PP_EXCEEDS_LAYERS, model_facts
from kvlint.memory.vllm import PP_PARTITION_REFUSED as VLLM_PP_PARTITION_REFUSED
from kvlint.models.config import encoder_decoder_support, vllm_removed_architecture
from kvlint.models.resolve import ANNOTATE_HINT, UNMODELLED_HUB_IDS, typed_model_remedies
from kvlint.numbers import times
from kvlint.rules.context import RuleContext
from kvlint.rules.facts import is_runtime_template, runtime_names_model, unsized_before_model
from kvlint.rules.families.parallelism import idle_gpus, pod_gpus_needed
from kvlint.rules.registry import check
from kvlint.source import Loc, loc_of
from kvlint.template_params import unresolved_parameters
from kvlint.types import TYPED_COMMAND, ContainerResult, Diagnostic, Mark, ModelSpec, ServingConfig
from kvlint.values import as_float, as_int
from kvlint.wording import count, platform_name, with_article
from kvlint.workloads.base import MODEL_ANNOTATION
from kvlint.workloads.hardwareprofile import PROFILE_FIX, profile_clause

#: How KV501 names a non-GPU platform (else its word in capitals: TPU, GAUDI, XPU).


@dataclass(frozen=True)
class _Refused:
    """How KV502 reports a plan the engine refuses to start (:class:`~kvlint.memory.refusal.PlanRefusal`): the
    finding reads ``<model> on <engine>: <the refusal>``, placed at the value of the variable ``env``
    (:func:`_env_value_loc`), else at the first of ``flags`` written, else (``at_command``) at the engine command;
    ``fix`` is formatted with ``layers`` (the model's decoder layers), or is called with the container's serving
    config and the model."""

    engine: str
    fix: str | Callable[[ServingConfig, ModelSpec], str]
    env: str = ""
    flags: tuple[str, ...] = ()
    at_command: bool = True


def _v2_runner_env_fix(s: ServingConfig, model: ModelSpec) -> str:
    """KV502's fix for a VLLM_USE_V2_MODEL_RUNNER vLLM refuses: 0.34.0 and later run only the V2 runner."""
    from kvlint.memory.versions import resolve_version

    if resolve_version(s.version)[0] >= (0, 34, 0):
        return (
            "unset VLLM_USE_V2_MODEL_RUNNER (0.34.0 and later run only the V2 model runner), or use a vLLM "
            "release before 0.34.0 to keep the V1 runner"
        )
    return "set VLLM_USE_V2_MODEL_RUNNER to 0 (the V1 model runner) or 1 (the V2 runner), or unset it to let vLLM pick"


def _one_runner_fix(s: ServingConfig, model: ModelSpec) -> str:
    """KV502's fix for what 0.34.0's one model runner refuses: dual batch overlap beside a feature it cannot run
    with, pipeline parallelism under the ``external_launcher`` backend (:func:`kvlint.memory.vllm_runner.
    runner_unsupported`), or both."""
    fixes = []
    if str(s.get("distributed_executor_backend") or "") == "external_launcher":
        fixes.append("run pipeline parallelism with another --distributed-executor-backend (mp or ray)")
    if s.get("enable_dbo") or (as_int(s.get("ubatch_size")) or 1) > 1:
        fixes.append("drop --enable-dbo (and --ubatch-size), or the feature it cannot run beside")
    return "; ".join(fixes) or "drop the feature the model runner names"


def _mtp_count_fix(s: ServingConfig, model: ModelSpec) -> str:
    """KV502's fix for an MTP count vLLM refuses for the model's MTP layers."""
    n = model_facts(model).mtp_config_layers
    return f"set num_speculative_tokens to at most {n} or to a multiple of {n} (the model's MTP layers)"


_SGLANG_PP = ("pp_size",)
_RATIO = sglang_mamba.DEFAULT_FULL_MEMORY_RATIO

#: KV502 for each refusal of a plan the engine does not start with (VLLM_PP_EXCEEDS_LAYERS, which names KAITO's
#: estimate when KAITO chose the stages, is reported on its own)
_REFUSED = {
    # a hybrid model's state pool sized from a ratio SGLang cannot size it with (kvlint.memory.sglang_mamba)
    PlanRefusal.SGLANG_MAMBA_RATIO: _Refused(
        "SGLang",
        f"set --mamba-full-memory-ratio to a positive number, or drop it for SGLang's default {_RATIO:g} "
        f"(state : KV = {_RATIO:g} : 1)",
        flags=("mamba_full_memory_ratio",),
        at_command=False,
    ),
    # an ATTENTION the shards assert against (kvlint.memory.tgi.resolve_attention)
    PlanRefusal.TGI_ATTENTION: _Refused(
        "TGI",
        "set ATTENTION to one of the values TGI names, spelled as it spells them, or unset it for the launcher's "
        "choice",
        env="ATTENTION",
    ),
    # a pipeline SGLang cannot build or refuses (kvlint.memory.sglang.pp_stage_layers, sglang_prelude): it stops
    # while loading
    PlanRefusal.SGLANG_PP_PARTITION: _Refused(
        "SGLang",
        f"give {PP_PARTITION_REFUSED} one non-negative layer count per pipeline stage summing to the model's "
        "{layers} layers, or unset it for SGLang's even split",
        flags=_SGLANG_PP,
    ),
    PlanRefusal.SGLANG_PP_EXCEEDS_LAYERS: _Refused(
        "SGLang",
        "set --pp-size to at most {layers} (the model's layers) and spread the GPUs with --tp-size",
        flags=_SGLANG_PP,
    ),
    PlanRefusal.SGLANG_PP_MLA: _Refused(
        "SGLang",
        "serve the MLA model with --pp-size 1 (spread the GPUs with --tp-size), or use SGLang 0.5.5 or later",
        flags=_SGLANG_PP,
    ),
    # 0.5.3 - 0.5.20 assert speculative_algorithm is None with pp > 1; 0.5.21 accepts EAGLE
    # (kvlint.memory.sglang.PP_SPEC_REFUSED)
    PlanRefusal.SGLANG_PP_SPECULATIVE: _Refused(
        "SGLang",
        "drop --speculative-algorithm, or serve with --pp-size 1 (spread the GPUs with --tp-size); SGLang 0.5.21 "
        "and later accept EAGLE with pipeline parallelism on a PD prefill node or with SGLANG_ENABLE_PP_SPEC",
        flags=_SGLANG_PP,
    ),
    # 0.5.21 and later: check_pipeline_parallel_compat (kvlint.memory.sglang.pp_spec_refusal); the message says which
    # condition failed
    PlanRefusal.SGLANG_PP_SPECULATIVE_SETUP: _Refused(
        "SGLang",
        "drop --speculative-algorithm, or serve with --pp-size 1 (spread the GPUs with --tp-size); with pipeline "
        "parallelism SGLang accepts EAGLE (not multi-layer) on a PD prefill node or with SGLANG_ENABLE_PP_SPEC set "
        "(then without --disaggregation-mode, --speculative-adaptive or DP attention), and DSPARK on a PD prefill "
        "node",
        flags=_SGLANG_PP,
    ),
    # the same assert refuses mixed chunked prefill up to 0.5.10 (kvlint.memory.sglang.PP_MIXED_CHUNK_REFUSED_UNTIL)
    PlanRefusal.SGLANG_PP_MIXED_CHUNK: _Refused(
        "SGLang",
        "drop --enable-mixed-chunk, or serve with --pp-size 1 (spread the GPUs with --tp-size); SGLang 0.5.11 and "
        "later accept it with pipeline parallelism",
        flags=_SGLANG_PP,
    ),
    # a pooling model forced onto V1 before V1 ran pooling models (kvlint.memory.vllm.v1_pooling_refused)
    PlanRefusal.VLLM_V1_POOLING: _Refused(
        "vLLM",
        "unset VLLM_USE_V1 (vLLM then falls back to V0 for a pooling model), or use vLLM 0.9.2 or later, whose V1 "
        "engine runs pooling models",
        env="VLLM_USE_V1",
    ),
    # VLLM_USE_V2_MODEL_RUNNER other than 1 on a release without the V1 runner, or not an integer before
    # (kvlint.memory.vllm_runner.v2_env_refused)
    PlanRefusal.VLLM_V2_RUNNER_ENV: _Refused("vLLM", _v2_runner_env_fix, env="VLLM_USE_V2_MODEL_RUNNER"),
    # VLLM_USE_V2_MODEL_RUNNER on with a feature the V2 runner does not run (kvlint.memory.vllm_runner.v2_unsupported)
    PlanRefusal.VLLM_V2_RUNNER_UNSUPPORTED: _Refused(
        "vLLM",
        "unset VLLM_USE_V2_MODEL_RUNNER or set it to 0 (vLLM then runs the V1 model runner, which supports the "
        "feature), or drop the feature",
        env="VLLM_USE_V2_MODEL_RUNNER",
    ),
    # dual batch overlap beside what 0.34.0's one model runner cannot combine it with, or pipeline parallelism
    # under external_launcher (kvlint.memory.vllm_runner.runner_unsupported)
    PlanRefusal.VLLM_DBO_UNSUPPORTED: _Refused(
        "vLLM", _one_runner_fix, flags=("enable_dbo", "ubatch_size", "distributed_executor_backend")
    ),
    # an MTP count vLLM refuses for this model's MTP layers (kvlint.memory.vllm.mtp_count_refusal)
    PlanRefusal.VLLM_MTP_COUNT: _Refused("vLLM", _mtp_count_fix, flags=("speculative_config",)),
    # a VLLM_PP_LAYER_PARTITION vLLM refuses (kvlint.memory.vllm.pp_partition_refused): it stops while loading
    PlanRefusal.VLLM_PP_PARTITION: _Refused(
        "vLLM",
        f"give {VLLM_PP_PARTITION_REFUSED} one layer count of 1 or more per pipeline stage summing to the model's "
        "{layers} layers, or unset it for vLLM's even split",
        flags=("pipeline_parallel_size",),
    ),
}


def _refused_finding(ctx: RuleContext, model: ModelSpec, how: _Refused) -> Diagnostic:
    """KV502 for a plan the engine refuses to start, reported as ``how`` says (:data:`_REFUSED`)."""
    cr, s = ctx.cr, ctx.serving
    loc = _env_value_loc(s, how.env) if how.env else None
    for flag in how.flags:
        loc = loc or s.loc(flag)
    if how.at_command:
        loc = loc or s.command_loc
    return ctx.finding(
        f"{model.id} on {how.engine}: {cr.plan_error}",
        loc,
        fix=how.fix.format(layers=model.num_layers) if isinstance(how.fix, str) else how.fix(s, model),
        severity="error",
    )


#: KV502's fix for a model whose architecture kvlint does not size (:data:`kvlint.models.resolve.UNMODELLED_HUB_IDS`):
#: a config would not help, so none is asked for.
_UNMODELLED_FIX = (
    "none in kvlint yet: read the KV cache size the engine logs at start-up, or accept this finding on the "
    'workload with kvlint.io/ignore: "KV502=<reason>"'
)
_GIVE_CONFIG = (
    "give kvlint the config: --model-dir DIR with <org>--<name>/config.json, a .kvlint.yaml model_paths entry, "
    "the kvlint.io/model annotation, or hub access (HF_TOKEN for gated models)"
)


#: Example GPUs of each platform for KV501's fixes, smallest first, with the label values that name them (NVIDIA GPU
#: Feature Discovery's ``nvidia.com/gpu.product`` and GKE's ``cloud.google.com/gke-accelerator``; the AMD GPU node
#: labeller's ``amd.com/gpu.product-name``): ``(kvlint id or alias, catalogue id, [(label, value), ...])``. The fix
#: names the first one the container fits on in its fleet plan (else the first): "l4 in these examples" was the
#: example of a falcon-40b whose KV501 said it fails on L4. Each resolves to the same catalogue GPU
#: (tests/test_unsized_fixes.py applies every form the fix writes and checks the container is then sized).
_EXAMPLE_GPUS = {
    "cuda": (
        (
            "l4",
            "nvidia-l4",
            [("nvidia.com/gpu.product", "NVIDIA-L4"), ("cloud.google.com/gke-accelerator", "nvidia-l4")],
        ),
        (
            "a100-80gb",
            "nvidia-a100-sxm4-80gb",
            [
                ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"),
                ("cloud.google.com/gke-accelerator", "nvidia-a100-80gb"),
            ],
        ),
        (
            "h100",
            "nvidia-h100-sxm5-80gb",
            [
                ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
                ("cloud.google.com/gke-accelerator", "nvidia-h100-80gb"),
            ],
        ),
        (
            "h200",
            "nvidia-h200-141gb",
            [
                ("nvidia.com/gpu.product", "NVIDIA-H200"),
                ("cloud.google.com/gke-accelerator", "nvidia-h200-141gb"),
            ],
        ),
    ),
    "rocm": (("mi300x", "amd-instinct-mi300x", [("amd.com/gpu.product-name", "AMD_Instinct_MI300X")]),),
}


def name_gpu_fix(
    platform: str = "cuda", fits: frozenset[str] | set[str] = frozenset(), fleet: Sequence[str] = ()
) -> str:
    """KV501's remedy for a GPU kvlint cannot tell, each way of naming it with its exact syntax: a ``nodeSelector``
    label, the ``kvlint.io/accelerator`` annotation, a ``.kvlint.yaml`` ``accelerators.node_labels`` entry for the
    cluster's own label, ``--accelerator``. The example GPU is one of ``fleet`` (the catalogue ids of the GPUs the
    container's fleet plan is on: a ``.kvlint.yaml`` fleet, or the GPUs of a ROCm image built for one architecture)
    when it is given, else of :data:`_EXAMPLE_GPUS` of ``platform``: the first example whose catalogue id is in
    ``fits`` (the GPUs it fits on), else the smallest fleet GPU it fits on; when it fits on none, the largest fleet
    GPU (the one it comes nearest fitting on: "l4 in these examples" named the GPU it fails on by the most). A GPU not among the examples is
    named as the catalogue names it (:func:`kvlint.accelerators.registry.naming_labels`)."""
    from kvlint.accelerators.registry import catalogue, naming_labels

    cat = catalogue()
    examples = _EXAMPLE_GPUS.get(platform, _EXAMPLE_GPUS["cuda"])
    ours = [i for i in dict.fromkeys(fleet) if i in cat]

    def size(i: str) -> tuple[int, str]:
        return cat[i].memory_bytes, i

    fitting = sorted((i for i in ours if i in fits), key=size)
    chosen = next((e for e in examples if e[1] in fits), None)
    target = fitting[0] if fitting else (max(ours, key=size) if ours and not fits else None)
    if chosen is None and target is not None:
        chosen = next((e for e in examples if e[1] == target), None)
        if chosen is None:
            short, named = naming_labels(target)
            chosen = (short, target, named)
    gpu, _, labels = chosen or examples[0]
    selector = " (or ".join(f"{k}: {v}" for k, v in labels) + (")" if len(labels) > 1 else "")
    # a GPU the catalogue records no node label value of is named without the nodeSelector form
    by_label = f"a nodeSelector {selector}, " if labels else ""
    return (
        f"name the GPU ({gpu} in these examples): {by_label}the annotation kvlint.io/accelerator: {gpu} on the "
        f"workload, your own node label mapped in .kvlint.yaml (accelerators: {{node_labels: {{LABEL: {{VALUE: "
        f"{gpu}}}}}}}), or --accelerator {gpu} (`kvlint accelerators` lists the ids)"
    )


@check("KV501")
def accelerator_unknown(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV501: the model is known but the GPU is not (or is not a CUDA/ROCm GPU), so the capacity rules were
    skipped."""
    cr, s, p = ctx.cr, ctx.serving, ctx.placement
    acc = p.accelerator if p is not None else None
    if cr.model is None:
        # the model is unknown (KV502) or not named (KV503): only a reason no model would change is said here,
        # and it takes precedence over KV502 (unsized_whatever_model); a command kvlint cannot read, or that names
        # no model, on a TPU, Trainium, Gaudi ... is said to be unsized for that reason too (kvlint.sizing counts
        # it so): reading the command would not size it
        # (a serving-runtime template's model and resources come from its InferenceService, KV502, unless it
        # names its own model: then it is sized as any container, and the same reason comes first)
        template = is_runtime_template(ctx.workload)
        why = None if template and s.model is None else unsized_before_model(ctx.workload, s, p)
        if why is None or (s.model is None and why is not Unsized.NOT_A_GPU):
            return
        if acc is not None and acc.vendor not in ("nvidia", "amd"):
            yield ctx.finding(
                f"capacity rules skipped: the pod runs on {acc.name}, and kvlint's memory model is for CUDA/ROCm "
                f"GPUs ({p.how if p else ''})",
                p.loc if p else None,
                fix="kvlint models NVIDIA and AMD GPUs; check this workload's memory with the vendor's tools",
            )
            return
        # on an NVIDIA or AMD GPU, what is not CUDA/ROCm is the engine's build or device (said below), not the GPU
    if acc is not None and cr.model is not None:
        if cr.plan_error and acc.vendor not in ("nvidia", "amd"):
            yield ctx.finding(
                f"capacity rules skipped: {cr.plan_error} ({p.how if p else ''})",
                p.loc if p else None,
                fix="kvlint models NVIDIA and AMD GPUs; check this workload's memory with the vendor's tools",
            )
        if (
            acc.vendor not in ("nvidia", "amd")
            or unsized_before_model(ctx.workload, s, p) is not Unsized.NOT_A_GPU
            or image_platform_mismatch(s, acc, p.resource if p is not None else None) is not None
        ):
            return
        # on a named NVIDIA or AMD GPU, a platform word in a custom image's name (registry.example.com/npu-team/vllm):
        # no evidence of the build for KV304 (kvlint.engines.images.build_is_evidenced), but the container is not
        # sized as the GPU build it may not be; said below as when no GPU is named, a warning
    platform, evidence = platform_evidence(s, p.resource if p is not None else None)
    if gpu_build_on_other_accelerator(s, p) is not None:
        return  # a GPU build on a TPU, Gaudi, Neuron or Ascend node: KV304 says so (an error), not sized
    if p is not None and p.requests_no_gpu and platform in ("cuda", "rocm"):
        if ctx.workload.doc.path == TYPED_COMMAND:
            # kvlint plan -- COMMAND: no manifest, no container; the GPU is an option of the command
            yield ctx.finding(
                "capacity rules skipped: no GPU was named, so there is no GPU to size the engine on (kvlint plan "
                "sizes the command on the GPU that --accelerator or --gpu-memory names)",
                s.command_loc,
                fix="name the GPU: --accelerator ID (`kvlint accelerators` lists the ids and aliases) or --gpu-memory "
                "QTY (the device total as CUDA reports it, e.g. 79.19GiB), or --compare to plan it on several",
                severity="info",
            )
            return
        w = ctx.workload
        profile = profile_clause(w.kind, w.annotations, w.namespace)
        gpu, _, labels = _EXAMPLE_GPUS["rocm" if platform == "rocm" else "cuda"][0]
        name_it = f"e.g. a nodeSelector {labels[0][0]}: {labels[0][1]} or the annotation kvlint.io/accelerator: {gpu}"
        resource = AMD_GPU if platform == "rocm" else NVIDIA_GPU
        if is_runtime_template(w):
            # KV405 is not said on a template: the InferenceService that uses it may set the resources
            user = "LLMInferenceService" if w.kind.startswith("LLMInferenceService") else "InferenceService"
            message = (
                "capacity rules skipped: the container requests no GPU (no nvidia.com/gpu or other accelerator "
                f"resource), and the {user} that uses this runtime template sets the resources, so there is no "
                "GPU to size the engine on"
            )
            fix = (
                f"lint the {user}s that use this runtime together with it, or set the GPUs the engine uses in the "
                f"runtime's resources.limits: {{{resource}: N}} (the default for those services); then name the GPU "
                f"type, {name_it}"
            )
        else:
            message = (
                "capacity rules skipped: the container requests no GPU (no nvidia.com/gpu or other accelerator "
                "resource), so there is no GPU to size the engine on"
            )
            need = pod_gpus_needed(ctx)
            request = (
                f"resources.limits: {{{resource}: {need[0]}}} ({need[1]})"
                if need is not None
                else f"resources.limits: {{{resource}: N}}"
            )
            fix = f"request the GPUs the engine uses: {request} (KV405); then name the GPU type, {name_it}"
        yield ctx.finding(
            message + (f"; {profile}" if profile else ""),
            loc_of(s.container, "resources") or s.command_loc,
            fix=PROFILE_FIX if profile else fix,
            severity="info",
        )
        return
    if platform not in ("cuda", "rocm"):
        build = image_platform(s.image)
        gpu_build = (
            evidence == "device" and engine_of_image(s.image) is not None and build in ("cuda", "rocm")
        )
        if gpu_build:
            # vLLM picks its platform from the build, not --device (vllm/platforms/__init__.py,
            # cpu_platform_plugin: "cpu" in version("vllm"), 0.7-0.9.2; the CUDA/ROCm plugins find the GPU): the
            # engine's own CUDA/ROCm image started with --device cpu starts on its GPU platform, not on the CPU
            # (KV405 says the same when the container gets no GPU)
            dev = s.get("device")
            how = ' ("cpu" in version("vllm"))' if platform == "cpu" else ""
            yield ctx.finding(
                f"capacity rules skipped: {s.engine} is started with --device {dev}, but image '{s.image}' is "
                f"vLLM's {platform_name(build)} build, and vLLM picks its platform from the build{how}, "
                f"not that flag: it does not run on the {platform_name(platform)}, and kvlint "
                f"does not size a run that --device {dev} moves off the GPU",
                s.command_loc,
                fix=f"drop --device {dev} to serve on the GPU with this image (then kvlint sizes it), or use "
                f"vLLM's {platform_name(platform)} image to run without a GPU",
            )
            return
        if evidence == "device":
            what = f"{s.engine} is started with --device {s.get('device')}"
        elif evidence == "image":
            what = f"image '{s.image}' is {with_article(platform_name(platform))} build of {s.engine}"
        else:
            what = (
                f"the container requests {p.resource if p else platform}, "
                f"{with_article(platform_name(platform))} accelerator"
            )
        if platform == "neuron":
            what += (
                " (AWS Inferentia or Trainium: vLLM compiles the model for NeuronCores with the Neuron SDK, whose "
                "memory plan kvlint does not model, and those devices are not in its accelerator catalogue)"
            )
        yield ctx.finding(
            f"capacity rules skipped: {what}, and kvlint's memory model is for CUDA/ROCm GPUs",
            s.command_loc,
            fix="nothing to change if this workload is meant to run without a GPU; otherwise use the engine's "
            "GPU image and request a GPU"
            if platform == "cpu"
            else f"nothing to change if this workload is meant for that {platform_name(platform)} "
            "accelerator (check its "
            "memory with the vendor's tools); to run it on an NVIDIA or AMD GPU, use the engine's CUDA or ROCm "
            "image and request that GPU",
        )
        return
    if cr.model is None:
        return
    # the labels of the vendor whose nodes the pod's GPU resource is advertised on (nvidia.com/gpu: NVIDIA's, as
    # the fleet it is planned on, kvlint.pipeline._fleet), else of the image's build
    vendor = gpu_vendor_of_resource(cr.placement.resource if cr.placement is not None else None)
    # the example GPU one the container fits on, when the fleet plan has one (a whole GPU, not a MIG slice of it)
    fits = {e.accelerator.id for e in cr.fleet if e.verdict == "fits" and e.mig_profile is None}
    whole = [e.accelerator.id for e in cr.fleet if e.mig_profile is None]
    if cr.fleet and not whole:
        # a MIG slice requested (nvidia.com/mig-3g.40gb): the fleet plan is on the GPUs that offer it, and the
        # example names one of them, not an L4 that has no MIG (adnan-drina/rhoai3-nvidia-demo's Nemotron 3 Nano)
        fits = {e.accelerator.id for e in cr.fleet if e.verdict == "fits"}
        whole = [e.accelerator.id for e in cr.fleet]
    fix = name_gpu_fix(
        "rocm" if vendor == "amd" or (vendor is None and platform == "rocm") else "cuda", fits, whole
    )
    placed = ctx.cr.placement
    if (
        placed is not None
        and placed.accelerator is None
        and placed.how.startswith(("nodeSelector ", "nodeAffinity "))
        and placed.undecided
    ):
        # the pod's own GPU label decided, on a GPU kvlint does not know: another nodeSelector is not the remedy
        fix = (
            "name that GPU as kvlint knows it: the kvlint.io/accelerator annotation with its catalogue id, a "
            "mapping of the label's value in .kvlint.yaml (accelerators.node_labels), or --accelerator ID "
            "(kvlint accelerators lists ids)"
        )
    if placed is not None and placed.mig_unoffered:
        # the pod's GPUs are named, and none has the MIG slice its resource requests (Placement.mig_unoffered)
        yield ctx.finding(
            f"the container is not sized{_unknown_because(ctx)}, so capacity rules were skipped",
            s.command_loc,
            fix=f"request a resource the GPU it lands on advertises ({NVIDIA_GPU} for a whole GPU), or place the "
            f"pod on a GPU that offers the MIG profile ({placed.resource})",
        )
        return
    if not cr.fleet:
        yield ctx.finding(
            f"kvlint cannot tell which GPU this pod lands on{_unknown_because(ctx)}, so capacity rules were skipped",
            s.command_loc,
            fix=fix,
        )
        return
    if fix.startswith("name the GPU (") and all(e.verdict == "fails" for e in cr.fleet):
        # it fails on each of them: naming a GPU is not the whole remedy ("h200 in these examples" for a model that
        # fails on H200 too); the capacity findings on the named GPU carry the re-planned remedies (a larger TP
        # size, a quantized checkpoint), and an idle-GPU KV403 beside this one says what the layout wastes. Not
        # when kvlint could not plan some GPU ("unknown": a plan error): whether it fits there is not known
        fix = (
            "it fits none of these GPUs as configured, so once its GPU is named the capacity findings there say what "
            "to change (each remedy re-planned to fit); " + fix
        )
    yield _fleet_verdict(ctx, fix)


def _unknown_because(ctx: RuleContext) -> str:
    """``: REASON`` when the placement recorded why nothing named the accelerator (a nodeSelector label kvlint does
    not read, a GPU model not in its catalogue, a resource that names only the vendor: what the user wrote that did
    not decide it, :func:`kvlint.accelerators.placement.undecided_reasons`), else ""."""
    from kvlint.accelerators.placement import undecided_reasons

    why = undecided_reasons(ctx.cr.placement)
    return f": {why}" if why else ""


def _fleet_verdict(ctx: RuleContext, fix: str) -> Diagnostic:
    """KV501 with the container planned on each GPU of the fleet (:func:`kvlint.memory.stage.plan_fleet`):
    where it fits, is risky or fails, with KV tokens and concurrency at its context limit for each, and the
    reason where the engine does not start there at all (the KV301/KV302/KV304/KV305 tests). A MIG slice request
    plans on the slices of the GPUs offering that profile. Fits none of a configured fleet: error; fits none of
    the default fleet: warning; fits all of a configured fleet: info."""
    cr, s = ctx.cr, ctx.serving
    site = ctx.options.site or NO_SITE
    # whether the fleet is the configured one, as Site.fleet_accelerators() answers it (a configured fleet is
    # one the site names, whatever its ids resolve to), without looking its accelerators up
    configured = bool(site.fleet)
    if configured:
        which = "the configured fleet (.kvlint.yaml fleet)"
    elif all(e.accelerator.vendor == "amd" for e in cr.fleet):
        which = "kvlint's default ROCm fleet (AMD Instinct)"
        built = rocm_build_target(s.image)
        family = rocm_family_target(s.image) if built is None else None
        if built is not None and len(cr.fleet) < len(default_fleet("rocm")):
            which += (
                f", its {built[0]} GPUs only (image {s.image} is built for {built[0]} alone, its {built[1]} tag: "
                "it runs on no other AMD architecture)"
            )
        elif family is not None and len(cr.fleet) < len(default_fleet("rocm")):
            which += (
                f", its {family[0]} GPUs only (image {s.image} is AMD's vLLM build for {family[1].upper()} GPUs, "
                f"as its tag says; {family[0]} in vLLM's ROCm requirements)"
            )
    else:
        which = "kvlint's default fleet"
    profile = cr.fleet[0].mig_profile
    if profile is not None:
        fleet_ids = {a.id for a in site.fleet_accelerators()[0]}
        where = (
            "of " + which if all(e.accelerator.id in fleet_ids for e in cr.fleet) else "in kvlint's catalogue"
        )
        which = f"the MIG {profile} slices of the GPUs {where} that offer it"
    gpus = cr.fleet[0].gpus
    elsewhere = cr.placement.gpus_elsewhere if cr.placement is not None else None
    per_pod = f"{count(gpus, 'GPU')} per pod" + (
        f" (the engine's own GPU workers; the pod's GPUs are requested by {elsewhere})"
        if elsewhere and cr.placement is not None and cr.placement.gpus is None
        else ""
    )
    idle = idle_gpus(ctx)
    if idle is not None:
        # the plans are of the engine on the GPUs it uses (a TP 1 engine on one GPU of an 8-GPU pod), not on the
        # pod's; KV403 reports the others idle
        need, pods, have = idle
        per_pod += (
            f", of which {ctx.layout.described} uses {need} (KV403)"
            if pods == 1
            else f" ({ctx.layout.described} uses {need} of the {pods} pods' {have}: KV403)"
        )
    resource = cr.placement.resource if cr.placement is not None else None
    amd_part = cr.placement.amd_partition if cr.placement is not None else None
    part_label = cr.placement.amd_partition_label if cr.placement is not None else None
    if amd_part is not None and profile is None:
        said = (
            f"resource {resource}"
            if amd_partition_of(resource)
            else part_label or f"amd.com/compute-memory-partition={amd_part}"
        )
        which += f" ({said}: one {amd_part.split('_')[0].upper()} partition of each GPU)"
    gslice = cr.placement.gpu_slice if cr.placement is not None else None
    if gslice is not None and gslice.percent is not None and profile is None:
        # HAMi: each vGPU sees its share of the card (kvlint.accelerators.sharing; stage.plan_fleet)
        which += f" (HAMi {gslice.key}: {gslice.percent}% of each card per vGPU)"
    parts = []
    for verdict in ("fits", "risky", "fails", "unknown"):
        entries = [e for e in cr.fleet if e.verdict == verdict]
        if not entries:
            continue
        named: list[tuple[str, str]] = []
        for e in entries:
            p = e.detail.plan if e.detail is not None else None
            if e.refused_by is not None:
                figures = f"{e.reason}; {e.refused_by}"
            elif verdict == "fails" and e.reason:
                figures = e.reason
            elif verdict == "unknown" and (e.reason or e.error):
                # why kvlint could not plan it there (a plan error, a GPU it cannot size), said once for the GPUs
                # it shares (fleet_entries), not the GPU names alone
                figures = e.reason or e.error or ""
            elif p is not None and p.kv_cache_bytes > 0:
                figures = (
                    f"{p.capacity_tokens:,} KV tokens, {times(p.max_concurrency)}x at {p.max_model_len:,}"
                )
            else:
                figures = ""
            named.append((e.accelerator.name, figures))
        parts.append(f"{verdict} on {fleet_entries(named)}")
    fitting = [e for e in cr.fleet if e.verdict == "fits"]
    short = _sglang_short_pool(cr.fleet)
    severity = ctx.rule.severity
    if not fitting and configured:
        severity = "error"
    elif configured and len(fitting) == len(cr.fleet):
        severity = "info"
    return ctx.finding(
        f"kvlint cannot tell which GPU this pod lands on{_unknown_because(ctx)}; planned on {which} with {per_pod}: "
        + "; ".join(parts)
        + (
            ""
            if fitting
            else " — kvlint could plan it on none of them"
            if all(e.verdict == "unknown" for e in cr.fleet)
            else " — it fits none of them"
        )
        + (f"; {short}" if short else ""),
        s.command_loc,
        fix=fix,
        severity=severity,
    )


def fleet_entries(named: list[tuple[str, str]]) -> str:
    """The GPUs of one KV501 verdict as the finding lists them, from ``(GPU name, figures)`` pairs in fleet order:
    ``NAME (figures)`` each, except that GPUs in a row whose figures are the same words (the same refusal, the
    same weights leaving no KV cache) are named once together, ``A, B and C (all: figures)``, so that a 61 GiB
    model's five "no memory left for the KV cache after 61.28 GiB/GPU of weights" read as one reason instead of
    five copies; a GPU without figures is its name alone."""
    runs: list[tuple[list[str], str]] = []
    for name, figures in named:
        if runs and figures and runs[-1][1] == figures:
            runs[-1][0].append(name)
        else:
            runs.append(([name], figures))
    shown = []
    for names, figures in runs:
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        if not figures:
            shown.append(who)
        else:
            shown.append(
                f"{who} ({'' if len(names) == 1 else 'both: ' if len(names) == 2 else 'all: '}{figures})"
            )
    return ", ".join(shown)


def _sglang_short_pool(fleet: tuple[Any, ...]) -> str | None:
    """The one sentence KV501 adds when SGLang's KV pool is below ``context_length`` on some GPU of the fleet:
    what this release does then (it starts: ``risky``, not ``fails``)."""
    from kvlint.memory.sglang import SglangPlanDetail, pool_below_context_behaviour

    short = [
        e.detail
        for e in fleet
        if isinstance(e.detail, SglangPlanDetail)
        and e.verdict == "risky"
        and 0 < e.detail.max_total_num_tokens < e.detail.context_length
    ]
    if not short:
        return None
    d = short[0]
    return (
        f"where the KV pool is below context_length {d.context_length:,}, SGLang {d.plan.engine_version} "
        + pool_below_context_behaviour(d.version)
    )


@check("KV502")
def model_config_unavailable(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV502: the command names a model whose config.json kvlint could not resolve (or, for a KServe
    serving-runtime template, the InferenceService supplies it: info), or the engine's memory model could
    not size it on a known CUDA/ROCm GPU (an error for a vLLM pipeline of more stages than the model has layers:
    :func:`kvlint.memory.vllm.pp_exceeds_layers`, or a ``VLLM_PP_LAYER_PARTITION`` vLLM rejects:
    :func:`kvlint.memory.vllm.pp_partition_refused`; and for an SGLang pipeline SGLang refuses to build, more stages than
    layers or a ``SGLANG_PP_LAYER_PARTITION`` it rejects: :func:`kvlint.memory.sglang.pp_stage_layers`)."""
    cr, s = ctx.cr, ctx.serving
    if s.model is None:
        return
    if cr.model is None and unsized_before_model(ctx.workload, s, ctx.placement):
        # KV501 says why no model would let kvlint size it (a CPU build, a TPU, no GPU requested), also for a
        # serving-runtime template that names its own model
        return
    name = s.model.value
    # a runtime that names its own model (kvlint.io/model, an OME runtime's --served-model-name, a literal
    # --model org/name) is sized on it:
    # when that model is not found, the reason is its config, as for any container, not the service's model
    own = runtime_names_model(ctx.workload, s) if cr.model is None else None
    if own is not None:
        name = own
    elif cr.model is None and is_runtime_template(ctx.workload):
        if any(f.rule == "KV502" for f in ctx.workload.findings):
            return  # the workload stage already said what this template is (an LLMInferenceServiceConfig preset)
        user = (
            "LLMInferenceService"
            if ctx.workload.kind.startswith("LLMInferenceService")
            else "InferenceService"
        )
        yield ctx.finding(
            f"the model of this serving-runtime template ('{name}') is supplied by the {user} that uses "
            "it, so capacity rules were skipped for the template",
            s.model.loc,
            fix="lint the InferenceServices that use this runtime; kvlint.io/model on the runtime would apply to all",
            severity="info",
        )
        return
    parameter = _template_parameter(ctx, name) if cr.model is None else None
    if parameter is not None:
        # an OpenShift Template's parameter with no value: oc process fills it in before anything runs
        yield ctx.finding(
            f"the model '{name}' holds ${{{parameter}}}, a parameter of this OpenShift Template with no value, which "
            f"oc process fills in (-p {parameter}=VALUE, or generated) before the objects are created, so "
            "capacity rules were skipped",
            s.model.loc,
            fix=f"process the Template with the values you deploy and lint the result (oc process -f FILE "
            f"-p {parameter}=VALUE | kvlint check -), or give {parameter} a value in the Template's parameters",
            severity="info",
        )
        return
    literal = _literal_reference(s, name) if cr.model is None else None
    if literal is not None:
        yield _literal_model(ctx, name, *literal)
        return
    annotated = ctx.workload.annotations.get(MODEL_ANNOTATION)
    if cr.model is None and own is None and annotated and cr.model_annotation_overruled is None:
        # the annotation is the model kvlint looked up (pipeline.model_reference) and has no config for: the
        # findings below speak of it, not of the command's model, which KV005 says kvlint may well read
        name = str(annotated)
    if cr.model is None and _RUN_TIME.search(name) and not _template_placeholder(ctx, name):
        named = [why for var, why in s.env_unread if var is not None and _references(name, var)]
        # an envFrom ConfigMap kvlint could not read (not among the inputs, defined differently in several files)
        # may hold any variable: the model's, when no env entry kvlint read names it
        imported = [why for var, why in s.env_unread if var is None] if not named else []
        if named or imported:
            comes = "comes" if named else "may come"
            yield ctx.finding(
                f"the model '{name}' {comes} from the env, which kvlint could not read "
                f"({'; '.join(named or imported)}), so capacity rules were skipped",
                s.model.loc,
                fix=_configmap_fix(named or imported)
                + ", or annotate the workload with kvlint.io/model: <hub id>",
            )
            return
        yield ctx.finding(
            f"the model '{name}' is only known when the container runs (a shell variable or command output, or a "
            "$(VAR) with no env entry, that kvlint cannot resolve from the manifest), so capacity rules were skipped",
            s.model.loc,
            fix="give the variable a literal value in the container's env, or annotate the workload with "
            "kvlint.io/model: <hub id>",
        )
        return
    if cr.model is None and ("{{" in name or "${" in name):
        yield ctx.finding(
            f"the model '{name}' is a template placeholder, not a model id: the manifest must be rendered "
            "before kvlint can size it (KV002), so capacity rules were skipped",
            s.model.loc,
            fix="render the manifest with the values you deploy (helm template ... | kvlint check -), or "
            "annotate the workload with kvlint.io/model: <hub id>",
        )
        return
    token = path_placeholder(name) if cr.model is None else None
    if token is not None:
        # a path holding a token to replace (sed, by hand): no directory of that name exists anywhere
        yield ctx.finding(
            f"the model '{name}' holds the placeholder {token}, which a script or a person replaces before the "
            "manifest is applied, so capacity rules were skipped",
            s.model.loc,
            fix="lint the manifest after the placeholders are replaced, or annotate the workload with "
            "kvlint.io/model: <hub id>",
        )
        return
    # the config found but refused, as model resolution says (cr.model_refusal), not read back from its message
    refused = cr.model_refusal if cr.model is None else None
    if refused is not None and refused.model_type is not None and refused.encoder_decoder:
        yield _encoder_decoder_finding(ctx, name, refused.model_type)
        return
    if refused is not None and refused.model_type is not None:
        yield ctx.finding(
            f"model '{name}' is a '{refused.model_type}' model, not a decoder LLM, so capacity rules were skipped: "
            "kvlint sizes the KV caches of decoder LLMs (its config.json was read)"
            + encoder_only_clause(s.engine, refused.model_type),
            s.model.loc,
            fix="check this container's memory from the engine's start-up log (kvlint cannot size it); if the "
            "engine should run a generative model, the model reference names the wrong checkpoint",
        )
        return
    if refused is not None:
        # found and read, but not a config kvlint (or the engine) can build the model from: say what is wrong
        path, why = refused.path, refused.why
        # "/m/config.json vocab_size is -5" rather than "/m/config.json: config.json vocab_size is -5"
        said = (
            f"{path[: -len('config.json')]}{why}"
            if path.endswith("config.json") and why.startswith("config.json ")
            else f"{path}: {why}"
        )
        yield ctx.finding(
            f"the config of model '{name}' was found but refused, so capacity rules were skipped: {said}",
            s.model.loc,
            fix=f"correct {path.rsplit(':', 2)[0] if path.count(':') >= 2 else path}, or point kvlint at the "
            "model's real config (--model-dir DIR, a .kvlint.yaml model_paths entry, or kvlint.io/model: <hub id>)",
        )
        return
    if cr.model is None:
        error = cr.model_error or ""
        if ctx.workload.doc.path == TYPED_COMMAND:
            # kvlint plan -- COMMAND: no manifest, so no model_paths entry or workload annotation to offer
            error = typed_model_remedies(error, name, "the model argument")
        reason, _, remedy = error.partition("; provide it with ")
        loc, model_said = s.model.loc, f"'{name}'"
        ann = ctx.workload.annotations.get(MODEL_ANNOTATION)
        if ann and cr.model_annotation_overruled is None:
            # the annotation named this model: not "annotate the workload", which is done
            remedy = remedy.replace(
                ANNOTATE_HINT,
                f"correct the workload's {MODEL_ANNOTATION} annotation if it names another model",
            )
            if cr.model_annotation_replaced is not None:
                # the model looked for is the annotation's, not the command's (which kvlint reads: KV005 says
                # so): "no config.json for model 'Qwen/Qwen2.5-1.5B-Instruct'" named one kvlint holds
                from kvlint.statement import clip
                from kvlint.suppress import annotation_loc

                model_said = f"'{clip(str(ann), 200)}' (the {MODEL_ANNOTATION} annotation)"
                loc = annotation_loc(ctx.workload, MODEL_ANNOTATION) or loc
        yield ctx.finding(
            f"no config.json for model {model_said}, so capacity rules were skipped: {reason or 'unknown reason'}",
            loc,
            fix=("provide it with " + remedy)
            if remedy
            else _UNMODELLED_FIX
            if any(why in reason for why in UNMODELLED_HUB_IDS.values())
            else _GIVE_CONFIG,
        )
        return
    if (
        s.engine == "vllm"
        and (gone := vllm_removed_architecture(cr.model.architectures, s.version)) is not None
    ):
        arch, last = gone
        from kvlint.memory.versions import NEWEST_VLLM, resolve_version

        shown = (
            f"{NEWEST_VLLM} (assumed: the newest release read)"
            if resolve_version(s.version)[1]
            else s.version
        )
        yield ctx.finding(
            f"model '{name}' is a {arch} model, which vLLM removed after {last}: vLLM "
            f"{shown} stops at start-up with 'Model architecture {arch} was supported in vLLM "
            f"until v{last}, and is not supported anymore. Please use an older version of vLLM if you want to use "
            "this model architecture.'",
            s.model.loc or s.command_loc,
            fix=f"pin a vLLM image of {last} or older (kvlint sizes it for that release with --engine-version), or "
            "serve the model with another engine",
            severity="error",
        )
        return
    draft = _unresolved_draft(cr)
    if draft is not None and (cr.plan is not None or cr.fleet):
        # the target is sized, its speculative drafter is not: said, not left to the plan's silence. The stage's
        # note is "speculative draft model 'X' not resolved (REASON[; provide it with REMEDY]); planned without it"
        note = (cr.model_error or "").removesuffix("; planned without it")
        reason, _, remedy = note.partition("; provide it with ")
        reason = reason.split(" not resolved (", 1)[-1]
        reason = (reason if remedy else reason.removesuffix(")")).removeprefix(f"model '{draft}': ")
        # the annotation names the served model, not its drafter
        remedy = remedy.removesuffix(")").replace(f", or {ANNOTATE_HINT}", "").replace(ANNOTATE_HINT, "")
        yield ctx.finding(
            f"speculative draft model '{draft}' (--speculative-config model) has no config.json, so the plan sizes "
            f"{cr.model.id} alone: the drafter's weights, its KV cache layers and its CUDA graphs are not counted"
            + (f" ({reason})" if reason else ""),
            s.loc("speculative_config") or s.command_loc,
            fix=("provide it with " + remedy) if remedy else _GIVE_CONFIG,
            severity="info",
        )
    acc = ctx.placement.accelerator if ctx.placement else None
    if cr.plan is None and cr.plan_error and acc is not None and acc.vendor in ("nvidia", "amd"):
        if accelerator_build(s) is not None:
            return  # an Ascend, TPU, Gaudi ... build is not sized on an NVIDIA or AMD GPU: KV304 says why
        fraction = as_float(s.get(MEMORY_FRACTION[s.engine][0])) if s.engine in MEMORY_FRACTION else None
        if fraction is not None and not 0.0 < fraction <= 1.0:
            return  # a memory fraction the engine refuses (KV107, or KV206 for nan): no plan to speak of
        refusal = cr.plan_refusal
        if refusal in _REFUSED:
            yield _refused_finding(ctx, cr.model, _REFUSED[refusal])
            return
        if refusal is PlanRefusal.VLLM_PP_EXCEEDS_LAYERS:
            # more pipeline stages than layers: stages without a layer, whose GPUs hold no KV cache
            layers = cr.model.num_layers
            kaito = any(
                c.key == "resource.instanceType" and c.words[0].startswith(PP_EXCEEDS_LAYERS)
                for c in ctx.workload.chart_args
                if c.words
            )
            yield ctx.finding(
                f"{cr.model.id} on vLLM: {cr.plan_error}"
                + (
                    "; KAITO's node estimator asked for one node a stage and does not cap the stages at the layers"
                    if kaito
                    else ""
                ),
                s.loc("pipeline_parallel_size") or s.command_loc,
                fix=(
                    f"choose a resource.instanceType with larger GPUs (or more GPUs a node), so that KAITO's estimate "
                    f"needs at most {layers} nodes"
                    if kaito
                    else f"set --pipeline-parallel-size to at most {layers} (the model's layers) and spread the GPUs "
                    "with --tensor-parallel-size"
                ),
                severity="error",
            )
            return
        yield ctx.finding(
            f"kvlint could not size {cr.model.id} for {s.engine}: {cr.plan_error}",
            s.model.loc or s.command_loc,
            fix="check that config.json describes a decoder LLM; pass --model-dir with a corrected config",
        )


def _unresolved_draft(cr: ContainerResult) -> str | None:
    """The ``--speculative-config`` draft model id of a vLLM container that the plan stage could not resolve
    (:func:`kvlint.memory.stage._vllm_settings`: its settings keep the id and no draft model), else None."""
    settings = cr.settings
    if cr.serving.engine != "vllm" or settings is None:
        return None
    draft_id = getattr(settings, "speculative_model_id", None)
    if not draft_id or getattr(settings, "speculative_model", None) is not None:
        return None
    return str(draft_id)


def _encoder_decoder_finding(ctx: RuleContext, name: str, model_type: str) -> Diagnostic:
    """KV502 for a model whose config.json is an encoder-decoder (T5, BART, ...): the config was read, so the
    finding says what the engine does with such a model (:func:`kvlint.models.config.encoder_decoder_support`)
    instead of "no config.json". An engine that cannot load it at all (vLLM and T5) is an error: the container
    fails at start-up whatever its GPU."""
    s = ctx.serving
    serves, what = encoder_decoder_support(s.engine, model_type)
    if serves is False:
        return ctx.finding(
            f"model '{name}' is an encoder-decoder '{model_type}' model, and {what}; kvlint does not size it",
            s.model.loc if s.model else s.command_loc,
            fix="serve it with an engine that runs T5 (TGI's Seq2SeqLM path), or choose a decoder-only model "
            "the engine supports",
            severity="error",
        )
    return ctx.finding(
        f"model '{name}' is an encoder-decoder '{model_type}' model, so capacity rules were skipped: {what}",
        s.model.loc if s.model else s.command_loc,
        fix="check this container's memory under load (kvlint cannot size it)"
        + (
            "; --max-batch-total-tokens, --max-total-tokens and --max-input-length bound what TGI batches"
            if s.engine == "tgi"
            else ""
        ),
    )


#: A value a shell or the kubelet fills in when the container runs: ``$NAME``, ``${NAME}``, ``$(...)``, backticks.
_RUN_TIME = re.compile(r"\$\{?[A-Za-z_]|\$\(|`")


def _references(text: str, var: str) -> bool:
    """``text`` refers to the variable ``var`` (``$(VAR)``, ``${VAR}``, ``$VAR``)."""
    return (
        re.search(
            r"\$(?:\("
            + re.escape(var)
            + r"\)|\{"
            + re.escape(var)
            + r"[}:]|"
            + re.escape(var)
            + r"(?![A-Za-z0-9_]))",
            text,
        )
        is not None
    )


#: A shell-style reference, ``$VAR`` or ``${VAR...}`` (not the kubelet's ``$(VAR)``), and its variable.
_SHELL_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
#: The kubelet's reference ``$(VAR)`` and its variable.
_KUBELET_REFERENCE = re.compile(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_]*)\)")

#: The engines' names in messages.
_ENGINE_NAMES = {"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang"}


def _env_defines(s: ServingConfig, var: str) -> bool:
    """Whether the container's env may define ``var``: an ``env`` entry of that name (whatever its source), a value
    kvlint read, or any ``envFrom`` (a ConfigMap not among the inputs, a Secret)."""
    env = s.container.get("env")
    names = {str(e.get("name")) for e in env if isinstance(e, dict)} if isinstance(env, list) else set()
    return var in names or var in s.env or bool(s.container.get("envFrom"))


def _literal_reference(s: ServingConfig, name: str) -> tuple[str, bool] | None:
    """``(variable, kubelet form)`` of the first reference in the model ``name`` that the engine receives as
    written, when the command line reaches it without a shell (:attr:`kvlint.types.ServingConfig.exec_form`): a
    ``$VAR`` / ``${VAR}``, which nothing expands (the kubelet expands only ``$(VAR)``), or a ``$(VAR)`` whose
    variable the container's env does not define, which the kubelet leaves as written (Kubernetes API,
    ``Container.args``: "If a variable cannot be resolved, the reference in the input string will be
    unchanged"); None otherwise. The same for a shell script's ``$VAR`` / ``${VAR}`` that the script quotes so that
    the shell does not expand it (:attr:`kvlint.types.ServingConfig.quoted_model`: ``vllm serve '$MODEL'``; bash(1)
    "QUOTING": single quotes preserve "the literal value of each character"; dash the same)."""
    if s.model is None or s.model.source != "arg":
        return None
    if s.quoted_model:
        m = _SHELL_REFERENCE.search(s.model.raw or name)
        return (m.group(1), False) if m is not None else None
    if not s.exec_form:
        return None
    m = _SHELL_REFERENCE.search(name)
    if m is not None:
        return m.group(1), False
    k = _KUBELET_REFERENCE.search(name)
    if k is not None and not _env_defines(s, k.group(1)):
        return k.group(1), True
    return None


def _template_parameter(ctx: RuleContext, name: str) -> str | None:
    """The first parameter with no value (:func:`kvlint.template_params.unresolved_parameters`) of the OpenShift
    ``Template`` holding the workload that the model ``name`` references as ``${NAME}``, which ``oc process``
    substitutes (openshift/library-go ``pkg/template/templateprocessing/template.go``, ``stringParameterExp``)
    in every string of the Template's objects before they are created, shell script or not; None otherwise
    (another document, or a name the Template does not declare, which reaches the engine as written)."""
    doc = ctx.workload.doc
    if doc is None or doc.kind != "Template" or "${" not in name:
        return None
    unset = unresolved_parameters(doc.data)
    return next((m.group(1) for m in _TEMPLATE_REFERENCE.finditer(name) if m.group(1) in unset), None)


#: ``oc process``'s string reference ``${NAME}`` (openshift/library-go ``template.go``, ``stringParameterExp``).
_TEMPLATE_REFERENCE = re.compile(r"\$\{([a-zA-Z0-9_]+?)\}")


def _literal_model(ctx: RuleContext, name: str, var: str, kubelet: bool) -> Diagnostic:
    """KV502 for a model argument holding a reference the engine receives literally (exec form, no shell):
    Kubernetes expands only ``$(VAR)`` in ``command`` and ``args``, from the container's env (Kubernetes docs,
    "Define a Command and Arguments for a Container": "The environment variable appears in parentheses, $(VAR).
    This is required for the variable to be expanded in the command or args field"), and leaves a ``$(VAR)`` it
    cannot resolve as written, so the engine is asked for a model named by that text, which is no directory in
    the container and no valid Hugging Face repository id (``$``, ``{``, ``(`` are not allowed in one), and fails
    at start-up. The fix: for ``$VAR``/``${VAR}``, ``$(VAR)`` or a shell when the container's env defines the
    variable, an envsubst render first when it does not (or the image is a placeholder too: the file then looks
    like an envsubst template); for an unresolved ``$(VAR)``, an env entry for it."""
    s = ctx.serving
    engine = _ENGINE_NAMES.get(s.engine, s.engine)
    if s.quoted_model and not s.exec_form:
        # a shell script's '$MODEL': the quotes keep it from the shell
        return ctx.finding(
            f"the model '{name}' reaches {engine} as written: the script quotes it, so the shell does not expand "
            f"it, and {engine} is asked for a model literally named '{name}' (no directory in the container, not a "
            "valid Hugging Face repository id) and fails at start-up; capacity rules were skipped",
            s.model.loc if s.model is not None else s.command_loc,
            fix=f'write "${var}" (double quotes) or ${var} unquoted, so that the shell expands it',
        )
    shell = f"run the command through a shell (command: [sh, -c], with the command line as one script) so the shell expands {var}"
    if kubelet:
        why = f"Kubernetes leaves $({var}) as written, as the container's env does not define {var}"
        fix = (
            f"define {var} in the container's env (env or envFrom); the kubelet then expands $({var}) from it"
        )
    else:
        why = "Kubernetes expands only $(VAR) references"
        if not _env_defines(s, var) or image_placeholder(s.image) is not None:
            fix = (
                "this file looks like an envsubst template: render it before applying it, and lint what you apply "
                f"(envsubst < FILE | kvlint check -); if it is applied as written, define {var} in the container's "
                f"env and write $({var}), or {shell}"
            )
        else:
            fix = f"write $({var}): the kubelet expands it from the container's env, where {var} is defined; or {shell}"
    return ctx.finding(
        f"the model '{name}' reaches {engine} as written: the container runs its command without a shell and "
        f"{why}, so {engine} is asked for a model literally named '{name}' (no directory in the container, not a "
        "valid Hugging Face repository id) and fails at start-up; capacity rules were skipped",
        s.model.loc if s.model is not None else s.command_loc,
        fix=fix,
    )


def _template_placeholder(ctx: RuleContext, name: str) -> bool:
    """Whether ``name`` holds a placeholder the manifest's renderer fills in: a Helm/Go action, or a ``${VAR}``
    in a workload KV002 found to be a template for envsubst (:attr:`~kvlint.types.Mark.ENVSUBST_TEMPLATE`; in a
    shell script ``${VAR}`` is otherwise the shell's). Read from the finding's mark, not its message, which may
    quote the manifest's own words (a container named ``helper-${X}``)."""
    if "{{" in name:
        return True
    return "${" in name and any(f.mark is Mark.ENVSUBST_TEMPLATE for f in ctx.workload.findings)


@check("KV503")
def engine_without_model(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV503: a serving engine was found but its command names no model (when the parser did not already
    say why it could not read the command)."""
    s = ctx.serving
    if s.model is not None or any(f.rule == "KV503" for f in s.findings):
        return
    where, name_it = _MODEL_SETTING.get(s.engine, _MODEL_SETTING["vllm"])
    unread = [why for _var, why in s.env_unread]
    if not unread:
        read = _env_from_names(s.container) if s.engine == "tgi" else []
        yield ctx.finding(
            f"kvlint found a serving engine in this container but no model in its {where} ("
            + (
                f"the ConfigMap{'s' if len(read) > 1 else ''} its envFrom reads ({', '.join(read)}) set{'' if len(read) > 1 else 's'} "
                "no MODEL_ID; env values from Secrets are not read)"
                if read
                else "env values from Secrets, and from ConfigMaps that are not among the inputs, are not read)"
            ),
            _no_model_loc(ctx),
            fix=f"name the model in the manifest ({name_it})",
        )
        return
    yield ctx.finding(
        f"kvlint found a serving engine in this container but no model in its {where} (the env it takes from "
        f"ConfigMaps was not read: {'; '.join(unread)}; env values from Secrets are not read either)",
        _no_model_loc(ctx),
        fix=_configmap_fix(unread) + f", or name the model in the manifest ({name_it})",
    )


def _env_from_names(container: Any) -> list[str]:
    """The ConfigMaps a container's ``envFrom`` names (``configMapRef.name``), in order."""
    sources = container.get("envFrom") if isinstance(container, dict) else None
    refs = [
        src.get("configMapRef")
        for src in (sources if isinstance(sources, list) else [])
        if isinstance(src, dict)
    ]
    return [r["name"] for r in refs if isinstance(r, dict) and isinstance(r.get("name"), str)]


def _configmap_fix(unread: Sequence[str]) -> str:
    """What to do about the ConfigMaps :attr:`ServingConfig.env_unread` names: pass those not among the inputs
    with the workload, lint it with its own of a name several files define differently
    (:data:`kvlint.workloads.configmaps.AMBIGUOUS`), fix those the API server refuses or that lack the key (the
    env is then missing in the cluster too)."""
    from kvlint.workloads.configmaps import (
        AMBIGUOUS,
        AMBIGUOUS_FIX,
        OTHER_NAMESPACE,
        OTHER_NAMESPACE_FIX,
        UNPARSED,
        UNPARSED_FIX,
    )

    missing = [w for w in unread if " is not among the inputs" in w]
    unparsed = [w for w in unread if UNPARSED in w]
    ambiguous = [w for w in unread if AMBIGUOUS in w]
    elsewhere = [w for w in unread if OTHER_NAMESPACE in w and w not in ambiguous]
    broken = [w for w in unread if w not in missing + unparsed + ambiguous + elsewhere]
    parts = []
    if missing:
        parts.append("pass the ConfigMap with the workload (kvlint check DEPLOYMENT.yaml CONFIGMAP.yaml)")
    if unparsed:
        parts.append(UNPARSED_FIX)
    if ambiguous:
        parts.append(AMBIGUOUS_FIX)
    if elsewhere:
        parts.append(OTHER_NAMESPACE_FIX)
    if broken:
        parts.append(
            "fix the ConfigMap so it holds the key as a string (without it the pod lacks the variable)"
        )
    return " and ".join(parts)


def _no_model_loc(ctx: RuleContext) -> Loc | None:
    """Where KV503 "no model" points: for TGI, which also takes its model from the env (``MODEL_ID``), the
    container's ``envFrom:`` key when it has one (the ConfigMap or Secret kvlint did not read is the likely
    source); else the engine's program (``command_loc``); else, with no command or args, the ``image:`` key
    (the image's ENTRYPOINT starts the engine). The container's position when none is in its file."""
    s = ctx.serving
    c = s.container
    home = c.loc if c is not None else None
    keys = getattr(c, "key_locs", {}) or {}
    candidates = [keys.get("envFrom")] if s.engine == "tgi" else []
    candidates += [s.command_loc, keys.get("image")]
    for loc in candidates:
        if loc is not None and (home is None or loc.file == home.file):
            return loc
    return None


#: Where each engine takes its model from: (what kvlint read, how to name the model there).
_MODEL_SETTING = {
    "vllm": ("command", "vllm serve MODEL, or --model MODEL"),
    "tgi": ("arguments or env", "--model-id MODEL, or env MODEL_ID"),
    "sglang": ("command", "--model-path MODEL"),
}


@check("KV505")
def model_assumed_from_name(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV505: the model spec rests on an assumption kvlint made from the model's name or path (a re-upload, a
    quantized build, a directory named after a catalogued model: :mod:`kvlint.models.resolve` and
    :mod:`kvlint.models.catalogue` put an ``ASSUMPTION (...)`` note first, :attr:`~kvlint.types.ModelSpec.assumption`);
    the message quotes it. On a container kvlint made no memory plan for (a Neuron build, KV501) it says the model
    was taken, not that it was sized. Chosen by the spec's field, not by the first note's wording (which may quote
    a user's catalogue or config)."""
    m, s = ctx.model, ctx.serving
    if m is None or not m.assumption:
        return
    note = m.assumption
    kind, _, text = note.partition("): ")
    source = "path" if "path" in kind else "name"
    if ctx.cr.plan is None and not ctx.cr.fleet:
        # no memory plan was made (a Neuron/TPU/CPU build, KV501; an engine that stops first): "sized" would
        # claim a plan (what rests on the assumption then is what reads the config, such as KV202's context)
        lead = (
            f"kvlint took this model from its {source}, not from its config.json (it made no memory plan for "
            "this container)"
        )
    elif "quantization" in kind:
        # a stored config that lacks the quantization its name states (catalogue._stored_without_quantization):
        # the architecture is the config's, only the quantization comes from the name
        lead = "kvlint took this model's quantization from its name, not from its config.json"
    else:
        lead = f"kvlint sized this model from its {source}, not from its config.json"
    yield ctx.finding(
        f"{lead}: {text}",
        s.model.loc if s.model is not None and s.model.loc is not None else s.command_loc,
        fix="nothing to change if that is the model; otherwise annotate the workload with kvlint.io/model: <hub "
        "id>, map the path in .kvlint.yaml model_paths, or run kvlint models pull where the hub is reachable",
        severity="info",
    )


def _env_value_loc(s: ServingConfig, name: str) -> Loc | None:
    """Where the container sets the variable ``name`` it was read with: the position
    :func:`kvlint.engines.command.container_env` kept for it (a ConfigMap key for a variable of an ``envFrom`` or a
    ``configMapKeyRef``: the refusal was placed at the command), else the value of the container's last ``env``
    entry of that name (the one the kubelet keeps, ``makeEnvironmentVariables``; a name given twice was placed at
    the first, whose value the engine never sees), its ``valueFrom``, else the entry; None without either."""
    kept = s.env_locs.get(name)
    if kept is not None:
        return kept
    container = s.container
    env = container.get("env") if isinstance(container, dict) else None
    last = None
    for item in env if isinstance(env, list) else ():
        if isinstance(item, dict) and item.get("name") == name:
            last = item
    return None if last is None else loc_of(last, "value") or loc_of(last, "valueFrom") or loc_of(last)
