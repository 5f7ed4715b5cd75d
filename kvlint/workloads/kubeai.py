"""KubeAI ``Model`` (kubeai.org/v1): the vLLM pod KubeAI's model controller creates for it."""

from __future__ import annotations

import re
from typing import Any

from kvlint.fastinit import replaced
from kvlint.gpu_resources import AMD_GPU, NVIDIA_GPU, TPU_RESOURCE
from kvlint.source import LDict, Loc, loc_of
from kvlint.types import ChartArg, DerivedAccelerator, Document, Finding, Mark, ValuesTerm, Workload
from kvlint.values import digits, yaml_text
from kvlint.workloads.base import (
    env_list,
    get_in,
    int_or_none,
    ldict,
    llist,
    synthetic_workload,
)

#: KubeAI resource profiles of the Helm chart's default values -> (GPU resource name, catalogue id or
#: None when the GPU is not in the catalogue). Source: substratusai/kubeai
#: charts/kubeai/values.yaml@00218190ccce0c96ccc7324c947e1bad57f91e3a ``resourceProfiles`` (each
#: ``nvidia-gpu-*`` profile sets ``limits: nvidia.com/gpu: "1"``; the H100/A100 names are taken as the
#: parts charts/kubeai/values-gke.yaml selects: ``nvidia-h100-80gb`` = H100 SXM 80GB,
#: ``nvidia-a100-80gb``, ``nvidia-tesla-a100`` = A100 40GB) and values-amd-gpu-device-plugin.yaml@bfd91eb9
#: (``amd-gpu-mi300x``: ``amd.com/gpu.device-id: 74a1``, 192G VRAM = MI300X). ``nvidia-gpu-rtx4070-8gb`` is read as
#: the GeForce RTX 4070 *Laptop* GPU **[assumed]**: the chart gives the profile no nodeSelector, its name says 8 GB,
#: which the 12 GB desktop RTX 4070 is not, and the one install found that sets its nodeSelector selects
#: ``nvidia.com/gpu.memory: "8188"`` (alinflorin/inference-bros ``kubeai.tf``@b6305896), the laptop part's NVML
#: total (``kvlint/accelerators/supplement.yaml``; its ``gpu.family: "ampere"`` there is wrong for an Ada part and
#: is not read). A node's ``nvidia.com/gpu.product`` or ``gpu.memory`` label still decides when the pod names it.
KUBEAI_PROFILES: dict[str, tuple[str, str | None]] = {
    "nvidia-gpu-t4": (NVIDIA_GPU, "nvidia-t4"),
    "nvidia-gpu-l4": (NVIDIA_GPU, "nvidia-l4"),
    "nvidia-gpu-l40s": (NVIDIA_GPU, "nvidia-l40s"),
    "nvidia-gpu-h100": (NVIDIA_GPU, "nvidia-h100-sxm5-80gb"),
    "nvidia-gpu-gh200": (NVIDIA_GPU, "nvidia-gh200-96gb"),
    "nvidia-gpu-a100-80gb": (NVIDIA_GPU, "nvidia-a100-sxm4-80gb"),
    "nvidia-gpu-a100-40gb": (NVIDIA_GPU, "nvidia-a100-sxm4-40gb"),
    "nvidia-gpu-a16": (NVIDIA_GPU, None),
    "nvidia-gpu-rtx4070-8gb": (NVIDIA_GPU, "nvidia-geforce-rtx-4070-laptop"),
    "amd-gpu-mi300x": (AMD_GPU, "amd-instinct-mi300x"),
}

#: Chart profiles whose GPU kvlint assumes rather than reads (the chart selects no node for them): what the
#: finding's evidence says after the mapping, so the user sees that the GPU is a guess (see the comment above).
KUBEAI_ASSUMED_PROFILES: dict[str, str] = {
    "nvidia-gpu-rtx4070-8gb": "assumed: the chart selects no node for this profile; an 8 GB RTX 4070 is the "
    "laptop part, the desktop RTX 4070 has 12 GB",
}


