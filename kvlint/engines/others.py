"""LLM engines kvlint does not model: a GPU container that runs one is said so, not passed in silence.

kvlint sizes vLLM, SGLang and TGI (:mod:`kvlint.engines.command`). A container that runs another LLM serving
engine on accelerators was, before this module, no serving container at all: a DynamoGraphDeployment whose
worker runs NVIDIA Dynamo's TensorRT-LLM backend, or a Deployment running ``trtllm-serve`` or llama.cpp's
``llama-server`` on a GPU, passed with "0 errors, 0 warnings ... 0 serving containers", which a new user reads as
"checked and fine". :func:`other_engine_note` recognises those engines by the program their command runs and
gives a KV503 info saying which engine it is and that its memory is not checked, counted as not read
(:func:`kvlint.sizing.unread`), as a KubeAI Model on another engine is (:mod:`kvlint.workloads.kubeai`).

The programs are the engines' own entry points:

* TensorRT-LLM's OpenAI server ``trtllm-serve`` (NVIDIA/TensorRT-LLM ``setup.py`` console script
  ``trtllm-serve = tensorrt_llm.commands.serve:main``), also run as ``python -m tensorrt_llm.commands.serve``;
* NVIDIA Dynamo's TensorRT-LLM worker ``python -m dynamo.trtllm`` (ai-dynamo/dynamo
  ``components/src/dynamo/trtllm/__main__.py``; its ``examples/backends/trtllm/deploy/*.yaml`` run it);
* llama.cpp's HTTP server ``llama-server`` (ggml-org/llama.cpp ``tools/server``, the ``server`` target renamed
  ``llama-server`` in b3186) and llama-cpp-python's ``python -m llama_cpp.server``;
* Hugging Face Text Embeddings Inference (TEI), TGI's sibling for embedding and reranking models: its binary
  ``text-embeddings-router`` (``router/Cargo.toml`` ``[[bin]]``), the ``ENTRYPOINT`` of its images
  (``Dockerfile-cuda``), so a container of ``ghcr.io/huggingface/text-embeddings-inference`` that sets only
  ``args`` runs it too (:func:`_tei_image`). TEI is a different server from TGI (no launcher, no paged KV cache):
  its GPU memory is the model's weights plus one batch of ``--max-batch-tokens`` (default 16384:
  ``router/src/main.rs`` ``Args::max_batch_tokens``, clap ``default_value``, read at huggingface/text-embeddings-inference
  commit 0236f187), which kvlint does not size.

DJL Serving's Large Model Inference (LMI) containers (``deepjavalibrary/djl-serving:*-lmi``, AWS's
``djl-inference:*-lmi*``) are recognised by their image (:func:`_djl_lmi`): their entrypoint starts DJL Serving,
whose Python engine builds vLLM's ``EngineArgs`` itself when ``OPTION_ROLLING_BATCH=vllm`` (an ``OPTION_X``
variable is the ``option.x`` property; ``VllmRbProperties`` in deepjavalibrary/djl-serving
``engines/python/setup/djl_python/properties_manager/vllm_rb_properties.py``@00db6305: ``option.model_id``,
``tensor_parallel_degree`` -> ``tensor_parallel_size``, ``max_rolling_batch_size`` -> ``max_num_seqs``,
``max_rolling_batch_prefill_tokens`` -> ``max_num_batched_tokens``, DJL's own defaults such as ``max_loras=4``, every
other ``option.<EngineArgs field>`` passed through). kvlint does not restate that translation, nor which vLLM
release an LMI image carries, and a ``serving.properties`` in the model directory can set the same options, so
the note says so rather than passing the container as no serving container.

AMD Inference Microservices (AIM, ``amdenterpriseai/aim-<model>`` and ``amdenterpriseai/aim-base`` on Docker Hub)
are recognised by their image too (:func:`_amd_aim`): like NVIDIA's NIM launcher, the image's entrypoint
(``/workspace/entrypoint.py``, which AMD's own KServe sample runs with ``exec`` after installing LMCache) detects the
GPUs and selects a profile (engine, precision, GPU count) from the ``AIM_*`` variables (``AIM_ENGINE``,
``AIM_PRECISION``, ``AIM_GPU_COUNT``, ``AIM_METRIC``: amd-enterprise-ai/aim-deploy ``docker/README.md`` and
``k8s/sample-minimal-aims-deployment/deployment.yaml`` at c87668cb), and builds the engine's arguments from it. A
Deployment of one passed as "0 serving containers" on its GPU; the note says the engine settings are not read.

Only containers that request an accelerator (:data:`kvlint.gpu_resources.GPU_RESOURCES`, MIG slices,
AMD partitions: :func:`kvlint.gpu_resources.is_gpu_resource`)
get the note: a CPU llama.cpp server has no GPU memory to size.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kvlint.gpu_resources import is_gpu_resource
from kvlint.source import LDict, loc_of
from kvlint.types import Finding, Mark, Workload

__all__ = ["other_engine_note"]

#: (pattern over the command line, the engine, what the pattern found) in the order they are tried. A program is
#: a word of the command line (after a path, a shell separator or the start), so a flag value or a file name
#: that merely contains the name is not one.
_TEI = "Text Embeddings Inference (TEI)"
_DJL = "DJL Serving LMI"
_DEH = "a Dell Enterprise Hub model image"
_AIM = "AMD Inference Microservice (AIM)"
_START = r"(?:^|[\s;&|(/'\"])"
_END = r"(?=$|[\s;&|)'\"])"
_PROGRAMS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(_START + r"trtllm-serve" + _END), "TensorRT-LLM", "trtllm-serve"),
    (
        re.compile(r"(?:^|\s)-m\s+tensorrt_llm\.commands\.serve" + _END),
        "TensorRT-LLM",
        "tensorrt_llm.commands.serve",
    ),
    (
        re.compile(r"(?:^|\s)-m\s+dynamo\.trtllm" + _END),
        "TensorRT-LLM",
        "NVIDIA Dynamo's TensorRT-LLM worker, dynamo.trtllm",
    ),
    (re.compile(_START + r"llama-server" + _END), "llama.cpp", "llama-server"),
    (
        re.compile(r"(?:^|\s)-m\s+llama_cpp\.server" + _END),
        "llama.cpp",
        "llama-cpp-python's llama_cpp.server",
    ),
    (re.compile(_START + r"text-embeddings-router" + _END), _TEI, "text-embeddings-router"),
)

#: What the finding's fix says per engine (the default: check its memory from its own log or documentation).
_FIXES = {
    _DJL: "to have kvlint size it, run vLLM's own image with the same settings as flags (vllm serve MODEL "
    "--tensor-parallel-size N --max-num-seqs N ...: DJL maps OPTION_TENSOR_PARALLEL_DEGREE to "
    "--tensor-parallel-size and OPTION_MAX_ROLLING_BATCH_SIZE to --max-num-seqs), or check the memory from DJL's "
    "start-up log",
    _DEH: "if the image runs TGI (the Hub's deployment snippets), set the TGI launcher variables its snippet gives "
    "(NUM_SHARD, MAX_INPUT_TOKENS, MAX_TOTAL_TOKENS, MAX_BATCH_PREFILL_TOKENS) and the pod label hf.co/model "
    "(org--name): kvlint then reads it as TGI; otherwise check its memory from the engine's start-up log",
    _AIM: "to have kvlint size it, run vLLM's ROCm image with the model and the engine settings of the profile AIM "
    "selects as flags (vllm serve MODEL --tensor-parallel-size N --max-model-len N ...), or check the memory from "
    "AIM's start-up log",
    _TEI: "TEI holds no paged KV cache: its GPU memory is the model's weights plus the activations of one batch of "
    "--max-batch-tokens (16384 by default); check it from TEI's start-up log. To have kvlint size a decoder "
    "embedding model (E5-Mistral, Qwen3-Embedding), serve it with vLLM (a pooling model) or SGLang "
    "(--is-embedding)",
}

#: Most characters of a container's command line the patterns are run over (a mounted script is not read here).
_MAX_TEXT = 1 << 16


def _words(container: Mapping[Any, Any]) -> str:
    """The container's ``command`` and ``args`` items joined by spaces (strings only), at most :data:`_MAX_TEXT`
    characters."""
    parts: list[str] = []
    size = 0
    for key in ("command", "args"):
        items = container.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, str):
                parts.append(item)
                size += len(item) + 1
                if size > _MAX_TEXT:
                    return " ".join(parts)[:_MAX_TEXT]
    return " ".join(parts)


def _accelerator(container: Mapping[Any, Any]) -> str | None:
    """``nvidia.com/gpu: 1``: the first accelerator the container requests (limits, then requests), or None."""
    res = container.get("resources")
    if not isinstance(res, Mapping):
        return None
    for part in ("limits", "requests"):
        amounts = res.get(part)
        if not isinstance(amounts, Mapping):
            continue
        for name, amount in amounts.items():
            if not isinstance(name, str) or amount in (None, "", 0, "0"):
                continue
            if is_gpu_resource(name):
                return f"{name}: {amount}"
    return None


def _tei_image(container: Mapping[Any, Any]) -> bool:
    """The container runs TEI's image with its own entrypoint (no ``command``): the image's repository name is
    ``text-embeddings-inference`` (``ghcr.io/huggingface/text-embeddings-inference:1.5``, ``...:turing-1.5``)."""
    image = container.get("image")
    if not isinstance(image, str) or container.get("command"):
        return False
    repo = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    return repo == "text-embeddings-inference"


def _env_value(container: Mapping[Any, Any], name: str) -> str | None:
    """The literal ``value`` of the container's env variable ``name`` (the last one given), else None."""
    out = None
    env = container.get("env")
    for item in env if isinstance(env, list) else []:
        if isinstance(item, Mapping) and item.get("name") == name and isinstance(item.get("value"), str):
            out = item["value"]
    return out


