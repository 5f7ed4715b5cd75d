"""KAITO ``Workspace`` / ``InferenceSet`` (kaito.sh): the vLLM pod KAITO's preset builds, its SKU table and
memory utilization, and the ``inference.config`` ConfigMap it mounts.
"""

from __future__ import annotations

from typing import Any

from kvlint.fastinit import replaced
from kvlint.gpu_resources import MIG_RESOURCE_PREFIX, NVIDIA_GPU
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import ChartArg, Document, Finding, Mark, Workload
from kvlint.workloads.base import (
    add_memory_shm,
    get_in,
    int_or_none,
    ldict,
    llist,
    located_copy,
    synthetic_workload,
)

#: Model reference given to a KAITO preset (``kaito-preset:<name>``); model resolution explains why it
#: cannot be resolved (:mod:`kvlint.models.resolve`).
KAITO_PRESET_PREFIX = "kaito-preset:"


#: KAITO's Azure SKU table: VM size -> (GPUCount, GPUMem: the total GPU memory of the VM in GiB as KAITO reads
#: it). Source: kaito-project/kaito@0894eb2b567d48cd2d66afe579acb1542b226af4 (v0.12.0) pkg/sku/azure_sku_handler.go
#: (``NewAzureSKUHandler``), which keeps only GPUs of CUDA compute capability 8.0 and newer (the V100 and T4 sizes
#: of earlier releases are gone: KAITO no longer finds a GPU config for them) and adds the A10 and Radeon PRO V620
#: sizes.
KAITO_AZURE_SKUS: dict[str, tuple[int, int]] = {
    "Standard_NV36ads_A10_v5": (1, 24),
    "Standard_NV72ads_A10_v5": (2, 48),
    "Standard_NC24ads_A100_v4": (1, 80),
    "Standard_NC48ads_A100_v4": (2, 160),
    "Standard_NC96ads_A100_v4": (4, 320),
    "Standard_ND96asr_A100_v4": (8, 320),
    "Standard_ND96amsr_A100_v4": (8, 640),
    "Standard_NC40ads_H100_v5": (1, 94),
    "Standard_NC80adis_H100_v5": (2, 188),
    "Standard_ND96isr_H100_v5": (8, 640),
    "Standard_NCC40ads_H100_v5": (1, 94),
    "Standard_ND96isr_H200_v5": (8, 1128),
    "Standard_NG32ads_V620_v1": (1, 32),
    "Standard_NG32adms_V620_v1": (1, 32),
}


#: ``--gpu-memory-utilization`` KAITO v0.12.0 passes to vLLM (``defaultGPUMemoryUtilization``) and its per-GPU
#: overrides keyed by the SKU's GPU model (``gpuMemoryUtilizationByGPUModel``: the 24 GiB A10 gets 0.82):
#: kaito-project/kaito@0894eb2b567d48cd2d66afe579acb1542b226af4 (v0.12.0) pkg/model/interface.go.
KAITO_GPU_MEMORY_UTILIZATION = "0.84"
KAITO_GPU_MEMORY_UTILIZATION_BY_GPU = {"NVIDIA A10": "0.82"}


#: Where KAITO mounts the inference config ConfigMap (``DefaultConfigMapMountPath``); kvlint only needs the
#: mount and the ``--kaito-config-file`` argument to agree.
KAITO_CONFIG_DIR = "/mnt/config"