#: KubeAI profiles that are not GPUs -> (resource name or None, catalogue id or None, the chart's default
#: vLLM image for the profile's ``imageName``). Source: substratusai/kubeai@2f32ef498da629f96fd417ddfaaf22c28d40787e
#: charts/kubeai/values.yaml (``resourceProfiles.cpu.imageName: cpu``; ``modelServers.VLLM.images.cpu:
#: substratusai/vllm:v0.6.3.post1-cpu``, ``google-tpu: substratusai/vllm:v0.6.4.post1-tpu``) and
#: charts/kubeai/values-gke.yaml (``google-tpu-v5e-{1x1,2x2,2x4}``: ``imageName: google-tpu``,
#: ``limits: google.com/tpu: 1``, nodeSelector ``cloud.google.com/gke-tpu-accelerator:
#: tpu-v5-lite-podslice`` = TPU v5e). The image is the chart default, tag included, because the tag is where
#: the platform is named (``-cpu``/``-tpu``); a Model's ``spec.image`` overrides it.
KUBEAI_NON_GPU_PROFILES: dict[str, tuple[str | None, str | None, str]] = {
    "cpu": (None, None, "substratusai/vllm:v0.6.3.post1-cpu"),
    "google-tpu-v5e-1x1": (TPU_RESOURCE, "google-tpu-v5e", "substratusai/vllm:v0.6.4.post1-tpu"),
    "google-tpu-v5e-2x2": (TPU_RESOURCE, "google-tpu-v5e", "substratusai/vllm:v0.6.4.post1-tpu"),
    "google-tpu-v5e-2x4": (TPU_RESOURCE, "google-tpu-v5e", "substratusai/vllm:v0.6.4.post1-tpu"),
}


#: What the rules' fixes name in a pod's terms (its GPU count, its nodeSelector), said in a KubeAI Model's: the
#: Model has neither; its pods' GPUs are ``resourceProfile`` PROFILE:COUNT ("nvidia-gpu-l4:2 - 2x NVIDIA L4
#: GPUs", substratusai/kubeai@2f32ef498da629f96fd417ddfaaf22c28d40787e api/k8s/v1/model_types.go,
#: ModelSpec.ResourceProfile), and the profile's nodeSelector (with its GPU resource) is set in the KubeAI
#: installation's ``resourceProfiles`` (charts/kubeai/values.yaml at the same commit). Appended to each fix
#: that names them by :func:`kvlint.pipeline.in_values_terms`. A TPU or CPU profile's Model gets its own
#: (:func:`kubeai_terms`).
_GPU_COUNT = re.compile(
    r"GPUs per pod|request [\d,]+ GPUs?(?!\w)|(?:nvidia|amd)\.com/gpu(?![\w.-])|resources\.limits"
)
#: a TPU profile's count is its chips: the chart's ``google-tpu-v5e-*`` profiles each set ``limits: google.com/tpu:
#: 1``, multiplied by the count (charts/kubeai/values-gke.yaml at the commit above); KV403 names them "chips per pod"
_TPU_COUNT = re.compile(r"chips? per pod|request [\d,]+ chips?|google\.com/tpu(?![\w.-])|resources\.limits")
#: a CPU profile's Model gets a GPU only from a GPU profile, which also picks the installation's CUDA image
_CPU_TO_GPU = re.compile(r"request a GPU|GPUs per pod|(?:nvidia|amd)\.com/gpu(?![\w.-])|resources\.limits")
_NODE_SELECTOR = re.compile(r"nodeSelector")


