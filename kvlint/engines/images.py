"""Which serving engine an image runs, and which engine version its tag pins.

Image conventions (docs/engine-memory-model.md §1.1, §2.1, §3):

* vLLM: ``vllm/vllm-openai:vX.Y.Z`` (CUDA), ``vllm/vllm-tpu``, ``rocm/vllm`` (tags like
  ``rocm6.3.1_vllm_0.8.5_20250521``), ``lmcache/vllm-openai``, ``substratusai/vllm``, ``aibrix/vllm-openai``,
  ``nvcr.io/nvidia/vllm`` (NGC tags ``26.02-py3`` are container releases, not vLLM versions),
  ``ghcr.io/llm-d/llm-d-cuda`` (llm-d release tags). Tags may carry a suffix (``v0.20.1-cu129``).

  The vLLM-derived images kvlint recognises (their entrypoint is the vLLM OpenAI server, so args-only
  containers are read as vLLM arguments) are the repositories in ``_VLLM_REPOS`` below, matched on the last
  path components whatever the registry: the upstream ``vllm/vllm-openai`` (and any ``*/vllm-openai``
  rebuild such as ``aibrix/vllm-openai``, ``lmcache/vllm-openai``), ``vllm/vllm-tpu``,
  ``vllm/vllm-openai-rocm``, ROCm's ``rocm/vllm``/``rocm/vllm-dev``, NGC's ``nvidia/vllm``, llm-d's
  ``llm-d/llm-d(-cuda|-rocm|-xpu|-cpu)``, Red Hat AI Inference Server's ``rhaiis/vllm-cuda-rhel9`` and
  ``vllm-rocm-rhel9`` (``red-hat-ai-inference-server/...``), the Red Hat AI Services UBI build
  ``vllm-openai-ubi9``, Open Data Hub's ``modh/vllm``, KubeAI's ``substratusai/vllm``. Any other image whose
  args-only arguments are unmistakably vLLM's is read as vLLM with that assumption stated (KV504,
  :func:`kvlint.engines.command.unmistakably_vllm`).
* TGI: ``ghcr.io/huggingface/text-generation-inference:3.0.1`` (``2.4.1-rocm``, ``sha-...``), Gaudi
  ``tgi-gaudi``, and Google Cloud DLC images ``.../huggingface-text-generation-inference-cu124.2-3.ubuntu2204.py311``
  whose name encodes the TGI release (``2-3`` = 2.3).
* SGLang: ``lmsysorg/sglang:v0.5.5.post3-cu126`` (``sglang-router`` images are the router, not the engine).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

from kvlint.engines.pip_options import PIP_SOURCE_OPTIONS
from kvlint.gpu_resources import (
    AMD_GPU,
    MIG_RESOURCE_PREFIX,
    NON_GPU_RESOURCES,
    NVIDIA_GPU,
    NVIDIA_GPU_SHARED,
    amd_partition_of,
)

if TYPE_CHECKING:
    from kvlint.types import Placement, ServingConfig

__all__ = [
    "Unsized",
    "ENGINE_IMAGE_WORDS",
    "ENGINE_TEXT",
    "ENGINE_TEXT_WORDS",
    "accelerator_build",
    "aws_vllm_series",
    "bare_vllm_published",
    "build_is_evidenced",
    "engine_of_image",
    "engine_release",
    "engine_version",
    "envsubst_placeholders",
    "gpu_build_on_other_accelerator",
    "gpu_vendor_of_resource",
    "image_mentions_engine",
    "proxy_image_engine",
    "image_placeholder",
    "image_platform",
    "is_dell_enterprise_hub",
    "names_engine",
    "path_placeholder",
    "pip_names_source",
    "pip_source_build",
    "pip_source_variable",
    "published_build",
    "pypi_cuda_wheel",
    "repository_path",
    "rocm_index_outbid",
    "uv_best_match",
    "split_image",
    "tag_of_unknown_image",
    "tag_only_names_release",
    "tags_are_versions",
    "unsized_whatever_model",
    "whole_placeholder",
]

#: A number no release part has (more than 20 digits): a tag holding one names no release.
_LONG_NUMBER = re.compile(r"\d{21}")
_VERSION_RE = re.compile(r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?(?:post|rc|dev)\d+)?)(?:$|[-+_.])")
_INLINE_VLLM_RE = re.compile(r"vllm[-_]?v?(\d+\.\d+\.\d+(?:\.post\d+)?)", re.I)
#: An SGLang release named inline in an image's name or tag, as a build that bundles it says which (the
#: SGLang model gateway image OME's GLM runtime runs, ``ghcr.io/lightseekorg/smg:1.3.2-sglang-v0.5.9``).
_INLINE_SGLANG_RE = re.compile(r"sglang[-_]?v?(\d+\.\d+\.\d+(?:\.post\d+)?)", re.I)
_DLC_TGI_RE = re.compile(r"text-generation-inference-cu\d+\.(\d+)-(\d+)(?:-(\d+))?\.")

#: Ray release -> the vLLM release a ``rayproject/ray-llm`` (or ``anyscale/ray-llm``) image of it runs: the
#: ``Requires-Dist: vllm...; extra == "llm"`` of the ``ray`` wheel of that release on PyPI (read with
#: ``pip install --dry-run --report``; 2.57 - 2.60 from the METADATA of ``pip download --no-deps ray==X``, whose
#: .1 patch releases pin the same), which the ray-llm image installs (``ray[llm]``). Ray 2.56.0 - 2.60.0 pin
#: ``vllm[audio]==`` exactly; the earlier releases require ``>=`` a release, which kvlint takes as the one the
#: image holds [assumed: the image's lock file, python/deplocks/llm/rayllm_*.lock at the release, may hold a
#: later patch release]. ray.serve.llm first shipped in Ray 2.43.0.
RAY_LLM_VLLM: dict[str, str] = {
    "2.43": "0.7.2",
    "2.44": "0.7.2",
    "2.45": "0.8.2",
    "2.46": "0.8.5",
    "2.47": "0.8.5",
    "2.48": "0.9.2",
    "2.49": "0.10.0",
    "2.50": "0.10.2",
    "2.51": "0.11.0",
    "2.52": "0.11.0",
    "2.53": "0.12.0",
    "2.54": "0.15.0",
    "2.55": "0.18.0",
    "2.56": "0.22.0",
    "2.57": "0.25.1",
    "2.58": "0.26.0",
    "2.59": "0.27.0",
    "2.60": "0.29.0",
}
#: The Ray releases of :data:`RAY_LLM_VLLM` whose wheel pins the vLLM release exactly (``==``); the others require
#: ``>=`` it, and kvlint's reading of their images rests on that assumption (KV504).
RAY_LLM_PINNED = frozenset({"2.56", "2.57", "2.58", "2.59", "2.60"})
_RAY_LLM_TAG = re.compile(r"^(\d+\.\d+)\.\d+(?:$|[-.])")


def ray_llm_release(image: str) -> str | None:
    """The Ray release (``2.52``) a Ray LLM image's tag names, when :data:`RAY_LLM_VLLM` knows it, else None."""
    repo, tag, _ = split_image(image)
    if not tag or not _repo_path(repo).endswith("ray-llm"):
        return None
    m = _RAY_LLM_TAG.match(tag)
    return m.group(1) if m and m.group(1) in RAY_LLM_VLLM else None


def ray_llm_vllm(image: str) -> str | None:
    """The vLLM release of a Ray LLM image (``rayproject/ray-llm:2.52.0-py311-cu128`` -> ``0.11.0``), from the
    Ray release in its tag (:data:`RAY_LLM_VLLM`); None for other images and Ray releases kvlint does not
    know."""
    release = ray_llm_release(image)
    return RAY_LLM_VLLM[release] if release is not None else None


#: The vLLM release in each KServe release's Hugging Face model server image (``kserve/huggingfaceserver:<tag>``,
#: ``-gpu`` tags alike): ``ARG VLLM_VERSION`` of python/huggingface_server.Dockerfile at the tag, the version its
#: last ``pip install vllm==${VLLM_VERSION}`` step installs (kserve/kserve tags v0.13.0 - v0.20.0; v0.15.0's
#: poetry.lock says 0.8.2, but the Dockerfile installs 0.8.1 after it).
KSERVE_HF_VLLM = {
    "0.13.0": "0.4.2",
    "0.13.1": "0.4.3",
    "0.14.0": "0.6.1.post2",
    "0.14.1": "0.6.1.post2",
    "0.15.0": "0.8.1",
    "0.15.1": "0.8.5",
    "0.15.2": "0.8.5",
    "0.16.0": "0.9.2",
    "0.17.0": "0.15.1",
    "0.17.1": "0.15.1",
    "0.18.0": "0.19.0",
    "0.18.1": "0.19.0",
    "0.19.0": "0.20.0",
    "0.20.0": "0.24.0",
}
#: NVIDIA Dynamo release -> the (vLLM, SGLang) releases its runtime images carry (``nvcr.io/nvidia/ai-dynamo/
#: vllm-runtime:<release>``, ``sglang-runtime``, their ``-cu13`` builds): the "Backend Dependencies" table of
#: ai-dynamo/dynamo docs/reference/support-matrix.md @00552b23362935fcb6f85c23fdd87f03879db20d ("the backend
#: framework versions included with each Dynamo release"), v0.6.0 - v1.1.1; its dev and experimental tags,
#: partial releases whose images may not exist, are left out, as are releases before 0.6.0, which the table
#: does not list (their tags are unknown releases, KV504/KV208).
DYNAMO_ENGINES: dict[str, tuple[str, str]] = {
    "0.6.0": ("0.11.0", "0.5.3.post2"),
    "0.6.1": ("0.11.0", "0.5.3.post2"),
    "0.6.1.post1": ("0.11.0", "0.5.3.post2"),
    "0.7.0": ("0.11.0", "0.5.4.post3"),
    "0.7.0.post1": ("0.11.0", "0.5.4.post3"),
    "0.7.1": ("0.11.0", "0.5.4.post3"),
    "0.8.0": ("0.12.0", "0.5.6.post2"),
    "0.8.1": ("0.12.0", "0.5.6.post2"),
    "0.8.1.post1": ("0.12.0", "0.5.6.post2"),
    "0.8.1.post2": ("0.12.0", "0.5.6.post2"),
    "0.8.1.post3": ("0.12.0", "0.5.6.post2"),
    "0.9.0": ("0.14.1", "0.5.8"),
    "0.9.1": ("0.14.1", "0.5.8"),
    "1.0.0": ("0.16.0", "0.5.9"),
    "1.0.1": ("0.16.0", "0.5.9"),
    "1.0.2": ("0.16.0", "0.5.9"),
    "1.1.0": ("0.19.0", "0.5.10.post1"),
    "1.1.1": ("0.19.0", "0.5.10.post1"),
}
#: The last path component of NVIDIA Dynamo's runtime images -> the engine inside (under ``ai-dynamo/``).
_DYNAMO_RUNTIMES = {
    "vllm-runtime": "vllm",
    "vllm-runtime-cu13": "vllm",
    "sglang-runtime": "sglang",
    "sglang-runtime-cu13": "sglang",
}


#: How a registry mirror that flattens the path names a Dynamo runtime image: ``ai-dynamo-`` + its last path
#: component (AIBrix's benchmark deployments pull ``<registry>/aibrix/ai-dynamo-vllm-runtime:1.2.0``, a copy of
#: ``nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.0`` whose tag is still the Dynamo release).
_DYNAMO_FLAT_PREFIX = "ai-dynamo-"


def dynamo_runtime(image: str) -> str | None:
    """``vllm`` | ``sglang`` for an NVIDIA Dynamo runtime image (``nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1``,
    or a mirror's flattened copy ``<registry>/<project>/ai-dynamo-vllm-runtime:1.0.1``), whose tag is a Dynamo
    release, not the engine's; None for any other image."""
    parts = _repo_path(split_image(image)[0]).split("/")
    if len(parts) > 1 and parts[-2] == "ai-dynamo":
        return _DYNAMO_RUNTIMES.get(parts[-1])
    last = parts[-1]
    if last.startswith(_DYNAMO_FLAT_PREFIX):
        return _DYNAMO_RUNTIMES.get(last[len(_DYNAMO_FLAT_PREFIX) :])
    return None


def dynamo_release(image: str) -> str | None:
    """The Dynamo release a Dynamo runtime image's tag names (``v`` dropped), when :data:`DYNAMO_ENGINES` knows
    it, else None."""
    tag = split_image(image)[1] if dynamo_runtime(image) else None
    release = tag[1:] if tag and tag[:1] in ("v", "V") else tag
    return release if release in DYNAMO_ENGINES else None


def dynamo_engine_version(image: str) -> str | None:
    """The engine release inside a Dynamo runtime image (``.../ai-dynamo/sglang-runtime:1.0.1`` -> ``0.5.9``), from
    the Dynamo release its tag names (:data:`DYNAMO_ENGINES`); None for other images and Dynamo releases kvlint
    does not know."""
    release = dynamo_release(image)
    if release is None:
        return None
    vllm, sglang = DYNAMO_ENGINES[release]
    return vllm if dynamo_runtime(image) == "vllm" else sglang