def kaito_gpu_memory_utilization(gpu_model: str | None) -> str:
    """KAITO v0.12.0's ``--gpu-memory-utilization`` for a node whose GPU is ``gpu_model`` (the NVML name, as
    KAITO's SKU table spells it; None when unknown, e.g. a MIG slice): ``0.82`` for the NVIDIA A10, else
    ``0.84``. Source: kaito-project/kaito@0894eb2b567d48cd2d66afe579acb1542b226af4 pkg/model/interface.go
    ``buildVLLMInferenceCommand`` (``defaultGPUMemoryUtilization``, ``gpuMemoryUtilizationByGPUModel``). Earlier
    releases computed ``floor((1 - 1.5 GiB / per-GPU GiB) x 100) / 100`` capped at 0.95
    (``getGPUMemoryUtilForVLLM``, @9e0ac34d4a8a81b57cde5c166a6ec4e0eaf13d19); kvlint follows the newest release,
    as it assumes the newest vLLM for KAITO's image (KV208)."""
    return KAITO_GPU_MEMORY_UTILIZATION_BY_GPU.get(gpu_model or "", KAITO_GPU_MEMORY_UTILIZATION)


#: KAITO's node estimator (kaito-project/kaito@98ad8a9d8bffe32b7008cf54deba159c576d1cee
#: pkg/workspace/estimator/nodesestimator/estimator.go): the --gpu-memory-utilization it budgets with, the
#: factor from the safetensors size to the weights vLLM loads, the fixed per-GPU overhead in GiB, the overhead
#: that scales with the per-GPU weight share, and the context it reserves KV cache for when the inference config
#: sets no max-model-len.
KAITO_ESTIMATOR_UTILIZATION = 0.84
KAITO_ESTIMATOR_WEIGHT_EXPANSION = 1.02
KAITO_ESTIMATOR_BASE_OVERHEAD_GIB = 2.3
KAITO_ESTIMATOR_OVERHEAD_WEIGHT_FACTOR = 0.05
KAITO_ESTIMATOR_CONTEXT = 2048
_GIB = 1024**3