def kubeai_terms(device: str, catalog: bool = False) -> tuple[ValuesTerm, ...]:
    """The fix terms of a KubeAI Model whose ``resourceProfile`` is a ``device`` profile (``gpu``, ``tpu`` or
    ``cpu``: :data:`KUBEAI_NON_GPU_PROFILES`; ``gpu`` for any other, the chart's GPU profiles and the install's
    own), said for the Model (``catalog`` False: :data:`KUBEAI_MODEL_TERMS` for a GPU) or for the ``catalog``
    entry of the KubeAI ``models`` chart the user edits (:data:`KUBEAI_CATALOG_TERMS` for a GPU): values read
    directly (:func:`catalog_workloads`) or that chart rendered by helm
    (:func:`kvlint.workloads.find.rendered_by_models_chart`)."""
    heading = "for this catalog entry of the KubeAI models chart" if catalog else "for this KubeAI Model"
    profile = "the entry's resourceProfile" if catalog else "resourceProfile"
    where = (
        "KubeAI installation's Helm values (the kubeai chart's, not these models chart values)"
        if catalog
        else "KubeAI installation's Helm values"
    )
    if device == "tpu":
        count = ValuesTerm(
            _TPU_COUNT,
            f"the TPU chips per pod are the count after the colon of {profile}, as in google-tpu-v5e-2x2:4",
            heading=heading,
        )
        what = "TPU"
    elif device == "cpu":
        count = ValuesTerm(
            _CPU_TO_GPU,
            f"a GPU comes from a GPU profile in {profile}, as in nvidia-gpu-l4:1, which also selects the "
            "installation's CUDA image of vLLM",
            heading=heading,
        )
        what = "node"
    else:
        count = ValuesTerm(
            _GPU_COUNT,
            f"the GPUs per pod are the count after the colon of {profile}, as in nvidia-gpu-h100:2",
            heading=heading,
        )
        what = "GPU"
    node = ValuesTerm(
        _NODE_SELECTOR,
        f"which {what} a pod gets is the resource profile's: its nodeSelector is in the resourceProfiles of the {where}",
        heading=heading,
    )
    return (count, node)


KUBEAI_MODEL_TERMS: tuple[ValuesTerm, ...] = kubeai_terms("gpu")


#: :data:`KUBEAI_MODEL_TERMS` for a Model the KubeAI ``models`` chart renders from a ``catalog`` entry of the
#: values being checked (:func:`catalog_workloads`): the user edits the entry (``catalog.<name>.resourceProfile``,
#: which the chart's template copies into the Model's spec), and the profiles' nodeSelectors are in the values of
#: the other chart, ``kubeai`` (charts/kubeai/values.yaml ``resourceProfiles``), not in these.
KUBEAI_CATALOG_TERMS: tuple[ValuesTerm, ...] = kubeai_terms("gpu", catalog=True)

# KubeAI's vLLM image is chosen by the install (Helm ``modelServers.VLLM.images``), not the Model: the
# tag (and so the vLLM version) is unknown from the manifest.
_KUBEAI_VLLM_IMAGE = "vllm/vllm-openai"


# AMD profiles run a ROCm build of vLLM (vLLM docs, "Installation > GPU > AMD ROCm": rocm/vllm images).
_KUBEAI_ROCM_IMAGE = "rocm/vllm"


def model_workloads(doc: Document, *, other_engines: bool = True, catalog: bool = False) -> list[Workload]:
    """KubeAI ``Model`` (kubeai.org/v1) with ``spec.engine: VLLM`` -> the pod KubeAI's model controller
    creates.

    Source: substratusai/kubeai internal/modelcontroller/engine_vllm.go ``vLLMPodForModel``
    (@07722ae0342f16897af606cb7a7c2fc99fa36efd): container ``server`` running
    ``python3 -m vllm.entrypoints.openai.api_server`` with args ``--model=<hf repo of spec.url>``,
    ``--served-model-name=<metadata.name>`` then ``spec.args``; ``spec.env`` as env sorted by name; the
    resource profile's nodeSelector/limits. ``spec.resourceProfile: <profile>:<count>`` requests
    ``count`` x the profile's resources (docs/concepts/resource-profiles.md: ``nvidia-gpu-l4:2`` = 2x L4).
    The profile's nodeSelector depends on the install, so the GPU is taken from the profile name
    (:data:`KUBEAI_PROFILES`) and recorded as the workload's ``derived_accelerator`` located at
    ``spec.resourceProfile``. The other engines of the CRD (OLlama, FasterWhisper, Infinity:
    ``api/k8s/v1/model_types.go``) give a workload with no container and a KV503 note saying the engine is not
    one kvlint sizes (:func:`_other_engine`), or none with ``other_engines`` False (an entry of the models
    chart's values that the chart does not render, :func:`catalog_workloads`). ``catalog``: the Model is one helm
    rendered from the KubeAI ``models`` chart (:func:`kvlint.workloads.find.rendered_by_models_chart`), whose
    fixes name the catalog entry the user edits (:func:`kubeai_terms`).
    """
    spec = get_in(doc.data, "spec")
    if not isinstance(spec, dict):
        return []
    refused = engine_refusal(doc, spec) if other_engines else None
    if str(spec.get("engine", "")).upper() != "VLLM":
        other = _other_engine(doc, spec) if other_engines else None
        if other is None and refused is not None:
            at = refused.loc or doc.loc
            ps = ldict(at, [("containers", llist(at, []), at)])
            other = synthetic_workload(doc, ps, "spec", replicas=None)
        if other is not None and refused is not None:
            other = replaced(other, findings=(*other.findings, refused))
        return [other] if other is not None else []
    if refused is not None:  # a vLLM Model spelled as the enum does not: sized as vLLM, after the refusal
        return [
            replaced(w, findings=(refused, *w.findings)) for w in _vllm_model_workloads(doc, spec, catalog)
        ]
    return _vllm_model_workloads(doc, spec, catalog)