#: ``substratusai/vllm`` tags whose image installs a vLLM release other than the one the tag reads as: the
#: ``ARG VERSION`` default of substratusai/vllm-docker's Dockerfile at the tag (the GPU image; its
#: .github/workflows/build-push.yml passes no build argument), which it ``pip install``s as ``vllm==${VERSION}``
#: (to v0.5.0-post1) or builds ``FROM vllm/vllm-openai:${VERSION}`` (v0.5.3.post1 on). Read at the tags
#: v0.1.0 (2f6a0b50c6e3db1552ef68ff8fa79c3820992b42, ``0.2.1.post1``), v0.5.0-post1
#: (fb54b3d6fbfb5d5c2977d2e39ea50869601d98b0, ``0.5.0.post1``), v0.6.1
#: (6048e3311b75d37cc27cd2f965b6c97b67cd627f) and v0.6.2 (1a597e653a065a5f99f774e85e0843b626a19ca7), both
#: still ``ARG VERSION=v0.5.5``; every other tag's ``ARG VERSION`` is the release its tag reads as
#: (``v0.6.2-docker1`` -> ``v0.6.2``). The ``-cpu``/``-tpu`` images of a tag are built from vLLM's own repository
#: at the tag's release (``context: https://github.com/vllm-project/vllm.git#v0.6.2``), so they are not listed.
SUBSTRATUS_VLLM = {
    "v0.1.0": "0.2.1.post1",
    "v0.5.0-post1": "0.5.0.post1",
    "v0.6.1": "0.5.5",
    "v0.6.2": "0.5.5",
}
_SUBSTRATUS_REPO = "substratusai/vllm"

#: The last path component of KServe's Hugging Face model server image (``kserve/huggingfaceserver``).
KSERVE_HF_IMAGE_NAME = "huggingfaceserver"


# Repository name (without registry/tag) -> engine. Matched on the last path components.
_VLLM_REPOS = (
    "vllm/vllm-openai",
    "vllm/vllm-tpu",
    "vllm/vllm-openai-rocm",
    "rocm/vllm",
    "rocm/vllm-dev",
    "lmcache/vllm-openai",
    "substratusai/vllm",
    "aibrix/vllm-openai",
    "nvidia/vllm",
    "llm-d/llm-d",
    "llm-d/llm-d-cuda",
    "llm-d/llm-d-rocm",
    "llm-d/llm-d-xpu",
    "llm-d/llm-d-cpu",
    "red-hat-ai-inference-server/vllm-cuda-rhel9",
    "rhaiis/vllm-cuda-rhel9",
    "vllm-cuda-rhel9",
    "vllm-rocm-rhel9",
    "vllm-openai",
    "vllm-openai-ubi9",
    "modh/vllm",
)
# Images whose tags are not vLLM versions (container or distribution releases), matched on whole path components
# (:func:`_tag_not_version`): NGC's ``nvidia/vllm`` and Open Data Hub's ``modh/vllm`` as the last two, an ``llm-d``
# or ``lmcache`` namespace, a Red Hat ``*-rhel9`` name. A substring test read ``aip-amd/xpu-nvidia/vllm-openai``
# (a private registry's copy of vLLM's image, ``...:v0.11.2``) as NGC's ``nvidia/vllm`` and its tag as none.
_VLLM_TAG_NOT_VERSION = ("nvidia/vllm", "llm-d/", "lmcache/", "rhel9", "modh/vllm")


def _tag_not_version(path: str) -> bool:
    """Whether the repository ``path`` (no registry host) is one of :data:`_VLLM_TAG_NOT_VERSION`, component-wise."""
    parts = path.split("/")
    return (
        _matches(path, ("nvidia/vllm", "modh/vllm"))
        or any(p in ("llm-d", "lmcache") for p in parts[:-1])
        or "rhel9" in parts[-1]
    )


#: The last path component of each engine's own image (``vllm/vllm-openai``, ``ghcr.io/huggingface/
#: text-generation-inference``, ``lmsysorg/sglang``). A repository kvlint does not know as an engine build pins the
#: engine's release in its tag only when its last path component names the engine's image
#: (:func:`_names_engine_image`): any other name is the image's own, and so is its tag (:func:`engine_version`).
ENGINE_IMAGE_NAMES = {"vllm": "vllm-openai", "tgi": "text-generation-inference", "sglang": "sglang"}


#: AWS's Deep Learning Containers registries whose repository ``vllm`` holds AWS's vLLM DLC: each region's ECR
#: registry ``<account>.dkr.ecr.<region>.amazonaws.com`` (the ECR Public gallery ``public.ecr.aws/
#: deep-learning-containers/`` is read apart). Group 1 the account, 2 the region, 3 ``.cn`` for China's partition.
_AWS_DLC_HOST = re.compile(r"(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?")
#: The DLC account of the regions whose registry is not ``763104351884`` (aws/deep-learning-containers
#: ``available_images.md`` @008199507ef3e5b651d3577838837e25265afa10, "Deep Learning Containers Docker Images are
#: available in the following regions"); China's regions (``amazonaws.com.cn``) are ``727897471807``'s.
_AWS_DLC_REGION_ACCOUNTS = {
    "af-south-1": "626614931356",
    "ap-east-1": "871362719292",
    "ap-northeast-3": "364406365360",
    "ap-southeast-3": "907027046896",
    "eu-south-1": "692866216735",
    "me-south-1": "217643126080",
    "me-central-1": "914824155844",
    "cn-north-1": "727897471807",
    "cn-northwest-1": "727897471807",
}


def _aws_dlc_registry(host: str) -> bool:
    """Whether ``host`` is the DLC registry of its region (:data:`_AWS_DLC_REGION_ACCOUNTS`, else
    ``763104351884``), the account matching the region and China's regions in ``amazonaws.com.cn`` alone."""
    m = _AWS_DLC_HOST.fullmatch(host)
    if m is None:
        return False
    account, region, china = m.groups()
    if (china is not None) != region.startswith("cn-"):
        return False
    return account == _AWS_DLC_REGION_ACCOUNTS.get(region, "763104351884")


def bare_vllm_published(image: str) -> bool:
    """Whether ``image`` is a repository named bare ``vllm`` whose publisher says its tag leads with the vLLM release
    the image carries, so that the tag is read as that release (:func:`engine_version`); any other publisher's
    ``vllm`` (``myorg/vllm:1.0``, ``rtalaricw/vllm:0.1``) names its own product and its tag is its own version:

    * ``intel/vllm`` (Docker Hub): Intel's vLLM images for its GPUs, "The vLLM used in this docker image is based on
      v0.10.2" for ``intel/vllm:0.10.2-xpu`` (intel/ai-containers ``vllm/0.10.2-xpu.md``
      @13ed7481e47634f497055c8d703906099f326b20; ``0.8.0-xpu`` to ``0.17.0-xpu`` alike).
    * AWS's vLLM Deep Learning Containers, ``763104351884.dkr.ecr.<region>.amazonaws.com/vllm`` (another account
      in a few regions: :data:`_AWS_DLC_REGION_ACCOUNTS`) and
      ``public.ecr.aws/deep-learning-containers/vllm``, and its Graviton (arm64) repository ``vllm-arm64`` in both
      (:data:`_AWS_VLLM_REPOSITORIES`): each release "vllm/vllm-openai version ``vX.Y.Z``" with the
      tags ``X.Y.Z-gpu-py312-...`` and the series tag ``X.Y-gpu-py312-ec2`` (which moves: :func:`aws_vllm_series`; aws/deep-learning-containers
      ``vllm/CHANGELOG.md`` @61a6b3e839f7d7d33a0744bf15261613fe7373aa)."""
    repo = split_image(image)[0]
    path = _repo_path(repo)
    first = repo.split("/", 1)[0].lower()
    host = first if ("." in first or ":" in first or first == "localhost") and "/" in repo else ""
    if path == "intel/vllm":
        return host in ("", "docker.io", "index.docker.io", "registry-1.docker.io")
    if path in _AWS_VLLM_REPOSITORIES:
        return _aws_dlc_registry(host)
    public = path.removeprefix("deep-learning-containers/")
    return public != path and public in _AWS_VLLM_REPOSITORIES and host == "public.ecr.aws"


#: AWS's vLLM Deep Learning Container repositories: ``vllm`` (x86_64) and ``vllm-arm64`` (Graviton with NVIDIA GPUs),
#: whose release tag leads with the vLLM release the image builds (aws/deep-learning-containers@2e6fa46896
#: ``vllm/buildspec-arm64.yml``: ``version: "0.11.0"``, ``release_repository_name`` ``vllm-arm64`` on account
#: 763104351884, tag ``<version>-gpu-py312-<cuda>-<os>-ec2``, and ``vllm/arm64/gpu/Dockerfile.arm64``: ``git checkout
#: v0.11.0``; ``docs/src/data/vllm-arm64/0.10.2-gpu-ec2.yml`` lists ``0.10.2-gpu-py312-cu129-ubuntu22.04-ec2`` and the
#: series tags ``0.10-gpu-py312-ec2``, ``0.10-gpu-py312-cu129-ubuntu22.04-ec2-v1``, in the region registries and
#: ``public.ecr.aws/deep-learning-containers/<repository>``, ``docs/src/utils.py::build_public_ecr_uri``).
_AWS_VLLM_REPOSITORIES = ("vllm", "vllm-arm64")


def aws_vllm_series(image: str) -> str | None:
    """``X.Y`` when ``image`` is AWS's vLLM Deep Learning Container (:func:`bare_vllm_published`) under a series
    tag ``X.Y-gpu-py312-ec2``, else None. AWS moves that tag to each ``X.Y`` release it publishes
    (aws/deep-learning-containers ``vllm/CHANGELOG.md`` @003922191223b930b0c75539eb4084fff8145659: ``0.9-gpu-py312-ec2``
    is the sample tag of 0.9.0.1, 0.9.1 and 0.9.2, ``0.10-gpu-py312-ec2`` of 0.10.0 and 0.10.1.1), so it names no
    one release: :func:`engine_version` reads none from it, as from ``latest``."""
    repo, tag, _digest = split_image(image)
    if (
        not tag
        or _repo_path(repo).rsplit("/", 1)[-1] not in _AWS_VLLM_REPOSITORIES
        or _repo_path(repo) == "intel/vllm"
    ):
        return None
    m = re.match(r"v?(\d+\.\d+)(?:-|$)", tag)
    return m.group(1) if m and bare_vllm_published(image) else None


def _names_engine_image(last: str, engine: str) -> bool:
    """Whether ``last``, the last path component of a repository kvlint does not know as an engine build, names
    ``engine``'s own image, so that its tag is the engine's release: the engine's bare name (``intel/vllm:0.10.0-xpu``,
    AWS's ``.../vllm:0.9-gpu-py312-ec2``: for vLLM only where its publisher says so, :func:`bare_vllm_published`,
    which :func:`engine_version` asks), or the image's name (:data:`ENGINE_IMAGE_NAMES`), alone or followed by
    hyphen-joined words of a rebuild, as a tag carries a build suffix (``aibrix/vllm-openai-aibrix-kvcache-nixl:
    v0.10.2-nixl-0.7.1``, ``aibrix/sglang-aibrix-kvcache-nixl:v0.5.5.post3-...``). A word before the name makes it
    another product's (a fork's own release numbers: Neural Magic's ``nm-vllm-openai``, ``llmd-vllm-openai``), as
    a name that only holds the engine's does (``vllm-dev-pplx``, ``vllm-server``, ``vllm-cpu``, KServe's
    ``vllmserver``, whose tags are their own; vLLM Ascend's ``vllm-ascend``, whose releases follow vLLM's, is one
    of :data:`VLLM_RELEASE_TAG_BUILDS`)."""
    name = ENGINE_IMAGE_NAMES[engine]
    return last in (name, engine) or last.startswith(name + "-")


#: Repositories kvlint does not know as vLLM builds (their entrypoint is not taken for vLLM's server) whose tag
#: begins with the vLLM release the image carries, read as its first three numbers (:func:`engine_version`), though
#: their last path component does not name vLLM's image (:func:`_names_engine_image`):
#:
#: * ``aibrix/llmd-vllm-openai``: AIBrix's Brixbench mirror of vLLM's image for its llm-d scenario, "Upstream image:
#:   ``vllm/vllm-openai:v0.23.0``, Brixbench image: ``.../aibrix/llmd-vllm-openai:v0.23.0``"
#:   (vllm-project/aibrix brixbench/benchmark/testdata/deployments/llmd/README.md, read at zhangjyr/aibrix
#:   237fffda7372b91b8fcd50117637fac0c2100276).
#: * ``neuron/pytorch-inference-vllm-neuronx``: the AWS Neuron vLLM Deep Learning Container, built from
#:   aws-neuron/deep-learning-containers ``docker/vllm/inference/<vLLM release>/Dockerfile.neuronx`` (0.9.1 installs
#:   Neuron's vLLM 0.9.1 fork, aws-neuron/upstreaming-to-vllm 2.25.0; commit 088eddde486a8c0566bf6a941e4bf11029d3bf64);
#:   later tags lead with the vLLM Neuron plugin's version, whose first three numbers are the vLLM release it installs
#:   (``0.21.0.1.0.0-neuronx-py313-sdk2.31.0-ubuntu24.04`` holds vLLM 0.21.0).
#: * ``vllm-ascend`` (``quay.io/ascend/vllm-ascend``, ``openeuler/vllm-ascend``): vLLM Ascend's releases are
#:   versioned to "strictly align with the vLLM final release" ``v[major].[minor].[micro]``, and its release
#:   compatibility matrix pairs each ``vX.Y.Z[rcN][.postN]`` with vLLM X.Y.Z (``v0.11.0rc1`` -> v0.11.0,
#:   ``v0.8.5rc1`` -> v0.8.5.post1; ``v0.11.0rc0`` is the one paired with a pre-release, v0.11.0rc3)
#:   (vllm-project/vllm-ascend docs/source/community/versioning_policy.md @01f8a0b0ab1919c8b4a2481b40d6ce175d964708).
#: * ``q9t5s3a7/vllm-cpu-release-repo`` and ``q9t5s3a7/vllm-arm64-cpu-release-repo`` (``public.ecr.aws``): vLLM's own
#:   CPU release images, whose ``v${RELEASE_VERSION}`` tag its release script re-tags as
#:   ``vllm/vllm-openai-cpu:v${RELEASE_VERSION}-x86_64`` / ``-arm64`` (vllm-project/vllm
#:   .buildkite/scripts/push-release-images-dockerhub.sh @2d5be1dd5ce2e44dfea53ea03ff61143da5137eb).
VLLM_RELEASE_TAG_BUILDS = (
    "aibrix/llmd-vllm-openai",
    "neuron/pytorch-inference-vllm-neuronx",
    "vllm-ascend",
    "q9t5s3a7/vllm-cpu-release-repo",
    "q9t5s3a7/vllm-arm64-cpu-release-repo",
)
_RELEASE_PREFIX_RE = re.compile(r"^v?(\d+\.\d+\.\d+)(?!\d)")


