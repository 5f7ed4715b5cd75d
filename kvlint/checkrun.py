"""One ``kvlint check`` run over paths that may each have their own ``.kvlint.yaml``.

The configuration that applies to a file is the **nearest** ``.kvlint.yaml`` (or ``.yml``) in its
directory or a parent of it, as ruff and yamllint resolve theirs, so ``kvlint check a b`` and
``kvlint check b a`` give the same findings when only ``b/.kvlint.yaml`` exists. :func:`config_groups`
partitions the paths by that file: a file, a chart or kustomization directory, or a directory without a
configuration further down is one unit; a directory holding another configuration below it is split into
its files (walked as the loader walks directories: sorted, hidden entries and ``exclude`` globs skipped) and
the charts and kustomizations the walk renders (:func:`kvlint.render.plan_walk`), each under its own directory's
configuration.
Standard input (``-``) takes the configuration found from ``--stdin-filename``'s directory, else the
current directory. ``--config FILE`` and ``--no-config`` apply one choice to every path, as before.

:func:`run_paths` runs the pipeline once per group with that group's options and merges the results
(diagnostics re-sorted by file, line, column); :attr:`CheckRun.failing` applies each group's
``fail_on``. ``--stdin-filename NAME`` renames ``-`` in every location (so SARIF names a real artifact).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import BinaryIO, TextIO

from kvlint.options import Options
from kvlint.paths import walk_tree
from kvlint.source import Loc
from kvlint.types import SEVERITY_ORDER, CheckResult, ContainerRecord, ContainerResult, Diagnostic

__all__ = ["CheckRun", "config_groups", "merge_results", "run_paths"]


@dataclass
class CheckRun:
    """A check over one or more configuration groups.

    Attributes:
        result: the merged :class:`~kvlint.types.CheckResult`.
        parts: ``(config path or None, fail_on of that configuration or None, that group's result)``.
        require_sizing: per part, whether its configuration sets ``require_sizing: true``.
    """

    result: CheckResult
    parts: list[tuple[str | None, str | None, CheckResult]] = field(default_factory=list)
    require_sizing: list[bool] = field(default_factory=list)

    def unsized(self, required: bool = False) -> list[tuple[ContainerResult | ContainerRecord, str]]:
        """Serving containers that were not sized, with the reason (:func:`kvlint.sizing.sizing_of`), in the
        parts that require sizing: all of them when ``required`` (``--require-sizing``), else those whose
        configuration sets ``require_sizing: true``."""
        from kvlint.sizing import SIZED, outcomes

        out = []
        for i, (_, _, part) in enumerate(self.parts):
            if not (required or (i < len(self.require_sizing) and self.require_sizing[i])):
                continue
            out += [
                (cr, why)
                for cr, why in zip(part.containers, outcomes(part.containers), strict=True)
                if why not in SIZED
            ]
        return out

    def unread(self, required: bool = False) -> list[tuple[Diagnostic, str]]:
        """Serving objects seen but not read (:func:`kvlint.sizing.unread`: unrendered templates naming an
        engine, operator objects whose engine settings kvlint does not read), in the parts that require
        sizing, as :meth:`unsized` selects them."""
        from kvlint.sizing import unread

        out = []
        for i, (_, _, part) in enumerate(self.parts):
            if required or (i < len(self.require_sizing) and self.require_sizing[i]):
                out += unread(part)
        return out

    def _thresholds(self, fail_on: str | None) -> Iterator[tuple[int, CheckResult]]:
        """``(severity order, part)`` of each part that can fail: ``fail_on`` (the command line's) when
        given, else the group's configured ``fail_on``, else ``error``; ``never``/``none`` fail nothing."""
        for _, cfg_fail_on, part in self.parts:
            name = fail_on or cfg_fail_on or "error"
            if name not in ("never", "none"):
                yield SEVERITY_ORDER[name], part

    def thresholds(self, fail_on: str | None) -> list[dict[str, str]]:
        """The thresholds the run fails on and where each comes from, in the order of the configuration groups,
        each once: ``{"threshold": error|warning|info|never, "source": "--fail-on" | configuration path |
        "default"}`` (the JSON report's ``summary.fail_on``)."""
        out: list[dict[str, str]] = []
        for cfg_path, cfg_fail_on, _ in self.parts:
            if fail_on:
                entry = {"threshold": "never" if fail_on == "none" else fail_on, "source": "--fail-on"}
            elif cfg_fail_on:
                name = "never" if cfg_fail_on == "none" else cfg_fail_on
                entry = {"threshold": name, "source": cfg_path or "default"}
            else:
                entry = {"threshold": "error", "source": "default"}
            if entry not in out:
                out.append(entry)
        return out

    def fails(self, fail_on: str | None) -> bool:
        """Whether any finding is at or above the threshold (see :meth:`failing`); stops at the first."""
        return any(
            SEVERITY_ORDER.get(d.severity, 0) >= threshold
            for threshold, part in self._thresholds(fail_on)
            for d in part.diagnostics
        )

    def failing(self, fail_on: str | None) -> list[Diagnostic]:
        """Findings at or above the threshold: ``fail_on`` (the command line's) when given, else each
        group's configured ``fail_on``, else ``error``; ``never``/``none`` fail nothing."""
        return [
            d
            for threshold, part in self._thresholds(fail_on)
            for d in part.diagnostics
            if SEVERITY_ORDER.get(d.severity, 0) >= threshold
        ]


def _nearest(directory: str, cache: dict[str, str | None]) -> str | None:
    from kvlint.config import find_config

    key = os.path.abspath(directory)
    if key not in cache:
        cache[key] = find_config([directory])
    return cache[key]


def excluded_arguments(
    paths: Sequence[str], options: Options, *, config_path: str | None = None, no_config: bool = False
) -> list[tuple[str, str, str | None, bool]]:
    """The ``paths`` named on the command line that an ``exclude`` glob leaves out, as ``(path, glob, configuration
    file or None for --exclude, whether the glob matches the path itself rather than the manifest files in it)``,
    a configuration's glob as the file writes it (not anchored at its directory,
    :func:`kvlint.config._exclude_from`): ``options.exclude`` (the flags') first, then the ``exclude`` of the configuration
    that applies to the path (``config_path``, else the nearest, as :func:`config_groups` finds it; none with
    ``no_config``). A directory counts when a glob matches it or its first manifest file (sorted walk, hidden
    entries skipped, at most 10,000 files looked at). Matched as the loader matches (:func:`kvlint.load._excluded`);
    paths that do not exist and ``-`` are skipped, and so is a configuration file that does not load (the run
    reports that). Never raises. For the warning of a run that linted no file: which named path a glob left out,
    instead of "no .yaml, .yml or .json files found" in a directory that holds some."""
    from kvlint.config import ConfigError, load_config
    from kvlint.load import MANIFEST_EXTENSIONS, _excluded

    def matching(p: str, globs: Sequence[str]) -> str | None:
        """The first of ``globs`` that leaves ``p`` out: ``p`` itself, or (a directory) the first manifest file
        in it, which the walk skips for that glob on the file or on a directory above it in ``p``."""
        for g in globs:
            if _excluded(p, (g,)):
                return g
        if not os.path.isdir(p):
            return None
        seen = 0
        for root, dirs, files in walk_tree(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                seen += 1
                if seen > 10_000:  # a bounded look: the warning is a hint, not a second walk of a huge tree
                    return None
                if name.startswith(".") or not name.endswith(MANIFEST_EXTENSIONS):
                    continue
                full, chain = os.path.join(root, name), []
                up = full
                while os.path.abspath(up) != os.path.abspath(p):
                    chain.append(up)
                    up = os.path.dirname(up)
                return next((g for g in globs if any(_excluded(c, (g,)) for c in chain)), None)
        return None

    cache: dict[str, str | None] = {}
    out: list[tuple[str, str, str | None, bool]] = []
    for p in paths:
        if p == "-" or not os.path.exists(p):
            continue
        glob = matching(p, options.exclude)
        if glob is not None:
            out.append((p, glob, None, _excluded(p, (glob,))))
            continue
        if no_config:
            continue
        cfg = config_path or _nearest(p if os.path.isdir(p) else os.path.dirname(p) or ".", cache)
        if not cfg:
            continue
        try:
            conf = load_config(cfg, discovered=not config_path)
        except (ConfigError, OSError):
            continue
        glob = matching(p, conf.exclude)
        if glob is not None:
            out.append((p, conf.exclude_written.get(glob, glob), cfg, _excluded(p, (glob,))))
    return out


def _nested_configs(directory: str, exclude: Sequence[str]) -> bool:
    """Whether a configuration file exists strictly below ``directory`` (hidden directories skipped)."""
    from kvlint.config import CONFIG_NAMES
    from kvlint.load import _excluded

    for root, dirs, files in walk_tree(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not _excluded(os.path.join(root, d), exclude)]
        if os.path.samefile(root, directory):
            continue
        if any(n in files for n in CONFIG_NAMES):
            return True
    return False


def config_groups(
    paths: Sequence[str], *, exclude: Sequence[str] = (), stdin_filename: str | None = None
) -> list[tuple[str | None, list[str]]]:
    """``[(nearest configuration path or None, paths it applies to)]`` in the order first met.

    See the module docstring. Paths that do not exist are kept (the loader reports them). Never raises.
    """
    from kvlint.load import _expand
    from kvlint.render import is_chart_dir, is_kustomize_dir, plan_walk

    cache: dict[str, str | None] = {}
    groups: dict[str | None, list[str]] = {}

    def add(cfg: str | None, p: str) -> None:
        groups.setdefault(cfg, []).append(p)

    for p in paths:
        if p == "-":
            add(_nearest(os.path.dirname(stdin_filename) or "." if stdin_filename else ".", cache), p)
        elif not os.path.isdir(p):
            add(_nearest(os.path.dirname(p) or ".", cache), p)
        elif is_chart_dir(p) or is_kustomize_dir(p) or not _nested_configs(p, exclude):
            add(_nearest(p, cache), p)
        else:
            # the charts and kustomizations of the walk go to their own directory's configuration, rendered as
            # the walk would render them (kvlint.render.plan_walk); the files they own are not listed
            found, skip = plan_walk(p, exclude)
            for w in found:
                add(_nearest(w, cache), w)
            for f in _expand(p, exclude, skip=skip):
                add(_nearest(os.path.dirname(f) or ".", cache), f)
    return list(groups.items())


def _walked_kustomizations(paths: Sequence[str], options: Options) -> list[str]:
    """The kustomizations a run of ``paths`` built that it met walking a plain directory among them
    (:func:`kvlint.render.plan_walk`, read once a run)."""
    from kvlint.render import is_chart_dir, is_kustomize_dir, plan_walk

    out: list[str] = []
    for p in paths:
        if p != "-" and os.path.isdir(p) and not is_chart_dir(p) and not is_kustomize_dir(p):
            found = plan_walk(p, options.exclude, options.max_file_bytes)[0]
            out += [w for w in found if w.tool == "kustomize" and w.rendered]
    return out


def merge_results(parts: Sequence[CheckResult]) -> CheckResult:
    """One result from several: lists concatenated, counts added, diagnostics sorted by location."""
    if len(parts) == 1:
        return parts[0]
    out = CheckResult(exemptions_allowed=all(p.exemptions_allowed for p in parts))
    diags: list[Diagnostic] = []
    for p in parts:
        diags += p.diagnostics
        out.containers += p.containers
        out.suppressed_diagnostics += p.suppressed_diagnostics
        out.files += p.files
        out.documents += p.documents
        out.workloads += p.workloads
        out.suppressed += p.suppressed
        out.serving_paths |= p.serving_paths
        out.engine_named.update(p.engine_named)
        if p.text_cache is not None:  # (one run_paths: every group's in the same style)
            if out.text_cache is None:
                out.text_cache = (p.text_cache[0], {})
            out.text_cache[1].update(p.text_cache[1])
    if any(p.serving_count is not None for p in parts):
        out.serving_count = sum(p.serving for p in parts)
        counts: dict[str, int] = {}
        for p in parts:
            for k, n in (p.sizing_counts if p.sizing_counts is not None else _outcome_counts(p)).items():
                counts[k] = counts.get(k, 0) + n
        out.sizing_counts = counts
    diags.sort(key=lambda d: (*(d.loc or Loc("", 0, 0)), d.rule))
    out.diagnostics = diags
    return out


def _outcome_counts(result: CheckResult) -> dict[str, int]:
    from collections import Counter

    from kvlint.sizing import outcomes

    return dict(Counter(outcomes(result.containers)))


def _rename(loc: Loc | None, name: str) -> Loc | None:
    return loc._replace(file=name) if loc is not None and loc.file == "-" else loc


def rename_stdin(result: CheckResult, name: str) -> None:
    """Rewrite locations in ``-`` (standard input) to ``name`` in place (``--stdin-filename``)."""

    def fix(d: Diagnostic) -> Diagnostic:
        return replace(d, loc=_rename(d.loc, name), sources=tuple(_rename(s, name) or s for s in d.sources))

    result.diagnostics = [fix(d) for d in result.diagnostics]
    result.suppressed_diagnostics = [
        replace(s, diagnostic=fix(s.diagnostic), annotation=_rename(s.annotation, name))
        for s in result.suppressed_diagnostics
    ]


def run_paths(
    paths: Sequence[str],
    options: Options,
    *,
    config_path: str | None = None,
    no_config: bool = False,
    stdin: TextIO | BinaryIO | None = None,
    stdin_filename: str | None = None,
    jobs: int = 1,
    keep_records: bool = True,
    keep_json: bool = True,
    keep_unsized: bool = True,
    text_style: tuple[bool, int] | None = None,
) -> CheckRun:
    """Run the pipeline on ``paths``, each with the nearest configuration (see the module docstring).

    ``options`` carries the command line's settings, which win over every configuration file. Each group
    is read as a stream (:func:`kvlint.stream.stream_check`) with ``jobs`` processes; ``keep_records`` and
    ``keep_json`` say what the reports need of each serving container (see there); without ``keep_records``,
    the containers that were not sized are still kept when ``keep_unsized`` or the group's configuration sets
    ``require_sizing`` (:meth:`CheckRun.unsized` lists them). ``text_style``: ``(color, width)`` of the text
    report to be written, if any (with several jobs its blocks are formatted in the workers, see there).

    Raises:
        kvlint.config.ConfigError: a configuration file is invalid, or ``config_path`` does not exist.
        FileNotFoundError, kvlint.render.RenderError: as :func:`kvlint.pipeline.run_check`.
        kvlint.stream.WorkerLost: with several jobs, a worker process ended (killed) before the run did.
    """
    # registers render.GITOPS_DEPLOYED before config_groups and _walked_kustomizations plan a walk
    import kvlint.workloads.gitops_walk  # noqa: F401
    from kvlint.config import ConfigError, apply_config, load_config
    from kvlint.origins import attach_sources
    from kvlint.render import shared_walk_budget
    from kvlint.stream import stream_check

    if config_path and not os.path.isfile(config_path):
        raise ConfigError(f"{config_path}: no such configuration file")
    if no_config:
        groups: list[tuple[str | None, list[str]]] = [(None, list(paths))]
    elif config_path:
        groups = [(config_path, list(paths))]
    else:
        groups = config_groups(paths, exclude=options.exclude, stdin_filename=stdin_filename)
    parts: list[tuple[str | None, str | None, CheckResult]] = []
    required: list[bool] = []
    with shared_walk_budget():  # (the renders of every group's walks share one budget)
        for cfg_path, group in groups:
            opts = options
            cfg_fail_on = None
            required.append(False)
            if cfg_path:
                cfg = load_config(cfg_path, discovered=not config_path)
                opts = apply_config(options, cfg)
                cfg_fail_on = cfg.fail_on or None
                required[-1] = bool(cfg.require_sizing)
            result = stream_check(
                group,
                opts,
                stdin=stdin if "-" in group else None,
                jobs=jobs,
                keep_records=keep_records,
                keep_json=keep_json,
                keep_unsized=keep_unsized or required[-1],
                text_style=text_style,
            )
            attach_sources(result, group, opts, _walked_kustomizations(group, opts))
            parts.append((cfg_path, cfg_fail_on, result))
    if stdin_filename:
        for _, _, part in parts:
            rename_stdin(part, stdin_filename)
    return CheckRun(merge_results([p[2] for p in parts]), parts, required)
