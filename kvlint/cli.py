"""Command-line interface: a thin shell over :mod:`kvlint.pipeline`.

Heavy modules (huggingface_hub, kubernetes, jsonschema) are imported inside the commands so that
``kvlint --help`` starts quickly. Exit codes: 0 clean (or findings below ``--fail-on``), 1 findings at or
above ``--fail-on``, 2 usage or configuration error (bad flag, unreadable or invalid ``.kvlint.yaml``,
missing path, unwritable ``--format NAME=PATH`` file).

Precedence for ``kvlint check``: command-line flags > ``.kvlint.yaml`` (``--config``, else the nearest one
of each file, :mod:`kvlint.checkrun`) > rule catalogue defaults.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import click

from kvlint import __version__
from kvlint.report import FORMATS as CHECK_FORMATS

if TYPE_CHECKING:
    from kvlint.types import Diagnostic

FORMATS = ("text", "json")
FAIL_ON = ("error", "warning", "info", "never", "none")


#: Most directory entries :func:`_hidden_manifest_dirs` looks at under each hidden directory. [assumed] enough
#: to find a manifest in a .github or .tekton directory; a hidden cache of thousands of files is not read through.
_HIDDEN_SCAN_ENTRIES = 2000


def _hidden_manifest_dirs(paths: Sequence[str]) -> list[str]:
    """The hidden directories (a name starting with ``.``, not ``.git``) directly inside the directories among
    ``paths`` that hold a ``.yaml``/``.yml``/``.json`` file (at most :data:`_HIDDEN_SCAN_ENTRIES` entries of each
    looked at), as paths joined to them: a walk skips them (:func:`kvlint.load._expand`), so a run that found no
    file says where some are (llm-d/llm-d's manifests are all in ``.tekton/`` and ``.github/``). Never raises."""
    import os

    from kvlint.load import MANIFEST_EXTENSIONS
    from kvlint.paths import walk_tree

    out: list[str] = []
    for p in paths:
        try:
            if p == "-" or not os.path.isdir(p):
                continue
            names = sorted(n for n in os.listdir(p) if n.startswith(".") and n != ".git")
        except OSError:
            continue
        for n in names:
            d = os.path.join(p, n)
            if os.path.islink(d) or not os.path.isdir(d):
                continue
            seen = 0
            try:
                for _root, _dirs, files in walk_tree(d):
                    seen += len(files) + len(_dirs)
                    if any(f.lower().endswith(MANIFEST_EXTENSIONS) for f in files):
                        out.append(d)
                        break
                    if seen > _HIDDEN_SCAN_ENTRIES:
                        break
            except OSError:
                continue
    return out


def _lost_exception(exc: SystemError) -> bool:
    """Whether ``exc`` is CPython's "error return without exception set": under memory exhaustion the
    interpreter can fail to allocate the ``MemoryError`` (or its traceback) it was raising, and the caller
    then sees this ``SystemError`` instead (seen with ``ulimit -v`` on an alias-amplified manifest)."""
    return "without exception set" in str(exc)


def _out_of_memory(paths: Sequence[str]) -> None:
    """Print that the run ran out of memory (no traceback) and exit with status 2."""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    click.echo(
        f"kvlint: error: ran out of memory while checking {shown}; the input needs more memory than this "
        "process may use (split the input, lower --max-file-bytes, or raise the memory limit)",
        err=True,
    )
    sys.exit(2)


def _config_fail(message: str) -> None:
    """Print a configuration error to stderr and exit with status 2."""
    click.echo(f"kvlint: configuration error: {message}", err=True)
    sys.exit(2)


def _parse_formats(values: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """``--format`` values ``NAME`` or ``NAME=PATH`` -> [(name, path or None for stdout)]."""
    out: list[tuple[str, str | None]] = []
    for v in values or ("text",):
        name, sep, path = v.partition("=")
        name = name.strip().lower()
        if name not in CHECK_FORMATS:
            raise click.BadParameter(
                f"unknown format {name!r}; choose from {', '.join(CHECK_FORMATS)} (optionally NAME=PATH)",
                param_hint="--format",
            )
        if sep and not path:
            raise click.BadParameter(f"{v!r}: missing file name after '='", param_hint="--format")
        if path in ("-", "/dev/stdout"):
            path = ""  # standard output, however it is spelled
        out.append((name, path or None))
    to_stdout = [n for n, p in out if p is None]
    if len(to_stdout) > 1:
        raise click.BadParameter(
            f"{' and '.join(to_stdout)} would both be written to standard output, one after the other; give all "
            "but one a file (NAME=PATH)",
            param_hint="--format",
        )
    import os

    files = [p for _, p in out if p is not None]
    real = [os.path.realpath(p) for p in files]
    for p, r in zip(files, real, strict=True):
        if real.count(r) > 1:
            raise click.BadParameter(
                f"two reports would be written to {p}; give each its own file", param_hint="--format"
            )
    return out


def _report_over_input(
    outputs: list[tuple[str, str | None]], paths: tuple[str, ...], exclude: tuple[str, ...]
) -> str | None:
    """The first ``--format NAME=FILE`` target that is one of the inputs (named, or found in a named
    directory as kvlint walks it), or None. Writing the report there would destroy the manifest."""
    import os

    targets = {os.path.realpath(p): p for _, p in outputs if p is not None and os.path.exists(p)}
    if not targets:
        return None
    from kvlint.load import _expand

    for arg in paths:
        if arg == "-" or not os.path.exists(arg):
            continue
        if os.path.realpath(arg) in targets:
            return targets[os.path.realpath(arg)]
        if os.path.isdir(arg):
            for f in _expand(arg, exclude):
                if os.path.realpath(f) in targets:
                    return targets[os.path.realpath(f)]
    return None


def _split_ids(values: tuple[str, ...]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def _parse_memory(value: str | None) -> int | None:
    """``--gpu-memory``: :func:`kvlint.accelerators.quantity.parse_gpu_memory`, its refusal a click usage error
    and its note on stderr."""
    if not value:
        return None
    from kvlint.accelerators.quantity import parse_gpu_memory

    try:
        n, note = parse_gpu_memory(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    if note:
        click.echo(f"note: {note}", err=True)
    return n


def _check_version(value: str | None) -> str | None:
    """``--engine-version``: a release as PEP 440 orders it (``0.11.0``, ``v0.8.5.post1``, ``0.10.1.1``,
    ``0.11.0+cu130``, ``0.15.2rc1.dev93``; ordered by :class:`kvlint.memory.versions.ReleaseVersion`)."""
    if not value:
        return None
    from kvlint.memory.versions import engine_version_option

    try:
        return engine_version_option(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _check_min_concurrency(value: float | None) -> float | None:
    """``--min-concurrency``: validated as ``rules.KV104.min_concurrency`` in ``.kvlint.yaml`` is, by the
    catalogue's bounds of that parameter (:meth:`kvlint.rules.catalog.Parameter.check`): one validation for both."""
    if value is None:
        return None
    from kvlint.rules.catalog import get_rule, number_text

    wrong = get_rule("KV104").parameter("min_concurrency").check(value, show=number_text)
    if wrong:
        raise click.BadParameter(wrong)
    return value


def _check_accelerator(value: str | None) -> str | None:
    if not value:
        return None
    from kvlint.accelerators import did_you_mean, lookup

    if lookup(value) is None:
        raise click.BadParameter(
            f"unknown accelerator '{value}'{did_you_mean(value)}; `kvlint accelerators` lists the ids and aliases"
        )
    return value


def _with_found_catalogue(options: Any, paths: tuple[str, ...] | list[str], config: bool = False) -> Any:
    """``options`` reading the pulled model catalogue (``kvlint models pull``) that applies to ``paths``: with
    ``config``, the one of the ``.kvlint.yaml`` found from there (an invalid file is skipped with a warning);
    else a ``.kvlint/models`` found upward."""
    from dataclasses import replace

    from kvlint.models.pulled import find_catalogue

    found: str | None = None
    if config:
        from kvlint.config import ConfigError, catalogue_dir, find_config, load_config

        path = find_config(list(paths))
        if path:
            try:
                found = catalogue_dir(load_config(path, discovered=True))
            except ConfigError as exc:
                click.echo(f"kvlint: warning: {exc}; its model catalogue is not read", err=True)
    found = found or find_catalogue(list(paths))
    if not found or found in options.model_catalogues:
        return options
    return replace(options, model_catalogues=(*options.model_catalogues, found))


def _options(**kw: Any) -> Any:
    from kvlint.options import Options

    return Options(
        accelerator=_check_accelerator(kw.get("accelerator")),
        gpu_memory_bytes=_parse_memory(kw.get("gpu_memory")),
        engine_version=kw.get("engine_version"),
        model_dirs=tuple(kw.get("model_dir") or ()),
        allow_hub=not kw.get("offline", False),
        min_concurrency=kw.get("min_concurrency"),
    )


def version_text() -> str:
    """``kvlint --version``: the release, the distribution, the rule catalogue and the newest engine
    releases whose memory behaviour kvlint models (older ones are modelled too; newer ones are assumed to
    behave like these)."""
    from kvlint import DISTRIBUTION
    from kvlint.memory.sglang import NEWEST_SGLANG
    from kvlint.memory.tgi import NEWEST_TGI
    from kvlint.memory.versions import NEWEST_VLLM
    from kvlint.rules.catalog import load_catalog
    from kvlint.rules.registry import implemented

    cat = load_catalog()
    done = sum(1 for r in cat if r in implemented())
    return (
        f"kvlint {__version__} ({DISTRIBUTION} on PyPI)\n"
        f"rule catalogue: {len(cat)} rules ({done} checked), {min(cat)}-{max(cat)}\n"
        f"engines modelled up to: vLLM {NEWEST_VLLM}, TGI {NEWEST_TGI}, SGLang {NEWEST_SGLANG}\n"
        f"Python {sys.version.split()[0]}"
    )


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(version_text())
    ctx.exit()


class _LazyGroup(click.Group):
    """A click group whose ``lazy`` commands (``name -> "module:attribute"``) are imported only when they are
    invoked or listed (``--help``): ``kvlint check`` does not import the modules of ``simulate``, ``verify``,
    ``webhook`` or ``models pull`` (about 40 ms of start-up, measured with ``python -X importtime``)."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; Ctrl-C (SIGINT) ends it with exit code 130 (128 + SIGINT, as a shell reports a
        command the signal ended) and a one-line message, not click's "Aborted!" with exit code 1, which a
        script cannot tell from "findings found"."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("kvlint: interrupted", err=True)
            ctx.exit(130)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            import importlib

            module, attribute = self.lazy[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)


class _SectionedCommand(click.Command):
    """A click command whose ``--help`` lists its options under headings (``sections``: heading -> parameter
    names, in order), as ruff's ``check --help`` groups "Rule selection", "File selection" and "Miscellaneous":
    ``kvlint check`` has some thirty options, which click listed in declaration order, the GPU options after the
    worker count. An option no heading names goes under the last heading, with ``--help``."""

    def __init__(self, *args: Any, sections: dict[str, tuple[str, ...]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sections = dict(sections or {})

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Argument):
                continue  # the usage line names the arguments
            row = param.get_help_record(ctx)
            if row is not None and param.name is not None:
                rows[param.name] = row
        if not self.sections:
            super().format_options(ctx, formatter)
            return
        placed = {name for names in self.sections.values() for name in names}
        headings = list(self.sections)
        for heading in headings:
            names = [n for n in self.sections[heading] if n in rows]
            if heading == headings[-1]:
                names += [n for n in rows if n not in placed]
            if names:
                with formatter.section(heading):
                    formatter.write_dl([rows[n] for n in names])


#: The headings of ``kvlint check --help`` (:class:`_SectionedCommand`): parameter names in the order shown.
_CHECK_SECTIONS: dict[str, tuple[str, ...]] = {
    "Output": ("formats", "output_file", "color", "quiet", "statistics"),
    "Exit status": ("fail_on", "exit_zero", "require_sizing"),
    "Rule selection": ("select", "ignore", "no_exemptions", "min_concurrency"),
    "File selection": ("exclude", "max_file_bytes", "skip_rendered", "stdin_filename"),
    "Configuration": ("config_path", "no_config"),
    "GPU and model": (
        "accelerator",
        "default_accelerator",
        "gpu_memory",
        "engine_version",
        "model_dir",
        "offline",
    ),
    "Helm charts": ("helm_values", "helm_set", "helm_set_file"),
    "Live cluster": ("cluster", "kubeconfig", "kube_context"),
    "Miscellaneous": ("jobs",),
}


@click.group(
    cls=_LazyGroup,
    lazy={
        "simulate": "kvlint.capacity.cli:simulate",
        "verify": "kvlint.verify.cli:verify",
        "webhook": "kvlint.webhook.cli:webhook",
    },
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version, the rule catalogue and the newest engine releases modelled, then exit.",
)
def main() -> None:
    """kvlint: prove before deploy that an LLM serving workload fits its GPUs.

    \b
    kvlint check deploy/                 lint manifests (files, directories, - for stdin)
    kvlint plan -- vllm serve MODEL ...  per-GPU memory plan for one engine command line
    kvlint verify startup.log            compare an engine start-up log with kvlint's plan
    kvlint rules / kvlint explain KV103  the rule catalogue

    Exit codes: 0 success, 1 what the command checks failed (`kvlint check`: a finding at or above
    --fail-on), 2 usage or configuration error, 130 interrupted; each command's --help says more.
    """


_common = [
    click.option(
        "--accelerator",
        metavar="ID",
        help="GPU type for every workload, over what the manifests say (catalogue id or alias, e.g. h100, l4; "
        "`kvlint accelerators` lists them).",
    ),
    click.option(
        "--gpu-memory",
        metavar="QTY",
        help="Memory of each GPU as CUDA reports its total (torch.cuda.mem_get_info), e.g. 79.19GiB: replaces "
        "the catalogue's figure for the GPU, or alone stands for an unnamed CUDA GPU of that size.",
    ),
    click.option(
        "--engine-version",
        metavar="V",
        callback=lambda ctx, param, value: _check_version(value),
        help=(
            "Engine version when the image tag does not say, or the image is not one kvlint knows as the "
            "engine's release image (e.g. 0.11.0)."
        ),
    ),
    click.option(
        "--model-dir",
        multiple=True,
        type=click.Path(file_okay=False, exists=True),
        help="Directory of <org>--<name>/config.json model configs (repeatable).",
    ),
    click.option(
        "--offline",
        is_flag=True,
        help="Never ask the Hugging Face Hub (bundled catalogue and local dirs only).",
    ),
]


def _add_common(f: Any) -> Any:
    for opt in reversed(_common):
        f = opt(f)
    return f


@main.command(cls=_SectionedCommand, sections=_CHECK_SECTIONS)
@click.argument("paths", nargs=-1, metavar="PATHS...")
@click.option(
    "--format",
    "formats",
    multiple=True,
    metavar="NAME[=PATH]",
    help=f"Report format, repeatable: {', '.join(CHECK_FORMATS)}; NAME=PATH writes that report to a file "
    "(e.g. --format sarif=kvlint.sarif --format text). Default: text to stdout.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit 1 when a finding of this severity or higher is reported (default: .kvlint.yaml fail_on, "
    "else error; never/none: always exit 0 unless the run itself fails).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Configuration file for every path (default: each file's nearest .kvlint.yaml, in its directory or a "
    "parent).",
)
@click.option("--no-config", is_flag=True, help="Do not read any .kvlint.yaml.")
@click.option(
    "--select",
    multiple=True,
    metavar="IDS",
    help="Report only these rule ids or prefixes (KV1: KV101-KV199), comma-separated, repeatable; replaces "
    ".kvlint.yaml select.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="IDS",
    help="Never report these rule ids or prefixes, comma-separated, repeatable; replaces .kvlint.yaml ignore.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Do not read files or directories matching this fnmatch glob (path or base name), repeatable; added "
    "to .kvlint.yaml exclude.",
)
@click.option(
    "--no-exemptions",
    is_flag=True,
    help="Disallow kvlint.io/ignore annotations and # kvlint: ignore comments: report every finding.",
)
@click.option(
    "--default-accelerator",
    metavar="ID",
    help="GPU type for workloads whose manifest does not say which GPU they land on (catalogue id or alias), "
    "instead of planning them on the fleet; --accelerator sets every workload's.",
)
@click.option(
    "--min-concurrency",
    type=float,
    default=None,
    callback=lambda ctx, param, value: _check_min_concurrency(value),
    help="KV104: how many requests at the context limit (--max-model-len; TGI --max-total-tokens, SGLang "
    "--context-length) the KV cache must hold at once (default: "
    ".kvlint.yaml rules.KV104.min_concurrency, else 2).",
)
@click.option(
    "--max-file-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Skip (with KV001) files larger than this many bytes (default 16 MiB).",
)
@click.option(
    "--helm-values",
    multiple=True,
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Values file for chart directories in PATHS (helm template -f), repeatable.",
)
@click.option(
    "--helm-set",
    multiple=True,
    metavar="KEY=VALUE",
    help="helm template --set for chart directories, repeatable.",
)
@click.option(
    "--helm-set-file",
    multiple=True,
    metavar="KEY=PATH",
    help="helm template --set-file for chart directories (the file's text as the value), repeatable.",
)
@click.option(
    "--cluster",
    is_flag=True,
    help="Read the live nodes (kubeconfig or in-cluster) and take the GPU from the nodes each pod can land on.",
)
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="kubeconfig for --cluster.")
@click.option("--context", "kube_context", metavar="NAME", help="kubeconfig context for --cluster.")
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text report (default: on a terminal; FORCE_COLOR forces it, NO_COLOR or TERM=dumb turn "
    "it off).",
)
@click.option(
    "-o",
    "--output-file",
    type=click.Path(dir_okay=False),
    help="Write the report that would go to standard output to this file instead.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print the findings only: no summary line, no warnings.")
@click.option(
    "--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings."
)
@click.option(
    "--exit-zero",
    is_flag=True,
    help="Exit 0 even when findings are at or above --fail-on (2 still means a usage or configuration error).",
)
@click.option(
    "--skip-rendered",
    is_flag=True,
    help="Skip the named files that belong to a Helm chart or kustomization directory (a Chart.yaml or kustomization "
    "in their directory or a parent), whose rendered output a run over the directory lints instead. Used by the "
    "kvlint pre-commit hook, which is handed the staged files (the kvlint-dirs hook lints the directories).",
)
@click.option(
    "--require-sizing",
    is_flag=True,
    help="Exit 1 when a serving workload could not be sized (no memory plan on the GPU it names, nor against the fleet when it names none); "
    "the reasons are printed (also: require_sizing: true in .kvlint.yaml).",
)
@click.option(
    "--stdin-filename",
    metavar="PATH",
    help="Name of the file read from standard input (-): used in every report instead of '-', and its "
    "directory for finding .kvlint.yaml.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: the cores available); the report is the same for every value.",
)
@_add_common
def check(
    paths: tuple[str, ...],
    formats: tuple[str, ...],
    fail_on: str | None,
    config_path: str | None,
    no_config: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    no_exemptions: bool,
    default_accelerator: str | None,
    color: bool | None,
    helm_values: tuple[str, ...],
    helm_set: tuple[str, ...],
    helm_set_file: tuple[str, ...],
    max_file_bytes: int | None,
    cluster: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    output_file: str | None,
    quiet: bool,
    statistics: bool,
    exit_zero: bool,
    skip_rendered: bool,
    require_sizing: bool,
    stdin_filename: str | None,
    jobs: int | None,
    **kw: Any,
) -> None:
    """Lint Kubernetes manifests that deploy LLM serving engines.

    Each file uses the nearest .kvlint.yaml in its directory or a parent (unless --config or --no-config).
    Without --format, the report is text, or GitHub workflow commands when GITHUB_ACTIONS=true.

    \b
    kvlint check deploy/
    kvlint check --format sarif=kvlint.sarif --format text deploy/
    helm template serving ./chart | kvlint check --stdin-filename chart.yaml -

    \b
    Exit codes:
      0    no finding at or above --fail-on (default: each file's .kvlint.yaml fail_on, else error)
      1    a finding at or above it; or, with --require-sizing (require_sizing: true), a serving
           workload not sized or a serving object not read (each named on stderr)
      2    usage or configuration error (bad option, invalid .kvlint.yaml, missing path,
           unwritable report file)
      130  interrupted (Ctrl-C)
    --exit-zero turns 1 into 0; with --fail-on never, findings never fail the run.
    """
    import os
    from dataclasses import replace

    from kvlint.checkrun import run_paths
    from kvlint.config import ConfigError, validate_selectors
    from kvlint.paths import shown_path
    from kvlint.render import RenderError

    if not paths:
        # what to type, rather than click's "Missing argument 'PATHS...'": kvlint does not guess between the
        # current directory and standard input (a pipe without "-" would lint the directory instead)
        piped = not sys.stdin.isatty() if hasattr(sys.stdin, "isatty") else False
        raise click.UsageError(
            "no path given: name the files or directories to lint (kvlint check . for the current directory, "
            "its charts and kustomizations rendered)"
            + ("; to read the manifests piped in, kvlint check -" if piped else ", or - for standard input")
        )

    if skip_rendered:
        from kvlint.render import rendered_through

        owners = {p: rendered_through(p) for p in paths}
        kept = tuple(p for p in paths if owners[p] is None)
        _say_skipped_rendered({p: d for p, d in owners.items() if d is not None})
        # every staged file a chart's or a kustomization's: the run over their directories lints them
        if not kept:
            return
        paths = kept
    if not formats and os.environ.get("GITHUB_ACTIONS") == "true":
        formats = ("github",)
    outputs = _parse_formats(formats)
    if output_file:
        outputs = [(n, output_file if p is None else p) for n, p in outputs]
    options = _options(**kw)
    try:
        options = replace(
            options,
            default_accelerator=_check_accelerator(default_accelerator),
            select=validate_selectors(_split_ids(select), "--select"),
            ignore=validate_selectors(_split_ids(ignore), "--ignore"),
            exemptions_allowed=not no_exemptions,
            helm_values=tuple(helm_values),
            helm_set=tuple(helm_set),
            helm_set_file=tuple(helm_set_file),
            exclude=tuple(options.exclude) + tuple(exclude),
        )
        if max_file_bytes:
            options = replace(options, max_file_bytes=max_file_bytes)
    except ConfigError as exc:
        _config_fail(str(exc))
        return
    if cluster or kubeconfig or kube_context:
        from kvlint.cluster import ClusterUnavailable, load_inventory

        try:
            options = replace(options, cluster_inventory=load_inventory(kubeconfig, kube_context))
        except ClusterUnavailable as exc:
            _config_fail(f"--cluster: {exc}")
            return
    if not no_config:
        options = _with_found_catalogue(
            options, paths
        )  # a pulled catalogue found upward (kvlint models pull)
    clash = _report_over_input(outputs, paths, options.exclude)
    if clash:
        raise click.BadParameter(
            f"{clash} is one of the files being linted; write the report to another file",
            param_hint="--format",
        )
    from kvlint.stream import WorkerLost, default_jobs

    names = {n for n, _ in outputs}
    try:
        run = run_paths(
            paths,
            options,
            config_path=config_path,
            no_config=no_config,
            stdin=sys.stdin.buffer if "-" in paths else None,
            # named in the reports as every file is (kvlint.paths.shown_path): ./deploy/a.yaml is deploy/a.yaml
            stdin_filename=shown_path(stdin_filename) if stdin_filename else stdin_filename,
            jobs=jobs or default_jobs(),
            # the text, GitHub and SARIF reports need no per-container record; JSON, JUnit, Markdown do
            # (jsonl, like text, reads the diagnostics and the summary counts only)
            keep_records=not statistics and bool(names & {"json", "junit", "markdown"}),
            keep_json="json" in names,
            keep_unsized=require_sizing,  # (or the configuration's require_sizing)
            text_style=_text_style(outputs, color) if "text" in names and not statistics else None,
        )
    except ConfigError as exc:
        _config_fail(str(exc))
        return
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc
    except RenderError as exc:
        raise click.UsageError(str(exc)) from exc
    except WorkerLost as exc:
        click.echo(f"kvlint: error: {exc}", err=True)
        sys.exit(2)
    except (MemoryError, SystemError) as exc:
        if isinstance(exc, SystemError) and not _lost_exception(exc):
            raise
        _out_of_memory(paths)
        return
    result = run.result
    json_out, text_note = bool(names & {"json", "jsonl"}), "text" in names and not exit_zero
    if json_out or text_note:
        # each finding's own threshold (its file's .kvlint.yaml fail_on, unless --fail-on), worked out once for
        # both reports
        failing = frozenset(run.failing(fail_on))
        thresholds = [
            {**e, "source": _shown_config(e["source"])} if e["source"] not in ("--fail-on", "default") else e
            for e in run.thresholds(fail_on)
        ]
        if json_out:
            # so that a reader of the report (the GitHub Action counting only a pull request's new findings)
            # fails on what this run fails on
            result.failing, result.fail_on = failing, thresholds
        if text_note:
            # the text report's last line says which fail_on below error fails the run (the JSON report's "fails")
            from kvlint.report.text import fail_on_note

            result.fail_on_note = fail_on_note(failing, thresholds)
    if result.files == 0 and not quiet:
        from kvlint.wording import shell_word

        hidden = _hidden_manifest_dirs(paths)
        skipped = (
            f" (hidden directories are not walked; {'these hold' if len(hidden) > 1 else 'this one holds'} some: "
            f"{', '.join(hidden[:5])}{' and more' if len(hidden) > 5 else ''}; to lint one, name it: kvlint check "
            f"{shell_word(hidden[0])})"
            if hidden
            else ""
        )
        from kvlint.checkrun import excluded_arguments

        left_out = excluded_arguments(paths, options, config_path=config_path, no_config=no_config)
        for p, glob, cfg, itself in left_out:
            what = "it matches" if itself else "the manifest files in it match"
            where = (
                "--exclude"
                if cfg is None
                else f"exclude in {_shown_config(cfg)}: remove the glob there, or pass --no-config, to lint it"
            )
            click.echo(f"kvlint: warning: {p} is not linted: {what} {glob!r} ({where})", err=True)
        rest = [p for p in paths if p not in {x[0] for x in left_out}]
        if rest:
            click.echo(
                f"kvlint: warning: no .yaml, .yml or .json files found in {', '.join(rest)}{skipped}",
                err=True,
            )
    from kvlint.report import STREAMED, write_report

    # the sizing summary is computed once for every report that prints it (the Action writes four)
    sizing = None
    if any(_report_sizes(name, quiet=quiet, statistics=statistics) for name, _ in outputs):
        from kvlint.sizing import summarise

        sizing = summarise(result)
    for name, out_path in outputs:
        if name in STREAMED and out_path is None:  # written a line at a time, never held whole
            # (the lines are ASCII: any encoding of standard output holds them)
            write_report(name, result, sys.stdout, sizing=sizing)
            sys.stdout.flush()
            continue
        pieces = (
            None
            if name in STREAMED
            else _report(name, result, out_path, color, quiet=quiet, statistics=statistics, sizing=sizing)
        )
        if out_path is None:
            use = name == "text" and not statistics and _color_for(color)
            for chunk in joined_pieces(pieces or ()):
                click.echo(chunk, nl=False, color=use or None)
            continue
        try:
            # the writers escape what they quote; backslashreplace is the last guard against a crash
            with open(out_path, "w", encoding="utf-8", errors="backslashreplace") as fh:
                if pieces is None:
                    write_report(name, result, fh, sizing=sizing)
                else:
                    for piece in pieces:
                        fh.write(piece)
        except OSError as exc:
            click.echo(f"kvlint: cannot write {name} report to {out_path}: {exc.strerror or exc}", err=True)
            sys.exit(2)
    from kvlint.sizing import WHY_RULES, explained_at

    unsized = run.unsized(require_sizing)
    explaining: dict[str, list[Diagnostic]] = {}  # KV501/KV502/KV503 findings by object, read once
    if unsized:
        for d in run.result.diagnostics:
            if d.rule in WHY_RULES:
                explaining.setdefault(d.object, []).append(d)
    # containers named alike in one object (an LLMInferenceService's decode and prefill pods, both "main") are
    # told apart by where their pod is in the object
    from collections import Counter

    alike = Counter((cr.object_ref, cr.container_name) for cr, _ in unsized)
    for cr, why in unsized:
        loc = explained_at(cr, explaining.get(cr.object_ref, []))  # where KV501/KV502/KV503 says why
        where = f"{loc.file}:{loc.line}:{loc.column}: " if loc else ""
        pod = getattr(cr.workload, "path", "")
        which = f" ({pod})" if pod and alike[(cr.object_ref, cr.container_name)] > 1 else ""
        click.echo(
            f"kvlint: not sized: {where}{cr.object_ref}{which} container {cr.container_name}: {why} "
            "(--require-sizing)",
            err=True,
        )
    not_read = run.unread(require_sizing)
    for d, why in not_read:
        where = f"{d.loc.file}:{d.loc.line}: " if d.loc else ""
        what = f"{d.object}: " if d.object else ""
        click.echo(f"kvlint: not read: {where}{what}{why} (--require-sizing)", err=True)
    if (unsized or not_read or run.fails(fail_on)) and not exit_zero:
        sys.exit(1)


def _say_skipped_rendered(skipped: dict[str, str]) -> None:
    """One stderr line per chart or kustomization directory whose named files ``--skip-rendered`` left out
    (``skipped``: file -> :func:`kvlint.render.rendered_through` directory), with the command that lints them:
    a repository with the ``kvlint`` pre-commit hook and not ``kvlint-dirs`` would otherwise leave them unchecked
    without a word (pre-commit shows a passing hook's output with ``verbose: true``)."""
    from kvlint.paths import shown_path
    from kvlint.render import is_chart_dir
    from kvlint.wording import shell_word

    by_dir: dict[str, list[str]] = {}
    for path, directory in skipped.items():
        by_dir.setdefault(directory, []).append(shown_path(path))
    for directory, files in by_dir.items():
        shown = _shown_config(directory)
        kind = "Helm chart" if is_chart_dir(directory) else "kustomization"
        named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        click.echo(
            f"kvlint: --skip-rendered: not linted here: {named} ({'it belongs' if len(files) == 1 else 'they belong'}"
            f" to the {kind} in {shown}); lint what it renders with kvlint check {shell_word(shown)} "
            "(the kvlint-dirs pre-commit hook)",
            err=True,
        )


def _shown_config(path: str) -> str:
    """A configuration file's path as reports name it: relative to the working directory when it is in or below
    it (``deploy/.kvlint.yaml``), else as found."""
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


#: characters of report text :func:`joined_pieces` gathers before one write to standard output
ECHO_CHUNK = 1 << 16


def joined_pieces(pieces: Iterable[str], size: int | None = None) -> Iterator[str]:
    """``pieces`` joined into chunks of at least ``size`` characters (default :data:`ECHO_CHUNK`; the last one
    may be shorter): the same text in a write per chunk rather than per piece (``click.echo`` costs a few
    microseconds a call, a fifth of the text report's cost per finding when called for each); a report is
    still never held whole."""
    if size is None:
        size = ECHO_CHUNK
    held: list[str] = []
    n = 0
    for piece in pieces:
        held.append(piece)
        n += len(piece)
        if n >= size:
            yield "".join(held)
            held, n = [], 0
    if held:
        yield "".join(held)


def _color_for(color: bool | None) -> bool:
    from kvlint.report.text import use_color

    return use_color(sys.stdout, color)


def _report_sizes(name: str, *, quiet: bool, statistics: bool) -> bool:
    """Whether the ``check`` report ``name`` prints the sizing summary (:func:`kvlint.sizing.summarise`): every
    format but JUnit, and the text report unless ``--quiet`` or ``--statistics`` leave its summary out."""
    if name == "text":
        return not (quiet or statistics)
    return name != "junit"


def _report(
    name: str,
    result: Any,
    out_path: str | None,
    color: bool | None,
    *,
    quiet: bool,
    statistics: bool,
    sizing: Any = None,
) -> Iterable[str]:
    """The text of one ``check`` report, in pieces written one after the other (the text report one per
    diagnostic: a large report is never held whole); ``--statistics`` and ``--quiet`` apply to the text
    format; ``sizing``: the run's :func:`kvlint.sizing.summarise`, computed once for all its reports."""
    from kvlint.report import render
    from kvlint.report.text import iter_text

    if name == "text" and statistics:
        return [statistics_text(result)]
    if name != "text":
        return [render(name, result, sizing=sizing)]
    text_color, width = _style_of(out_path, color)
    # --quiet: the findings only
    return iter_text(result, color=text_color, width=width, summary=not quiet, sizing=sizing)


def _style_of(out_path: str | None, color: bool | None) -> tuple[bool, int]:
    """``(color, width)`` of the text report written to ``out_path`` (None: standard output)."""
    from kvlint.report.text import DEFAULT_WIDTH, report_width

    to_stdout = out_path is None
    return (
        _color_for(color) if to_stdout else bool(color),
        report_width(sys.stdout) if to_stdout else DEFAULT_WIDTH,
    )


def _text_style(outputs: list[tuple[str, str | None]], color: bool | None) -> tuple[bool, int]:
    """The style of the (first) text report among ``outputs``, for the run to format its blocks in."""
    out_path = next(p for n, p in outputs if n == "text")
    return _style_of(out_path, color)


def statistics_text(result: Any) -> str:
    """``--statistics``: one line per rule with findings, most frequent first:
    ``COUNT  RULE  severity  name``, then the summary line."""
    from collections import Counter

    from kvlint.report.text import summary_line
    from kvlint.rules.catalog import load_catalog
    from kvlint.types import findings_stood_for

    names = {k: v.name for k, v in load_catalog().items()}
    counts: Counter[tuple[str, str]] = Counter()
    # a finding that stands for several (kvlint.findcap) counts them, as the summary line does
    for d in result.diagnostics:
        counts[(d.rule, d.severity)] += findings_stood_for(d)
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = [
        f"{n:>{width}}  {rule}  {sev:<7}  {names.get(rule, '')}"
        for (rule, sev), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "\n".join([*lines, summary_line(result)]) + "\n"


@main.command("diff")
@click.argument("base")
@click.argument("head", required=False)
@click.option(
    "-p", "--path", "paths", multiple=True, metavar="PATH", help="Path to lint (repeatable; default .)."
)
@click.option(
    "--config", "config_path", metavar="FILE", help="Configuration file (else the nearest .kvlint.yaml)."
)
@click.option(
    "--helm-values", multiple=True, metavar="FILE", help="Values file for chart directories, repeatable."
)
@click.option("--offline", is_flag=True, help="Never ask the Hugging Face Hub.")
@click.option(
    "--args", "extra", default="", metavar="WORDS", help="More kvlint check arguments (shell words)."
)
@click.option(
    "--format", "fmt", type=click.Choice(("text", "markdown", "json")), default="text", show_default=True
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default=None,
    help="Exit 1 when a NEW finding is at or above this severity (default: the fail_on of each file's "
    ".kvlint.yaml, else error, as kvlint check).",
)
def diff(
    base: str,
    head: str | None,
    paths: tuple[str, ...],
    config_path: str | None,
    helm_values: tuple[str, ...],
    offline: bool,
    extra: str,
    fmt: str,
    fail_on: str | None,
) -> None:
    """What a change does: new findings and the capacity of every workload it touches.

    Lints git revision BASE and HEAD (default: the working tree) with the same paths and options, and
    compares them: findings by fingerprint (rule, workload, container, setting; not the line), and per
    touched workload the engine release and KV-cache dtype, GPU, replicas, weights, KV tokens,
    max-model-len, concurrency, KV headroom and verdict, before and after. BASE and HEAD are read with
    `git archive`; the work tree is left alone.

    An option file (--config, --helm-values) that only one revision has is passed to that revision only, with a
    note; git must be on PATH.

    \b
    kvlint diff main                      the working tree against main
    kvlint diff origin/main HEAD -p deploy/ --offline

    Exit codes: 0 no new finding at or above --fail-on (default: its file's .kvlint.yaml fail_on, else error), 1 a
    new one, 2 usage error (not a git repository or no git, unknown revision, a path or option file in neither
    revision, kvlint check failing on one side).
    """
    import json
    import shlex
    import tempfile

    from kvlint.prdiff import (
        diff_revisions,
        render_diff_markdown,
        render_diff_text,
        repository_file,
        repository_paths,
    )
    from kvlint.types import SEVERITY_ORDER

    args: list[str] = []
    if offline:
        args.append("--offline")
    try:
        args += shlex.split(extra)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--args") from exc
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kvlint-diff-") as tmp:
        try:
            where = repository_paths(list(paths) or ["."])
            # each revision's own file, an absolute path inside the repository included; a revision without it
            # is linted without the option (diff_revisions adds a note)
            files = [("--config", repository_file(config_path))] if config_path else []
            files += [("--helm-values", repository_file(v)) for v in helm_values]
            before, after, comparison, rows = diff_revisions(
                base, head, args, tmp=tmp, paths=where, option_files=files, notes=notes
            )
        except ValueError as exc:
            raise click.UsageError(str(exc)) from exc
    label = f"{base}..{head or '(working tree)'}"
    if fmt == "json":
        from kvlint.report.escape import inert_json

        # as check's JSON report: no legacy "##[" workflow command from a manifest value in a job's log
        click.echo(
            inert_json(
                json.dumps(
                    {
                        "base": base,
                        "head": head,
                        "notes": notes,
                        "new": comparison.new,
                        "pre_existing": comparison.existing,
                        "fixed": comparison.fixed,
                        "capacity": [r.as_json() for r in rows],
                    },
                    indent=2,
                )
            )
        )
    elif fmt == "markdown":
        click.echo(render_diff_markdown(label, comparison, rows, notes), nl=False)
    else:
        click.echo(render_diff_text(label, comparison, rows, notes), nl=False)
    if fail_on is None:
        # each new finding's own threshold, as the working tree's check decided it (its file's .kvlint.yaml
        # fail_on, else error): the report's "fails"
        if any(d.get("fails", d.get("severity") == "error") is True for d in comparison.new):
            sys.exit(1)
    elif fail_on not in ("never", "none"):
        threshold = SEVERITY_ORDER[fail_on]
        if any(SEVERITY_ORDER.get(str(d.get("severity")), 0) >= threshold for d in comparison.new):
            sys.exit(1)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--gpus",
    type=click.IntRange(min=1),
    help="GPUs per replica (checked against TP x PP x data-parallel size).",
)
@click.option("--format", "fmt", type=click.Choice((*FORMATS, "markdown")), default="text", show_default=True)
@click.option(
    "--compare",
    is_flag=True,
    help="Table over accelerators x TP sizes x KV dtypes: fits (yes/risky/no/refused), weights and KV per GPU, "
    "KV tokens, concurrency, largest max-model-len (TGI: max-total-tokens, SGLang: context-length), GPUs per "
    "replica.",
)
@click.option(
    "--accelerators",
    metavar="IDS",
    help="Comma-separated accelerator ids/aliases for --compare (default: the .kvlint.yaml fleet, else "
    "kvlint's default fleet).",
)
@click.option(
    "--sweep",
    multiple=True,
    metavar="NAME=SPEC",
    help="Sensitivity, e.g. max-model-len=8k..128k, gpu-memory-utilization=0.8..0.95, max-num-seqs=64..512, "
    "max-num-batched-tokens=2k..16k, kv-cache-dtype=auto,fp8; TGI: max-total-tokens, max-input-tokens, "
    "max-batch-prefill-tokens, max-batch-size, cuda-memory-fraction, kv-cache-dtype; SGLang: context-length, "
    "mem-fraction-static, max-running-requests, chunked-prefill-size, kv-cache-dtype (repeatable; needs "
    "--accelerator or --gpu-memory).",
)
@click.option("--plot", metavar="FILE", help="Write a chart (.png/.svg; needs the 'plot' extra: matplotlib).")
@_add_common
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def plan(
    command: tuple[str, ...],
    gpus: int | None,
    fmt: str,
    compare: bool,
    accelerators: str | None,
    sweep: tuple[str, ...],
    plot: str | None,
    **kw: Any,
) -> None:
    """Per-GPU memory plan for an engine command line, exactly as typed after `--`.

    \b
    kvlint plan --accelerator h100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32k
    kvlint plan --compare --accelerators l4,a100-80gb,h100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct
    kvlint plan --accelerator h100 --sweep max-model-len=8k..128k -- vllm serve meta-llama/Llama-3.1-8B-Instruct

    vLLM, TGI and SGLang commands are planned, and so are --compare, --accelerators and --sweep, each cell the
    command with the engine's own settings changed (TGI's --num-shard, SGLang's --tp-size...). --plot adds a
    chart of the plan (and of a sweep) to what is printed.

    Exit codes: 0 ok/risky, 1 fail, 2 usage error or nothing could be sized (verdict unknown); with --compare or
    --sweep, 0 once the table is printed (its fits column holds the verdicts), 2 usage error.
    """
    from kvlint.capacity.plan_command import PlanRequestError, plan_command
    from kvlint.manifest_word import manifest_word

    manifest = manifest_word(command)
    if manifest is not None:
        raise click.UsageError(manifest)
    options = _with_found_catalogue(_options(**kw), [], config=True)
    if compare or sweep or accelerators:
        from kvlint.capacity.cli import run_plan_extras

        try:
            text = run_plan_extras(
                list(command),
                options,
                compare=compare or bool(accelerators),
                accelerators=[a.strip() for a in accelerators.split(",") if a.strip()]
                if accelerators
                else None,
                sweep=list(sweep),
                fmt=fmt,
                plot=plot,
            )
        except (ValueError, PlanRequestError) as exc:
            raise click.UsageError(str(exc)) from exc
        click.echo(text, nl=not text.endswith("\n"))
        return
    ctx = click.get_current_context()
    own = {
        o: not getattr(p, "is_flag", False) and p.nargs != 0
        for p in ctx.command.params
        if isinstance(p, click.Option)
        for o in (*p.opts, *p.secondary_opts)
        if o.startswith("--")
    }
    try:
        out = plan_command(list(command), options, gpus=gpus, own_options=own, local_config=True)
    except PlanRequestError as exc:
        raise click.UsageError(str(exc)) from exc
    if fmt == "json":
        import json

        click.echo(json.dumps(out.as_dict(), indent=2))
    elif fmt == "markdown":
        click.echo(out.render_markdown(), nl=False)
    else:
        click.echo(out.render_text(), nl=False)
    if plot:  # the memory breakdown, any engine's plan; the line saying so on stderr under --format json
        from kvlint.capacity.cli import plot_note

        if out.result.plan is None:
            note = f"note: --plot: no memory plan to draw ({out.result.plan_error or 'model or GPU unknown'})"
        else:
            note = plot_note(plot, plan=out.result.plan)
        click.echo(note, err=fmt == "json")
    if out.verdict == "fail":
        sys.exit(1)
    if out.verdict == "unknown":
        sys.exit(2)


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def rules(fmt: str) -> None:
    """List the rule catalogue. Exit codes: 0 listed, 2 usage error."""
    from kvlint.rules.catalog import load_catalog
    from kvlint.rules.registry import implemented

    cat = load_catalog()
    done = implemented()
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "name": r.name,
                        "severity": r.severity,
                        "summary": r.summary,
                        "engines": list(r.engines),
                        "category": r.category,
                        "phase": r.phase,
                        "consumes": list(r.consumes),
                        "implemented": r.id in done,
                    }
                    for r in cat.values()
                ],
                indent=2,
            )
        )
        return
    for r in cat.values():
        mark = "" if r.id in done else "  (not yet checked)"
        click.echo(f"{r.id}  {r.severity:<7}  {r.name:<36}  {r.summary}{mark}")


@main.command()
@click.argument("rule_id")
def explain(rule_id: str) -> None:
    """Explain one rule: what it checks, why, how to fix it (like `ruff rule`).

    RULE_ID in any case (KV103, kv103), or the rule's name as reports show it (max-model-len-unset), or a reason
    the sizing line gives for a serving container not sized or object not read (kvlint explain "model unknown"):
    what it means and the rule whose finding says what to do. Exit codes: 0 the rule is printed, 2 unknown rule (`kvlint rules`
    lists them).
    """
    from kvlint.rules.catalog import get_rule, render_rule_text, rule_id_of
    from kvlint.sizing import REASONS, UNREAD_REASONS

    reason = " ".join(rule_id.split())
    for prefix in ("not sized:", "not read:"):
        if reason.lower().startswith(prefix):
            reason = reason[len(prefix) :].strip()
    # a reason may be both (a template not rendered: a container's model, or a file not read): each is said
    found = [
        (kind, name, *table[name])
        for kind, table in (("not sized", REASONS), ("not read", UNREAD_REASONS))
        for name in table
        if name.lower() == reason.lower()
    ]
    if found:
        import textwrap

        for kind, name, rule, meaning in found:
            what = (
                "serving container kvlint did not size"
                if kind == "not sized"
                else "serving object kvlint did not read"
            )
            where = "at the container" if kind == "not sized" else "at the file and line the report lists"
            text = (
                f"{meaning[0].upper()}{meaning[1:]}. {rule} says so {where}, and its fix what to do; "
                "--require-sizing fails the run on it."
            )
            click.echo(f"{kind}: {name} (a reason the sizing line gives for a {what})")
            click.echo(
                textwrap.fill(
                    text, 100, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False
                )
                + "\n"
            )
        for rule in dict.fromkeys(f[2] for f in found):
            click.echo(render_rule_text(get_rule(rule)))
        return
    try:
        info = get_rule(rule_id.upper())
    except KeyError:
        named = rule_id_of(rule_id)
        if named is None:
            raise click.UsageError(_unknown_rule(rule_id)) from None
        info = get_rule(named)
    click.echo(render_rule_text(info))


def _unknown_rule(asked: str) -> str:
    """The usage error of ``kvlint explain`` for ``asked``, which is no rule id, rule name or sizing reason: the
    closest rule names and reasons (``difflib``, as ruff suggests a rule for a misspelt code) when some are close,
    the catalogue's id range for an id-shaped word (``KV999``: no guess at a number), and the reasons themselves
    only for words that read like one (a space in them) and match none."""
    import difflib
    import re

    from kvlint.report.escape import printable
    from kvlint.rules.catalog import load_catalog
    from kvlint.sizing import REASONS, UNREAD_REASONS
    from kvlint.statement import clip

    cat = load_catalog()
    # the word as inert text: a terminal escape in it (``$'\x1b[2J'``) is shown, not run on the user's terminal
    shown = printable(clip(asked, 80))
    words = " ".join(asked.split()).lower()
    if re.fullmatch(r"kv\d+", words):
        ids = sorted(cat)
        return f"unknown rule '{shown}': rule ids run from {ids[0]} to {ids[-1]}; `kvlint rules` lists them"
    choices = {r.name: f"{r.name} ({r.id})" for r in cat.values()}
    for name in (*REASONS, *UNREAD_REASONS):
        choices.setdefault(name.lower(), f"'{name}' (a sizing reason)")
    close = difflib.get_close_matches(words, list(choices), n=3, cutoff=0.7)
    if close:
        return f"unknown rule '{shown}'; did you mean {' or '.join(choices[c] for c in close)}? `kvlint rules` lists them"
    if " " in words:
        return (
            f"unknown rule '{shown}' and no reason of the sizing line; not sized: "
            f"{', '.join(repr(r) for r in REASONS)}; not read: {', '.join(repr(r) for r in UNREAD_REASONS)}"
        )
    return f"unknown rule '{shown}'; `kvlint rules` lists the rule ids and names"


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def accelerators(fmt: str) -> None:
    """List the accelerator catalogue (ids, memory as CUDA reports it, compute capability).

    Exit codes: 0 listed, 2 usage error.
    """
    from kvlint.accelerators import aliases, catalogue

    cat = catalogue()
    al: dict[str, list[str]] = {}
    for alias, target in aliases().items():
        al.setdefault(target, []).append(alias)
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "id": a.id,
                        "name": a.name,
                        "vendor": a.vendor,
                        "memory_bytes": a.memory_bytes,
                        "memory_source": a.memory_source,
                        "compute_capability": a.compute_capability,
                        "bf16": a.bf16,
                        "fp8": a.fp8,
                        "aliases": sorted(al.get(a.id, [])),
                    }
                    for a in cat.values()
                ],
                indent=2,
            )
        )
        return
    for a in cat.values():
        gib_total = a.memory_bytes / 2**30 if a.memory_bytes else 0
        click.echo(
            f"{a.id:<34} {gib_total:7.2f} GiB  CC {a.compute_capability or '-':<4}  "
            f"{'bf16' if a.bf16 else '    '} {'fp8' if a.fp8 else '   '}  {', '.join(sorted(al.get(a.id, [])))}"
        )