def _release_tag_build(path: str) -> bool:
    """Whether the repository ``path`` is one of :data:`VLLM_RELEASE_TAG_BUILDS` (on its last path components)."""
    return _matches(path, VLLM_RELEASE_TAG_BUILDS)


_TGI_REPOS = (
    "huggingface/text-generation-inference",
    "huggingface/tgi-gaudi",
    "tgi-gaudi",
    "text-generation-inference",
)
_SGLANG_REPOS = ("lmsysorg/sglang", "aibrix/sglang", "sglang")

#: The engines' own names, as they occur in their images, modules and programs (``vllm/vllm-openai``,
#: ``python -m sglang.launch_server``, ``ghcr.io/huggingface/text-generation-inference``,
#: ``text-generation-launcher``).
_ENGINE_NAMES = ("vllm", "sglang", "text-generation-inference", "text-generation-launcher")


def _other_repos() -> list[str]:
    """The repositories of the image tables above that hold none of the engines' names, but for those holding
    another of them (``llm-d/llm-d`` covers ``llm-d/llm-d-cuda``): ``huggingface/tgi-gaudi``... ``llm-d/llm-d``,
    ``tgi-gaudi``."""
    repos = (*_VLLM_REPOS, *_TGI_REPOS, *_SGLANG_REPOS)
    others = {r for r in repos if not any(n in r for n in _ENGINE_NAMES)}
    return sorted(r for r in others if not any(o != r and o in r for o in others))


#: Dell Enterprise Hub's registry and the repository prefix of its model-deployment images
#: (``registry.dell.huggingface.co/enterprise-dell-inference-meta-llama-meta-llama-3.1-8b-instruct``): the Dell AI
#: SDK's ``DEH_IMAGE_PREFIX`` (``dell_ai/deployments.py``, read in its copy ehcalabres/dell-ai@96b5c320ddb4).
_DEH_REGISTRY = "registry.dell.huggingface.co"
_DEH_PREFIX = "enterprise-dell-inference-"


#: Substrings one of which is in every image reference :func:`image_mentions_engine` says runs an engine: the
#: engines' names, the other repositories of the image tables, and ``tgi`` joined to a word by a hyphen (a
#: looser form of :data:`ENGINE_TEXT` for a plain substring test: the webhook chart's CEL ``matchCondition``
#: tests an image with ``contains()``; images are lower case); and in every image whose ENTRYPOINT
#: :func:`kvlint.engines.command.parse_container` reads as an engine when a container gives it ``args`` only, though its
#: name holds no engine's: KServe's Hugging Face server (:data:`KSERVE_HF_IMAGE_NAME`, ``python -m
#: huggingfaceserver``) and a Dell Enterprise Hub model image (:data:`_DEH_PREFIX`, TGI's launcher when its env
#: holds the launcher's settings).
ENGINE_IMAGE_WORDS: tuple[str, ...] = tuple(
    w
    for words in [
        (
            "vllm",
            "sglang",
            "text-generation-inference",
            *_other_repos(),
            "tgi-",
            "-tgi",
            KSERVE_HF_IMAGE_NAME,
            _DEH_PREFIX,
        )
    ]
    for w in words
    if not any(o != w and o in w for o in words)  # tgi-gaudi holds tgi-
)


def _engine_text_pattern() -> str:
    """:data:`ENGINE_TEXT`'s pattern: the engines' names (:data:`_ENGINE_NAMES`), every repository of the
    tables above that holds none of them (llm-d's ``llm-d/llm-d-cuda``..., Habana's ``tgi-gaudi``), and ``tgi``
    as a hyphen-joined word of a name, the word :func:`image_mentions_engine` reads in an image's name
    (``tgi-gaudi``, AWS's ``huggingface-pytorch-tgi-inference``, ``neuronx-tgi``, TGI's ``tgi-entrypoint.sh``).
    """
    words = [*_ENGINE_NAMES, *(re.escape(r) for r in _other_repos())]
    return "|".join(words) + r"|(?<![a-z0-9])tgi-|-tgi(?![a-z0-9])"


#: Text that names one of the three engines (an image, a module or a program), searched in lower-cased text
#: (by :func:`kvlint.load` for a template or values file it could not read, :func:`kvlint.sizing.unread`):
#: every image :func:`engine_of_image` knows and every name :func:`image_mentions_engine` reads matches.
ENGINE_TEXT = re.compile(_engine_text_pattern())
#: The alternatives of :data:`ENGINE_TEXT` that are plain words (no lookaround): text holding one of them as a
#: substring matches; text holding none matches only through the two ``tgi`` alternatives, so only when it holds
#: ``tgi`` (:func:`names_engine`).
ENGINE_TEXT_WORDS: tuple[str, ...] = (*_ENGINE_NAMES, *_other_repos())


def names_engine(lower: str) -> bool:
    """``ENGINE_TEXT.search(lower) is not None``, for lower-cased text, found with substring tests first: the
    pattern has no literal prefix, so the regular expression engine tries it at every character of a file that
    names no engine (about 6 ns a character), while ``in`` skips through the text (well under 1 ns). Only text
    that holds ``tgi`` and none of :data:`ENGINE_TEXT_WORDS` is searched with the pattern itself."""
    for word in ENGINE_TEXT_WORDS:
        if word in lower:
            return True
    return "tgi" in lower and ENGINE_TEXT.search(lower) is not None


def split_image(image: str) -> tuple[str, str | None, str | None]:
    """Split an image reference into ``(repository, tag, digest)``.

    ``registry:5000/ns/name:tag@sha256:...`` -> ``("registry:5000/ns/name", "tag", "sha256:...")``.
    The repository keeps its registry host; tag/digest are None when absent. Never raises.
    """
    ref = (image or "").strip()
    digest = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag = None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref, tag = ref[:colon], ref[colon + 1 :]
    return ref, tag or None, digest


def _repo_path(repo: str) -> str:
    """Repository without its registry host (``docker.io/vllm/vllm-openai`` -> ``vllm/vllm-openai``)."""
    parts = repo.lower().split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    return "/".join(parts)


def repository_path(image: str) -> str:
    """The repository of ``image`` without registry host and tag, lower case (``docker.io/vllm/vllm-openai:v0.11.0``
    -> ``vllm/vllm-openai``)."""
    return _repo_path(split_image(image)[0])


def tags_are_versions(image: str) -> bool:
    """Whether the tags of ``image``'s repository name engine releases: False for the builds whose tags are their
    own releases (NGC ``nvidia/vllm:26.02-py3``, llm-d, LMCache, Red Hat's, :data:`_VLLM_TAG_NOT_VERSION`) and for
    Dell Enterprise Hub's model images (:func:`is_dell_enterprise_hub`: ``latest`` or none in the Hub's snippets)."""
    path = repository_path(image)
    return not _tag_not_version(path) and not is_dell_enterprise_hub(image)


_R = TypeVar("_R")

#: The longest image reference (characters) whose answers the memoised readers below keep (a registry host,
#: a repository path and a digest come to a few hundred); a longer string is read again each time. With the
#: 1,024 references each keeps, this bounds what a long-lived process (a webhook worker, which lives for
#: many reviews whose manifests choose the strings) holds for them, whatever their size.
_CACHED_IMAGE_CHARS = 1024

#: More characters than any image reference has: the distribution reference grammar
#: (github.com/distribution/reference ``reference.go``) caps the name at 255 characters and the tag at 128, and a
#: digest adds ``@sha256:`` and 64 hex digits (a sha512 one 128). :func:`image_platform` reads no further.
_MAX_REFERENCE_CHARS = 4096


def _by_reference(fn: Callable[[str], _R]) -> Callable[[str], _R]:
    """``fn`` (a pure function of one image reference) memoised for the last 1,024 references of at most
    :data:`_CACHED_IMAGE_CHARS` characters (``functools.lru_cache``; ``cache_info``/``cache_clear`` are
    those of the memo); longer references are not kept."""
    cached = functools.lru_cache(maxsize=1024)(fn)

    @functools.wraps(fn)
    def read(image: str) -> _R:
        if image.__class__ is str and len(image) > _CACHED_IMAGE_CHARS:
            return fn(image)
        return cached(image)

    read.cache_info = cached.cache_info  # type: ignore[attr-defined]
    read.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return read


def _matches(path: str, names: tuple[str, ...]) -> bool:
    return any(path == n or path.endswith("/" + n) for n in names)


@_by_reference
def engine_of_image(image: str) -> str | None:
    """``vllm`` | ``tgi`` | ``sglang`` when the image is a known engine image, else None.

    Decided from the repository name only (tags are ignored), so ``vllm/vllm-openai:latest``,
    ``nvcr.io/nvidia/vllm:26.02-py3``, ``ghcr.io/llm-d/llm-d-cuda:v0.9.0`` are ``vllm``;
    ``ghcr.io/huggingface/text-generation-inference:3.0.1`` and the GCP DLC
    ``...-huggingface-text-generation-inference-cu124.2-3...`` images are ``tgi``; ``lmsysorg/sglang`` is
    ``sglang`` but ``*/sglang-router`` is not. Unknown or custom images return None (the command then
    decides).
    """
    repo, _, _ = split_image(image)
    path = _repo_path(repo)
    if not path:
        return None
    last = path.rsplit("/", 1)[-1]
    if "router" in last:
        return None
    if _matches(path, _VLLM_REPOS):
        return "vllm"
    if _matches(path, _TGI_REPOS) or "huggingface-text-generation-inference" in last or "tgi-gaudi" in last:
        return "tgi"
    if _matches(path, _SGLANG_REPOS):
        return "sglang"
    return None


def is_dell_enterprise_hub(image: str) -> bool:
    """Whether ``image`` is a Dell Enterprise Hub model container (:data:`_DEH_PREFIX` in :data:`_DEH_REGISTRY`):
    one model's weights baked into an engine image whose entrypoint serves them. Which engine is not in the name
    (Hugging Face's TGI for the Hub's deployment snippets, which set TGI launcher variables, ``NUM_SHARD``,
    ``MAX_TOTAL_TOKENS`` ...; vLLM in newer GB10 images), so the caller decides by the container's env."""
    repo = split_image(image)[0].lower()
    registry, _, path = repo.partition("/")
    return registry == _DEH_REGISTRY and path.startswith(_DEH_PREFIX) and "/" not in path


#: The pod label Dell Enterprise Hub's deployment snippets name the served model with, ``/`` written ``--``
#: (``hf.co/model: meta-llama--Meta-Llama-3.1-8b-Instruct``; a label value cannot hold a ``/``).
DEH_MODEL_LABEL = "hf.co/model"


def dell_hub_model(labels: Mapping[str, str], images: Iterable[object]) -> str | None:
    """The model a pod of Dell Enterprise Hub model containers serves: their weights are in the image (no
    ``MODEL_ID`` in the manifest), and the Hub's snippets name them in the pod's :data:`DEH_MODEL_LABEL` label,
    which gives the hub id (its first ``--`` is the ``/``). None when no image of ``images`` is a Hub model image
    (:func:`is_dell_enterprise_hub`) or the label names no ``ORG--NAME``: KV503 then says no model is named."""
    label = labels.get(DEH_MODEL_LABEL)
    if not isinstance(label, str) or "--" not in label.strip("-"):
        return None
    org, _, name = label.partition("--")
    if not org or not name:
        return None
    if not any(isinstance(image, str) and is_dell_enterprise_hub(image) for image in images):
        return None
    return f"{org}/{name}"


def is_nim_image(image: str) -> bool:
    """Whether ``image`` is an NVIDIA NIM image on NGC: registry ``nvcr.io`` and a path component ``nim`` or
    starting with ``nim-`` (``nvcr.io/nim/meta/llama-3.1-8b-instruct``, ``nvcr.io/nim/nvidia/llm-nim``, the
    staging ``nvcr.io/nvstaging/nim-internal/vllm-oss-nim-llm-...``). Such an image starts NVIDIA's NIM launcher,
    which picks the engine and its settings from a model profile (k8s-nim-operator docs), so an engine named in
    the repository (``vllm-oss-nim``) is not a command line kvlint could read. ``nvcr.io/nvidia/vllm`` (NGC's
    vLLM container) is not a NIM image."""
    parts = split_image(image)[0].lower().split("/")
    if len(parts) < 2 or parts[0] != "nvcr.io":
        return False
    return any(p == "nim" or p.startswith("nim-") for p in parts[1:-1])


@_by_reference
def image_mentions_engine(image: str) -> str | None:
    """Weaker than :func:`engine_of_image`: the engine named anywhere in the repository name.

    ``public.ecr.aws/data-on-eks/ray2.24.0-py310-vllm-gpu`` -> ``vllm``. Used only to decide whether a
    container whose command cannot be read deserves a KV503 note. A name with the word ``proxy`` names none
    (:func:`proxy_image_engine`).
    """
    known = engine_of_image(image)
    if known:
        return known
    repo, _, _ = split_image(image)
    path = _repo_path(repo)
    last = path.rsplit("/", 1)[-1]
    if "router" in last or is_nim_image(image):
        return None
    if "proxy" in re.split(r"[-_.]", last):
        # a proxy built beside the engine (ghcr.io/archanachetan07/vllm-latency-proxy, which forwards to its
        # VLLM_BASE_URL): a word of the name says it serves no model, as "router" does
        return None
    return _engine_in_path(path)