def kaito_node_count(
    gpus: int, gpu_mem_gib: int, model_bytes: int, kv_bytes_per_token: int, max_model_len: int | None
) -> int:
    """The nodes of ``gpus`` GPUs (``gpu_mem_gib`` GiB of GPU memory per node, as KAITO's SKU table gives it) that
    KAITO spreads a vLLM preset over, as its node estimator computes them (``NodeEstimator.EstimateNodeCount``,
    kaito-project/kaito@98ad8a9d8bffe32b7008cf54deba159c576d1cee pkg/workspace/estimator/nodesestimator/
    estimator.go), for a model whose safetensors take ``model_bytes`` bytes and whose KV cache takes
    ``kv_bytes_per_token`` bytes a token (whole model): per GPU, ``0.84 x`` its memory, less a reserve of 2.3 GiB
    plus the KV cache of ``max_model_len`` tokens (2048 when the inference config sets none) shared by the node's
    GPUs, divided by 1.05, holds weights; the GPUs needed are ``int(1.02 x model_bytes / that) + 1``, rounded up
    to whole nodes. KAITO runs the preset with ``--tensor-parallel-size`` = the node's GPUs and, over more than one
    node, ``--pipeline-parallel-size`` = the nodes on a Ray cluster (pkg/model/interface.go
    ``configureParallelism``, @06fef9181184b8755979e1a595f9db720e002c32); ``resource.count`` is not read for vLLM
    (the estimate replaces it, ``UpdateWorkspaceTargetNodeCount``). 1 when the reserve alone exceeds the budget
    (KAITO then refuses the Workspace, and the single-node plan says the model does not fit)."""
    per_gpu = gpu_mem_gib * _GIB // gpus
    budget = per_gpu * KAITO_ESTIMATOR_UTILIZATION
    reserve = KAITO_ESTIMATOR_BASE_OVERHEAD_GIB * _GIB + (
        (max_model_len or KAITO_ESTIMATOR_CONTEXT) * kv_bytes_per_token / gpus
    )
    if budget <= reserve:
        return 1
    weights_per_gpu = (budget - reserve) / (1 + KAITO_ESTIMATOR_OVERHEAD_WEIGHT_FACTOR)
    min_gpus = int(model_bytes * KAITO_ESTIMATOR_WEIGHT_EXPANSION / weights_per_gpu) + 1
    return max(1, -(-min_gpus // gpus))


def kaito_data_parallel(gpus: int, gpu_mem_gib: int, model_bytes: int) -> bool:
    """Whether KAITO runs a vLLM preset whose files take ``model_bytes`` bytes as data-parallel replicas on one
    node of ``gpus`` GPUs with ``gpu_mem_gib`` GiB of GPU memory in all (its SKU table's ``GPUMem``, the whole VM):
    KAITO's first parallelism tier, when the files take under half of one GPU, ``model_bytes x gpus x 2 <
    gpu_mem_gib GiB``, and the node has more than one GPU. KAITO then writes ``--data-parallel-size`` = the node's
    GPUs and ``--tensor-parallel-size=1`` (each GPU serves the whole model on its own), on one node only
    (``!multiNode``: a preset its estimator spreads over nodes is never data-parallel). Source:
    kaito-project/kaito@0894eb2b567d48cd2d66afe579acb1542b226af4 (v0.12.0) pkg/model/interface.go
    ``configureParallelism`` (tier 1) and ``modelFitsOnSingleGPU`` (the preset's ``TotalSafeTensorFileSize``,
    else ``ModelFileSize``; ``SKUNumGPUs`` and ``GPUMem`` from the GPU config of the Workspace,
    pkg/workspace/inference/preset_inferences.go ``GeneratePresetInference``). A MIG slice is one GPU
    (pkg/utils/common.go ``GetMIGGPUConfig``, ``GPUCount: 1``), so never data-parallel. kvlint passes its own
    figure for the model's weights (the checkpoint size when known) for KAITO's safetensors size."""
    if gpus <= 1 or model_bytes <= 0:
        return False
    return model_bytes * gpus * 2 < gpu_mem_gib * _GIB


# KAITO's vLLM presets run the kaito-base image's inference_api.py (a vLLM-argument-compatible wrapper);
# its tag is chosen by the KAITO release.
_KAITO_IMAGE = "mcr.microsoft.com/aks/kaito/kaito-base"


def workspace_workloads(doc: Document) -> list[Workload]:
    """KAITO ``Workspace`` (``resource``/``inference`` at the top level) or ``InferenceSet``
    (``spec.template.resource``/``.inference``) with an ``inference.preset`` -> the vLLM pod KAITO runs.

    KAITO runs its presets through ``python3 /workspace/vllm/inference_api.py`` in the kaito-base image
    (kaito-project/kaito presets/workspace/inference/vllm/inference_api.py, which parses vLLM's own
    arguments); which hub model a preset name means is fixed inside KAITO's preset registry, not in the
    manifest, so the model is the reference ``kaito-preset:<name>`` that model resolution explains (KV502)
    and that a ``kvlint.io/model`` annotation replaces. Placement: ``resource.instanceType`` (an AKS VM size;
    KAITO provisions nodes of it, which carry ``node.kubernetes.io/instance-type``) becomes that nodeSelector
    with the VM's GPU count as ``nvidia.com/gpu``, and KAITO's own additions to the vLLM command
    (``buildVLLMInferenceCommand``, v0.12.0): ``--tensor-parallel-size`` = that GPU count,
    ``--gpu-memory-utilization`` by the SKU's GPU (:func:`kaito_gpu_memory_utilization`) and
    ``--max-model-len=auto`` (vLLM picks the largest context that fits). KAITO's parallelism tiers
    (``configureParallelism``) are applied once the model is known (:func:`kvlint.pipeline.analyse_container`):
    a preset whose files take under half of one GPU of a multi-GPU SKU runs as data-parallel replicas
    (:func:`kaito_data_parallel`, :func:`run_data_parallel`); one that fits the node keeps TP = the SKU's GPUs. A
    preset too big for one node of a VM size in KAITO's SKU table is spread over
    the nodes KAITO's estimator asks for (:func:`kaito_node_count`, applied by :func:`kvlint.pipeline.analyse_container`
    once the model is known; :func:`spread_over_nodes`). Without an instanceType or partition, KAITO requests the
    GPUs of the nodes its labelSelector picks (:attr:`~kvlint.types.Workload.gpu_source`). ``resource.partition``
    ``mode: mig`` with ``profile``
    (KAITO v0.12.0 and later) becomes ``nvidia.com/mig-<profile>: 1`` with ``--tensor-parallel-size=1`` (a slice
    is one GPU), the same default utilization and ``--max-model-len=auto``, and is planned on the slice's memory
    (:func:`kvlint.memory.stage.plan_fleet` when the profile does not name the GPU); ``mode: accelerator`` with ``count`` becomes
    ``nvidia.com/gpu: count`` (and tensor-parallel-size ``count``) on bring-your-own nodes (GPU unknown, said so;
    KAITO's data-parallel tier there depends on the nodes' GPU memory, which the manifest does not give, so kvlint
    keeps TP ``count``). ``resource.count`` is not read for a vLLM preset (KAITO's estimate replaces it,
    pkg/workspace/controllers/workspace_controller.go ``UpdateWorkspaceTargetNodeCount``; a larger count only
    sizes the webhook's total-memory check, which v0.12.0 runs on bring-your-own nodes or non-vLLM runtimes,
    api/v1beta1/workspace_validation.go). An InferenceSet's ``spec.replicas`` is the number of Workspaces it
    creates from its template, each planned as one (the workload's replicas).
    """
    data = doc.data
    if doc.kind == "InferenceSet":
        holder = get_in(data, "spec", "template")
        path = "spec.template"
    else:
        holder = data
        path = ""
    if not isinstance(holder, dict):
        return []
    inference = holder.get("inference")
    resource = holder.get("resource")
    preset = get_in(inference, "preset")
    if not isinstance(preset, dict) or not preset.get("name"):
        return []
    ploc = loc_of(preset, "name")
    pname = str(preset.get("name"))
    transformers = _transformers_runtime(doc, pname, ploc, f"{path}.inference" if path else "inference")
    if transformers is not None:
        return [transformers]
    why: str | None = None
    kaito_sku: tuple[int, int] | None = None
    pod_items: list[tuple[str, Any, Loc | None]] = []
    res_items: list[tuple[str, Any, Loc | None]] = []
    kaito_args: list[tuple[Any, Loc | None]] = []
    kaito_keys: list[str | None] = []  # the Workspace field each of kaito_args is written from (None: always)
    if isinstance(resource, dict):
        it_name = resource.get("instanceType")
        part = resource.get("partition")
        if isinstance(it_name, str) and it_name:
            iloc = loc_of(resource, "instanceType")
            pod_items.append(
                ("nodeSelector", ldict(iloc, [("node.kubernetes.io/instance-type", it_name, iloc)]), iloc)
            )
            from kvlint.accelerators import instance_type

            it = instance_type(it_name)
            sku = next((v for k, v in KAITO_AZURE_SKUS.items() if k.lower() == it_name.lower()), None)
            kaito_sku = sku
            gpus = sku[0] if sku else (it.gpus if it is not None and it.gpus else 1)
            res_items.append((NVIDIA_GPU, gpus, iloc))
            # KAITO's command: --tensor-parallel-size = the SKU's GPU count, --gpu-memory-utilization from
            # its GPU memory (pkg/model/interface.go buildVLLMInferenceCommand)
            kaito_args.append((f"--tensor-parallel-size={gpus}", iloc))
            gpu_model = it.accelerator.name if it is not None and it.accelerator is not None else None
            kaito_args.append((f"--gpu-memory-utilization={kaito_gpu_memory_utilization(gpu_model)}", iloc))
            kaito_args.append(("--max-model-len=auto", iloc))
            kaito_keys += ["resource.instanceType", "resource.instanceType", None]
        elif isinstance(part, dict):
            mode = str(part.get("mode", ""))
            if mode == "mig" and part.get("profile"):
                mloc = loc_of(part, "profile")
                res_items.append((f"{MIG_RESOURCE_PREFIX}{part.get('profile')}", 1, mloc))
                # resource.partition exists from KAITO v0.12.0, whose command for a MIG slice (GPU config from
                # the profile alone, no GPU model) passes the default --gpu-memory-utilization 0.84 and
                # --max-model-len=auto: kaito-project/kaito@0894eb2b567d48cd2d66afe579acb1542b226af4 (v0.12.0)
                # pkg/utils/common.go GetMIGGPUConfig, pkg/model/interface.go buildVLLMInferenceCommand
                # (defaultGPUMemoryUtilization), pkg/workspace/inference/preset_inferences.go (MaxModelLenAuto)
                # a slice is one GPU (GPUCount 1), so KAITO's second tier writes --tensor-parallel-size=1
                # (configureParallelism; never data-parallel, modelFitsOnSingleGPU needs more than one GPU)
                kaito_args.append(("--tensor-parallel-size=1", mloc))
                kaito_args.append((f"--gpu-memory-utilization={KAITO_GPU_MEMORY_UTILIZATION}", mloc))
                kaito_args.append(("--max-model-len=auto", mloc))
                kaito_keys += ["resource.partition.profile", None, None]
                why = (
                    f"KAITO resource.partition mode mig runs on existing MIG nodes chosen by "
                    f"resource.labelSelector; profile {part.get('profile')} alone does not name the GPU"
                )
            else:
                cnt = int_or_none(part.get("count")) or 1
                res_items.append((NVIDIA_GPU, cnt, loc_of(part, "count") or loc_of(part)))
                ploc2 = loc_of(part, "count") or loc_of(part)
                kaito_args.append((f"--tensor-parallel-size={cnt}", ploc2))
                kaito_args.append((f"--gpu-memory-utilization={KAITO_GPU_MEMORY_UTILIZATION}", ploc2))
                kaito_args.append(("--max-model-len=auto", ploc2))
                kaito_keys += ["resource.partition.count", None, None]
                why = (
                    f"KAITO resource.partition mode {mode or '?'} runs on existing nodes chosen by "
                    "resource.labelSelector, whose GPU the manifest does not name"
                )
        else:
            why = "KAITO resource has no instanceType; the nodes are chosen by resource.labelSelector"
    if not res_items:
        # no instanceType nor partition (or no resource at all, as an InferenceSet template may have): KAITO runs
        # the preset on existing nodes its labelSelector picks and requests nvidia.com/gpu = their GPU count, read
        # from the nodes' labels (pkg/workspace/estimator/nodesestimator EstimateNodeCount, the BYO branch
        # sku.GetGPUConfigFromNodeLabels; pkg/workspace/inference/preset_inferences.go GenerateInferencePodSpec,
        # resourceReq from gpuConfig.GPUCount), a count the manifest does not give; its command still carries the
        # default --gpu-memory-utilization (the A10's 0.82 needs the GPU model) and --max-model-len=auto
        why = (
            why
            or "KAITO runs the preset on existing nodes chosen by its labelSelector, which the manifest does not name"
        )
        gpu_source = "KAITO, as many as the nodes it picks have (nvidia.com/gpu from their labels)"
        at = loc_of(holder, "resource") or ploc
        kaito_args.append((f"--gpu-memory-utilization={KAITO_GPU_MEMORY_UTILIZATION}", at))
        kaito_args.append(("--max-model-len=auto", at))
        kaito_keys += [None, None]
    else:
        gpu_source = None
    name_loc = loc_of(get_in(data, "metadata"), "name")
    args = llist(
        ploc,
        [
            (f"--model={KAITO_PRESET_PREFIX}{pname}", ploc),
            (f"--served-model-name={pname}", name_loc or ploc),
            *kaito_args,
        ],
    )
    container_items: list[tuple[str, Any, Loc | None]] = [
        ("name", doc.name or "kaito", name_loc),
        ("image", _KAITO_IMAGE, ploc),
        (
            "command",
            llist(ploc, [(w, ploc) for w in ("python3", "-m", "vllm.entrypoints.openai.api_server")]),
            ploc,
        ),
        ("args", args, ploc),
    ]
    if res_items:
        first = res_items[0][2]
        container_items.append(
            ("resources", ldict(first, [("limits", ldict(first, res_items), first)]), first)
        )
    container = ldict(loc_of(inference) or ploc, container_items)
    pod_items.append(("containers", llist(container.loc, [(container, container.loc)]), container.loc))
    ps = ldict(loc_of(holder) or doc.loc, pod_items)
    # KAITO mounts a memory-backed /dev/shm in every inference pod ("share memory for cross process
    # communication": pkg/workspace/inference/preset_inferences.go GenerateInferencePodSpec, ConfigSHMVolume)
    add_memory_shm(ps, container)
    cfg_name = inference.get("config") if isinstance(inference, dict) else None
    if isinstance(cfg_name, str) and cfg_name:
        # ... and its inference.config ConfigMap (ConfigCMVolume), passed as --kaito-config-file; KAITO's
        # inference_api.py appends the file's `vllm:` settings after the command line, so they win
        cloc = loc_of(inference, "config")
        vol = ldict(
            cloc,
            [("name", "config-volume", cloc), ("configMap", ldict(cloc, [("name", cfg_name, cloc)]), cloc)],
        )
        mount = ldict(cloc, [("name", "config-volume", cloc), ("mountPath", KAITO_CONFIG_DIR, cloc)])
        ps["volumes"] = llist(cloc, [*((v, None) for v in ps.get("volumes") or []), (vol, cloc)])
        container["volumeMounts"] = llist(
            cloc, [*((m, None) for m in container.get("volumeMounts") or []), (mount, cloc)]
        )
        args.append(f"--kaito-config-file={KAITO_CONFIG_DIR}/inference_config.yaml")
        args.locs.append(cloc or ploc or Loc("-"))
    # a Workspace has no image field: the KAITO operator runs its preset on the kaito-base image of its own
    # release (KV208 asks for --engine-version rather than an image tag)
    article = "an" if doc.kind[:1] in ("A", "E", "I", "O", "U") else "a"
    image_source = (
        f"the KAITO release installed in the cluster ({article} {doc.kind} has no image field; the operator runs "
        f"its preset '{pname}' on its own {_KAITO_IMAGE} image)"
    )
    replicas = int_or_none(get_in(data, "spec", "replicas")) if doc.kind == "InferenceSet" else None
    w = synthetic_workload(
        doc, ps, path or "inference", replicas=replicas, accelerator_why=why, image_source=image_source
    )
    w = replaced(w, gpu_source=gpu_source, kaito_sku=kaito_sku)
    # the options KAITO writes into the preset's command, so KV205-KV207 on them say KAITO wrote them
    # (kvlint.engines.options.chart_provenance); the user's own settings go in the inference config's vllm:
    written = [
        (f"--model={KAITO_PRESET_PREFIX}{pname}", ploc, "inference.preset.name"),
        (f"--served-model-name={pname}", name_loc or ploc, "inference.preset.name"),
        *((word, loc, key) for (word, loc), key in zip(kaito_args, kaito_keys, strict=True)),
    ]
    return [replaced(w, chart_args=tuple(_kaito_arg(word, loc, key, doc.kind) for word, loc, key in written))]


def spread_over_nodes(w: Workload, container: Any, nodes: int) -> tuple[Workload, Any]:
    """``(w, container)`` as KAITO runs them over ``nodes`` nodes (:func:`kaito_node_count` more than 1): the
    container's vLLM command with the ``--pipeline-parallel-size`` and ``--distributed-executor-backend=ray`` KAITO
    writes (pkg/model/interface.go ``configureParallelism``; the Ray cluster is KAITO's leader and worker pods,
    ``buildMultiNodeRayCommand``), in a copy of the pod, and the workload the group of ``nodes`` pods, each with
    the SKU's GPUs (``group_size``), which no longer asks for the estimate (``kaito_sku`` None). ``container`` is
    the synthetic container of ``w``'s pod; neither it nor the pod is changed."""
    args = container.get("args") if isinstance(container, LDict) else None
    if not isinstance(args, LList):
        return replaced(w, kaito_sku=None), container
    # at the instanceType, where KAITO's --tensor-parallel-size (the SKU's GPU count) is located
    at = next(
        (loc for a, loc in zip(args, args.locs, strict=True) if str(a).startswith("--tensor-parallel-size=")),
        None,
    )
    words = (f"--pipeline-parallel-size={nodes}", "--distributed-executor-backend=ray")
    spread_args = llist(args.loc, [*zip(args, args.locs, strict=True), *((word, at) for word in words)])
    spread = _copy(container, args=spread_args)
    pod = _pod_with(w.pod_spec, container, spread)
    written = tuple(_kaito_arg(word, at, "resource.instanceType", w.doc.kind) for word in words)
    return (
        replaced(w, pod_spec=pod, group_size=nodes, kaito_sku=None, chart_args=(*w.chart_args, *written)),
        spread,
    )


def run_data_parallel(w: Workload, container: Any) -> tuple[Workload, Any]:
    """``(w, container)`` as KAITO runs a preset small enough for half a GPU on a multi-GPU node
    (:func:`kaito_data_parallel`): the container's vLLM command with KAITO's ``--tensor-parallel-size`` (the SKU's
    GPU count, located at the instanceType) replaced by ``--tensor-parallel-size=1`` followed by
    ``--data-parallel-size`` = that GPU count (pkg/model/interface.go ``configureParallelism``, tier 1,
    kaito-project/kaito v0.12.0), in a copy of the pod; the workload no longer asks for the estimate
    (``kaito_sku`` None) and still requests all the node's GPUs (KAITO's resource request is the GPU config's
    ``GPUCount``, preset_inferences.go ``GenerateInferencePodSpec``). KAITO also writes
    ``--kaito-kv-cache-cpu-memory-utilization=0`` there (its inference_api.py's CPU KV offload off), a setting of
    KAITO's wrapper that kvlint's vLLM model does not read. Neither ``container`` nor the pod is changed."""
    args = container.get("args") if isinstance(container, LDict) else None
    if not isinstance(args, LList):
        return replaced(w, kaito_sku=None), container
    items: list[tuple[Any, Loc | None]] = []
    at: Loc | None = None
    gpus = ""
    for a, loc in zip(args, args.locs, strict=True):
        if str(a).startswith("--tensor-parallel-size="):
            at, gpus = loc, str(a).split("=", 1)[1]
            items += [("--tensor-parallel-size=1", loc), (f"--data-parallel-size={gpus}", loc)]
        else:
            items.append((a, loc))
    if not gpus:
        return replaced(w, kaito_sku=None), container
    dp = _copy(container, args=llist(args.loc, items))
    pod = _pod_with(w.pod_spec, container, dp)
    words = ("--tensor-parallel-size=1", f"--data-parallel-size={gpus}")
    kept = tuple(
        c for c in w.chart_args if not (c.words and c.words[0].startswith("--tensor-parallel-size="))
    )
    written = tuple(_kaito_arg(word, at, "resource.instanceType", w.doc.kind) for word in words)
    return replaced(w, pod_spec=pod, kaito_sku=None, chart_args=(*kept, *written)), dp


def _pod_with(pod_spec: LDict, container: Any, replacement: LDict) -> LDict:
    """A copy of ``pod_spec`` whose ``containers`` hold ``replacement`` in place of ``container`` (by identity),
    positions kept; ``pod_spec`` is not changed."""
    containers = pod_spec.get("containers")
    if not isinstance(containers, LList):
        return _copy(pod_spec)
    return _copy(
        pod_spec,
        containers=llist(
            containers.loc,
            [
                (replacement if c is container else c, loc)
                for c, loc in zip(containers, containers.locs, strict=True)
            ],
        ),
    )


def _copy(d: LDict, **changes: Any) -> LDict:
    """A shallow copy of ``d`` with its positions (:func:`~kvlint.workloads.base.located_copy`), and ``changes``
    (key -> new value, at the old value's position)."""
    out = located_copy(d)
    out.update(changes)
    return out


#: The annotation that picks a Workspace's runtime, and the value that picks Hugging Face Transformers over vLLM
#: (kaito-project/kaito api/v1beta1 ``AnnotationWorkspaceRuntime``, ``GetWorkspaceRuntimeName``;
#: pkg/model ``RuntimeNameHuggingfaceTransformers``).
KAITO_RUNTIME_ANNOTATION = "kaito.sh/runtime"
KAITO_TRANSFORMERS = "transformers"


def _transformers_runtime(doc: Document, pname: str, ploc: Loc | None, path: str) -> Workload | None:
    """An empty workload with a KV503 note for a Workspace (or InferenceSet) whose ``kaito.sh/runtime``
    annotation is ``transformers``, else None.

    KAITO runs a preset on vLLM by default (its vLLM feature gate, on since v0.4.0) and on the Hugging Face
    Transformers runtime when the annotation says ``transformers``, the exact value
    (kaito-project/kaito api/v1beta1/workspace_helpers ``GetWorkspaceRuntimeName``: any other value keeps vLLM).
    That runtime (``accelerate launch`` of the preset's Transformers ``inference_api.py``) is not an engine
    kvlint models, so the preset is not sized; the note says so at the annotation, and the run counts the
    object as not read (:func:`kvlint.sizing.unread`)."""
    meta = get_in(doc.data, "metadata")
    annotations = get_in(meta, "annotations")
    if not isinstance(annotations, dict) or annotations.get(KAITO_RUNTIME_ANNOTATION) != KAITO_TRANSFORMERS:
        return None
    at = loc_of(annotations, KAITO_RUNTIME_ANNOTATION) or ploc or doc.loc
    note = Finding(
        "KV503",
        f"kvlint does not read this {doc.kind}'s engine settings: {KAITO_RUNTIME_ANNOTATION}: {KAITO_TRANSFORMERS} "
        f"runs the preset '{pname}' on KAITO's Hugging Face Transformers runtime, not vLLM, and kvlint sizes only "
        "vLLM, SGLang and TGI, so its memory is not checked",
        at,
        fix=f"remove the {KAITO_RUNTIME_ANNOTATION} annotation (or set it to vllm) to serve the preset on vLLM, "
        "which kvlint sizes; or size the Transformers runtime by hand",
        severity="info",
        mark=Mark.SETTINGS_NOT_READ,
    )
    ps = ldict(at, [("containers", llist(at, []), at)])
    return replaced(synthetic_workload(doc, ps, path, replicas=None), findings=(note,))


def _kaito_arg(word: str, loc: Loc | None, key: str | None, kind: str) -> ChartArg:
    """``word`` as KAITO writes it into a preset's vLLM command (from the field ``key`` of the ``kind``
    object, None: into every command), for :attr:`Workload.chart_args`. The remedy of a KV205/KV206 on it: the
    object has no command to edit nor image to pin, so the release kvlint was told (--engine-version) is the
    thing to check, or the KAITO installation."""
    source = f" from {key}" if key else ""
    return ChartArg(
        loc,
        (word,),
        key,
        True,
        writer="KAITO",
        extra="the vllm: section of the inference config",
        why=f"KAITO writes {word} into the preset's vLLM command{source}",
        fix=f"nothing in the {kind} removes it: check that --engine-version names the vLLM release of the KAITO "
        f"installation (the {kind} has no image to pin), or upgrade KAITO",
    )