@main.group(cls=_LazyGroup, lazy={"pull": "kvlint.models.pull_cli:pull"}, invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.pass_context
def models(ctx: click.Context, fmt: str) -> None:
    """List the bundled model catalogue (`kvlint models show ID` for one model's facts).

    Exit codes: 0 listed, 2 usage error.
    """
    if ctx.invoked_subcommand is not None:
        return
    from kvlint.models.catalogue import list_entries, list_index

    if fmt == "json":
        import json

        click.echo(json.dumps([_entry_dict(e) for e in list_entries()], indent=2))
        return
    rows = list_index()  # index.yaml only: no entry.json is read for the listing
    click.echo(f"{'model id':<52} {'checkpoint':>12}  variants")
    for r in rows:
        size = f"{r.weight_bytes / 2**30:8.2f} GiB" if r.weight_bytes else "  (estimated)"
        click.echo(f"{r.id:<52} {size}  {len(r.variants) or ''}")
    n_var = sum(len(r.variants) for r in rows)
    click.echo(
        f"{len(rows)} configs and {n_var} cited variants (`kvlint models show ID`); quantized builds named "
        "<catalogued name>-AWQ/-GPTQ-Int4/-FP8/-bnb-4bit/... are derived from the name as a stated assumption"
    )
    click.echo(
        "checkpoint: the weights' size the checkpoint's model.safetensors.index.json states (total_size), or "
        "(estimated) where kvlint computes the weights from the architecture; variants: how many other hub ids "
        "(cited) are read with that config"
    )


def _entry_dict(e: Any) -> dict[str, Any]:
    from dataclasses import asdict, is_dataclass

    if is_dataclass(e) and not isinstance(e, type):
        return asdict(e)
    return dict(e)


@models.command("show")
@click.argument("model_id")
@click.option(
    "--model-dir",
    multiple=True,
    type=click.Path(file_okay=False, exists=True),
    help="Directory of <org>--<name>/config.json model configs (repeatable), as for check and plan.",
)
@click.option("--offline", is_flag=True, help="Never ask the Hugging Face Hub.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
def models_show(model_id: str, model_dir: tuple[str, ...], offline: bool, fmt: str) -> None:
    """Architecture facts kvlint uses for one model (layers, heads, KV heads, head size, layer types,
    KV bytes per token, weights and their source). MODEL_ID is a hub id, a directory holding a config.json, or
    a name found in a --model-dir.

    Exit codes: 0 printed, 2 no config.json for the model (the message says where kvlint looked) or usage error.
    """
    from kvlint.models import describe, resolve_model
    from kvlint.models.resolve import typed_model_remedies
    from kvlint.types import ModelUnavailable

    options = _with_found_catalogue(_options(offline=offline), [], config=True)
    try:
        m = resolve_model(
            model_id, model_dirs=model_dir, allow_hub=not offline, catalogues=options.model_catalogues
        )
    except ModelUnavailable as exc:
        from kvlint.models.catalogue import close_ids

        said = typed_model_remedies(str(exc), model_id, "MODEL_ID")
        # a path is the user's own directory: the catalogue's ids are no suggestion for it
        close = close_ids(model_id) if not model_id.strip().startswith(("/", ".", "~")) else []
        hint = (
            f"; did you mean {' or '.join(close)}? (the bundled catalogue's ids, `kvlint models` lists them)"
            if close
            else ""
        )
        raise click.UsageError(f"{said}{hint}") from exc
    rows = describe(m)
    if fmt == "json":
        import json

        click.echo(json.dumps(dict(rows), indent=2))
        return
    width = max(len(k) for k, _ in rows) + 2
    for k, v in rows:
        click.echo(f"{k:<{width}} {v}")


if __name__ == "__main__":  # pragma: no cover
    main()