@_by_reference
def proxy_image_engine(image: str) -> str | None:
    """The engine named by an image whose last name component has the word ``proxy`` (``ghcr.io/acme/vllm-proxy``
    -> ``vllm``), which :func:`image_mentions_engine` sets aside as a request proxy; None for any other image. The
    name alone does not say whether the image forwards requests or wraps the engine: a caller whose container
    requests a GPU, which no request proxy needs, reads it as the engine."""
    if engine_of_image(image) or is_nim_image(image):
        return None
    path = _repo_path(split_image(image)[0])
    last = path.rsplit("/", 1)[-1]
    if "router" in last or "proxy" not in re.split(r"[-_.]", last):
        return None
    return _engine_in_path(path)


def _engine_in_path(path: str) -> str | None:
    """The engine whose name is in the image repository ``path`` (:func:`image_mentions_engine`)."""
    if "vllm" in path:
        return "vllm"
    if "sglang" in path:
        return "sglang"
    if "text-generation-inference" in path or "tgi" in path.rsplit("/", 1)[-1].split("-"):
        return "tgi"
    return None


@_by_reference
def engine_version(image: str) -> str | None:
    """The engine version an image reference pins, or None when it does not say.

    Examples: ``vllm/vllm-openai:v0.11.0`` -> ``0.11.0``; ``v0.8.5.post1`` -> ``0.8.5.post1``;
    ``v0.20.1-cu129`` -> ``0.20.1``; ``rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521`` -> ``0.8.5``;
    ``.../neuron-sdk2.20-vllm0.5.0-neuron:v1`` -> ``0.5.0``; ``ghcr.io/huggingface/text-generation-inference:2.4.1-rocm``
    -> ``2.4.1``; ``...text-generation-inference-cu124.2-3.ubuntu2204.py311`` -> ``2.3``;
    ``rayproject/ray-llm:2.52.0-py311-cu128`` -> ``0.11.0`` (the vLLM of that Ray release, :func:`ray_llm_vllm`);
    ``lmsysorg/sglang:v0.5.5.post3-cu126`` -> ``0.5.5.post3``; ``kserve/huggingfaceserver:v0.15.2-gpu`` -> ``0.8.5``
    (:data:`KSERVE_HF_VLLM`); ``nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.0.1`` -> ``0.16.0`` (the vLLM of that Dynamo
    release, :data:`DYNAMO_ENGINES`; an unlisted Dynamo release -> None). ``substratusai/vllm:v0.6.2`` -> ``0.5.5`` (the vLLM its
    Dockerfile installs, :data:`SUBSTRATUS_VLLM`). ``latest``, no tag, digests only, ``sha-xxx``
    and tags of images that are not engine releases (NGC ``26.02-py3``, llm-d, lmcache dates) -> None.
    """
    if not image or "{{" in image or image.startswith("$("):
        return None
    ray = ray_llm_vllm(image)
    if ray is not None:
        return ray
    repo, tag, _digest = split_image(image)
    path = _repo_path(repo)
    m = _DLC_TGI_RE.search(path)
    if m:
        return ".".join(g for g in m.groups() if g is not None)
    m = _INLINE_VLLM_RE.search(path) or (_INLINE_VLLM_RE.search(tag) if tag else None)
    if m:
        return m.group(1)
    inline = inline_engine(image)
    if inline is not None and (engine_of_image(image) or image_mentions_engine(image)) in (None, inline[0]):
        # only for an image that names no other engine: a vLLM or TGI build whose tag also says "sglang-v0.5.9"
        # keeps its own tag's release (v0.11.0-sglang-v0.5.9 is vLLM 0.11.0, not 0.5.9)
        return inline[1]
    if not tag or tag.lower() in ("latest", "nightly", "main", "stable"):
        return None
    if dynamo_runtime(image) is not None:
        # a Dynamo release tag: the engine it carries, when Dynamo says which
        return dynamo_engine_version(image)
    if path.rsplit("/", 1)[-1].startswith(KSERVE_HF_IMAGE_NAME):  # huggingfaceserver, huggingfaceserver-gpu
        # a KServe release tag: the vLLM it carries, when kvlint has read that release's Dockerfile
        m = _VERSION_RE.match(tag)
        return KSERVE_HF_VLLM.get(m.group(1)) if m else None
    if path == _SUBSTRATUS_REPO and tag in SUBSTRATUS_VLLM:
        # a substratusai/vllm tag whose Dockerfile installs another vLLM than the tag reads as
        return SUBSTRATUS_VLLM[tag]
    engine = engine_of_image(image) or image_mentions_engine(image)
    if engine is None:
        return None
    if engine == "vllm" and _release_tag_build(path):
        # a build whose publisher says its tag leads with the vLLM release (:data:`VLLM_RELEASE_TAG_BUILDS`)
        m = _RELEASE_PREFIX_RE.match(tag)
        return m.group(1) if m else None
    if (
        engine_of_image(image) is None
        and not _names_engine_image(path.rsplit("/", 1)[-1], engine)
        and not (engine == "vllm" and path.rsplit("/", 1)[-1] == "vllm-arm64" and bare_vllm_published(image))
    ):
        # a repository kvlint does not know as an engine build (a fork, a custom build: quay.io/tms/vllm-dev-pplx,
        # whose script installs vLLM from main; neuralmagic/nm-vllm-openai, nm-vllm's own release numbers): its tag
        # is the image's own version, not the engine's, unless its last path component names the engine's image
        return None
    if (
        engine == "vllm"
        and engine_of_image(image) is None
        and path.rsplit("/", 1)[-1] in _AWS_VLLM_REPOSITORIES
    ):
        if aws_vllm_series(image) is not None:
            return None  # AWS's series tag (0.9-gpu-py312-ec2): it moves to each 0.9 release AWS publishes
        if not bare_vllm_published(image):
            # a repository named bare "vllm" by a publisher that does not say its tag is vLLM's release
            # (myorg/vllm:1.0, rtalaricw/vllm:0.1): the tag is that image's own version (Intel's and AWS's are
            # vLLM's: bare_vllm_published)
            return None
    if engine == "vllm" and _tag_not_version(path):
        return None
    m = _VERSION_RE.match(tag)
    if not m or _LONG_NUMBER.search(m.group(1)):
        return None  # (a number of thousands of digits names no release, and Python's int() refuses it)
    version = m.group(1)
    # ``0.5.5post3`` -> ``0.5.5.post3`` (normalise the separator).
    version = re.sub(r"(?<=\d)(post|rc|dev)", r".\1", version).replace("..", ".")
    return version


def inline_engine(image: str) -> tuple[str, str] | None:
    """``("sglang", release)`` when an image's name or tag names an SGLang release inline (``...-sglang-v0.5.9``,
    ``sglang0.4.6``), else None: a build that bundles SGLang and says which one in its tag, as the SGLang model
    gateway image ``ghcr.io/lightseekorg/smg:1.3.2-sglang-v0.5.9`` (OME ``config/runtimes/srt/zai-org/
    glm-text-fp8-tp8-rt.yaml``) whose tag's own version (1.3.2) is the gateway's. vLLM's inline form
    (``vllm0.5.0``, ``_vllm_0.8.5``) is read by :func:`engine_version` as before; this one names its engine so
    that :func:`engine_release` gives the release only to a container that runs SGLang."""
    repo, tag, _digest = split_image(image)
    path = _repo_path(repo)
    m = _INLINE_SGLANG_RE.search(path) or (_INLINE_SGLANG_RE.search(tag) if tag else None)
    return ("sglang", m.group(1)) if m else None


def unreleased_tag(image: str, *, engine_tag: bool = True) -> str | None:
    """The tag of ``image`` when it pins a build whose tag names no engine release kvlint reads (a private
    build's ``2025.10``, a Dynamo release ``0.5.0``): a tag, no digest, no placeholder, no word of a moving
    build (``latest``, ``nightly``, ``main``: KV208 warns about those) and, unless ``engine_tag`` is False (a
    Dynamo runtime image, whose tags are Dynamo's), no engine version read from it. None otherwise. KV208
    reports such a tag as an info unless the parser's KV504 says it."""
    if not image or "@" in image or image_placeholder(image) is not None:
        return None
    tag = split_image(image)[1]
    if tag is None or (engine_tag and engine_version(image) is not None):
        return None
    if any(w in ("latest", "nightly", "main") for w in re.split(r"[-_.]", tag.lower())):
        return None
    return tag


def engine_release(image: str, engine: str, option: str | None) -> str | None:
    """The release of ``engine`` (``vllm`` | ``tgi`` | ``sglang``) that a container running it on ``image`` is
    read, checked and planned with: the one answer every consumer gets (the option parser's table of known
    options, the memory model, KV208 and the KV504 notes that name an assumed release, ``kvlint plan``,
    ``simulate``, ``diff`` and the webhook, which all read :attr:`kvlint.types.ServingConfig.version` as this
    function set it). ``option`` is ``--engine-version`` (``engine_version`` in ``.kvlint.yaml``, the webhook's
    ``--engine-version``), already validated as a PEP 440 release; None when not given.

    Precedence, first that applies (README "Which engine release a container is read with", which keeps what
    its "Options shared by check and plan" and the CHANGELOG promised: ``--engine-version`` "when the image tag
    does not say, or the image is not one kvlint knows as the engine's release image"):

    1. The release pinned by the tag of a release image of ``engine`` itself (:func:`engine_of_image` names
       ``engine`` and :func:`engine_version` reads the tag): ``vllm/vllm-openai:v0.11.0`` -> ``0.11.0``,
       ``rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521`` -> ``0.8.5``, ``lmsysorg/sglang:v0.5.5.post3-cu126``,
       ``ghcr.io/huggingface/text-generation-inference:3.0.1``. ``option`` does not override it: one run over
       many manifests gives each pinned image its own release, and ``--engine-version`` fills in the others.
    2. ``option``, where the image does not pin the release that way: no image, no tag, ``latest``/``main``/
       ``nightly``, a digest alone, a tag that names no release (NGC ``26.02-py3``, llm-d, LMCache, a private
       build's ``prod``), an operator-chosen image (KServe runtime, KubeAI, KAITO), an NVIDIA Dynamo runtime
       image, and an image kvlint does not know as a release image of ``engine``, whose tag may be its own
       version (step 3). A release the workload installs over the image is not passed here: a ``pip install
       vllm==X`` the container's ``sh -c`` script runs before the engine (``kvlint.engines.command._pip_pinned``)
       and a RayService's ``runtime_env.pip``/``uv`` pin (:attr:`kvlint.types.Workload.engine_release`, which Ray
       installs for the application over the image's Python environment) replace the release the image carried,
       so :func:`kvlint.engines.command.parse_container` takes them before this function (step 1 included).
    3. The release read from such an image: the tag of a build kvlint does not know whose last path component
       names the engine's image (:func:`_names_engine_image`: ``harbor.example.com/aip/vllm-openai:v0.11.2`` ->
       ``0.11.2``; a fork or custom build whose name only holds the engine's has a tag of its own,
       ``ghcr.io/neuralmagic/nm-vllm-openai:v0.1.0`` and ``quay.io/tms/vllm-dev-pplx:0.1.0`` -> none), a release
       named inline (``.../neuron-sdk2.20-vllm0.5.0-neuron:v1`` -> ``0.5.0``), the SGLang release a bundling image's tag names inline (``ghcr.io/lightseekorg/smg:
       1.3.2-sglang-v0.5.9`` -> ``0.5.9``, :func:`inline_engine`, for SGLang only), the vLLM a
       ``rayproject/ray-llm`` tag's Ray release requires (:data:`RAY_LLM_VLLM`), the
       vLLM a ``kserve/huggingfaceserver`` tag's KServe release installs (:data:`KSERVE_HF_VLLM`), the vLLM or
       SGLang an NVIDIA Dynamo runtime image's Dynamo release carries (:data:`DYNAMO_ENGINES`; an unlisted
       Dynamo release reads as none).
    4. None: the release is not known; the memory model then plans the newest release it models
       (:func:`kvlint.memory.versions.resolve_version`) and KV208 says so.

    The image says nothing of ``engine`` (steps 1 and 3 skipped) when it is the release image of another engine
    (``lmsysorg/sglang:v0.5.5`` running ``vllm serve``) or names another engine. An NVIDIA Dynamo runtime
    image's tag is a Dynamo release, not the engine's (ai-dynamo/dynamo pyproject.toml: ai-dynamo 1.2.0's
    ``vllm`` extra pins ``vllm==0.20.1``): :func:`engine_version` reads it through :data:`DYNAMO_ENGINES`, never
    as the engine's.
    A log's printed release (``kvlint verify``) is not an image and is decided by :mod:`kvlint.verify.compare`.
    """
    inline = inline_engine(image) if image else None
    named = (
        (engine_of_image(image) or image_mentions_engine(image) or (inline and inline[0])) if image else None
    )
    read = engine_version(image) if image and named in (None, engine) else None
    if read is not None and engine_of_image(image) == engine:
        return read  # 1: a release image of the engine pins it
    if option:
        return option  # 2
    return read  # 3, or 4 (None)


def tag_only_names_release(image: str) -> bool:
    """Whether :func:`engine_version` reads ``image``'s release from nothing but the tag of a repository kvlint does
    not know as an engine build, named for the engine's image (:func:`_names_engine_image`: ``rtalaricw/vllm:0.1``):
    a guess, as the tag may be the image's own version. False for the releases read from what the image's maker
    publishes: a Ray LLM image's Ray release (:data:`RAY_LLM_VLLM`), a KServe or Dynamo release
    (:data:`KSERVE_HF_VLLM`, :data:`DYNAMO_ENGINES`), a release named inline (``...-vllm0.5.0-neuron``), the tag of a
    build whose publisher says it leads with the vLLM release (:data:`VLLM_RELEASE_TAG_BUILDS`)."""
    if not image or engine_of_image(image) is not None or engine_version(image) is None:
        return False
    repo, tag, _ = split_image(image)
    path = _repo_path(repo)
    if ray_llm_vllm(image) is not None or dynamo_runtime(image) is not None or _release_tag_build(path):
        return False
    if bare_vllm_published(image):
        return False  # Intel's and AWS's vllm images: their publisher says the tag is the vLLM release
    if path.rsplit("/", 1)[-1].startswith(KSERVE_HF_IMAGE_NAME) or inline_engine(image) is not None:
        return False
    return _INLINE_VLLM_RE.search(path) is None and (tag is None or _INLINE_VLLM_RE.search(tag) is None)


