"""KServe ``InferenceService``: the predictor's ``model`` (or framework shorthand) as the pod KServe builds,
including the container of the Hugging Face serving runtime for ``modelFormat: huggingface``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvlint.engines.images import KSERVE_HF_IMAGE_NAME, split_image
from kvlint.fastinit import replaced
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import ChartArg, Document, Finding, Mark, Workload
from kvlint.values import as_list
from kvlint.workloads.base import (
    MODEL_ANNOTATION,
    Chain,
    add_memory_shm,
    get_in,
    int_or_none,
    is_pod_spec,
    ldict,
    llist,
    make_workload,
    synthetic_pod_spec,
    synthetic_workload,
)
from kvlint.workloads.gotemplate import render
from kvlint.workloads.hardwareprofile import HardwareProfiles, apply_profile
from kvlint.workloads.llmisvc import model_from_uri
from kvlint.workloads.merge import strategic_merge

# KServe v1beta1 predictor keys that hold a container-like model spec (``model`` and the older
# per-framework shorthands).
_KSERVE_MODEL_KEYS = (
    "model",
    "huggingface",
    "pytorch",
    "triton",
    "tensorflow",
    "sklearn",
    "xgboost",
    "onnx",
    "lightgbm",
    "paddle",
    "pmml",
)


def predictor_workloads(doc: Document, runtimes: Runtimes | None = None) -> list[Workload]:
    """InferenceService ``spec.predictor``: its ``model`` (or framework shorthand) as a synthetic PodSpec,
    or the predictor itself when it is a plain PodSpec.

    When the model names a ``runtime`` (or its ``modelFormat`` auto-selects one) that is among the inputs
    (``runtimes``), the pod is the runtime's container merged with the model's, as KServe builds it
    (:func:`merged_runtime_workloads`); a named runtime that is not among the inputs is said so."""
    spec = get_in(doc.data, "spec")
    pred = get_in(spec, "predictor")
    if not isinstance(pred, dict):
        return []
    chain: Chain = [(doc.data, "spec"), (spec, "predictor")]
    if runtimes is not None and runtimes.profiles:
        # OpenShift AI's webhook writes a named hardware profile into the predictor at admission
        profile = runtimes.profiles.named_by(doc)
        refusal = runtimes.profiles.refusal(profile) if profile is not None else None
        if refusal is not None:
            # the webhook cannot parse the profile and refuses the InferenceService: no pod runs
            return [_refused(doc, pred, (refusal,))]
        if profile is not None:
            pred = apply_profile(pred, profile)
    refused = _worker_size_findings(pred)
    if refused:
        # KServe's webhook rejects the InferenceService: no pod runs, and none is sized on a made-up size
        return [_refused(doc, pred, refused)]
    for key in _KSERVE_MODEL_KEYS:
        model = pred.get(key)
        if isinstance(model, dict):
            transformers = _transformers_backend(doc, key, model)
            if transformers is not None:
                return [transformers]
            if runtimes is not None and key == "model":
                # a model naming its own image still runs on its runtime: KServe merges the model's container
                # (image included) over the runtime's kserve-container (merged_runtime_workloads)
                found = runtimes.select(
                    model, doc.namespace, multinode=isinstance(pred.get("workerSpec"), dict)
                )
                if found is not None:
                    refused = runtime_worker_size_findings(found, used=True)
                    if refused:
                        # KServe never creates the runtime: nothing runs, nothing is sized on its sizes
                        return [_refused(doc, pred, refused)]
                    return merged_runtime_workloads(doc, pred, model, found)
            hf = _kserve_hf_runtime(doc, key, model)
            named = str(model.get("runtime") or "")
            if hf is None and named and not named.startswith("kserve-huggingfaceserver"):
                # (an image of the model's own replaces only the runtime's image: the command and arguments
                # still come from the runtime, merged_runtime_workloads)
                return [_runtime_missing(doc, pred, key, model, named)]
            ps = synthetic_pod_spec(pred, hf[0] if hf else model, _KSERVE_MODEL_KEYS)
            if hf:
                add_memory_shm(ps, hf[0])
            w = make_workload(
                doc,
                ps,
                chain,
                path=f"spec.predictor.{key}",
                replicas=int_or_none(pred.get("replicas")),
                extra_meta=pred,
            )
            location = storage_location(model, pred)
            if hf:
                w = _with_facts(w, hf[1])
            elif location:
                w = replaced(w, model_storage=location)
            return [w]
    if is_pod_spec(pred):
        w = make_workload(
            doc,
            pred,
            chain,
            path="spec.predictor",
            replicas=int_or_none(pred.get("replicas")),
            extra_meta=pred,
        )
        facts = custom_storage_facts(pred)
        if facts:
            # the storage initializer (or modelcar) mounts /mnt/models into kserve-container alone: another
            # container of the pod (a second engine with its own model) keeps its own
            w = replaced(w, model_container=str(facts.pop("container") or ""))
        return [_with_facts(w, facts)]
    return []


#: The environment variable a custom predictor's container names its model's storage URI with
#: (``constants.CustomSpecStorageUriEnvVarKey``, read by ``CustomPredictor.GetStorageUri``), and where KServe's
#: storage initializer (or modelcar) puts that model (``constants.DefaultModelLocalMountPath``).
CUSTOM_STORAGE_URI = "STORAGE_URI"
MODEL_MOUNT = "/mnt/models"


def custom_storage_facts(pred: dict) -> dict[str, str | None]:
    """The :class:`~kvlint.types.Workload` facts of the ``STORAGE_URI`` env of a custom predictor's container (the
    one named ``kserve-container``, or the first one when it is the only one or unnamed: ``CustomPredictor.Default``
    names it so): KServe v1beta1 ``CustomPredictor.GetStorageUri`` (pkg/apis/serving/v1beta1/predictor_custom.go)
    returns that value, and the storage initializer downloads the model there to ``/mnt/models``, mounted into
    ``kserve-container`` (an ``oci://`` modelcar is mounted there), as for a predictor's ``storageUri``. Taken only
    when the container's command or arguments read ``/mnt/models``: then an ``hf://`` or ``oci://`` URI names the
    model (``derived_model``) and an object-store, web or PVC one is where it is stored (``model_storage``, the
    catalogued model its last component names), with ``container`` the name of the container they are for (as
    written, "" when unnamed). Empty otherwise."""
    containers = pred.get("containers")
    if not isinstance(containers, list) or not containers:
        return {}
    named = [c for c in containers if isinstance(c, dict) and c.get("name") == KSERVE_CONTAINER]
    if named:
        container = named[0]
    elif isinstance(containers[0], dict) and (len(containers) == 1 or not containers[0].get("name")):
        container = containers[0]
    else:
        return {}
    uri = ""
    for e in as_list(container.get("env")):
        if isinstance(e, dict) and e.get("name") == CUSTOM_STORAGE_URI and isinstance(e.get("value"), str):
            uri = e["value"].strip()
    if not uri:
        return {}
    words = [str(w) for k in ("command", "args") for w in as_list(container.get(k))]
    if not any(_reads_model_mount(w) for w in words):
        return {}  # the engine loads another model (a hub id, another path): the download is not its model
    return {
        "derived_model": model_from_uri(uri, oci=True),
        "model_storage": storage_location({"storageUri": uri}, None),
        "container": str(container.get("name") or ""),
    }


def _reads_model_mount(word: str) -> bool:
    """Whether a command word names ``/mnt/models`` or a path below it (as itself, an option's ``=`` value, or a
    word of a shell script)."""
    at = word.find(MODEL_MOUNT)
    while at >= 0:
        before = word[at - 1] if at > 0 else ""
        after = word[at + len(MODEL_MOUNT) : at + len(MODEL_MOUNT) + 1]
        if before in ("", "=", " ", "'", '"', "\n") and after in ("", "/", " ", "'", '"', "\n"):
            return True
        at = word.find(MODEL_MOUNT, at + 1)
    return False


#: What a ``--backend`` of KServe's Hugging Face server other than auto/vllm runs the model on.
_BACKEND_RUNS = {
    "huggingface": "runs the model on KServe's Hugging Face Transformers backend, not vLLM",
    "triton": "runs the model on Triton Inference Server (encoder models only), not vLLM",
}


def _worker_size_findings(pred: dict) -> tuple[Finding, ...]:
    """KV206 (error) at each of the predictor's ``workerSpec.tensorParallelSize`` / ``pipelineParallelSize``
    that KServe refuses: below 1 (the InferenceService validating webhook, kserve/kserve
    pkg/apis/serving/v1beta1/inference_service_validation.go ``validateMultiNodeVariables`` at
    00ff000547e7fc8a98ef0edb165a5d7cd1610e94: "WorkerSpec.TensorParallelSize cannot be less than 1", against
    ``constants.DefaultTensorParallelSize`` / ``DefaultPipelineParallelSize``, both 1), or not an integer (the
    fields are ``*int`` in ``WorkerSpec``, so the API server's schema refuses any other type). Empty when both
    are absent or valid."""
    return _refused_sizes(
        pred.get("workerSpec"),
        lambda field: (
            "KServe's InferenceService webhook rejects a size below 1, so the InferenceService is not created"
        ),
        "the field is an integer in KServe's WorkerSpec, so the API server rejects the InferenceService",
        "kvlint does not size the predictor",
    )


def runtime_worker_size_findings(runtime: Document, *, used: bool) -> tuple[Finding, ...]:
    """KV206 (error) at each ``workerSpec.tensorParallelSize`` / ``pipelineParallelSize`` of a KServe
    ``ServingRuntime`` or ``ClusterServingRuntime`` (``serving.kserve.io``) that KServe refuses: below 1 (the
    runtime validating webhook, kserve/kserve pkg/webhook/admission/servingruntime/servingruntime_webhook.go
    ``validateMultiNodeSpec`` at 0217bdabaaa250485b336805da1aed04960dc758, for both kinds: "the
    WorkerSpec.TensorParallelSize cannot be less than 1", against ``constants.DefaultTensorParallelSize`` /
    ``DefaultPipelineParallelSize``, both 1), or not an integer (``*int`` fields of ``WorkerSpec``: the API
    server's schema). The webhook allows a disabled runtime (``spec.disabled: true``) unchecked, so it gets
    none. The runtime is never created, so no InferenceService runs on it: ``used`` (an InferenceService among
    the inputs selects it) says that kvlint does not size that predictor either."""
    if runtime.kind not in ("ServingRuntime", "ClusterServingRuntime"):
        return ()
    api = runtime.data.get("apiVersion") if isinstance(runtime.data, dict) else None
    spec = get_in(runtime.data, "spec")
    if not (isinstance(api, str) and api.startswith("serving.kserve.io/")) or not isinstance(spec, dict):
        return ()
    if spec.get("disabled") is True:
        return ()
    kind = runtime.kind
    return _refused_sizes(
        spec.get("workerSpec"),
        lambda field: (
            f"KServe's {kind} webhook rejects a size below 1 (\"the WorkerSpec."
            f'{field[0].upper()}{field[1:]} cannot be less than 1"), so the {kind} is not created and no '
            "InferenceService runs on it"
        ),
        f"the field is an integer in KServe's WorkerSpec, so the API server rejects the {kind} and no "
        "InferenceService runs on it",
        "kvlint does not size the predictor that uses it" if used else "",
    )


def _refused_sizes(ws: Any, below: Callable[[str], str], not_int: str, tail: str) -> tuple[Finding, ...]:
    """KV206 (error) at each ``tensorParallelSize`` / ``pipelineParallelSize`` of the ``workerSpec`` ``ws`` below
    1 (``below(field)`` says who refuses it) or not an integer (``not_int``); ``tail`` ends the message."""
    if not isinstance(ws, dict):
        return ()
    out = []
    for field, flag in (
        ("tensorParallelSize", "--tensor-parallel-size"),
        ("pipelineParallelSize", "--pipeline-parallel-size"),
    ):
        v = ws.get(field)
        if v is None:
            continue
        n = int_or_none(v)
        if n is not None and n >= 1:
            continue
        shown = str(v).lower() if isinstance(v, bool) else str(v)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        why = below(field) if n is not None else not_int
        out.append(
            Finding(
                "KV206",
                f"invalid value {shown!r} for workerSpec.{field}: {why}" + (f"; {tail}" if tail else ""),
                loc_of(ws, field),
                fix=f"set workerSpec.{field} to a whole number of 1 or more (KServe passes it to the engine as "
                f"{flag})",
                severity="error",
            )
        )
    return tuple(out)


def _refused(doc: Document, pred: dict, findings: tuple[Finding, ...]) -> Workload:
    """The predictor of an InferenceService KServe refuses (``findings`` say why): no container, so nothing is
    sized on a value that never reaches an engine."""
    at = loc_of(pred, "workerSpec") or loc_of(pred) or doc.loc
    ps = ldict(at, [("containers", llist(at, []), at)])
    return replaced(synthetic_workload(doc, ps, "spec.predictor", replicas=None), findings=findings)


def _transformers_backend(doc: Document, key: str, model: dict) -> Workload | None:
    """An empty workload with a KV503 note for a ``modelFormat: huggingface`` predictor (or the ``huggingface``
    shorthand) whose ``args`` pick a ``--backend`` other than ``auto`` or ``vllm``, else None.

    KServe's Hugging Face server chooses its backend from ``--backend`` (default ``auto``; the names of its
    ``Backend`` enum, ``auto``, ``huggingface`` and ``vllm``, plus ``triton`` in some releases): vLLM for
    ``auto``/``vllm`` when the architecture is one vLLM supports, else the Transformers
    ``HuggingfaceGenerativeModel``/``HuggingfaceEncoderModel`` (kserve/kserve
    python/huggingfaceserver/huggingfaceserver/__main__.py ``load_model``, and ``__init__.py`` ``Backend``, at
    0217bdabaaa250485b336805da1aed04960dc758). Transformers is not an engine kvlint models, so the predictor is
    not sized; as for KAITO's Transformers runtime, the note says so at the ``--backend`` argument and the run
    counts the object as not read (:func:`kvlint.sizing.unread`)."""
    from kvlint.engines.kserve import huggingface_backend

    fmt = model.get("modelFormat")
    fmt_name = fmt.get("name") if isinstance(fmt, dict) else None
    if not (key == "huggingface" or str(fmt_name or "").lower() == "huggingface"):
        return None
    args = model.get("args")
    words = [str(a) for a in args] if isinstance(args, list) else []
    backend = huggingface_backend(words)
    if backend in ("auto", "vllm"):
        return None
    i = next((i for i, w in enumerate(words) if w.replace("-", "_").startswith("__backend")), None)
    at = (loc_of(args, i) if i is not None else None) or loc_of(model, "args") or doc.loc
    note = Finding(
        "KV503",
        f"kvlint does not read this {doc.kind}'s engine settings: --backend={backend} "
        + _BACKEND_RUNS.get(backend, "is not vLLM (the server's backends are auto, huggingface and vllm)")
        + ", and kvlint sizes only vLLM, SGLang and TGI, so its memory is not checked",
        at,
        fix="remove --backend (its default, auto, serves a model vLLM supports on vLLM, which kvlint sizes) or "
        "set --backend=vllm; or size the Transformers backend by hand",
        severity="info",
        mark=Mark.SETTINGS_NOT_READ,
    )
    ps = ldict(at, [("containers", llist(at, []), at)])
    return replaced(synthetic_workload(doc, ps, f"spec.predictor.{key}", replicas=None), findings=(note,))


#: The container KServe's Hugging Face ClusterServingRuntime (``kserve-huggingfaceserver``, selected for
#: ``modelFormat: huggingface``) contributes when the InferenceService names no image: the
#: ``kserve/huggingfaceserver`` image, whose ENTRYPOINT is ``python -m huggingfaceserver``, args
#: ``--model_name={{.Name}}`` and a memory-backed ``/dev/shm``. Source: kserve/kserve
#: config/runtimes/kserve-huggingfaceserver.yaml@6362f1f08a20d3022758276285aa95544a8aba73 (the image tag is
#: set by the KServe release) and python/huggingfaceserver/Dockerfile.
KSERVE_HF_IMAGE = "kserve/huggingfaceserver"


KSERVE_HF_COMMAND = ("python", "-m", "huggingfaceserver")


#: ``storageUri`` schemes KServe's storage initializer downloads to ``/mnt/models`` and kvlint cannot read (the
#: ``supportedUriFormats`` of KServe's default ClusterStorageContainer, config/storagecontainers, and ``pvc://``);
#: ``hf://`` and ``oci://`` are read otherwise (:func:`kvlint.workloads.llmisvc.model_from_uri`).
_STORED_SCHEMES = ("s3://", "gs://", "pvc://", "https://", "http://", "hdfs://", "webhdfs://")


def storage_location(model: Any, pred: Any) -> str | None:
    """Where KServe's storage initializer downloads a predictor's model from, when kvlint cannot read that place:
    an object-store, web or PVC ``storageUri`` of the model (or of the predictor), else the ``path`` of its
    ``storage`` spec (``V1beta1StorageSpec.path``: the object's path in the bucket its ``key`` names); None
    otherwise. The models stage takes the model's name from it (:attr:`kvlint.types.Workload.model_storage`)."""
    uri = str(
        (model.get("storageUri") if isinstance(model, dict) else None) or get_in(pred, "storageUri") or ""
    )
    if uri.startswith(_STORED_SCHEMES):
        return uri
    storage = model.get("storage") if isinstance(model, dict) else None
    path = storage.get("path") if isinstance(storage, dict) else None
    if isinstance(path, str) and path.strip("/ "):
        return path.strip()
    return None


def _kserve_hf_runtime(doc: Document, key: str, model: dict) -> tuple[LDict, dict[str, str | None]] | None:
    """For an InferenceService predictor ``model`` of ``modelFormat: huggingface`` (or the ``huggingface``
    shorthand) without its own command, and without an image of its own other than a ``huggingfaceserver``
    one (which replaces the runtime's, as KServe merges them): the container the runtime and the model spec make
    together (KServe appends the model's ``args`` to the runtime's), plus the workload facts it implies
    (:class:`~kvlint.types.Workload` field -> value): the image source (KV208, unless the model names its own
    image) and, for an ``hf://ORG/NAME`` ``storageUri`` that the server reads from ``/mnt/models``, the model
    (``derived_model``), or where an unreadable one is stored (``model_storage``). None for other shapes, and
    for ``--backend=huggingface`` (transformers, not vLLM)."""
    fmt = model.get("modelFormat")
    fmt_name = fmt.get("name") if isinstance(fmt, dict) else None
    if not (key == "huggingface" or str(fmt_name or "").lower() == "huggingface"):
        return None
    own_image = str(model.get("image") or "")
    if model.get("command") or not isinstance(model, LDict):
        return None
    if own_image and not split_image(own_image)[0].rsplit("/", 1)[-1].startswith(KSERVE_HF_IMAGE_NAME):
        return None  # another image over the runtime's: what its ENTRYPOINT runs is not known here

    runtime = str(model.get("runtime") or "")
    if runtime and not runtime.startswith("kserve-huggingfaceserver"):
        return None  # a ServingRuntime of the cluster's own: its container is not known here
    from kvlint.engines.kserve import huggingface_backend, model_id_given

    user_args = model.get("args")
    words = [str(a) for a in user_args] if isinstance(user_args, list) else []
    if huggingface_backend(words) not in ("auto", "vllm"):
        return None  # transformers backend: not an engine kvlint sizes; keep the spec as written
    anchor = loc_of(model, "modelFormat") or loc_of(model) or doc.loc
    c = LDict(loc=model.loc)
    for k, v in model.items():
        c[k] = v
        if k in model.locs:
            c.locs[k] = model.locs[k]
        if k in model.key_locs:
            c.key_locs[k] = model.key_locs[k]
    c.setdefault("name", "kserve-container")
    c.locs.setdefault("name", anchor)
    if not own_image:
        c["image"] = KSERVE_HF_IMAGE
        c.locs["image"] = anchor
    c["command"] = llist(anchor, [(w, anchor) for w in KSERVE_HF_COMMAND])
    c.locs["command"] = anchor
    items: list[tuple[Any, Loc | None]] = [
        (f"--model_name={doc.name}", loc_of(get_in(doc.data, "metadata"), "name"))
    ]
    if isinstance(user_args, list):
        items += [(str(a), loc_of(user_args, i)) for i, a in enumerate(user_args)]
    c["args"] = llist(loc_of(model, "args") or anchor, items)
    c.locs["args"] = loc_of(model, "args") or anchor
    # the image (and with it the vLLM release) is the runtime's, set by the KServe release, unless the model
    # names its own huggingfaceserver image, which KServe merges over the runtime's (merged_runtime_workloads)
    facts: dict[str, str | None] = (
        {}
        if own_image
        else {
            "image_source": "the KServe ClusterServingRuntime kserve-huggingfaceserver (its image tag is set by "
            "the KServe release), not this InferenceService"
        }
    )
    uri = str(model.get("storageUri") or "")
    has_id = any(model_id_given(w) for w in words)
    stored = model_from_uri(uri, oci=True)
    if stored and not has_id:
        # hf://ORG/NAME[:REVISION] (KServe's Hugging Face storage URI), or an oci:// modelcar image
        facts["derived_model"] = stored
    location = storage_location(model, None)
    if location and not has_id:
        facts["model_storage"] = location
    return c, facts


# --------------------------------------------------------------------------------------------------------
# InferenceService + ServingRuntime / ClusterServingRuntime among the inputs

#: The container of a runtime that serves the model (``constants.InferenceServiceContainerName``) and the
#: worker container of a multi-node runtime (``constants.WorkerContainerName``).
KSERVE_CONTAINER = "kserve-container"
KSERVE_WORKER_CONTAINER = "worker-container"
#: Model-spec keys that are not container fields (``v1beta1.ModelSpec`` beyond the embedded container).
_MODEL_ONLY = ("modelFormat", "runtime", "storageUri", "storage", "protocolVersion")
#: PodSpec fields a runtime contributes (``MergePodSpec``: the ``ServingRuntimePodSpec`` fields).
_RUNTIME_POD_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "volumes",
    "imagePullSecrets",
    "schedulerName",
)
#: Keys of the predictor that are not PodSpec fields (``v1beta1.ComponentExtensionSpec`` and the model keys).
_PREDICTOR_NOT_POD = frozenset(
    {
        *_KSERVE_MODEL_KEYS,
        "minReplicas",
        "maxReplicas",
        "scaleTarget",
        "scaleMetric",
        "scaleMetricType",
        "containerConcurrency",
        "timeout",
        "canaryTrafficPercent",
        "logger",
        "batcher",
        "labels",
        "annotations",
        "deploymentStrategy",
        "autoScaling",
        "workerSpec",
        "replicas",
        "storageUri",
    }
)


class Runtimes:
    """``ServingRuntime`` and ``ClusterServingRuntime`` documents among the inputs, by name; and the OpenShift
    AI ``HardwareProfile`` documents (``profiles``) an InferenceService's annotation may name
    (:mod:`kvlint.workloads.hardwareprofile`).

    Indexed once (by kind and name, and by the model formats each runtime auto-selects), so choosing the
    runtime of a service does not go over every runtime of the inputs (a cluster's export holds dozens; each
    InferenceService asked twice: what it consumes, then its workloads)."""

    def __init__(self, docs: list[Document]) -> None:
        self.profiles = HardwareProfiles(docs)
        self.docs = [
            d
            for d in docs
            if d.kind in ("ServingRuntime", "ClusterServingRuntime")
            and isinstance(get_in(d.data, "spec"), dict)
        ]
        #: (kind, name) -> the runtimes of that kind and name, in input order
        self._named: dict[tuple[str, str], list[Document]] = {}
        #: format name in lower case -> (priority, runtime) of each ``autoSelect`` entry for it, in input order
        #: (runtimes, then their ``supportedModelFormats``)
        self._auto: dict[str, list[tuple[int, Document]]] = {}
        for d in self.docs:
            self._named.setdefault((d.kind, d.name), []).append(d)
            formats = get_in(d.data, "spec", "supportedModelFormats")
            for f in formats if isinstance(formats, list) else []:
                if isinstance(f, dict) and f.get("autoSelect") is True:
                    prio = int_or_none(f.get("priority")) or 0
                    self._auto.setdefault(str(f.get("name", "")).lower(), []).append((prio, d))
        #: (format name in lower case, multi-node) -> the runtime auto-selected, once a run: the services of one
        #: format went over all its runtimes each (services x runtimes)
        self._picked: dict[tuple[str, bool], Document | None] = {}

    def select(self, model: dict, namespace: str | None, *, multinode: bool = False) -> Document | None:
        """The runtime KServe uses for ``model``: the named ``runtime`` (a ServingRuntime of the namespace
        first, one naming no namespace next, then a ClusterServingRuntime; ``GetServingRuntime``), else one whose ``supportedModelFormats``
        auto-selects the model's format (highest ``priority``, the first of those in input order) and that is
        a multi-node runtime (one with a ``workerSpec``) exactly when ``multinode``, the predictor having a
        ``workerSpec`` (kserve/kserve@aaac4e29 ``pkg/apis/serving/v1beta1/predictor_model.go``
        ``GetSupportingRuntimes``: ``IsMultiNodeRuntime() == isMultinode``). None when none is among the
        inputs."""
        name = model.get("runtime")
        if name:
            for kind in ("ServingRuntime", "ClusterServingRuntime"):
                cands = self._named.get((kind, str(name)), [])
                # a runtime of the service's namespace first, then one that names none (applied into whichever
                # namespace it is deployed to), each in input order: a rendered tree comes after the plain files
                # of a walk, and a namespace-less runtime of the same name elsewhere in it is not the one meant
                same = [d for d in cands if kind == "ClusterServingRuntime" or d.namespace == namespace] + [
                    d
                    for d in cands
                    if kind != "ClusterServingRuntime" and d.namespace is None and namespace is not None
                ]
                if same or cands:
                    return (same or cands)[0]
            return None
        fmt = get_in(model, "modelFormat", "name")
        if not fmt:
            return None
        key = (str(fmt).lower(), multinode)
        if key not in self._picked:
            best: tuple[int, Document] | None = None
            for prio, d in self._auto.get(key[0], ()):
                if isinstance(get_in(d.data, "spec", "workerSpec"), dict) != multinode:
                    continue
                if best is None or prio > best[0]:
                    best = (prio, d)
            self._picked[key] = best[1] if best else None
        return self._picked[key]


def _runtime_container(containers: Any, name: str) -> LDict | None:
    if not isinstance(containers, list):
        return None
    for c in containers:
        if isinstance(c, LDict) and c.get("name") == name:
            return c
    return None


def _merge_container(runtime_c: LDict, isvc_c: dict, meta: Any) -> LDict:
    """KServe's ``MergeRuntimeContainers`` (strategic merge, args = runtime args + InferenceService args)
    then ``ReplacePlaceholders`` (``{{.Name}}`` ... from the InferenceService's metadata)."""
    patch = LDict(loc=loc_of(isvc_c))
    for k, v in isvc_c.items():
        if k in _MODEL_ONLY or k == "args" or (k == "name" and not v):
            continue
        patch[k] = v
        if isinstance(isvc_c, LDict) and k in isvc_c.locs:
            patch.locs[k] = isvc_c.locs[k]
    merged = strategic_merge(runtime_c, patch)
    r_args, i_args = runtime_c.get("args"), isvc_c.get("args")
    if isinstance(i_args, list) and i_args:
        items = [(a, loc_of(r_args, i)) for i, a in enumerate(r_args if isinstance(r_args, list) else [])]
        items += [(a, loc_of(i_args, i)) for i, a in enumerate(i_args)]
        merged["args"] = llist(loc_of(isvc_c, "args"), items)
        merged.locs["args"] = loc_of(isvc_c, "args") or loc_of(runtime_c, "args") or runtime_c.loc  # type: ignore[assignment]
        # the args: key written last is the InferenceService's (the runtime's was merged from the runtime)
        i_key = isvc_c.key_locs.get("args") if isinstance(isvc_c, LDict) else None
        if i_key is not None:
            merged.key_locs["args"] = i_key
        else:
            merged.key_locs.pop("args", None)
    merged["name"] = runtime_c.get("name") or KSERVE_CONTAINER
    for key in ("command", "args"):
        seq = merged.get(key)
        if isinstance(seq, LList):
            for i, a in enumerate(seq):
                if isinstance(a, str) and "{{" in a:
                    seq[i] = render(a, meta)[0]
    return merged


def _merge_pod(runtime_spec: Any, pred: dict, container: LDict, anchor: Loc | None) -> LDict:
    base = LDict(loc=loc_of(runtime_spec))
    for k in _RUNTIME_POD_FIELDS:
        if isinstance(runtime_spec, dict) and runtime_spec.get(k) is not None:
            base[k] = runtime_spec[k]
            loc = loc_of(runtime_spec, k)
            if loc is not None:
                base.locs[k] = loc
    patch = LDict(loc=loc_of(pred))
    for k, v in pred.items():
        if k in _PREDICTOR_NOT_POD or k == "containers":
            continue
        patch[k] = v
        if isinstance(pred, LDict) and k in pred.locs:
            patch.locs[k] = pred.locs[k]
    ps = strategic_merge(base, patch)
    ps["containers"] = llist(container.loc or anchor, [(container, container.loc or anchor)])
    ps.locs["containers"] = container.loc or anchor  # type: ignore[assignment]
    if ps.loc is None:
        ps.loc = anchor
    return ps


def _add_env(container: LDict, items: list[tuple[str, str]], loc: Loc | None) -> None:
    env = container.get("env")
    entries = list(env) if isinstance(env, list) else []
    locs = [loc_of(env, i) for i in range(len(entries))]
    names = {e.get("name") for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)}
    for name, value in items:
        if name in names:
            continue
        entries.append(ldict(loc, [("name", name, loc), ("value", value, loc)]))
        locs.append(loc)
    container["env"] = llist(loc_of(container, "env") or loc, list(zip(entries, locs, strict=True)))


def _with_facts(w: Workload, facts: dict[str, str | None]) -> Workload:
    """``w`` with the :class:`~kvlint.types.Workload` facts a reader derived (field name -> value; None and
    empty values are not set), a ``derived_model`` left out when the user's ``kvlint.io/model`` annotation
    names the model."""
    given: dict[str, Any] = {k: v for k, v in facts.items() if v}
    if "derived_model" in given and MODEL_ANNOTATION in w.annotations:
        del given["derived_model"]
    return replaced(w, **given) if given else w


def merged_runtime_workloads(doc: Document, pred: dict, model: dict, runtime: Document) -> list[Workload]:
    """The predictor pod of an InferenceService whose runtime is among the inputs, as KServe builds it
    (kserve/kserve ``pkg/controller/v1beta1/inferenceservice/utils/utils.go``
    ``MergeServingRuntimeAndInferenceServiceSpecs``, ``MergeRuntimeContainers``, ``MergePodSpec``,
    ``ReplacePlaceholders``; ``components/predictor.go`` for multi-node): the runtime's ``kserve-container``
    merged with the model spec (the model's ``args`` appended to the runtime's; its other fields, an ``image``
    among them, over the runtime's by strategic merge: ``components/predictor/predictor.go`` ``buildPodSpec``
    at kserve/kserve@0d164e13e14d85181ddc9cdc4f216a5efe7ee730 passes ``isvc.Spec.Predictor.Model.Container``
    whatever it sets, so the engine release is read from the InferenceService's image when it names one;
    ``UpdateImageTag`` then changes the tag only for a ``runtimeVersion``), the runtime's pod fields
    under the predictor's; the model of an ``hf://`` ``storageUri`` as its ``derived_model``. A runtime with a
    ``workerSpec`` adds the worker pod (``worker-container`` merged with the predictor's ``workerSpec``), and
    KServe's ``TENSOR_PARALLEL_SIZE``/``PIPELINE_PARALLEL_SIZE`` (the InferenceService's ``workerSpec`` sizes,
    else the runtime's, else 1) and ``MODEL_NAME``/``MODEL_DIR`` environment on both."""
    rspec = get_in(runtime.data, "spec")
    meta = get_in(doc.data, "metadata") or {}
    anchor = loc_of(pred, "model") or loc_of(pred) or doc.loc
    runtime_c = _runtime_container(rspec.get("containers"), KSERVE_CONTAINER) or next(
        (c for c in as_list(rspec.get("containers")) if isinstance(c, LDict)), None
    )
    if runtime_c is None:
        return [_runtime_missing(doc, pred, "model", model, runtime.name, present=True)]
    container = _merge_container(runtime_c, model, meta)
    ps = _merge_pod(rspec, pred, container, anchor)
    uri = str(model.get("storageUri") or get_in(pred, "storageUri") or "")
    facts: dict[str, str | None] = {
        "derived_model": model_from_uri(uri, oci=True),
        "model_storage": storage_location(model, pred),
    }
    worker_spec = rspec.get("workerSpec")
    multi = isinstance(worker_spec, dict)
    env_items: list[tuple[str, str]] = []
    if multi:
        isvc_ws: dict = pred["workerSpec"] if isinstance(pred.get("workerSpec"), dict) else {}
        pp = (
            int_or_none(isvc_ws.get("pipelineParallelSize"))
            or int_or_none(worker_spec.get("pipelineParallelSize"))
            or 1
        )
        tp = (
            int_or_none(isvc_ws.get("tensorParallelSize"))
            or int_or_none(worker_spec.get("tensorParallelSize"))
            or 1
        )
        env_items = [("PIPELINE_PARALLEL_SIZE", str(pp)), ("TENSOR_PARALLEL_SIZE", str(tp))]
        _add_env(container, env_items + [("MODEL_NAME", doc.name)], anchor)
        chart_args = _parallel_env_args(isvc_ws, worker_spec, anchor)
        if uri.split("://", 1)[0] in ("pvc", "oci"):
            _add_env(container, [("MODEL_DIR", "/mnt/models")], anchor)
    w = make_workload(
        doc,
        ps,
        [],
        path="spec.predictor.model",
        replicas=int_or_none(pred.get("replicas")) or int_or_none(pred.get("minReplicas")),
        role="head" if multi else None,
        extra_meta=pred,
    )
    if multi:
        w = replaced(w, chart_args=chart_args)
    w = _with_facts(w, facts)
    out = [w]
    if multi:
        wc = _runtime_container(worker_spec.get("containers"), KSERVE_WORKER_CONTAINER) or next(
            (c for c in as_list(worker_spec.get("containers")) if isinstance(c, LDict)), None
        )
        if wc is not None:
            isvc_ws = pred["workerSpec"] if isinstance(pred.get("workerSpec"), dict) else {}
            isvc_wc = next((c for c in as_list(isvc_ws.get("containers")) if isinstance(c, dict)), {})
            worker_c = _merge_container(wc, isvc_wc, meta)
            _add_env(worker_c, env_items + [("ISVC_NAME", doc.name)], anchor)
            wps = _merge_pod(worker_spec, isvc_ws, worker_c, loc_of(pred, "workerSpec") or anchor)
            ww = make_workload(doc, wps, [], path="spec.predictor.workerSpec", role="worker", extra_meta=pred)
            out.append(replaced(ww, leader=w))
    return out


def _parallel_env_args(isvc_ws: dict, runtime_ws: dict, loc: Loc | None) -> tuple[ChartArg, ...]:
    """The options KServe's multi-node runtime writes from the environment KServe sets
    (``--tensor-parallel-size=${TENSOR_PARALLEL_SIZE} --pipeline-parallel-size=${PIPELINE_PARALLEL_SIZE}`` in
    ``kserve-huggingfaceserver-multinode``), as :class:`~kvlint.types.ChartArg` so that a KV207 on the same
    option given again in the args says where the first value came from (:func:`kvlint.engines.options.
    chart_provenance`). KServe sets both from the InferenceService's ``workerSpec`` sizes, else the runtime's,
    else 1, and sizes the Ray cluster's nodes and GPUs from their product, not from the args
    (kserve/kserve@aaac4e29 ``pkg/controller/v1beta1/inferenceservice/components/predictor.go``
    ``multiNodeProcess``)."""
    out = []
    for env, field, option in (
        ("TENSOR_PARALLEL_SIZE", "tensorParallelSize", "--tensor-parallel-size"),
        ("PIPELINE_PARALLEL_SIZE", "pipelineParallelSize", "--pipeline-parallel-size"),
    ):
        if isvc_ws.get(field) is not None:
            key, given = f"the InferenceService's workerSpec.{field}", True
        elif runtime_ws.get(field) is not None:
            key, given = f"the runtime's workerSpec.{field}", True
        else:
            key, given = f"workerSpec.{field}", False
        out.append(ChartArg(loc, (option,), key, given, writer="KServe", extra="the args list", from_env=env))
    return tuple(out)


def _runtime_missing(
    doc: Document, pred: dict, key: str, model: dict, name: str, *, present: bool = False
) -> Workload:
    """The predictor of an InferenceService whose runtime is not among the inputs: its container as written
    (no image, no command) and a finding saying where the engine comes from."""
    ps = synthetic_pod_spec(pred, model, _KSERVE_MODEL_KEYS)
    ps["containers"] = LList([], loc=ps.loc)  # the engine container comes from the runtime
    where = loc_of(model, "runtime") or loc_of(pred, key) or doc.loc
    image = model.get("image")
    comes = (
        f"the engine command and arguments come from it (this InferenceService sets only the image, {image})"
        if image
        else "the engine image and command come from it"
    )
    msg = (
        f"the model runs on the ServingRuntime/ClusterServingRuntime '{name}', which is not among the inputs: "
        f"{comes}, so kvlint cannot read this predictor's engine"
        if not present
        else f"the ServingRuntime '{name}' has no container to run the model"
    )
    f = Finding(
        "KV503",
        msg,
        where,
        fix=f"lint the runtime '{name}' together with this InferenceService (name both files or their directory)",
        severity="warning",
    )
    w = make_workload(
        doc,
        ps,
        [],
        path=f"spec.predictor.{key}",
        replicas=int_or_none(pred.get("replicas")),
        extra_meta=pred,
    )
    return replaced(w, findings=(f,))
