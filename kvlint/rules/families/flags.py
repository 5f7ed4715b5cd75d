"""Flags family (KV205-KV208): the engine's own options and version.

KV205 (unknown option), KV206 (invalid value) and KV207 (conflicting repeated option) have ``phase: parse``:
the engine parsers (:mod:`kvlint.engines.vllm`, :mod:`kvlint.engines.tgi`, :mod:`kvlint.engines.sglang`)
find them while reading the command against each release's option table, and the runner reports those
findings. KV208 (the image does not pin a release kvlint models) is checked here.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.engines.images import image_placeholder, split_image
from kvlint.memory.versions import NEWEST_VLLM, parse_version
from kvlint.rules.context import RuleContext
from kvlint.rules.registry import check
from kvlint.source import loc_of
from kvlint.types import Diagnostic

#: Oldest vLLM release kvlint's memory model was read from (docs/engine-memory-model.md §0; newest NEWEST_VLLM).
OLDEST_VLLM = (0, 4, 3)

#: An example of a pinned image per engine.
_PIN_EXAMPLE = {
    "vllm": "vllm/vllm-openai:v0.11.0",
    "tgi": "ghcr.io/huggingface/text-generation-inference:3.3.6",
    "sglang": "lmsysorg/sglang:v0.5.5",
}


@check("KV208")
def version_unpinned(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV208: the engine release is unpinned (``latest``, no tag, chosen by an operator) or, for vLLM, outside
    the releases kvlint models (0.4.3 to :data:`~kvlint.memory.versions.NEWEST_VLLM`)."""
    s = ctx.serving
    if s.version is not None and s.engine == "vllm":
        v, newest = parse_version(s.version), parse_version(NEWEST_VLLM)
        if v > (newest[0], newest[1], 10**6) or v < OLDEST_VLLM:
            side = "newer than" if v > newest else "older than"
            yield ctx.finding(
                f"vLLM {s.version} is {side} the releases kvlint models (0.4.3 to {NEWEST_VLLM}); it was planned "
                f"with the rules of {'vLLM ' + NEWEST_VLLM if v > newest else 'the oldest modelled release'}, "
                "which may not match",
                s.version_loc or loc_of(s.container, "image"),
                fix="check the image tag, or pass --engine-version with the release the image really runs",
            )
        return
    if s.version is not None or "@sha256:" in s.image:
        return
    placeholder = image_placeholder(s.image)
    if placeholder is not None and not ctx.workload.annotations.get("kvlint.io/image-source"):
        assumed = NEWEST_VLLM if s.engine == "vllm" else "the newest known version"
        yield ctx.finding(
            f"image '{s.image}' is a placeholder ({placeholder}), so the {s.engine} version is not known until "
            f"the manifest is rendered; kvlint assumed {assumed} and its memory rules",
            loc_of(s.container, "image"),
            fix="lint the rendered manifest, or pass --engine-version with the release the image will run",
            severity="info",
        )
        return
    assumed = NEWEST_VLLM if s.engine == "vllm" else "the newest known version"
    chooser = ctx.workload.annotations.get("kvlint.io/image-source")
    if chooser:
        yield ctx.finding(
            f"the {s.engine} image and its version are chosen by {chooser}; kvlint assumed {assumed} and its "
            "memory rules, which change between releases",
            s.command_loc,
            fix="pass --engine-version (or engine_version in .kvlint.yaml) with the release your installation runs",
        )
        return
    tag = split_image(s.image)[1]
    if tag is None or tag in ("latest", "nightly", "main"):
        shown = f"'{s.image}'" if s.image else "(no image)"
        yield ctx.finding(
            f"image {shown} does not pin the {s.engine} version (tag {tag or 'missing'}); kvlint assumed {assumed} "
            "and its memory rules, which change between releases",
            loc_of(s.container, "image"),
            fix=f"pin the image to a release tag (e.g. {_PIN_EXAMPLE[s.engine]}) or pass --engine-version",
        )