def tag_of_unknown_image(serving: ServingConfig) -> bool:
    """Whether ``serving.version`` was read from the tag (or name) of an image kvlint does not know as a release
    image of the engine -- one it recognised only because its name mentions the engine, a rebuild named for the
    engine's image (``rtalaricw/vllm:0.1``, :func:`_names_engine_image`), whose tag may be that image's own version. Said by
    KV208 of a release outside those kvlint models; which release applies is :func:`engine_release`'s to
    decide (an explicit ``--engine-version`` takes precedence over such a tag)."""
    image = serving.image
    return (
        bool(image)
        and serving.version is not None
        and engine_of_image(image) is None
        and engine_version(image) == serving.version
    )


#: Words in an image reference that name a build for something other than CUDA (TPU, Trainium/Inferentia,
#: Gaudi, CPU, Intel GPUs, Ascend NPUs, IBM Spyre). ``spyre``: the vllm-spyre plugin's images,
#: ``quay.io/ibm-aiu/vllm-spyre:latest.amd64`` (vllm-project/vllm-spyre ``docs/deploying/k8s.md``@59c86c02, on
#: ``ibm.com/aiu_pf``), ``quay.io/opendatahub/vllm-spyre`` (Open Data Hub's serving runtimes) and ``vllm/vllm-spyre``
#: (the tag its ``docker/Dockerfile.amd64`` is built as in ``docs/deploying/docker.md``); the plugin runs vLLM on
#: Spyre cards through ``torch_sendnn`` and finds no Spyre card on a GPU node.
_NON_CUDA_IMAGE_WORDS = (
    "tpu",
    "neuron",
    "gaudi",
    "hpu",
    "cpu",
    "xpu",
    "openvino",
    "xeon",
    "npu",
    "ascend",
    "spyre",
)

#: Each of :data:`_NON_CUDA_IMAGE_WORDS` at the start of a word of the reference (``vllm-tpu``, ``neuronx``,
#: ``latest-cpu``), not inside one: ``throughput`` holds ``hpu``, ``output`` ``tpu``, ``input`` ``npu``, and an
#: image so named is no build for those (it was read as one and not sized).
_NON_CUDA_WORD_RES = tuple((w, re.compile(r"(?<![a-z0-9])" + w)) for w in _NON_CUDA_IMAGE_WORDS)


#: ``amd`` in an image reference names an AMD (ROCm) build, but not in ``amd64``, the x86-64 architecture tag of
#: CUDA builds too (OME's ``lmsysorg/sglang:v0.5.5.post3-cu129-amd64``).
_AMD = re.compile(r"amd(?!64)")

#: ``cann`` and a version at the start of a word of the reference: a build on Huawei's CANN, the Ascend NPU
#: toolkit. SGLang's own Ascend images are tagged so, ``lmsysorg/sglang:v<version>-cann<CANN>-<910b|a3>``
#: (sgl-project/sglang ``.github/workflows/release-docker-npu.yml``@024691d4590c, built from
#: ``docker/npu.Dockerfile``; nightly ``lmsysorg/sglang:main-cann8.3.rc1-a3``), with no other platform word in
#: their name. Not ``cann`` inside a word or without a version (``cannon``).
_CANN = re.compile(r"(?<![a-z0-9])cann\d")

#: ``intel`` as a word of an image's tag, with no other platform word in the reference: TGI's Intel GPU (XPU)
#: build as it was first tagged, ``ghcr.io/huggingface/text-generation-inference:latest-intel`` (its
#: ``docs/source/installation_intel.md``@07e240ca, on Intel Data Center GPU Max) and ``<release>-intel`` for
#: v2.1.0-v2.2.0: huggingface/text-generation-inference ``.github/workflows/build.yaml``@480d3b33 built
#: ``Dockerfile_intel`` with ``label_extension="-intel"`` until b6bb1d51 (2024-08-12, before v2.3.0) split it
#: into ``-intel-xpu`` and ``-intel-cpu`` (read by ``xpu``/``cpu``, :data:`_NON_CUDA_WORD_RES`). Intel ships no
#: CUDA build. Only in the tag: a repository or namespace named ``intel`` says nothing of the build alone.
_INTEL_TAG = re.compile(r"(?<![a-z0-9])intel(?![a-z0-9])")


def _tag(low: str) -> str:
    """The tag of an image reference (``latest-intel`` of ``ghcr.io/...:latest-intel@sha256:...``), or ``""``."""
    return low.rpartition("/")[2].partition("@")[0].partition(":")[2]


@_by_reference
def image_platform(image: str) -> str:
    """``cuda`` (the default), ``rocm``, or the non-CUDA word that begins a word of the image reference (``tpu``,
    ``cpu``..., :data:`_NON_CUDA_WORD_RES`; ``ascend`` for a CANN tag, :data:`_CANN`; ``xpu`` for TGI's
    ``-intel`` tags, :data:`_INTEL_TAG`).
    Memoised by the reference (a pure function of one short string, asked for each container several times: by
    the fleet, KV208, KV304, the sizing summary). A string longer than any image reference
    (:data:`_MAX_REFERENCE_CHARS`) is read by its first characters only: a 1 MB ``image`` (hostile input, never
    memoised, :func:`_by_reference`) was searched whole by each of the ten patterns on each of the ~13 calls a
    container makes, 0.26 s a call."""
    low = image[:_MAX_REFERENCE_CHARS].lower()
    if "rocm" in low or _AMD.search(low):
        return "rocm"
    for w, word in _NON_CUDA_WORD_RES:
        if word.search(low):
            return w
    if _CANN.search(low):
        return "ascend"
    if _INTEL_TAG.search(_tag(low)):
        return "xpu"
    return "cuda"


#: Platform words of :func:`serving_platform` that name a build for another accelerator than a GPU of NVIDIA or
#: AMD (a CPU build runs without one, so it is not among them), and the word each is shown as.
_ACCELERATOR_BUILDS = {
    "tpu": "tpu",
    "neuron": "neuron",
    "gaudi": "gaudi",
    "hpu": "gaudi",
    "xpu": "xpu",
    "npu": "ascend",
    "ascend": "ascend",
    "spyre": "spyre",
}


def accelerator_build(serving: ServingConfig) -> str | None:
    """The accelerator that is not an NVIDIA or AMD GPU the container is built for, or None: the platform
    :func:`serving_platform` reads from vLLM's ``--device`` (``hpu``, ``xpu``, ``neuron``, ``tpu``) or the image
    reference (:func:`image_platform`: ``quay.io/ascend/vllm-ascend`` -> ``ascend``, ``vllm/vllm-tpu`` -> ``tpu``,
    ``ghcr.io/huggingface/tgi-gaudi`` -> ``gaudi``, ``quay.io/ibm-aiu/vllm-spyre`` -> ``spyre``; a CANN tag,
    ``lmsysorg/sglang:v0.5.4-cann8.3.rc1-a3`` -> ``ascend``, :data:`_CANN`), when it is one of
    :data:`_ACCELERATOR_BUILDS`. Such a build finds no device of its own on an NVIDIA or AMD GPU node
    (vllm-ascend imports ``torch_npu`` and sets ``npu:<local rank>``, vllm-tpu and vllm-gaudi their TPU and HPU
    devices, vllm-spyre its Spyre cards), so it is not sized on one (KV304 says so). One matcher: the image was
    searched a second time with a pattern of its own, which took the leftmost word where :func:`image_platform`
    takes them in its order, and an image naming two platforms was no build at all."""
    device = serving.get("device") if serving.engine == "vllm" else None
    return _ACCELERATOR_BUILDS.get(serving_platform(serving.image, device)[0])


#: vLLM ``--device`` values (0.4.3-0.9.2) that are not a CUDA/ROCm GPU, and their platform word.
_DEVICE_PLATFORMS = {
    "hpu": "gaudi",
    "cpu": "cpu",
    "xpu": "xpu",
    "neuron": "neuron",
    "tpu": "tpu",
    "openvino": "openvino",
}


#: Repositories whose images a vendor names by the platform they are built for (registry host kept where the
#: vendor's registry is the evidence; a trailing ``/`` covers every repository under it; one without ``/`` is the
#: last path component): an image of one of them is read as its platform word says (:func:`published_build`).
#: ROCm: ``rocm/vllm``, ``rocm/vllm-dev`` (AMD), ``vllm/vllm-openai-rocm`` (vLLM's), ``llm-d/llm-d-rocm``, Red
#: Hat's ``vllm-rocm-rhel9`` (the tables above). TPU: ``vllm/vllm-tpu``. Intel GPU: ``llm-d/llm-d-xpu``,
#: ``intel/vllm`` (``intel/vllm:0.10.2-xpu``). Ascend: ``quay.io/ascend/vllm-ascend`` (vllm-project/vllm-ascend's
#: installation guide). Gaudi: Habana's registry ``vault.habana.ai/`` (its ``gaudi-docker`` PyTorch images,
#: :mod:`kvlint.rules.runner`), ``huggingface/tgi-gaudi``, OPEA's ``opea/vllm-gaudi`` and Red Hat OpenShift AI's
#: ``registry.redhat.io/rhoai/odh-vllm-gaudi-rhel9`` (the ServingRuntime of vllm-project/vllm-gaudi
#: ``gaudi3Benchmarks/1.23.0/redhatopenshift/llama3.3-70b-fp8.yaml``@1c69c38c, fixtures/collected; also on
#: ``quay.io/rhoai/`` and as ``registry.redhat.io/rhaii/``), and its ROCm twin ``odh-vllm-rocm-rhel9`` (Red Hat's
#: runtime table "vLLM ROCm | registry.redhat.io/rhaii/odh-vllm-rocm-rhel9 | GA"; ``rhoai/odh-vllm-rocm-rhel9:v2.25.9``
#: scanned in Red Hat's image audits, both read with the library's find_string); SGLang's AMD images
#: ``rocm/sgl-dev`` (SGLang's AMD guides: ``docker pull rocm/sgl-dev:upstream_20250312_v1``, its nightly
#: ``rocm/sgl-dev:v0.5.14-rocm700-mi35x-...``). Red Hat AI Inference Server's other builds, ``rhaiis/vllm-tpu-rhel9``
#: (Tech Preview, ``podman pull registry.redhat.io/rhaiis/vllm-tpu-rhel9:3.2.1`` in its TPU guide),
#: ``vllm-spyre-rhel9`` (IBM Spyre, GA), ``vllm-neuron-rhel9`` and ``vllm-gaudi-rhel9`` (its 3.5.0 guide's
#: "Supported AWS Neuron AI accelerators for registry.redhat.io/rhaiis/vllm-neuron-rhel9:3.5.0" and Intel Gaudi
#: tables; read with the library's find_string). Neuron: AWS's
#: ``public.ecr.aws/neuron/`` and the Deep Learning Containers' ``huggingface-pytorch-tgi-inference`` and
#: ``pytorch-inference-neuronx`` (``...-neuronx-...`` tags, https://huggingface.co/docs/optimum-neuron/containers).
#: Spyre: ``quay.io/ibm-aiu/vllm-spyre``, ``quay.io/opendatahub/vllm-spyre``, ``vllm/vllm-spyre``
#: (:data:`_NON_CUDA_IMAGE_WORDS`).
_PUBLISHED_BUILD_REPOS = (
    "rocm/vllm",
    "rocm/vllm-dev",
    "vllm/vllm-openai-rocm",
    "llm-d/llm-d-rocm",
    "llm-d/llm-d-xpu",
    "red-hat-ai-inference-server/vllm-rocm-rhel9",
    "rhaiis/vllm-rocm-rhel9",
    "rhaiis/vllm-tpu-rhel9",
    "rhaiis/vllm-spyre-rhel9",
    "rhaiis/vllm-neuron-rhel9",
    "rhaiis/vllm-gaudi-rhel9",
    "vllm/vllm-tpu",
    "intel/vllm",
    "quay.io/ascend/vllm-ascend",
    "vault.habana.ai/",
    "huggingface/tgi-gaudi",
    "opea/vllm-gaudi",
    "registry.redhat.io/rhoai/odh-vllm-gaudi-rhel9",
    "quay.io/rhoai/odh-vllm-gaudi-rhel9",
    "registry.redhat.io/rhaii/odh-vllm-gaudi-rhel9",
    "registry.redhat.io/rhoai/odh-vllm-rocm-rhel9",
    "quay.io/rhoai/odh-vllm-rocm-rhel9",
    "registry.redhat.io/rhaii/odh-vllm-rocm-rhel9",
    "rocm/sgl-dev",
    "public.ecr.aws/neuron/",
    "huggingface-pytorch-tgi-inference",
    "pytorch-inference-neuronx",
    "quay.io/ibm-aiu/vllm-spyre",
    "quay.io/opendatahub/vllm-spyre",
    "vllm/vllm-spyre",
)