def _djl_lmi(container: Mapping[Any, Any]) -> str | None:
    """What a DJL Serving LMI container runs, or None when the container is not one: the image's repository is
    ``djl-serving`` with an ``lmi`` tag (``deepjavalibrary/djl-serving:0.29.0-lmi``) or AWS's ``djl-inference``
    with one (``763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.29.0-lmi11.0.0-cu124``), and no
    ``command`` replaces its entrypoint. Its engine is named from ``OPTION_ROLLING_BATCH`` when set."""
    image = container.get("image")
    if not isinstance(image, str) or container.get("command"):
        return None
    name = image.split("@", 1)[0].rsplit("/", 1)[-1]
    repo, _, tag = name.partition(":")
    if repo not in ("djl-serving", "djl-inference") or "lmi" not in tag.lower():
        return None
    rolling = (_env_value(container, "OPTION_ROLLING_BATCH") or "").strip()
    if rolling.lower() == "vllm":
        return (
            "DJL Serving, the image's entrypoint, with OPTION_ROLLING_BATCH=vllm: vLLM inside DJL's Python engine, "
            "its engine arguments built by DJL from the OPTION_* variables (and any serving.properties), which "
            "kvlint does not translate"
        )
    if rolling:
        return f"DJL Serving, the image's entrypoint, with OPTION_ROLLING_BATCH={rolling}"
    return "DJL Serving, the image's entrypoint; OPTION_ROLLING_BATCH unset, the backend is DJL's choice"