#: The engines of the KubeAI Model CRD (api/k8s/v1/model_types.go ``ModelSpec.Engine``:
#: ``+kubebuilder:validation:Enum=OLlama;VLLM;FasterWhisper;Infinity`` and ``+kubebuilder:validation:Required``),
#: spelled as the enum spells them: the API server compares them as written.
MODEL_ENGINES = ("OLlama", "VLLM", "FasterWhisper", "Infinity")


def engine_refusal(doc: Document, spec: dict[Any, Any]) -> Finding | None:
    """KV206 (error) when the Model's ``spec.engine`` is missing or not one of :data:`MODEL_ENGINES` as written: the
    CRD's schema requires the field and lists its values (an OpenAPI ``enum``, which the API server matches
    exactly, case included), so the API server refuses the Model and KubeAI never creates its pod; None when the
    engine is one of them. A case variant of an engine (``vllm``) is named with the spelling the CRD takes."""
    engine = spec.get("engine")
    if isinstance(engine, str) and engine in MODEL_ENGINES:
        return None
    at = loc_of(spec, "engine") or loc_of(spec) or doc.loc
    listed = ", ".join(MODEL_ENGINES)
    if engine is None or engine == "":
        what = f"spec.engine is {'missing' if 'engine' not in spec else 'empty'}: the {doc.kind} CRD requires one of {listed}"
        fix = "set spec.engine to the engine KubeAI runs: VLLM for a Hugging Face model served by vLLM"
    else:
        shown = yaml_text(engine)
        what = f"spec.engine is {shown}, not one of the {doc.kind} CRD's engines ({listed}, matched exactly)"
        same = next(
            (e for e in MODEL_ENGINES if isinstance(engine, str) and e.upper() == engine.upper()), None
        )
        fix = (
            f"write engine: {same}, as the CRD spells it"
            if same is not None
            else f"use one of {listed}; KubeAI runs no other engine (serve it with a Deployment of its own)"
        )
    return Finding(
        "KV206",
        f"{what}, so the API server refuses the {doc.kind} and KubeAI creates no pod for it",
        at,
        fix=fix,
    )