#: The engines' own repositories that publish builds for other platforms under tags of their own, and the tag words
#: that say so: TGI's ``-rocm`` (``2.4.1-rocm``), ``-intel`` (v2.1.0-v2.2.0), ``-intel-xpu`` (:data:`_INTEL_TAG`),
#: ``-neuron`` (``ghcr.io/huggingface/text-generation-inference:3.3.5-neuron``,
#: https://huggingface.co/docs/text-generation-inference/backends/neuron) and ``-gaudi`` (its
#: ``.github/workflows/build.yaml``, ``latest-gaudi``); SGLang's ``-rocm<ROCm>`` and
#: ``-cann<CANN>`` (:data:`_CANN`). Red Hat OpenShift AI's vLLM images ``quay.io/modh/vllm`` are per platform by
#: tag, ``rhoai-2.25-cuda``, ``-rocm``, ``-gaudi`` (containers/ramalama's ``_image`` runs ``quay.io/modh/vllm:
#: rhoai-2.17-rocm`` on a ROCm GPU, ``HIP_VISIBLE_DEVICES``; rh-ai-quickstart's ``llm-service`` chart its
#: ``vllm-gaudi-...`` build for ``habana.ai/gaudi``).
_PUBLISHED_BUILD_TAGS = {
    "huggingface/text-generation-inference": re.compile(r"(?<![a-z0-9])(rocm|intel|neuron|gaudi)(?![a-z])"),
    "lmsysorg/sglang": re.compile(r"(?<![a-z0-9])(rocm|cann)\d"),
    "modh/vllm": re.compile(r"(?<![a-z0-9])(rocm|gaudi)(?![a-z])"),
}


#: SGLang's ROCm images, built one per GPU architecture, the tag naming the family: sgl-project/sglang
#: ``docker/rocm.Dockerfile`` (at 004ae46f) builds ``GPU_ARCH=gfx942`` as ``v0.5.17-rocm700-mi30x``, ``gfx950`` as
#: ``-mi35x`` and ``gfx1250`` as ``-mi45x``, compiling sgl-kernel (``AMDGPU_TARGET=$GPU_ARCH_LIST``) and AITER's
#: prebuilt kernels (``GPU_ARCHS=$GPU_ARCH_LIST``) for that target alone (the ``-rocm700`` flavours share one base
#: image, ``rocm/sgl-dev:rocm7-vllm-20250904``, for both; the ``-rocm1000`` ones also take only their target's ROCm
#: device wheels: "the MI300 image carries only gfx942 wheels and the MI350 image carries only gfx950 wheels"),
#: published as ``lmsysorg/sglang`` and, nightly, ``rocm/sgl-dev``.
_SGLANG_ROCM_REPOS = ("lmsysorg/sglang", "rocm/sgl-dev")
_SGLANG_ROCM_FAMILY = re.compile(r"(?:^|-)(mi30x|mi35x|mi45x)(?:-|$)")
_SGLANG_ROCM_TARGET = {"mi30x": "gfx942", "mi35x": "gfx950", "mi45x": "gfx1250"}


def rocm_build_target(image: str) -> tuple[str, str] | None:
    """``(LLVM target, tag word)`` of a ROCm image built for one GPU architecture only, as its tag says (SGLang's
    ``...-rocm700-mi30x``: gfx942, MI300X and MI325X); None for any other image. Such an image runs on no AMD GPU
    of another architecture (its kernels are compiled for that target alone)."""
    repo, tag, _digest = split_image(image)
    if not tag or _repo_path(repo) not in _SGLANG_ROCM_REPOS:
        return None
    m = _SGLANG_ROCM_FAMILY.search(tag.lower())
    return (_SGLANG_ROCM_TARGET[m.group(1)], m.group(1)) if m else None


#: AMD's ROCm builds of vLLM (``rocm/vllm``, nightly ``rocm/vllm-dev``) whose tag names the Instinct family the image is
#: built and tuned for: ``rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4`` (ROCm/k8s-device-plugin
#: ``example/vllm-serve/deployment.yaml``, "for MI300X" in AMD's vLLM inference guide,
#: https://rocm.docs.amd.com/en/latest/how-to/rocm-for-ai/inference/benchmark-docker/vllm.html). The family word maps
#: to the LLVM target vLLM's ROCm requirements give it (vLLM docs, "GPU > AMD ROCm": MI300/MI325 gfx942, MI350/MI355
#: gfx950). **[assumed]** that such an image is meant for that family's GPUs only: whether it also carries kernels for
#: other targets the tag does not say, so it narrows the GPUs an unnamed pod is planned on (KV501's fleet) and is
#: never read as a refusal to start elsewhere (KV304 reads SGLang's single-target builds only,
#: :func:`rocm_build_target`).
_VLLM_ROCM_REPOS = ("rocm/vllm", "rocm/vllm-dev")
_VLLM_ROCM_FAMILY = re.compile(r"(?:^|[_.-])(mi300x?|mi325x?|mi30x|mi350x?|mi355x?|mi35x)(?=[_.-]|$)")
_VLLM_ROCM_TARGET = {"mi30": "gfx942", "mi32": "gfx942", "mi35": "gfx950"}


def rocm_family_target(image: str) -> tuple[str, str] | None:
    """``(LLVM target, tag word)`` of the GPU family a ROCm build of vLLM's tag names (``rocm/vllm:..._mi300_...``:
    gfx942; :data:`_VLLM_ROCM_FAMILY`), else None (another repository, or a tag naming no family: ``latest``,
    ``rocm7.0.0_vllm_0.11.1_20251103``). What the image is built for, not what it cannot run on (module note at
    :data:`_VLLM_ROCM_REPOS`)."""
    repo, tag, _digest = split_image(image)
    if not tag or _repo_path(repo) not in _VLLM_ROCM_REPOS:
        return None
    m = _VLLM_ROCM_FAMILY.search(tag.lower()[:128])
    return (_VLLM_ROCM_TARGET[m.group(1)[:4]], m.group(1)) if m else None


def rocm_build_tag(target: str) -> str | None:
    """The tag word of SGLang's ROCm image built for the LLVM target ``target`` (``gfx950``: ``mi35x``), else
    None (:data:`_SGLANG_ROCM_TARGET` read backwards)."""
    return next((word for word, t in _SGLANG_ROCM_TARGET.items() if t == target), None)


@_by_reference
def published_build(image: str) -> bool:
    """Whether the platform word :func:`image_platform` reads in ``image`` is a vendor's naming of a build it
    publishes: the image is in one of :data:`_PUBLISHED_BUILD_REPOS` (``rocm/vllm:...``, ``vllm/vllm-tpu:...``,
    ``quay.io/ascend/vllm-ascend:...``), or in an engine's own repository with one of the platform tags it
    publishes (:data:`_PUBLISHED_BUILD_TAGS`: ``ghcr.io/huggingface/text-generation-inference:3.3.5-neuron``,
    ``lmsysorg/sglang:v0.5.4-cann8.3.rc1-a3``). A word in a custom image's name (``registry.example.com/npu-team/
    vllm:v0.8.5``, ``ghcr.io/acme/vllm:v0.8.5-neuron-ready``) is what its owner called it, not evidence of the
    build: :func:`gpu_build_on_other_accelerator` does not make it a KV304 error."""
    repo, tag, _ = split_image(image[:_MAX_REFERENCE_CHARS])
    full = repo.lower()
    path = _repo_path(repo)
    for r in _PUBLISHED_BUILD_REPOS:
        if r.endswith("/"):
            if full.startswith(r):
                return True
        elif full == r or path == r or ("/" not in r and path.rsplit("/", 1)[-1] == r):
            return True
    words = _PUBLISHED_BUILD_TAGS.get(path)
    return words is not None and tag is not None and words.search(tag.lower()) is not None


def serving_platform(image: str, device: object = None, resource: str | None = None) -> tuple[str, str]:
    """``(platform, evidence)``: the platform a serving container is built for, ``cuda``, ``rocm`` or a non-GPU
    word (``tpu``, ``gaudi``, ``neuron``, ``cpu``, ``xpu`` ...), and what says so, from the strongest evidence
    first: vLLM's ``--device`` flag (``device``: ``hpu``, ``cpu`` ...), a platform word in the image reference
    (``image``, :func:`image_platform`), then, for an image kvlint does not recognise as an engine's own
    (:func:`engine_of_image`), the accelerator resource the container requests (``resource``:
    ``habana.ai/gaudi`` -> ``gaudi``, see :data:`kvlint.gpu_resources.NON_GPU_RESOURCES`). Else
    ``("cuda", "default")``, the official engine images' default build."""
    dev = str(device or "").strip().lower()
    if dev in _DEVICE_PLATFORMS:
        return _DEVICE_PLATFORMS[dev], "device"
    platform = image_platform(image)
    if platform != "cuda":
        return platform, "image"
    if resource in NON_GPU_RESOURCES and engine_of_image(image) is None:
        return NON_GPU_RESOURCES[resource], "resource"
    return "cuda", "default"


def platform_evidence(serving: ServingConfig, resource: str | None = None) -> tuple[str, str]:
    """:func:`serving_platform` of a parsed container (``(platform, evidence)``): its image, vLLM's ``--device``
    and the accelerator ``resource`` its placement found (``Placement.resource``)."""
    device = serving.get("device") if serving.engine == "vllm" else None
    return serving_platform(serving.image, device, resource)


def platform_of(serving: ServingConfig, resource: str | None = None) -> str:
    """The platform of :func:`platform_evidence` alone."""
    return platform_evidence(serving, resource)[0]


class Unsized(str, Enum):
    """Why a container is not sized whatever its model (:func:`unsized_whatever_model`), a typed reason: callers
    test it by member (``why is Unsized.NOT_A_GPU``), never by its text; the value is the wording the sizing line
    and the JSON report's ``sizing`` use (:func:`kvlint.sizing.sizing_of` hands on ``.value``)."""

    NOT_A_GPU = "not a CUDA/ROCm GPU"
    OTHER_GPU_BUILD = "built for another GPU"
    NO_GPU_REQUESTED = "no GPU requested"

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


def unsized_whatever_model(serving: ServingConfig, placement: Placement | None) -> Unsized | None:
    """Why the container is not sized whatever its model (:class:`Unsized`), or None: ``not a CUDA/ROCm GPU`` (its accelerator is
    known and is not an NVIDIA or AMD GPU, or :func:`platform_of` reads a CPU, TPU, Neuron, Gaudi ... build or
    device, or it requests another accelerator's resource), ``built for another GPU`` (a ROCm build requesting
    ``nvidia.com/gpu``, an engine's CUDA image requesting ``amd.com/gpu``: :func:`gpu_build_on_other_accelerator`,
    KV304) or ``no GPU requested`` (a CUDA/ROCm container whose GPU is unknown and that requests no GPU:
    :attr:`~kvlint.types.Placement.requests_no_gpu`). These reasons take precedence over an unknown model:
    KV501 reports them, KV502 does not add "no config.json", and :func:`kvlint.sizing.sizing_of` counts the
    container under them, since a config.json would not let kvlint size it (except in a serving-runtime
    template, whose model and resources come from the InferenceService that uses it)."""
    acc = placement.accelerator if placement is not None else None
    resource = placement.resource if placement is not None else None
    if (acc is not None and acc.vendor not in ("nvidia", "amd")) or platform_of(serving, resource) not in (
        "cuda",
        "rocm",
    ):
        return Unsized.NOT_A_GPU
    other = gpu_build_on_other_accelerator(serving, placement)
    if other is not None:
        # KV304: the engine's GPU build on a TPU, Gaudi, Neuron or Ascend node, or a ROCm build on an NVIDIA node
        # (a CUDA one on an AMD node)
        return Unsized.NOT_A_GPU if other in NON_GPU_RESOURCES else Unsized.OTHER_GPU_BUILD
    if acc is None and placement is not None and placement.requests_no_gpu:
        return Unsized.NO_GPU_REQUESTED
    return None


def gpu_vendor_of_resource(resource: str | None) -> str | None:
    """The GPU vendor whose nodes alone advertise ``resource``: ``nvidia`` for NVIDIA's device plugin's
    ``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` (time-slicing) and MIG slices (``nvidia.com/mig-1g.10gb``),
    ``amd`` for AMD's ``amd.com/gpu`` and its partitions under the ``mixed`` naming (``amd.com/cpx_nps4``,
    :func:`kvlint.gpu_resources.amd_partition_of`); None for any other resource."""
    if resource in (NVIDIA_GPU, NVIDIA_GPU_SHARED) or (resource or "").startswith(MIG_RESOURCE_PREFIX):
        return "nvidia"
    if resource == AMD_GPU or amd_partition_of(resource) is not None:
        return "amd"
    return None


def gpu_build_on_other_accelerator(serving: ServingConfig, placement: Placement | None) -> str | None:
    """The device-plugin resource a container requests, when it names no GPU model of its own and its image is a
    build for another device than the nodes that resource is advertised on, else None. Such a pod is scheduled on
    those nodes, where the build finds no device of its own and the engine does not start (KV304); it is not
    planned on kvlint's GPU fleet. Two cases:

    * another accelerator's resource (``google.com/tpu``, ``habana.ai/gaudi``, ``aws.amazon.com/neuron``,
      ``huawei.com/Ascend910`` ..., :data:`kvlint.gpu_resources.NON_GPU_RESOURCES`) for an engine's CUDA or ROCm
      build (:func:`platform_of` reads the resource only for an image that is not an engine's,
      :func:`serving_platform`);
    * an NVIDIA or AMD GPU resource (:func:`gpu_vendor_of_resource`) for a build of the other vendor or of another
      accelerator, as KV304 tests a named GPU (:func:`kvlint.memory.compat.image_platform_mismatch`): a ROCm
      build (``rocm/vllm:...``) on ``nvidia.com/gpu``, whose ROCm PyTorch finds no AMD GPU there; an engine's
      own CUDA image (:func:`is_known_cuda_build`) on ``amd.com/gpu``; an Ascend, TPU, Gaudi, Neuron or Intel GPU
      build (:func:`accelerator_build`) on either. Before, these were planned on a fleet of the GPUs the image
      was built for (a ROCm image requesting ``nvidia.com/gpu`` on the AMD Instinct fleet) with KV501's "cannot
      tell which GPU", or told KV501's "capacity rules skipped". A custom image (platform read by default) is no
      evidence, nor is a platform word in a custom image's name: the ROCm and accelerator builds counted here are
      the vendors' published images (:func:`published_build`) or vLLM's ``--device``; a word alone
      (``registry.example.com/npu-team/vllm:v0.8.5`` on ``nvidia.com/gpu``) stays KV501's warning."""
    if placement is None or placement.accelerator is not None:
        return None
    resource = placement.resource
    if resource in NON_GPU_RESOURCES:
        return resource if platform_of(serving, resource) in ("cuda", "rocm") else None
    vendor = gpu_vendor_of_resource(resource)
    if vendor is None or resource is None:
        return None
    # the build is known from vLLM's --device or a vendor's published image (published_build), not from a word
    # in a custom image's name (ghcr.io/acme/tpu-migration/vllm-openai: KV501, as before)
    if accelerator_build(serving) is not None and build_is_evidenced(serving):
        return resource
    platform = platform_of(serving, resource)
    if platform == "rocm" and vendor == "nvidia" and published_build(serving.image):
        return resource
    if (
        platform == "cuda"
        and vendor == "amd"
        and (is_known_cuda_build(serving.image) or pypi_cuda_wheel(serving))
    ):
        return resource
    return None


