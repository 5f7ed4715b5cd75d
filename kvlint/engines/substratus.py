"""The vLLM command line that ``substratusai/vllm`` images from v0.4.2 to v0.6.2 build from their container's env.

Those images (substratusai/vllm-docker, the image substratusai/helm's ``vllm`` chart deploys: its
``appVersion`` is ``v0.5.4``) set ``ENTRYPOINT ["entrypoint.sh"]``. The script ignores the container's ``args``
and runs::

    python3 -m vllm.entrypoints.openai.api_server --tensor-parallel-size $NUM_GPU --worker-use-ray \\
        --host 0.0.0.0 --port "$PORT" --model "$MODEL" --served-model-name "$SERVED_MODEL_NAME" $additional_args

with ``NUM_GPU`` the number of lines ``nvidia-smi -L`` prints (the GPUs the container was given),
``SERVED_MODEL_NAME`` defaulting to ``MODEL``, ``PORT`` to 8080 (the Dockerfile's ``ENV PORT 8080``), and
``additional_args`` = ``$EXTRA_ARGS`` (split on blanks, unquoted), then ``-q $QUANTIZATION --dtype $DTYPE``
when ``QUANTIZATION`` is set, ``--gpu-memory-utilization $GPU_MEMORY_UTILIZATION``, ``--max-model-len
$MAX_MODEL_LEN`` and ``--chat-template $CHAT_TEMPLATE``, each when its variable is non-empty. Source:
substratusai/vllm-docker ``entrypoint.sh`` and ``Dockerfile``, identical (entrypoint.sh) from tag ``v0.4.2``
(b60e4da6d8620913a86b172752fc52ae9cb75a24) to ``v0.6.2-docker1`` (fa5740e161b0f2af16059408ea96d3e32977efca);
commit ffabc27979ba6c4d08423ddcb13b69e4224be300 ("BREAKING: update to v0.6.3 and remove custom entrypoint")
removed it, so ``v0.6.3`` and later images run vLLM's own entrypoint and are read as ``vllm/vllm-openai``.
The GPU images of tags ``v0.6.1`` and ``v0.6.2`` still install vLLM 0.5.5 (``ARG VERSION=v0.5.5``;
:data:`kvlint.engines.images.SUBSTRATUS_VLLM`); the ``-cpu``/``-tpu`` images are vLLM's own builds, without entrypoint.sh.

What the script does on its failure paths is not restated: it exits when ``MODEL`` is empty (kvlint then reads a
command with no model, KV503) or when ``QUANTIZATION`` is set without ``DTYPE`` (kvlint leaves both out).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kvlint.engines.images import _repo_path, split_image
from kvlint.gpu_resources import NVIDIA_GPU
from kvlint.source import Loc, loc_of

__all__ = ["ENTRYPOINT_PROGRAM", "entrypoint_argv", "runs_env_entrypoint"]

#: The words ``entrypoint.sh`` starts vLLM with (the program, before the arguments).
ENTRYPOINT_PROGRAM = ("python3", "-m", "vllm.entrypoints.openai.api_server")

_REPO = "substratusai/vllm"
#: Tags ``vX.Y.Z`` with an optional ``.postN``/``-suffix``: the release of substratusai/vllm-docker.
_TAG = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_FIRST, _GONE = (0, 4, 2), (0, 6, 3)
#: Tag suffixes of the images built from vLLM's own Dockerfiles, not from substratusai/vllm-docker's.
_OWN_BUILDS = ("-cpu", "-tpu")


def runs_env_entrypoint(image: str) -> bool:
    """True when ``image`` is a ``substratusai/vllm`` image whose tag is a release from v0.4.2 up to (not
    including) v0.6.3, whose ``entrypoint.sh`` builds vLLM's command from the env (module docstring). An
    untagged, ``latest`` or digest-only reference is not: the image it names today runs vLLM's own
    entrypoint. Nor is a ``-cpu``/``-tpu`` tag (``v0.6.2-cpu``): substratusai/vllm-docker's
    .github/workflows/build-push.yml (tags v0.5.5 - v0.6.2-docker1) builds those from vLLM's own Dockerfile.cpu /
    Dockerfile.tpu (``context: https://github.com/vllm-project/vllm.git#v0.6.2``), which hold no entrypoint.sh
    (Dockerfile.cpu's ENTRYPOINT is vLLM's OpenAI server; Dockerfile.tpu has only ``CMD ["/bin/bash"]``)."""
    repo, tag, _digest = split_image(image)
    if _repo_path(repo) != _REPO or not tag or tag.lower().endswith(_OWN_BUILDS):
        return False
    m = _TAG.match(tag)
    if m is None:
        return False
    release = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return _FIRST <= release < _GONE


def _nvidia_gpus(container: Mapping) -> tuple[str | None, Loc | None]:
    """The container's ``nvidia.com/gpu`` count as written (limits first, then requests) and its position:
    what ``nvidia-smi -L`` lists inside it. (None, None) when it asks for none."""
    res = container.get("resources")
    if not isinstance(res, Mapping):
        return None, None
    for section in ("limits", "requests"):
        block = res.get(section)
        if isinstance(block, Mapping) and block.get(NVIDIA_GPU) is not None:
            return str(block.get(NVIDIA_GPU)), loc_of(block, NVIDIA_GPU)
    return None, None


def entrypoint_argv(
    container: Mapping, env: Mapping[str, str], env_locs: Mapping[str, Loc | None]
) -> list[tuple[str, Loc | None]]:
    """The arguments ``entrypoint.sh`` passes to ``python3 -m vllm.entrypoints.openai.api_server`` (after the
    program), each with the position of the value it comes from: the env entry that set it, the container's
    ``nvidia.com/gpu`` for ``--tensor-parallel-size``, the ``image:`` for the script's constants. ``env`` is the
    container's env as Kubernetes resolves it (:func:`kvlint.engines.command.container_env`); variables the
    manifest does not set are the image's defaults (``PORT`` 8080) or empty. A container asking for no NVIDIA GPU
    gets no ``--tensor-parallel-size`` (the script's ``nvidia-smi`` finds none and it exits; KV405/KV501 say the
    GPU is missing)."""
    image_loc = loc_of(container, "image")
    out: list[tuple[str, Loc | None]] = []

    def var(name: str) -> str:
        return str(env.get(name) or "")

    def add(flag: str, name: str | None, value: str) -> None:
        # the flag and its value both at the env entry that makes the script write them
        loc = (env_locs.get(name) if name else None) or image_loc
        out.append((flag, loc))
        out.append((value, loc))

    gpus, gpus_loc = _nvidia_gpus(container)
    if gpus is not None:
        out.append(("--tensor-parallel-size", gpus_loc))
        out.append((gpus, gpus_loc))
    out.append(("--worker-use-ray", image_loc))
    add("--host", None, "0.0.0.0")
    add("--port", "PORT" if var("PORT") else None, var("PORT") or "8080")
    model = var("MODEL")
    if model:
        add("--model", "MODEL", model)
        served = "SERVED_MODEL_NAME" if var("SERVED_MODEL_NAME") else "MODEL"
        add("--served-model-name", served, var(served))
    out.extend((word, env_locs.get("EXTRA_ARGS") or image_loc) for word in var("EXTRA_ARGS").split())
    if var("QUANTIZATION") and var("DTYPE"):
        add("-q", "QUANTIZATION", var("QUANTIZATION"))
        add("--dtype", "DTYPE", var("DTYPE"))
    for name, flag in (
        ("GPU_MEMORY_UTILIZATION", "--gpu-memory-utilization"),
        ("MAX_MODEL_LEN", "--max-model-len"),
        ("CHAT_TEMPLATE", "--chat-template"),
    ):
        if var(name):
            add(flag, name, var(name))
    return out