def _vllm_model_workloads(doc: Document, spec: dict[Any, Any], catalog: bool = False) -> list[Workload]:
    """The pod of a Model whose engine is vLLM (:func:`model_workloads`)."""
    sloc = loc_of(spec) or doc.loc
    url = spec.get("url")
    url_s = str(url) if url is not None else ""
    model = url_s[len("hf://") :] if url_s.startswith("hf://") else url_s
    name_loc = loc_of(get_in(doc.data, "metadata"), "name")
    args_items: list[tuple[Any, Loc | None]] = [
        (f"--model={model}", loc_of(spec, "url")),
        (f"--served-model-name={doc.name}", name_loc),
    ]
    # the flags KubeAI's operator writes before the Model's own args (for findings to say so)
    written = tuple(
        ChartArg(loc, (word,), key, True, writer="KubeAI", extra="args")
        for (word, loc), key in zip(args_items, ("spec.url", "metadata.name"), strict=True)
    )
    user_args = spec.get("args")
    if isinstance(user_args, list):
        for i, a in enumerate(user_args):
            args_items.append((str(a), loc_of(user_args, i)))
    engine_loc = loc_of(spec, "engine")
    image = spec.get("image")
    profile_name = str(spec.get("resourceProfile") or "").partition(":")[0]
    non_gpu = KUBEAI_NON_GPU_PROFILES.get(profile_name)
    default_image = _KUBEAI_ROCM_IMAGE if profile_name.startswith("amd-") else _KUBEAI_VLLM_IMAGE
    if non_gpu is not None:
        default_image = non_gpu[2]
    container_items: list[tuple[str, Any, Loc | None]] = [
        ("name", "server", engine_loc),
        (
            "image",
            str(image) if image else default_image,
            loc_of(spec, "image") if image else engine_loc,
        ),
        (
            "command",
            llist(
                engine_loc, [(w, engine_loc) for w in ("python3", "-m", "vllm.entrypoints.openai.api_server")]
            ),
            engine_loc,
        ),
        (
            "args",
            llist(loc_of(spec, "args") if isinstance(user_args, list) else engine_loc, args_items),
            None,
        ),
    ]
    env = env_list(spec.get("env"))
    if env is not None:
        container_items.append(("env", env, env.loc))
    derived: DerivedAccelerator | None = None
    why: str | None = None
    image_source: str | None = None
    profile = spec.get("resourceProfile")
    ploc = loc_of(spec, "resourceProfile")
    if isinstance(profile, str) and profile:
        pname, _, count_s = profile.partition(":")
        count = digits(count_s) or 1
        resource, acc = KUBEAI_PROFILES.get(pname, (None, None))
        if non_gpu is not None:
            resource, acc = non_gpu[0], non_gpu[1]
        if resource is not None:
            limits = ldict(ploc, [(resource, count, ploc)])
            container_items.append(("resources", ldict(ploc, [("limits", limits, ploc)]), ploc))
        if acc is not None:
            derived = DerivedAccelerator(
                acc,
                f"KubeAI spec.resourceProfile={profile} (chart profile {pname} -> {acc}"
                + (f"; {KUBEAI_ASSUMED_PROFILES[pname]})" if pname in KUBEAI_ASSUMED_PROFILES else ")"),
                ploc or doc.loc,
            )
        elif non_gpu is not None:
            why = (
                f"KubeAI resource profile {pname} runs vLLM's CPU build on CPU nodes (chart image "
                f"{non_gpu[2]}); kvlint's memory model is for GPUs"
            )
        elif resource is not None:
            why = f"KubeAI resource profile {pname} names a GPU that is not in kvlint's catalogue"
        else:
            why = (
                f"KubeAI resource profile {pname} is not one of the chart's default profiles; its "
                "nodeSelector lives in the KubeAI install's config"
            )
    if not image and non_gpu is None:
        image_source = "the KubeAI installation (its Helm values modelServers.VLLM.images), not this Model"
    # vLLMPodForModel always mounts a memory-backed emptyDir "dshm" at /dev/shm.
    shm = ldict(engine_loc, [("name", "dshm", engine_loc), ("mountPath", "/dev/shm", engine_loc)])
    container_items.append(("volumeMounts", llist(engine_loc, [(shm, engine_loc)]), engine_loc))
    container = ldict(loc_of(spec, "engine") or sloc, container_items)
    empty = ldict(engine_loc, [("medium", "Memory", engine_loc)])
    vol = ldict(engine_loc, [("name", "dshm", engine_loc), ("emptyDir", empty, engine_loc)])
    ps = ldict(
        sloc,
        [
            ("containers", llist(container.loc, [(container, container.loc)]), container.loc),
            ("volumes", llist(engine_loc, [(vol, engine_loc)]), engine_loc),
        ],
    )
    replicas = int_or_none(spec.get("replicas"))
    if replicas is None:
        replicas = int_or_none(spec.get("minReplicas"))
    w = synthetic_workload(
        doc,
        ps,
        "spec",
        replicas=replicas,
        derived_accelerator=derived,
        accelerator_why=why,
        image_source=image_source,
    )
    # the profile's device: a TPU or CPU profile of KUBEAI_NON_GPU_PROFILES, a GPU for any other
    device = "gpu" if non_gpu is None else ("tpu" if non_gpu[0] == TPU_RESOURCE else "cpu")
    terms = kubeai_terms(device, catalog=catalog)
    return [replaced(w, chart_args=written, values_terms=terms)]