def build_is_evidenced(serving: ServingConfig) -> bool:
    """Whether the platform :func:`platform_of` reads for ``serving`` is evidence of the build, as KV304 needs it on
    both its paths (a GPU named, :func:`kvlint.memory.compat.image_platform_mismatch`; none named,
    :func:`gpu_build_on_other_accelerator`): vLLM's ``--device``, or a vendor's published build
    (:func:`published_build`: ``rocm/vllm``, ``quay.io/ascend/vllm-ascend``, TGI's ``-gaudi`` tags ...). A platform
    word in a custom image's name (``registry.example.com/npu-team/vllm``, ``ghcr.io/amd-lab/vllm-openai``) is
    what its owner called it, not evidence."""
    return published_build(serving.image) or platform_evidence(serving)[1] == "device"


#: Images that carry no vLLM of their own, so that a script's ``pip install vllm`` installs it there: Docker's official
#: ``python``, ``ubuntu`` and ``debian`` images (``python:3.11``, ``docker.io/library/python:3.11``), NVIDIA's CUDA base
#: images ``nvidia/cuda`` and PyTorch's ``pytorch/pytorch`` (CUDA PyTorch, no vLLM).
_PLAIN_BASE_IMAGES = frozenset({"python", "ubuntu", "debian", "nvidia/cuda", "pytorch/pytorch"})

#: vLLM's ROCm wheels and the index they are on, as vLLM's installation guide gives them
#: (vllm-project/vllm@06d0369d75e0 ``docs/getting_started/installation/gpu.rocm.inc.md``, "Prebuilt Wheels"): PyPI's
#: ``vllm`` wheel is the CUDA build, and an installer that finds no ROCm wheel "will silently fall back to the CUDA
#: wheel from PyPI, which will fail on AMD GPUs with errors like ``libcudart.so: cannot open shared object file``";
#: the ROCm wheels are on ``https://wheels.vllm.ai/rocm/`` (per release ``https://wheels.vllm.ai/rocm/<release>/
#: <variant>``), for Python 3.12 only, variant ``rocm700`` (ROCm 7.0) for releases 0.14.0 to 0.18.0 (nightly builds
#: later), and pip needs the exact version with its variant: ``pip install vllm==0.18.0+rocm700 --extra-index-url
#: https://wheels.vllm.ai/rocm/0.18.0/rocm700``. The guide as released with v0.18.0 (its sdist's copy) gives the same
#: index, URL forms, variant, Python 3.12 and "ROCm 7.0 and ``glibc >= 2.35``" (its example release is 0.15.0); the
#: guide released with v0.14.0 still says "Currently, there are no pre-built ROCm wheels", though its release is on
#: the index (vllm-project/vllm-omni's ROCm install: ``vllm==0.14.0+rocm700 --extra-index-url
#: https://wheels.vllm.ai/rocm/0.14.0/rocm700``).
VLLM_ROCM_WHEELS = ("rocm700", "0.14.0", "0.18.0")
VLLM_ROCM_INDEX = "https://wheels.vllm.ai/rocm/"

#: pip's and uv's environment variables that do not change where a package is installed from (pip reads
#: ``PIP_<OPTION>`` for each of its options, pip ``configuration.py``; uv its ``UV_*`` settings): its cache, its
#: output, its timeouts, which interpreter, whether it may touch the system environment, and uv's
#: ``UV_TORCH_BACKEND`` (the PyTorch index for ``torch`` and its kin, not ``vllm``). Any other ``PIP_*``/``UV_*``
#: variable (``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``, ``PIP_REQUIREMENT``, ``PIP_CONSTRAINT``,
#: ``PIP_CONFIG_FILE``, ``UV_INDEX``, ``UV_CONFIG_FILE`` ...) may name another source.
_PIP_NEUTRAL_ENV = frozenset(
    {
        "PIP_NO_CACHE_DIR",
        "PIP_CACHE_DIR",
        "PIP_DISABLE_PIP_VERSION_CHECK",
        "PIP_ROOT_USER_ACTION",
        "PIP_BREAK_SYSTEM_PACKAGES",
        "PIP_PROGRESS_BAR",
        "PIP_DEFAULT_TIMEOUT",
        "PIP_TIMEOUT",
        "PIP_RETRIES",
        "PIP_QUIET",
        "PIP_VERBOSE",
        "PIP_NO_INPUT",
        "PIP_NO_COLOR",
        "UV_SYSTEM_PYTHON",
        "UV_BREAK_SYSTEM_PACKAGES",
        "UV_NO_CACHE",
        "UV_CACHE_DIR",
        "UV_HTTP_TIMEOUT",
        "UV_LINK_MODE",
        "UV_COMPILE_BYTECODE",
        "UV_CONCURRENT_DOWNLOADS",
        "UV_NO_PROGRESS",
        "UV_PYTHON",
        "UV_TORCH_BACKEND",
    }
)


def pip_source_variable(name: str) -> bool:
    """Whether the environment variable ``name`` may set where pip or uv installs from (a ``PIP_*`` or ``UV_*``
    variable not in :data:`_PIP_NEUTRAL_ENV`)."""
    return name.startswith(("PIP_", "UV_")) and name not in _PIP_NEUTRAL_ENV


