"""Flags family (KV205-KV208): the engine's own options and version.

KV205 (unknown option), KV206 (invalid value) and KV207 (conflicting repeated option) have ``phase: parse``:
the engine parsers (:mod:`kvlint.engines.vllm`, :mod:`kvlint.engines.tgi`, :mod:`kvlint.engines.sglang`)
find them while reading the command against each release's option table, and the runner reports those
findings. KV208 (the image does not pin a release kvlint models) is checked here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import Version

from kvlint.engines.command import main_index_build
from kvlint.engines.images import (
    KSERVE_HF_IMAGE_NAME,
    KSERVE_HF_VLLM,
    aws_vllm_series,
    bare_vllm_published,
    engine_of_image,
    engine_release,
    gpu_build_on_other_accelerator,
    gpu_vendor_of_resource,
    image_placeholder,
    platform_of,
    repository_path,
    split_image,
    tag_of_unknown_image,
    tags_are_versions,
)
from kvlint.engines.requirements import range_admits
from kvlint.gpu_resources import NON_GPU_RESOURCES
from kvlint.memory.versions import NEWEST_VLLM, parse_version
from kvlint.rules.context import RuleContext
from kvlint.rules.registry import check
from kvlint.source import loc_of
from kvlint.types import ENGINE_NAMES, Diagnostic, ServingConfig
from kvlint.wording import platform_name, vendor_name

#: Oldest vLLM release kvlint's memory model was read from (docs/engine-memory-model.md §0; newest NEWEST_VLLM).
OLDEST_VLLM = (0, 4, 3)

#: Each engine's own CUDA release image and how its release tags are written: ``vllm/vllm-openai:v0.34.0``,
#: ``ghcr.io/huggingface/text-generation-inference:3.3.7`` (no ``v``), ``lmsysorg/sglang:v0.5.23``
#: (:func:`kvlint.engines.images.engine_version` reads each back as the release).
_RELEASE_IMAGES = {
    "vllm": ("vllm/vllm-openai", "v"),
    "tgi": ("ghcr.io/huggingface/text-generation-inference", ""),
    "sglang": ("lmsysorg/sglang", "v"),
}


def newest_table_release(engine: str) -> str:
    """The newest release of ``engine`` kvlint has read the options of: the last of its generated release table
    (:data:`kvlint.engines.vllm_flags_data.VERSIONS`, :data:`kvlint.engines.tgi_flags_data.VERSIONS`,
    :data:`kvlint.engines.sglang_flags_data.VERSIONS`, oldest first), read when asked so that a regenerated table
    moves every suggestion with it; a pre-release or development entry (``0.35.0rc1``, ``0.35.0.dev0``) is passed
    over for the newest final release."""
    from kvlint.engines import sglang_flags_data, tgi_flags_data, vllm_flags_data

    table = {"vllm": vllm_flags_data, "tgi": tgi_flags_data, "sglang": sglang_flags_data}[engine]
    # a release candidate or development build read into a table (``0.35.0rc1``) is not a release to pin: the newest
    # final release (post-releases such as ``0.6.6.post1`` are final), else the newest entry
    for version in reversed(table.VERSIONS):
        parsed = Version(version)
        if not (parsed.is_prerelease or parsed.is_devrelease):
            return version
    return table.VERSIONS[-1]


def pin_example(engine: str) -> str:
    """The pinned image KV208 suggests for ``engine``: its own release image (:data:`_RELEASE_IMAGES`) at the newest
    release kvlint knows (:func:`newest_table_release`), not a literal that lags the tables."""
    repo, prefix = _RELEASE_IMAGES[engine]
    return f"{repo}:{prefix}{newest_table_release(engine)}"


#: The engines' names as their projects write them, for messages.


def _memory_skipped_on(ctx: RuleContext) -> str | None:
    """What the workload runs on when kvlint's GPU memory rules do not apply to it (a TPU, Trainium, Gaudi, an
    Intel GPU or a CPU build: the accelerator's vendor is neither NVIDIA nor AMD, or the image is a non-CUDA/ROCm
    build, :func:`kvlint.engines.images.image_platform`; KV501 says so), else None."""
    p = ctx.placement
    acc = p.accelerator if p is not None else None
    if acc is not None and acc.vendor not in ("nvidia", "amd"):
        return acc.name
    other = gpu_build_on_other_accelerator(ctx.serving, p)
    if other is not None:
        # a GPU build requesting only another accelerator's resource, or a build for another device requesting an
        # NVIDIA or AMD GPU (KV304): not sized on any GPU
        if other not in NON_GPU_RESOURCES:
            return f"the {vendor_name(gpu_vendor_of_resource(other) or 'GPU')} GPU node it requests ({other})"
        return f"the {platform_name(NON_GPU_RESOURCES[other])} node it requests ({other})"
    platform = platform_of(ctx.serving, p.resource if p is not None else None)
    if platform not in ("cuda", "rocm"):
        return f"this {platform_name(platform)} build"
    return None


def _cuda_image(ctx: RuleContext) -> bool:
    """The workload runs the engine's CUDA image on an NVIDIA GPU (or on a GPU kvlint cannot name): the case the
    release-tag examples of :func:`pin_example` are for. ROCm images or AMD GPUs and non-GPU accelerators are
    not (their images are other repositories with their own tags)."""
    p = ctx.placement
    acc = p.accelerator if p is not None else None
    if acc is not None and acc.vendor != "nvidia":
        return False
    return platform_of(ctx.serving, p.resource if p is not None else None) == "cuda"


def _assumed(ctx: RuleContext, assumed: str) -> str:
    """What kvlint did with the release it assumed: on a GPU it sized the engine with that release's memory rules;
    where they do not apply (:func:`_memory_skipped_on`) it only read the command with that release's options
    and context-length rules."""
    where = _memory_skipped_on(ctx)
    if where is None:
        return f"kvlint assumed {assumed} and its memory rules, which change between releases"
    if assumed[:1].isdigit():
        assumed = f"{ENGINE_NAMES[ctx.serving.engine]} {assumed}"
    p = ctx.placement
    acc = p.accelerator if p is not None else None
    # on an NVIDIA or AMD GPU, a build for another accelerator is KV304's (an error), not KV501's
    # (and a GPU build on the node of another accelerator it requests, gpu_build_on_other_accelerator)
    mismatch = acc is not None and acc.vendor in ("nvidia", "amd")
    said_by = "KV304" if mismatch or gpu_build_on_other_accelerator(ctx.serving, p) is not None else "KV501"
    return (
        f"kvlint read the command with the options and context-length rules of {assumed}, which change between "
        f"releases; its GPU memory rules were skipped on {where} ({said_by})"
    )


def _newest(engine: str) -> str:
    """The release kvlint plans a container of ``engine`` with when nothing says which runs: the newest it models
    (:data:`kvlint.memory.versions.NEWEST_VLLM`, :data:`kvlint.memory.tgi.NEWEST_TGI`,
    :data:`kvlint.memory.sglang.NEWEST_SGLANG`), named so that KV208 says what was assumed for every engine."""
    if engine == "tgi":
        from kvlint.memory.tgi import NEWEST_TGI

        return NEWEST_TGI
    if engine == "sglang":
        from kvlint.memory.sglang import NEWEST_SGLANG

        return NEWEST_SGLANG
    return NEWEST_VLLM


def _pin_fix(ctx: RuleContext) -> str:
    """KV208's fix for an image without a release tag: for the engine's own CUDA image on NVIDIA GPUs a release tag of
    it (:func:`pin_example`), else a tag of the image's own repository (never another image: not a CUDA image for a
    TPU or ROCm workload, nor vllm/vllm-openai for an llm-d, LMCache, NGC or private build), with --engine-version
    where those tags are not engine versions (:func:`kvlint.engines.images.tags_are_versions`)."""
    s = ctx.serving
    repo = split_image(s.image)[0] if s.image else ""
    if repo.rsplit("/", 1)[-1].startswith(KSERVE_HF_IMAGE_NAME):
        # KServe's Hugging Face server: its own release tags decide the vLLM inside (images.KSERVE_HF_VLLM)
        oldest, newest = min(KSERVE_HF_VLLM, key=parse_version), max(KSERVE_HF_VLLM, key=parse_version)
        return (
            f"pin {repo} to a KServe release tag (e.g. v{newest}, which carries vLLM {KSERVE_HF_VLLM[newest]}; "
            f"kvlint knows the vLLM of v{oldest} to v{newest}) or pass --engine-version"
        )
    example = pin_example(s.engine)
    if not s.image or (_cuda_image(ctx) and repository_path(s.image) == repository_path(example)):
        return f"pin the image to a release tag (e.g. {example}) or pass --engine-version"
    # another repository (llm-d, LMCache, NGC, a fork or private build): its own tags, never another image
    name = ENGINE_NAMES[s.engine]
    if not tags_are_versions(s.image):
        return (
            f"pin {repo} to one of its release tags and pass --engine-version with the {name} release that build "
            f"carries (its tags are not {name} versions)"
        )
    return f"pin {repo} to a tag that names the {name} release it carries, or pass --engine-version with that release"


def _pip_at(s: ServingConfig) -> str:
    """The script's pip command that installs the engine, quoted, and its line: ``"pip install vllm==0.3.3" at
    line 12``."""
    line = f" at line {s.installed_loc.line}" if s.installed_loc is not None else ""
    return f"'{s.installed_by}'{line}"


def _range_note(ctx: RuleContext, version: str) -> Diagnostic:
    """KV208's info note for an engine the container's script installs within a version range (``pip install
    "vllm>=0.9,<0.10"``, ``uvx --from "sglang>=0.4.6,<0.4.7" ...``): the installer takes the newest release in that
    range on its index the day the pod starts, taken as ``version``, the newest kvlint models in it
    (:func:`kvlint.engines.command._ranged`); a later one in the range may run."""
    s = ctx.serving
    name = ENGINE_NAMES[s.engine]
    runner = s.install_runner or "pip install"
    return ctx.finding(
        f"the container's script installs {name} within the range {s.install_range} ({_pip_at(s)}), not one "
        "release: the installer takes the newest release in that range on its index the day the pod "
        f"starts, which may be later than {version}, the newest kvlint models in the range; "
        f"{_assumed(ctx, version)}",
        s.installed_loc or s.command_loc,
        fix=f"pin the release in that {runner} ({s.engine}=={version}), or pass --engine-version with the "
        "release it installs",
        severity="info",
    )


@check("KV208")
def version_unpinned(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV208: the engine release is unpinned (``latest``, no tag, chosen by an operator) or, for vLLM, outside
    the releases kvlint models (0.4.3 to :data:`~kvlint.memory.versions.NEWEST_VLLM`)."""
    s = ctx.serving
    if s.unreadable:
        # no option, context-length or memory rule of any release was applied (KV503 says why): the version
        # decides nothing kvlint reported
        return
    if s.version is not None and s.engine == "vllm":
        v, newest = parse_version(s.version), parse_version(NEWEST_VLLM)
        if v > (newest[0], newest[1], 10**6) or v < OLDEST_VLLM:
            side = "newer than" if v > newest else "older than"
            repo, tag = split_image(s.image)[:2]
            # an image kvlint knows only because its name mentions vLLM (a fork or a custom build, e.g.
            # neuralmagic/nm-vllm-openai): its tag is that image's version, which may not be vLLM's; with
            # --engine-version the release is that option's (images.engine_release), never such a tag
            guessed = tag_of_unknown_image(s) and not ctx.options.engine_version
            read = (
                f", read from the tag {tag} of {repo} (not an image kvlint knows as a vLLM release image: the tag "
                "may be that image's own version),"
                if guessed
                else ""
            )
            pinned = bool(s.installed_by) and not s.install_upgrades
            pin_loc, pin_by = s.installed_loc, "pip install"
            if pinned:
                # the release the container's script installs with pip (kvlint.engines.command._pip_pinned), which
                # replaces the image's: the pin is what to check, not the tag
                read = f", installed by the container's script ({_pip_at(s)}),"
            elif ctx.workload.engine_release_from is not None and s.version == ctx.workload.engine_release:
                # a RayService's runtime_env.pip pin, which Ray installs over the image (parse_container's
                # installed_release): the same, at the requirement
                pinned = True
                pin_by, pin_loc = ctx.workload.engine_release_from
                line = f" at line {pin_loc.line}" if pin_loc is not None else ""
                read = f", installed by the application's {pin_by}{line},"
            yield ctx.finding(
                f"vLLM {s.version}{read} is {side} the releases kvlint models (0.4.3 to {NEWEST_VLLM}); it was "
                f"{'planned' if _memory_skipped_on(ctx) is None else 'read'} with the rules of "
                f"{'vLLM ' + NEWEST_VLLM if v > newest else 'the oldest modelled release'}, which may not match",
                (pin_loc if pinned else None) or s.version_loc or loc_of(s.container, "image"),
                fix=f"check the release that {pin_by} pins (kvlint models vLLM 0.4.3 to {NEWEST_VLLM})"
                if pinned
                else "pass --engine-version with the vLLM release the image is built on (it takes precedence over "
                "the tag of an image kvlint does not know)"
                if guessed
                else "check the image tag, or pass --engine-version with the release the image really runs",
            )
        elif s.install_range and s.installed_by:
            yield _range_note(ctx, s.version)
        return
    if s.version is not None and s.install_range and s.installed_by:
        # SGLang's the same (shell55): pip install "sglang[all]>=0.4.6,<0.4.7", uvx --from "sglang>=0.4.6,<0.4.7"
        yield _range_note(ctx, s.version)
        return
    if s.version is None and s.install_upgrades:
        # pip install -U vllm in the script: pip replaces the image's release with the newest on the day the pod
        # starts (kvlint.engines.command._pip_install), so neither the tag nor kvlint knows the one that runs
        assumed = _newest(s.engine)
        name = ENGINE_NAMES[s.engine]
        carried = engine_release(s.image, s.engine, None)
        instead = f", in place of the {name} {carried} image '{s.image}' carries," if carried else ""
        main = s.install_main_index
        if main:
            # uv's first index with vllm is the extra one; pip's --pre lets it take the development version
            # (kvlint.engines.command._vllm_main_index)
            kind, commit = main_index_build(main)
            build = (
                f"the build of vLLM's commit {commit[:12]}"
                if commit is not None
                else "the nightly build of vLLM (its main branch's last commit)"
                if kind == "nightly"
                else "a build of vLLM's main branch (the wheel name vLLM's CI gives each one, 1.0.0.dev)"
            )
            yield ctx.finding(
                f"the container's script installs {build} from {main} ({_pip_at(s)}): a development version, "
                f"no release{instead} so the release that runs is not known; {_assumed(ctx, assumed)}",
                s.installed_loc or s.command_loc,
                fix=f"install a release ({s.engine}==X) in that pip install, or drop it to run the image's own "
                "release; or pass --engine-version with the release the build is closest to",
            )
            return
        if s.install_from_source:
            # git+https://github.com/vllm-project/vllm.git (no @tag, or a branch or commit): pip builds the branch
            # head, a development version (setuptools-scm 0.11.1.dev12+g...) newer than any release, not the
            # newest release (kvlint.engines.command._from_source_branch); at a commit (@<hex>) the code is that
            # commit's, fixed, still a development version
            at_commit = re.search(r"\.git@([0-9a-fA-F]{7,40})(?![\w.-])", s.installed_by)
            code = (
                f"the code of commit {at_commit.group(1)[:12]}"
                if at_commit is not None
                else "that branch's newest code on the day the pod starts"
            )
            yield ctx.finding(
                f"the container's script installs {name} from its source repository at a branch or commit, not a release tag "
                f"({_pip_at(s)}): pip builds {code}, a development "
                f"version that is no release{instead} so the release that runs is not known; "
                f"{_assumed(ctx, assumed)}",
                s.installed_loc or s.command_loc,
                fix=f"install a release tag (git+...@vX.Y.Z) or a release ({s.engine}==X) in that pip install, "
                "or drop it to run the image's own release; or pass --engine-version with the release the code "
                "is closest to",
            )
            return
        runner = s.install_runner
        if runner and s.install_runner_range:
            # uvx --from "vllm<0.1" / "vllm>=0.9,!=0.9.2,<0.10" / "vllm>=0.9": a range in which kvlint places no
            # release it models (kvlint.engines.command._uv_run_spec); uv installs the newest release it admits
            spec = s.install_runner_range
            newest_modelled = _newest(s.engine)
            admits = range_admits(spec, newest_modelled)
            which = (
                f"which may be newer than {newest_modelled}, the newest kvlint models"
                if admits
                else f"none of the releases kvlint models (the newest is {newest_modelled})"
            )
            yield ctx.finding(
                f"the container runs {name} with uv's tool runner within the range {spec} ({_pip_at(s)}): uv "
                f"installs the newest {name} release that range admits, {which}, in an environment of its own"
                f"{instead} so the release that runs is not known; {_assumed(ctx, assumed)}",
                s.installed_loc or s.command_loc,
                fix=f"pin the release ({runner} --from {s.engine}==X, or {s.engine}@X as the command); or pass "
                "--engine-version with the release it installs",
            )
            return
        if runner:
            # a uv tool runner's own environment (uvx vllm serve, nohup uvx ..., uv tool run ...:
            # kvlint.engines.command._uv_run_release), wherever the runner stands among the command's words
            yield ctx.finding(
                f"the container runs {name} with uv's tool runner, unpinned ({_pip_at(s)}): uv installs the newest "
                f"{name} release in an environment of its own{instead} so the release that runs is not known; "
                f"{_assumed(ctx, assumed)}",
                s.installed_loc or s.command_loc,
                fix=f"pin the release ({runner} --from {s.engine}==X, or {s.engine}@X as the command), or run the "
                f"image's own {s.engine}; or pass --engine-version with the release it installs",
            )
            return
        yield ctx.finding(
            f"the container's script upgrades {name} without pinning a release ({_pip_at(s)}): pip installs the "
            f"newest {name} release on the day the pod starts{instead} so the release that runs is not known; "
            f"{_assumed(ctx, assumed)}",
            s.installed_loc or s.command_loc,
            fix=f"pin the release in that pip install ({s.engine}==X), or drop the upgrade to run the image's own "
            "release; or pass --engine-version with the release it installs",
        )
        return
    if s.version is not None or "@sha256:" in s.image:
        return
    placeholder = image_placeholder(s.image)
    if placeholder is not None and not ctx.workload.image_source:
        assumed = _newest(s.engine)
        yield ctx.finding(
            f"image '{s.image}' is a placeholder ({placeholder}), so the {s.engine} version is not known until "
            f"the manifest is rendered; {_assumed(ctx, assumed)}",
            loc_of(s.container, "image"),
            fix="lint the rendered manifest, or pass --engine-version with the release the image will run",
            severity="info",
        )
        return
    assumed = _newest(s.engine)
    chooser = ctx.workload.image_source
    if chooser:
        yield ctx.finding(
            f"the {s.engine} image and its version are chosen by {chooser}; {_assumed(ctx, assumed)}",
            s.command_loc,
            fix="pass --engine-version (or engine_version in .kvlint.yaml) with the release your installation runs",
        )
        return
    if not s.image.strip():
        # a chart whose values leave the image empty (Lintasarta/sglang-helm renders ``image:`` with no value): the
        # pods cannot run, and "image (no image) does not pin the version (tag missing)" said it backwards
        yield ctx.finding(
            f"the container names no image (its pods cannot run without one), so the {s.engine} release is not "
            f"known; {_assumed(ctx, assumed)}",
            loc_of(s.container, "image") or loc_of(s.container, "name") or s.command_loc,
            fix=f"set the container's image to the {ENGINE_NAMES[s.engine]} release it runs (e.g. "
            f"{pin_example(s.engine)})",
        )
        return
    repo, tag = split_image(s.image)[:2]
    if tag is None or tag in ("latest", "nightly", "main"):
        shown = f"'{s.image}'"
        yield ctx.finding(
            f"image {shown} does not pin the {s.engine} version (tag {tag or 'missing'}); {_assumed(ctx, assumed)}",
            loc_of(s.container, "image"),
            fix=_pin_fix(ctx),
        )
    elif s.engine == "vllm" and repo.rsplit("/", 1)[-1].startswith(KSERVE_HF_IMAGE_NAME):
        # KServe's Hugging Face server: a tag whose vLLM kvlint has not read (a release outside
        # images.KSERVE_HF_VLLM, or not a release tag) leaves the version as unknown as `latest` does
        first, last = min(KSERVE_HF_VLLM, key=parse_version), max(KSERVE_HF_VLLM, key=parse_version)
        yield ctx.finding(
            f"image '{s.image}': kvlint does not know the vLLM release of KServe tag {tag} (it knows those of "
            f"v{first} to v{last}); {_assumed(ctx, assumed)}",
            loc_of(s.container, "image"),
            fix=_pin_fix(ctx),
        )
    elif s.image:
        # a tag that names no release kvlint can read: a build of the engine's own repository that is not a
        # release (vllm/vllm-openai:nightly-<sha>, latest-nightly), which moves like `latest`; or an image
        # whose tags are its own releases (NGC, llm-d, LMCache) or a private build's name (prod): pinned,
        # but the engine release inside is unknown to kvlint
        own = repository_path(s.image) == repository_path(pin_example(s.engine))
        # latest-nightly, nightly-<sha>, rocm/vllm's instinct_main: a word of the tag names a moving build
        # AWS's vLLM DLC series tag (0.9-gpu-py312-ec2) moves to each 0.9 release AWS publishes
        series = aws_vllm_series(s.image) if s.engine == "vllm" else None
        moving = (
            own
            or series is not None
            or any(w in ("latest", "nightly", "main") for w in re.split(r"[-_.]", tag.lower()))
        )
        if not moving and s.release_noted:
            return  # the parser's KV504 (the image read as vLLM, a Dynamo worker) says which release was assumed
        # a repository named bare "vllm" whose publisher does not say its tag is vLLM's release (images.
        # bare_vllm_published: Intel's and AWS's do): the tag is that image's own version, not read as vLLM's
        bare = (
            s.engine == "vllm"
            and not own
            and repo.rsplit("/", 1)[-1].lower() == "vllm"
            and engine_of_image(s.image) is None
            and not bare_vllm_published(s.image)
            and re.match(r"v?\d+\.\d+", tag) is not None  # a version of its own (not a word: "fast")
        )
        yield ctx.finding(
            (
                f"image '{s.image}' is named vllm by a publisher kvlint does not know to tag its images with "
                f"vLLM's release (Intel's intel/vllm and AWS's Deep Learning Containers do): its tag {tag} is "
                "read as that image's own version, not as a vLLM release"
                if bare
                else f"image '{s.image}': the tag {tag} is AWS's series tag for vLLM {series}: AWS moves it to "
                f"each vLLM {series} release it publishes (aws/deep-learning-containers vllm/CHANGELOG.md), so the "
                "release that runs is the newest of those on the day the image is pulled, not known here"
                if series is not None
                else f"image '{s.image}': the tag {tag} names no {ENGINE_NAMES[s.engine]} release kvlint can read"
            )
            + (" (a build of the engine's own repository that is not a release)" if own else "")
            + f"; {_assumed(ctx, assumed)}",
            loc_of(s.container, "image"),
            fix=_pin_fix(ctx)
            if moving
            else "pass --engine-version with the engine release the image carries",
            severity=None if moving else "info",
        )