#: Where :func:`catalog_models` restates the KubeAI ``models`` chart: repository, commit and template.
MODELS_CHART_TEMPLATE = (
    "substratusai/kubeai@2f32ef498da629f96fd417ddfaaf22c28d40787e:charts/models/templates/models.yaml"
)
#: The most ``catalog`` entries read from KubeAI ``models`` chart values (each becomes a Model analysed in full);
#: beyond, the file gets a KV002 and no Model. [assumed] the chart's own catalogue holds about fifty; a file of
#: 10^5 one-line entries took 41 s of CPU and 1.4 GB before this limit.
MAX_CATALOG_ENTRIES = 1000

#: The keys of a catalogue entry the chart's template copies into the Model's ``spec`` (each inside a
#: ``with``: left out when empty), in the template's order; ``url`` is always written and ``minReplicas``
#: defaults to 0. Other keys of an entry (``image``, ``replicas``, ``enabled``, ``labels``) are not in the
#: rendered ``spec``.
_CHART_SPEC_KEYS = (
    "features",
    "owner",
    "url",
    "adapters",
    "engine",
    "args",
    "env",
    "minReplicas",
    "maxReplicas",
    "targetRequests",
    "scaleDownDelaySeconds",
    "resourceProfile",
    "cacheProfile",
    "files",
)


def _truthy(value: Any) -> bool:
    """Go template truth (``if``/``with``): false, 0, nil and empty strings, lists and maps are false."""
    return bool(value) if isinstance(value, (bool, int, float, str, list, dict)) else value is not None


def catalog_models(doc: Document) -> list[tuple[Document, bool]]:
    """The KubeAI ``Model`` objects the ``models`` chart renders from the values ``doc`` (``catalog.<name>``
    entries), each with whether the chart renders it with these values (``enabled``), in the file's order.

    Source: :data:`MODELS_CHART_TEMPLATE`: ``range $name, $model := .Values.catalog``, and for each entry
    with ``$model.enabled`` or ``.Values.all.enabled`` true, ``apiVersion: kubeai.org/v1``, ``kind: Model``,
    ``metadata.name: $name`` (``labels`` from ``$model.labels``) and a ``spec`` holding the keys of
    :data:`_CHART_SPEC_KEYS` the entry sets (``minReplicas`` defaulting to 0). Every entry is returned,
    disabled ones too (``False``): a repository keeping the catalogue maintains them all. Helm writes the
    Models in the order of their names; they are returned in the file's order here. An entry that is not a
    mapping (the template would fail on it) is skipped. Each value keeps its position in the values file, the
    Model's own position is the entry's key (``catalog.<name>:``). None when the catalogue has more than
    :data:`MAX_CATALOG_ENTRIES` entries (the values' note, a KV002, says so).
    """
    data = doc.data
    catalog = data.get("catalog") if isinstance(data, dict) else None
    key_locs = catalog.key_locs if isinstance(catalog, LDict) else {}
    out: list[tuple[Document, bool]] = []
    for name, entry, enabled in catalog_entries(doc):
        eloc = key_locs.get(name) or loc_of(entry) or doc.loc
        spec_items: list[tuple[str, Any, Loc | None]] = []
        for key in _CHART_SPEC_KEYS:
            value = entry.get(key)
            if key == "minReplicas" and not _truthy(value):
                value = 0
            elif key != "url" and not _truthy(value):
                continue
            spec_items.append((key, value, loc_of(entry, key) if key in entry else eloc))
        meta_items: list[tuple[str, Any, Loc | None]] = [("name", str(name), eloc)]
        labels = entry.get("labels")
        if _truthy(labels):
            meta_items.append(("labels", labels, loc_of(entry, "labels")))
        model = ldict(
            eloc,
            [
                ("apiVersion", "kubeai.org/v1", eloc),
                ("kind", "Model", eloc),
                ("metadata", ldict(eloc, meta_items), eloc),
                ("spec", ldict(loc_of(entry) or eloc, spec_items), loc_of(entry) or eloc),
            ],
        )
        out.append((Document(doc.path, doc.index, model, eloc), enabled))
    return out