#: Variables that point Python at packages outside the image's own environment (``PYTHONPATH=/opt/rocm-vllm`` on a
#: volume an init container filled, an activated virtual or conda environment): vLLM may be installed there already,
#: and the script's ``pip install vllm`` then says "Requirement already satisfied" and installs nothing.
_PYTHON_ENVIRONMENT = frozenset({"PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "VIRTUAL_ENV", "CONDA_PREFIX"})

#: Path components of a volume mount that may put pip's or uv's configuration file (and so an index) in the
#: container: ``/etc/pip.conf``, ``/root/.pip/pip.conf``, ``/root/.config/pip``, ``/etc/xdg/pip``, ``/etc/uv/uv.toml``.
_PIP_CONFIG_PATHS = frozenset({"pip.conf", "pip.ini", ".pip", "pip", "uv.toml", "uv"})


def _env_names(serving: ServingConfig, container: Mapping[str, Any]) -> set[str]:
    """The names of the variables the container sets: those read (:attr:`~kvlint.types.ServingConfig.env`) and
    every ``env`` entry's name, whatever its value (a ``secretKeyRef``'s is left out of ``serving.env``)."""
    names = set(serving.env)
    entries = container.get("env")
    for e in entries if isinstance(entries, list) else []:
        if isinstance(e, Mapping) and isinstance(e.get("name"), str):
            names.add(e["name"])
    return names


def _container_pip_source_unknown(serving: ServingConfig) -> bool:
    """Whether the container may give pip or uv a package source that kvlint does not read: an ``env`` entry
    naming a pip/uv source variable (:func:`pip_source_variable`) whatever its value (a ``secretKeyRef`` private
    index URL is left out of :attr:`~kvlint.types.ServingConfig.env`), one defined by the script or a ConfigMap
    read, an ``envFrom`` entry whose variables kvlint did not read (a ``secretRef``, a ConfigMap not among the
    inputs), or a volume mounted where pip or uv reads its configuration file (:data:`_PIP_CONFIG_PATHS`), or a
    variable that points Python at packages outside the image (:data:`_PYTHON_ENVIRONMENT`), where vLLM may be."""
    container = serving.container if isinstance(serving.container, Mapping) else {}
    names = _env_names(serving, container)
    if any(pip_source_variable(name) or name in _PYTHON_ENVIRONMENT for name in names):
        return True
    sources = container.get("envFrom")
    for src in sources if isinstance(sources, list) else []:
        if not isinstance(src, Mapping) or src.get("configMapRef") is None:
            return True  # a secretRef (or a form kvlint does not know): its variables are not read
    if any(variable is None for variable, _why in serving.env_unread):
        return True  # an envFrom ConfigMap not among the inputs
    mounts = container.get("volumeMounts")
    for m in mounts if isinstance(mounts, list) else []:
        path = m.get("mountPath") if isinstance(m, Mapping) else None
        if isinstance(path, str) and _PIP_CONFIG_PATHS.intersection(path.lower().split("/")):
            return True
    return False


_PYPI_HOSTS = ("https://pypi.org/", "https://pypi.python.org/")
_VLLM_REQUIREMENT = re.compile(r"vllm(?:\[[^\]]*\])?\s*(?:[=<>!~].*)?", re.IGNORECASE)


#: A per-release directory of vLLM's ROCm wheel index (:data:`VLLM_ROCM_INDEX`): ``https://wheels.vllm.ai/rocm/
#: 0.18.0/rocm700`` (group 1 the release, group 2 the variant), with or without a trailing slash.
_ROCM_RELEASE_INDEX = re.compile(r"https?://wheels\.vllm\.ai/rocm/(\d+\.\d+\.\d+)/(rocm\d+)/?")


def uv_best_match(serving: ServingConfig) -> bool:
    """Whether the script's ``uv pip install`` of the engine (:attr:`~kvlint.types.ServingConfig.pip_args`) runs
    under ``--index-strategy unsafe-best-match``, the last ``--index-strategy`` of the command (uv's clap parser
    keeps the last). ``UV_INDEX_STRATEGY`` is not read here: a ``UV_*`` variable of the container or its script
    leaves where uv installs from unknown (:func:`pip_source_variable`), and :func:`pypi_cuda_wheel` says nothing."""
    strategy = "first-index"
    args = serving.pip_args
    for k, word in enumerate(args):
        name, eq, value = word.partition("=")
        if name == "--index-strategy":
            strategy = value if eq else (args[k + 1] if k + 1 < len(args) else "")
    return strategy.strip().lower() == "unsafe-best-match"


def rocm_index_outbid(serving: ServingConfig) -> tuple[str, str, str] | None:
    """``(index URL, release, variant)`` (the variant its URL names: ``rocm700``, ``rocm723``) when the script's ``pip install`` of vLLM adds vLLM's per-release ROCm index with
    ``--extra-index-url`` but names vLLM with no version (``pip install vllm --extra-index-url
    https://wheels.vllm.ai/rocm/0.18.0/rocm700``), so that pip installs PyPI's CUDA wheel all the same; else None.

    pip gives its indexes no priority: it gathers the candidates of ``--index-url`` (PyPI) and every
    ``--extra-index-url`` alike and takes the best, the highest version first (pip's ``PackageFinder.
    find_best_candidate`` / ``CandidateEvaluator._sort_key``; pip's "Finding Packages" docs, pypa/pip#12587:
    "there is no priority in the locations that are searched"; vLLM's own guide says so of its nightly index,
    vllm-project/vllm@0487d5c2 ``docs/getting_started/installation/gpu.cuda.inc.md``: "pip combines packages from
    --extra-index-url and the default index, choosing only the latest version"). The per-release directory holds that one release
    (``0.18.0+rocm700``), and PyPI holds later releases of vLLM (up to :data:`~kvlint.memory.versions.NEWEST_VLLM`
    kvlint knows), whose version outranks it whatever its local label: pip installs PyPI's newest wheel, vLLM's
    CUDA build. Certain for pip, and for ``uv pip install`` under ``--index-strategy unsafe-best-match`` (the option,
    :func:`uv_best_match`), which "select[s] the best version
    from the combined set of candidate versions", "the closest to pip's behavior" (astral-sh/uv@26a9dd4b
    ``docs/concepts/indexes.md``, "Searching across multiple indexes"); under uv's default ``first-index`` (and
    ``unsafe-first-match``) uv takes the first index that has the package, the extra index before PyPI, so it is
    not read so (nor a strategy the script sets, which kvlint does not read); nor is a command whose
    requirement carries a version or a ``+rocm`` label, or that names another source besides the index
    (:data:`~kvlint.engines.pip_options.PIP_SOURCE_OPTIONS`), nor a release kvlint does not know to be older than PyPI's newest."""
    from kvlint.memory.versions import NEWEST_VLLM  # (a leaf module; imported here as memory imports engines)

    args = serving.pip_args
    head = serving.pip_text.split(" install", 1)[0].split()
    if not args or (any(w.rsplit("/", 1)[-1] in ("uv", "uvx") for w in head) and not uv_best_match(serving)):
        return None
    found: tuple[str, str, str] | None = None
    requirement = False
    skip = False
    for k, word in enumerate(args):
        if skip:
            skip = False
            continue
        low = word.lower()
        option = low.split("=", 1)[0]
        if option in PIP_SOURCE_OPTIONS:
            value = word.split("=", 1)[1] if "=" in word else (args[k + 1] if k + 1 < len(args) else "")
            skip = "=" not in word
            m = _ROCM_RELEASE_INDEX.fullmatch(value.strip())
            if option != "--extra-index-url" or m is None or found is not None:
                return None
            found = (value.strip(), m.group(1), m.group(2))
            continue
        if low.startswith("-"):
            continue  # --no-cache-dir, -U, --pre ...: no version of vLLM and no other source
        if "rocm" in low:
            return None
        if re.fullmatch(r"vllm(?:\[[^\]]*\])?", word.strip(), re.IGNORECASE):
            requirement = True
        elif _VLLM_REQUIREMENT.fullmatch(word.strip()) is not None:
            return None  # a version named: which index's wheel pip takes depends on it
    if found is None or not requirement:
        return None
    newest = tuple(int(x) for x in NEWEST_VLLM.split(".")[:3])
    return found if tuple(int(x) for x in found[1].split(".")) < newest else None


def _format_control(names: list[str], target: set[str], other: set[str]) -> None:
    """pip's ``FormatControl.handle_mutual_excludes`` (pip 26.3 ``models/format_control.py``) for the names of one
    ``--no-binary``/``--only-binary`` value (split at its commas): ``:all:`` clears both sets, ``:none:`` empties the
    target, a name moves from the other set to the target.

    pip's loop (``while ":all:" in new: ... del new[: new.index(":all:") + 1]; if ":none:" not in new: return``)
    scans the rest of the value once per ``:all:``: 20,000 ``:all:`` and a final ``:none:``, 120 KB in one
    argument, took 3.8 s (break52). Its outcome is that of the last ``:all:`` alone: both sets cleared but for
    ``:all:`` in the target, and then the names after it applied when a ``:none:`` follows it (pip returns at
    the first ``:all:`` with no ``:none:`` after it, leaving the same sets as the last one would), read here in
    one pass."""
    last_all = next((k for k in range(len(names) - 1, -1, -1) if names[k] == ":all:"), None)
    if last_all is not None:
        other.clear()
        target.clear()
        target.add(":all:")
        names = names[last_all + 1 :]
        if not any(name == ":none:" for name in names):
            return
    for name in names:
        if name == ":none:":
            target.clear()
            continue
        name = re.sub(r"[-_.]+", "-", name).lower()
        other.discard(name)
        target.add(name)


def pip_source_build(args: Sequence[str]) -> bool:
    """Whether the words after a pip (uv pip) ``install`` refuse vLLM's wheels (``--no-binary vllm``,
    ``--no-binary=:all:``, not undone by ``--only-binary``), so that pip builds vLLM from PyPI's source distribution,
    as pip 26.3's ``FormatControl.get_allowed_formats`` decides it from the options in order."""
    no_binary: set[str] = set()
    only_binary: set[str] = set()
    for k, word in enumerate(args):
        option, eq, value = word.partition("=")
        if option not in ("--no-binary", "--only-binary"):
            continue
        value = value if eq else (args[k + 1] if k + 1 < len(args) else "")
        if option == "--no-binary":
            _format_control(value.split(","), no_binary, only_binary)
        else:
            _format_control(value.split(","), only_binary, no_binary)
    if "vllm" in only_binary:
        return False
    if "vllm" in no_binary:
        return True
    return ":all:" not in only_binary and ":all:" in no_binary


def source_build_target_unknown(serving: ServingConfig) -> bool:
    """Whether a source build of vLLM (:func:`pip_source_build`) may target another device than CUDA: vLLM's
    ``setup.py`` builds for ``VLLM_TARGET_DEVICE`` (``envs.py``: ``os.getenv("VLLM_TARGET_DEVICE", "cuda")``), and
    ``_is_hip()`` is a ROCm build when the target is ``cuda`` or ``rocm`` and the build's PyTorch is a ROCm one
    (vllm 0.11.0 sdist ``setup.py``). In pip's isolated build the PyTorch is the one ``pyproject.toml``'s
    ``[build-system] requires`` pins (``torch == 2.8.0``), taken from PyPI: its CUDA build. So the target is known
    to be CUDA unless the container or the script sets ``VLLM_TARGET_DEVICE`` (any value, a Secret's too) or the
    install runs with ``--no-build-isolation`` (the environment's PyTorch, which may be ROCm's)."""
    container = serving.container if isinstance(serving.container, Mapping) else {}
    names = _env_names(serving, container)
    if "VLLM_TARGET_DEVICE" in names or "VLLM_TARGET_DEVICE" in serving.pip_text:
        return True
    return "--no-build-isolation" in serving.pip_args


def pypi_cuda_wheel(serving: ServingConfig) -> bool:
    """Whether the container runs vLLM that its script installs from PyPI (``pip install vllm``, ``uv pip install
    vllm==0.11.0``: :attr:`kvlint.types.ServingConfig.pip_args`) on an image that carries no vLLM of its own
    (:data:`_PLAIN_BASE_IMAGES`): PyPI's wheel is vLLM's CUDA build (:data:`VLLM_ROCM_WHEELS`), so the container runs a
    CUDA build whatever the image. Not when the install names another source, which may be vLLM's ROCm index or
    wheel (``--extra-index-url https://wheels.vllm.ai/rocm/...``, a ``+rocm700`` version, a wheel file or URL, an
    index or requirements option: :func:`pip_names_source`) unless pip takes PyPI's newer wheel over that of vLLM's
    ROCm index all the same (:func:`rocm_index_outbid`), nor when another command of the script may install
    vLLM from elsewhere or set pip's source (:attr:`kvlint.types.ServingConfig.pip_elsewhere`), nor when the container may set another source
    (:func:`_container_pip_source_unknown`: a pip/uv source variable from the container's ``env`` with any value,
    including a Secret's, from ``envFrom`` or the script; a pip configuration file mounted)."""
    if serving.engine != "vllm" or not serving.pip_args:
        return False
    if repository_path(serving.image).removeprefix("library/") not in _PLAIN_BASE_IMAGES:
        return False
    if _container_pip_source_unknown(serving):
        return False
    if serving.pip_elsewhere:
        return False
    if pip_names_source(serving.pip_args) and rocm_index_outbid(serving) is None:
        return False
    if pip_source_build(serving.pip_args) and source_build_target_unknown(serving):
        return False  # PyPI's source built for a device the container may set (VLLM_TARGET_DEVICE)
    return any(_VLLM_REQUIREMENT.fullmatch(word.strip()) is not None for word in serving.pip_args)


def pip_names_source(args: Sequence[str]) -> bool:
    """Whether the words after a pip (uv pip) ``install`` name a source besides PyPI, which may hold vLLM's ROCm
    build: a word with ``rocm`` in it (vLLM's ROCm index, a ``+rocm700`` version or wheel), or an index, find-links,
    requirements, constraints or editable option
    (:data:`kvlint.engines.pip_options.PIP_SOURCE_OPTIONS`) whose value is not PyPI."""
    for k, word in enumerate(args):
        low = word.lower()
        if "rocm" in low:
            return True
        option = word.split("=", 1)[0]  # (as written: pip's options are case-sensitive, -I is not -i)
        if option in PIP_SOURCE_OPTIONS:
            value = low.split("=", 1)[1] if "=" in low else (args[k + 1].lower() if k + 1 < len(args) else "")
            if not value.startswith(_PYPI_HOSTS):
                return True
    return False


def is_known_cuda_build(image: str) -> bool:
    """Whether ``image`` is known to be a CUDA build: an engine's own image (:func:`engine_of_image`) with no
    other platform word in its reference. A custom image is not evidence either way."""
    return engine_of_image(image) is not None and image_platform(image) == "cuda"


# An envsubst placeholder ``${NAME}``, ``${NAME:-default}``, ``${NAME-default}`` (up to the first ``}``), or
# ``$NAME``. The braced form's opening is matched by a regex and its closing found with str.find: the regex
# ``\$\{NAME(?:[:-][^}]*)?\}`` scanned to the end of the text from every ``${NAME:`` when no ``}`` followed
# (quadratic on ``"${A:" * 20000``).
_ENVSUBST_OPEN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)([:-]|\})")
_DOLLAR_NAME = re.compile(r"\$[A-Za-z_]")
_KUSTOMIZE_VAR_RE = re.compile(r"\$\([A-Za-z0-9_.-]+\)")
_CAPS_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
#: An upper-case token between double underscores that a script replaces (``sed -e 's#__MODEL__#{{MODEL}}#g'
#: lws.yaml`` in tlrmchlsmth/vllm-dp-lws' Justfile, which fills ``__LWS_NAME__`` and ``__SERVICE_NAME__`` alike):
#: a word no model, directory or image is named (a lower-case ``__pycache__`` is not one)
_DUNDER_RE = re.compile(r"^__[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*__$")
#: A lower-case word saying the image is filled in later: ``replaced-by-kustomize``, the image of
#: GoogleCloudPlatform/accelerated-platforms' vLLM kustomize base, which a ``replacements`` entry of each overlay sets
#: from a generated ConfigMap (no registry, no tag: not an image anyone pulls)
_REPLACED_BY_RE = re.compile(r"^replaced?[-_]by[-_][a-z0-9][a-z0-9._-]*$", re.IGNORECASE)


def envsubst_placeholders(text: str) -> Iterator[tuple[str, str]]:
    r"""``(placeholder, NAME)`` for each braced envsubst placeholder of ``text``, left to right: ``${NAME}``,
    or ``${NAME:...}``/``${NAME-...}`` up to the first ``}`` after it (``${A:-${B}}`` is ``${A:-${B}``, as
    the regex ``\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:-][^}]*)?\}`` finds it). Linear in ``len(text)``: when no
    ``}`` follows an opening, no later placeholder can close either and the scan stops."""
    pos = 0
    while True:
        m = _ENVSUBST_OPEN.search(text, pos)
        if m is None:
            return
        end = m.end()
        if m.group(2) != "}":
            close = text.find("}", end)
            if close < 0:
                return
            end = close + 1
        yield text[m.start() : end], m.group(1)
        pos = end


def whole_placeholder(word: str) -> str | None:
    """The envsubst placeholder ``word`` is wholly (``${NAME}``, ``${NAME:-default}``, as
    :func:`envsubst_placeholders` reads them; blanks around it allowed), else None: a word that only holds one
    (``extra-${X}``, ``${A}${B}``) renders to one word with text of its own."""
    text = word.strip()
    first = next(envsubst_placeholders(text), None)
    return first[0] if first is not None and first[0] == text else None


def path_placeholder(path: str) -> str | None:
    """The first component of a model path that is an upper-case placeholder token a script replaces before the
    manifest is applied (``V_MODEL_NAME`` of ``/gcs/V_MODEL_NAME/V_MODEL_VERSION``, filled by ``sed`` in
    GoogleCloudPlatform/accelerated-platforms; ``__MODEL__``, :data:`_DUNDER_RE`), or a ``<...>`` placeholder to
    fill in by hand (``/models/<model>``, or ``<org/model>`` across components);
    the same tokens :func:`image_placeholder` reads in an image field. None for a path without one (at most 64
    components looked at)."""
    for part in path.strip().split("/")[:64]:
        if _CAPS_RE.match(part) or _DUNDER_RE.match(part) or blank_to_fill_in(part):
            return part
    # a hub id to fill in by hand holds its own `/`: `<org/model>`, `/models/<org/model>` (whole components)
    # (a path of at most 512 characters: the expression backtracks over a long one, and no hub id is that long)
    spanning = _SPANNING_FILL_IN_RE.search(path.strip()) if len(path) <= 512 else None
    return spanning.group(1) if spanning is not None else None


#: A ``<...>`` placeholder spanning path components (``<org/model>``), whole components at both ends.
_SPANNING_FILL_IN_RE = re.compile(r"(?:^|/)(<[^<>]+/[^<>]+>)(?:/|$)")


def blank_to_fill_in(text: str) -> bool:
    """Whether ``text`` is a ``<...>`` placeholder to fill in by hand (``<your-vm-sku>``, ``/models/<model>``'s
    component, ``<image-built-from-dockerfile>``): read so in an image (:func:`image_placeholder`), a model path
    (:func:`path_placeholder`) and a node label's value (:func:`kvlint.accelerators.placement._fill_in`)."""
    return len(text) > 2 and text.startswith("<") and text.endswith(">")


def unexpanded_reference(text: str) -> str | None:
    """How ``text`` holds a reference nothing expands where it is written, or None: an envsubst-style ``${VAR}`` or
    ``$VAR`` (:data:`ENVSUBST_IMAGE`), a ``$(var)`` (kustomize ``vars``; Kubernetes expands ``$(...)`` only in a
    container's command, args and env). Read so in an image (:func:`image_placeholder`) and a node label's value
    (:func:`kvlint.accelerators.placement._fill_in`)."""
    if "$" not in text:  # every reference pattern starts with a "$": a text without one is not searched
        return None
    if _DOLLAR_NAME.search(text) or next(envsubst_placeholders(text), None) is not None:
        return ENVSUBST_IMAGE
    if _KUSTOMIZE_VAR_RE.search(text):
        return "a $(var) reference (kustomize vars; Kubernetes does not expand $(...) in image)"
    return None


#: What :func:`image_placeholder` says of an image that is an envsubst-style ``${VAR}`` (or ``$VAR``) placeholder.
ENVSUBST_IMAGE = "an envsubst-style ${VAR} placeholder"


def image_placeholder(image: str) -> str | None:
    """How an image field is a placeholder rather than an image reference, or None.

    ``${VLLM_IMAGE_NAME}`` (envsubst, OpenShift template parameters), ``$(vllm-cuda-image)`` (kustomize
    ``vars``; Kubernetes does not expand ``$(...)`` in ``image``), ``V_IMAGE_NAME`` /
    ``REPLACE_MODEL_SERVER_IMAGE`` (an upper-case token to be replaced by a script), ``<image-built-from-dockerfile>``,
    ``replaced-by-kustomize`` (:data:`_REPLACED_BY_RE`).
    """
    img = (image or "").strip()
    if not img:
        return None
    reference = unexpanded_reference(img)
    if reference is not None:
        return reference
    if _CAPS_RE.match(img) or _DUNDER_RE.match(img):
        return "an upper-case placeholder token that a script replaces before the manifest is applied"
    if img.startswith("<") and img.endswith(">"):  # (also "<>": blank_to_fill_in wants a name inside)
        return "a <...> placeholder to fill in by hand"
    if _REPLACED_BY_RE.match(img):
        return (
            "a placeholder word that a tool replaces (kustomize replacements) before the manifest is applied"
        )
    return None