def _dell_hub(container: Mapping[Any, Any]) -> bool:
    """The container runs a Dell Enterprise Hub model image (:func:`kvlint.engines.images.is_dell_enterprise_hub`)
    with its own entrypoint (no ``command``); one whose env names TGI launcher variables is read as TGI before
    this (:func:`kvlint.engines.command.parse_container`)."""
    from kvlint.engines.images import is_dell_enterprise_hub

    image = container.get("image")
    return isinstance(image, str) and not container.get("command") and is_dell_enterprise_hub(image)


#: The Docker Hub namespace of AMD's AIM images and the prefix of their repository names (``aim-base``, ``aim-<model>``).
_AIM_NAMESPACE = "amdenterpriseai"
_AIM_PREFIX = "aim-"
#: The AIM entrypoint run by a command that replaces the image's own (``exec ./entrypoint.py`` in /workspace).
_AIM_ENTRYPOINT = re.compile(_START + r"entrypoint\.py" + _END)


def _amd_aim(container: Mapping[Any, Any]) -> str | None:
    """What an AMD Inference Microservice (AIM) container runs, or None when the container is not one: the image is
    ``amdenterpriseai/aim-*`` (``docker.io/`` or none before it) and no ``command`` replaces its entrypoint, or the
    command line runs ``entrypoint.py`` itself. The engine is named from ``AIM_ENGINE`` when set."""
    from kvlint.engines.images import split_image

    image = container.get("image")
    if not isinstance(image, str):
        return None
    parts = split_image(image)[0].lower().split("/")
    if parts[0] in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        parts = parts[1:]
    if len(parts) != 2 or parts[0] != _AIM_NAMESPACE or not parts[1].startswith(_AIM_PREFIX):
        return None
    if container.get("command") and not _AIM_ENTRYPOINT.search(_words(container)):
        return None  # another program in the image (AIM's download-to-cache, a shell): not the server
    engine = (_env_value(container, "AIM_ENGINE") or "").strip()
    chosen = f"AIM_ENGINE={engine}" if engine else "AIM_ENGINE unset, the engine is the profile's"
    return (
        f"the image's entrypoint, with {chosen}: it detects the GPUs and selects a profile from the AIM_* variables, "
        "then starts the engine with that profile's arguments, which kvlint does not read"
    )