def catalog_entries(doc: Document) -> list[tuple[Any, dict[Any, Any], bool]]:
    """The ``catalog`` entries of KubeAI ``models`` chart values ``doc`` that :func:`catalog_models` builds a
    Model from: ``(name, entry, enabled)`` for each entry that is a mapping, in the file's order, ``enabled``
    when the chart renders it (``$model.enabled`` or ``.Values.all.enabled``, Go template truth). Empty when
    the catalogue has more than :data:`MAX_CATALOG_ENTRIES` entries. Builds nothing: the values' note
    (:func:`kvlint.chart_values._kubeai_note`) counts entries from it without building the Models."""
    data = doc.data
    catalog = data.get("catalog") if isinstance(data, dict) else None
    if not isinstance(catalog, dict) or len(catalog) > MAX_CATALOG_ENTRIES:
        return []
    every = _truthy(get_in(data, "all", "enabled"))
    return [
        (name, entry, every or _truthy(entry.get("enabled")))
        for name, entry in catalog.items()
        if isinstance(entry, dict)
    ]


#: The engines of a KubeAI Model other than vLLM (``spec.engine``, the CRD's enum) -> what the pod runs
#: (internal/modelcontroller/engine_ollama.go, engine_infinity.go, engine_fasterwhisper.go @2f32ef4).
_OTHER_ENGINES = {
    "OLLAMA": "the Ollama server, built on llama.cpp",
    "INFINITY": "the Infinity embedding and reranking server",
    "FASTERWHISPER": "the faster-whisper speech-to-text server",
}


def _other_engine(doc: Document, spec: dict[Any, Any]) -> Workload | None:
    """For a Model whose ``spec.engine`` is OLlama, Infinity or FasterWhisper: a workload with no container
    and a KV503 info at ``spec.engine`` saying that the engine is not vLLM, SGLang or TGI, so nothing of it
    is sized (counted as not read, :func:`kvlint.sizing.unread`); else None."""
    engine = spec.get("engine")
    runs = _OTHER_ENGINES.get(str(engine).upper()) if isinstance(engine, str) else None
    if runs is None:
        return None
    at = loc_of(spec, "engine") or loc_of(spec) or doc.loc
    note = Finding(
        "KV503",
        f"kvlint does not read this {doc.kind}'s engine settings: engine: {engine} runs the model on {runs}, "
        "not vLLM, and kvlint sizes only vLLM, SGLang and TGI, so its memory is not checked",
        at,
        fix="size this engine's memory by hand; engine: VLLM serves a Hugging Face model on vLLM, which kvlint sizes",
        severity="info",
        mark=Mark.SETTINGS_NOT_READ,
    )
    ps = ldict(at, [("containers", llist(at, []), at)])
    return replaced(synthetic_workload(doc, ps, "spec", replicas=None), findings=(note,))


def catalog_engine(entry: dict[Any, Any]) -> Any:
    """The ``spec.engine`` of the Model the chart renders from the catalogue ``entry`` (:func:`catalog_models`:
    written inside a ``with``, so absent, None here, when the entry's is empty)."""
    engine = entry.get("engine")
    return engine if _truthy(engine) else None


def catalog_workloads(doc: Document) -> list[Workload]:
    """The workloads of the Models the KubeAI ``models`` chart renders from the values ``doc``
    (:func:`catalog_models`), each read as :func:`model_workloads` reads a Model: an entry of another engine
    (OLlama, Infinity, FasterWhisper) gives the note such a Model gets when the chart renders it, and nothing
    when it does not (the values' KV504 note names those engines once). The workload of an entry the chart does
    not render with these values (``enabled: false`` and ``all.enabled`` not true) is named
    ``<name> (enabled: false)``: it is checked as if enabled, and every report says it is not. The fixes of a
    vLLM entry's Model name the entry's fields (:func:`kubeai_terms` ``catalog``), not a Model's."""
    out: list[Workload] = []
    for model, enabled in catalog_models(doc):
        for w in model_workloads(model, other_engines=enabled, catalog=True):
            out.append(w if enabled else replaced(w, name=f"{w.name} (enabled: false)"))
    return out
