"""What the user tells the pipeline: :class:`Options` (command-line flags merged with ``.kvlint.yaml``).

Every shell (the CLI, the GitHub Action, the admission webhook, ``kvlint plan``) builds one and hands it to
:mod:`kvlint.pipeline`; the stages read it and never change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvlint.accelerators.site import Site
from kvlint.rules.catalog import get_rule, match_rule

__all__ = ["Options"]


@dataclass(frozen=True)
class Options:
    """What the user (CLI flags, later ``.kvlint.yaml``) tells the pipeline.

    Attributes:
        accelerator: catalogue id or alias forcing the GPU type (``--accelerator``).
        default_accelerator: used only when a manifest says nothing about its GPU.
        gpu_memory_bytes: device total as CUDA reports it, overriding the catalogue (``--gpu-memory``).
        engine_version: engine version used when the image tag does not say (``--engine-version``), or when the
            image is not one kvlint knows as the engine's release image (its tag may be that image's own version);
            :func:`kvlint.engines.images.engine_release` applies it, in the form
            :func:`kvlint.memory.versions.engine_version_option` gives.
        model_dirs: local directories holding ``<org>--<name>/config.json`` (``--model-dir``).
        model_paths: container path -> hub id or local directory (``.kvlint.yaml model_paths``).
        model_catalogues: pulled catalogue directories (``kvlint models pull``; ``.kvlint.yaml``
            ``model_catalogue``, else ``.kvlint/models`` beside it or found upward), read offline before the
            bundled catalogue.
        allow_hub: whether the Hugging Face Hub may be asked for configs (``--offline`` turns it off).
        allow_local_paths: whether a model reference may be looked up as a path on this machine (the CLI:
            yes; the admission webhook: no, only ``model_dirs`` and ``model_paths``).
        min_concurrency: KV104 threshold (requests at max-model-len that must fit at once); None = the
            ``rules.KV104.min_concurrency`` parameter, else the catalogue default (2).
        max_file_bytes: files larger than this are skipped with KV001.
        max_review_size: at most this many pod templates, and this many containers in them, are analysed in
            one run (the admission webhook's cap per object, :data:`kvlint.webhook.request_options.
            MAX_REVIEW_SIZE`); above it nothing is analysed and one KV001 error says so. None (the CLI): no cap.
        exclude: path globs not to read.
        select, ignore: rule ids or prefixes (``KV1``) to report / never report (``--select``,
            ``--ignore``, ``.kvlint.yaml``); empty ``select`` = every rule. Applied in the pipeline.
        severity: rule id -> ``error`` | ``warning`` | ``info`` | ``off`` (``off`` drops the rule).
        rule_params: rule id -> parameter name -> value, overriding ``rules/KVnnn.yaml`` defaults.
        exemptions_allowed: whether ``kvlint.io/ignore`` annotations may suppress findings
            (``--no-exemptions`` and the webhook's admin switch turn it off).
        helm_values, helm_set, helm_set_file: ``helm template -f`` / ``--set`` / ``--set-file`` for chart
            directories among the paths.
        cluster_inventory: a :class:`kvlint.cluster.NodeInventory` of live nodes (``--cluster``); when set, the GPU
            comes from the labels of the nodes the pod can schedule on instead of the manifest alone; the
            ``kvlint.io/accelerator`` annotation is weighed against those nodes as against a nodeSelector
            (``kvlint.pipeline._cluster_annotation``).
        site: the team's own accelerators, node-label and node-name tables and fleet (``.kvlint.yaml``
            ``accelerators`` and ``fleet``); None = none declared (the default fleet applies).
    """

    accelerator: str | None = None
    default_accelerator: str | None = None
    gpu_memory_bytes: int | None = None
    engine_version: str | None = None
    model_dirs: tuple[str, ...] = ()
    model_paths: dict[str, str] = field(default_factory=dict)
    model_catalogues: tuple[str, ...] = ()
    allow_hub: bool = True
    allow_local_paths: bool = True
    min_concurrency: float | None = None
    max_file_bytes: int = 16 * 2**20
    max_review_size: int | None = None
    exclude: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    rule_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    exemptions_allowed: bool = True
    cluster_inventory: Any = None
    helm_values: tuple[str, ...] = ()
    helm_set: tuple[str, ...] = ()
    helm_set_file: tuple[str, ...] = ()
    site: Site | None = None

    def param(self, rule: str, name: str) -> Any:
        """Value of parameter ``name`` of ``rule``: these options, else the catalogue default.

        ``min_concurrency`` of KV104 also honours the :attr:`min_concurrency` field (``--min-concurrency``).
        Raises KeyError when the rule has no such parameter (message names the rule's parameters).
        """
        if rule == "KV104" and name == "min_concurrency" and self.min_concurrency is not None:
            return self.min_concurrency
        if name in self.rule_params.get(rule, {}):
            return self.rule_params[rule][name]
        return get_rule(rule).parameter(name).default

    def rule_enabled(self, rule: str) -> bool:
        """Whether diagnostics of ``rule`` are reported (select/ignore/``severity: off``)."""
        if self.severity.get(rule) == "off":
            return False
        if self.select and not match_rule(rule, self.select):
            return False
        return not match_rule(rule, self.ignore)