def other_engine_note(w: Workload, container: LDict) -> Finding | None:
    """A KV503 info for ``container`` of ``w`` when it requests an accelerator and its command runs an LLM
    engine kvlint does not model (:data:`_PROGRAMS`): the engine and program named, its memory not checked,
    counted as not read. None for any other container (kvlint's own engines never reach here: the caller asks
    only of containers :func:`kvlint.engines.command.parse_container` did not read as one). Never raises."""
    try:
        accel = _accelerator(container)
        if accel is None:
            return None
        text = _words(container)
        found = next(((e, p) for pattern, e, p in _PROGRAMS if pattern.search(text)), None)
        if found is None and _tei_image(container):
            found = (_TEI, "text-embeddings-router, the image's entrypoint")
        if found is None:
            djl = _djl_lmi(container)
            found = (_DJL, djl) if djl else None
        if found is None:
            aim = _amd_aim(container)
            found = (_AIM, aim) if aim else None
        if found is None and _dell_hub(container):
            found = (
                _DEH,
                "its entrypoint serves the model baked into it with an engine its name does not say, and its env "
                "sets no TGI launcher variable",
            )
        if found is None:
            return None
        engine, program = found
        name = container.get("name")
        who = f"container {name}" if isinstance(name, str) and name else "a container"
        at = loc_of(container, "command") or loc_of(container, "args") or container.loc
        unread = "not vLLM, SGLang or TGI, and kvlint sizes only those"
        if engine in (_DJL, _DEH, _AIM):
            at = loc_of(container, "image") or at
            unread = "not a vLLM, SGLang or TGI command line kvlint can read"
        return Finding(
            "KV503",
            f"kvlint does not read this {w.kind}'s engine settings: {who} runs {engine} ({program}, {accel}), "
            f"{unread}, so its GPU memory is not checked",
            at,
            fix=_FIXES.get(
                engine,
                f"check {engine}'s GPU memory from its own start-up log or documentation: kvlint sizes a model "
                "only when vLLM, SGLang or TGI serves it",
            ),
            severity="info",
            # kvlint.sizing.unread: "engine kvlint does not model"; AIM's engine is vLLM or SGLang behind a launcher,
            # whose settings kvlint does not read, as NIM's ("operator settings not read")
            mark=Mark.SETTINGS_NOT_READ if engine == _AIM else Mark.OTHER_ENGINE,
        )
    except Exception:  # a shape no reader expected leaves the container as it was: not a serving container
        return None
