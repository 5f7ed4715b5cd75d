"""kvlint on the second set of real public manifests (fixtures/collected, issues 15 and 16).

Every collected file, and every chart/kustomization directory under ``charts/`` rendered as a user would
render it, must go through the whole pipeline without a traceback and without the KV503 "could not finish
checking" internal error. Files that PyYAML itself cannot parse must come back as a KV001 finding, never
as an exception. The provenance index must list exactly the files that are there.
"""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest
import yaml

from kvlint import render
from kvlint.pipeline import INTERNAL_ERROR, Options, run_check, run_documents

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
CHARTS = COLLECTED / "charts"
INDEX = COLLECTED / "INDEX.csv"
COLUMNS = [
    "file",
    "repo",
    "path",
    "commit_or_ref",
    "kind(s)",
    "engine",
    "model",
    "gpu_hint",
    "gpu_count",
    "flags_seen",
    "notes",
    "licence",
]


def _manifest_files() -> list[Path]:
    """Every file kvlint reads when given the directory (``.yaml``/``.yml``/``.json``, recursively)."""
    return sorted(p for p in COLLECTED.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json"))


def _internal_errors(result) -> list[tuple[str, str]]:
    return [
        (d.loc.file if d.loc else "", d.message)
        for d in result.diagnostics
        if d.rule == "KV503" and INTERNAL_ERROR in d.message
    ]


@pytest.fixture(scope="module")
def index_rows() -> list[dict[str, str]]:
    with open(INDEX, newline="") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == COLUMNS
        return list(reader)


def test_index_lists_exactly_the_collected_files(index_rows) -> None:
    on_disk = {
        p.relative_to(COLLECTED).as_posix()
        for p in COLLECTED.rglob("*")
        if p.is_file() and p.name not in ("INDEX.csv", "README.md")
    }
    listed = [r["file"] for r in index_rows]
    assert len(listed) == len(set(listed))
    assert set(listed) == on_disk


def test_index_rows_name_their_source(index_rows) -> None:
    for r in index_rows:
        assert len(r["commit_or_ref"]) == 40 and int(r["commit_or_ref"], 16) >= 0, r["file"]
        assert r["repo"].count("/") == 1 and r["path"] and r["licence"], r["file"]
        if "/" not in r["file"]:  # flat files: <owner>__<repo>__<path with / as __>
            owner, name = r["repo"].split("/")
            assert r["file"] == f"{owner}__{name}__{r['path'].replace('/', '__')}"
        elif r["file"].startswith("versions/"):  # an earlier version: versions/<commit[:7]>/<flat name>
            _, short, flat = r["file"].split("/")
            owner, name = r["repo"].split("/")
            assert r["commit_or_ref"].startswith(short) and len(short) == 7, r["file"]
            assert flat == f"{owner}__{name}__{r['path'].replace('/', '__')}", r["file"]
        else:  # chart/kustomization directories (charts/<name>/) and repository trees as checked out, linted as a
            # directory (trees/<name>/, new-user pass 23) keep the upstream file names below <name>/
            assert r["file"].startswith(("charts/", "trees/")) and r["path"].endswith(
                r["file"].split("/", 2)[2]
            )


def test_at_least_forty_flat_manifests(index_rows) -> None:
    assert len([r for r in index_rows if "/" not in r["file"]]) >= 40


@pytest.fixture(scope="module")
def whole_set():
    return run_check([str(COLLECTED)], Options(allow_hub=False))


def test_readme_states_the_sizing_coverage_of_the_collected_set(whole_set) -> None:
    """README.md gives the share `bench/sizing_coverage.py` reports for this set: a plan or fleet verdict for
    N of M serving containers (P %; S with leaders)."""
    import re

    from kvlint.sizing import summarise

    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    s = summarise(whole_set)
    stated = re.search(
        r"\(`fixtures/collected/`, sources in its INDEX\.csv\) for (\d+) of (\d+) \(([\d.]+) %; (\d+) with",
        readme,
    )
    assert stated is not None
    share = f"{100 * (s.plan + s.fleet) / s.serving:.1f}"
    assert stated.groups() == (str(s.plan + s.fleet), str(s.serving), share, str(s.sized))


def test_readme_names_what_stays_unsized_in_the_collected_set(whole_set) -> None:
    """README.md's "What stays unsized" sentence gives the five largest reasons of `bench/sizing_coverage.py`'s
    ``not sized:`` line for this set, in its order and with its counts (it once named Ray Serve applications, which
    are serving objects not read, not unsized containers, and left out the largest reason)."""
    import re

    from kvlint.sizing import summarise

    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    stated = re.search(
        r"What stays unsized in the collected set, largest first as the script's `not sized:` line gives it: (.*?)\.(?: |$)",
        readme,
    )
    assert stated is not None
    words = re.sub(r" \([^)]*\)", "", stated.group(1)).replace(" and ", ", ").split(", ")
    pairs = [tuple(w.rsplit(" ", 1)) for w in words]
    reasons = list(summarise(whole_set).not_sized.items())[:5]
    assert pairs == [(k, str(n)) for k, n in reasons], (pairs, reasons)


def _rendered_dirs() -> tuple[list[Path], list[Path]]:
    """(the directories a walk of the set renders, those whose files it leaves to them): with helm on PATH each
    outermost chart (a ``Chart.yaml``); with kustomize or kubectl each kustomization that no other kustomization of
    the set names in ``resources`` (an overlay), every kustomization directory's files left to the builds."""
    charts = sorted(p.parent for p in COLLECTED.rglob("Chart.yaml"))
    charts = [c for c in charts if not any(o != c and o in c.parents for o in charts)]
    kdirs = sorted(p.parent for p in COLLECTED.rglob("kustomization.yaml"))
    kdirs = [k for k in kdirs if not any(c in k.parents for c in charts)]
    named = set()
    for k in kdirs:
        spec = yaml.safe_load((k / "kustomization.yaml").read_text().split("\n---\n", 1)[-1]) or {}
        named |= {(k / r).resolve() for r in spec.get("resources") or [] if isinstance(r, str)}
    rendered = charts if shutil.which("helm") else []
    left = list(rendered)
    if render.kustomize_command(".") is not None:
        rendered = rendered + [k for k in kdirs if k.resolve() not in named]
        left += kdirs
    return rendered, left


def test_every_collected_file_goes_through_the_pipeline(whole_set) -> None:
    """Each file is read once, or linted through the chart or kustomization that renders it (one each)."""
    rendered, left = _rendered_dirs()
    plain = [p for p in _manifest_files() if not any(d in p.parents for d in left)]
    assert whole_set.files == len(plain) + len(rendered)
    assert not _internal_errors(whole_set)


def test_unparseable_files_are_a_kv001_not_a_crash(whole_set) -> None:
    broken = []
    # the loader kvlint parses with (libyaml when PyYAML has it): the pure-Python scanner also refuses a tab after
    # a plain scalar (GKE's vllm-tpu sample has 'type: LoadBalancer\t'), which libyaml accepts
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for p in _manifest_files():
        try:
            list(yaml.load_all(p.read_text(), Loader=loader))
        except yaml.YAMLError:
            broken.append(p)
    assert broken  # the set holds real files that are not valid YAML (Helm templates, a merge conflict)
    left = _rendered_dirs()[1]
    broken = [p for p in broken if not any(d in p.parents for d in left)]  # rendered, not read as they are
    assert broken
    kv001 = {
        os.path.abspath(d.loc.file) for d in whole_set.diagnostics if d.rule in ("KV001", "KV002") and d.loc
    }
    assert {os.path.abspath(p) for p in broken} <= kv001


def test_each_flat_file_alone() -> None:
    # Linting one file at a time must not crash where linting the directory did not (cross-file joins
    # such as ServingRuntime lookups see a different set of objects).
    for p in sorted(COLLECTED.glob("*.y*ml")):
        result = run_check([str(p)], Options(allow_hub=False))
        assert result.files == 1
        assert not _internal_errors(result), p.name


def _chart_dirs() -> list[Path]:
    return sorted(d for d in CHARTS.iterdir() if d.is_dir())


@pytest.mark.parametrize("chart", _chart_dirs(), ids=lambda d: d.name)
def test_chart_and_kustomization_directories_render_and_check(chart: Path) -> None:
    if render.is_chart_dir(str(chart)):
        if shutil.which("helm") is None:
            pytest.skip("helm is not installed")
    elif render.is_kustomize_dir(str(chart)):
        if render.kustomize_command(str(chart)) is None:
            pytest.skip("neither kustomize nor kubectl is installed")
    else:
        pytest.fail(f"{chart} is neither a Helm chart nor a kustomization")
    result = run_check([str(chart)], Options(allow_hub=False))
    assert result.documents > 0 and result.workloads > 0
    assert not any(d.rule == "KV001" for d in result.diagnostics)
    assert not _internal_errors(result)


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_castai_vllm_chart_is_sized_through_its_startup_script() -> None:
    """castai/helm-charts' vLLM chart runs ``/scripts/startup.sh`` from its own ConfigMap, which does
    ``exec vllm serve --model=... "$@"`` with the container's args: given a model and a GPU, kvlint reads the
    script and sizes the engine (before: KV503 'runs the script', not sized)."""
    chart = str(CHARTS / "castai-hosted-model-vllm")
    loaded = render.load_inputs([chart], helm_set=["model.name=Qwen/Qwen2.5-7B-Instruct"])
    result = run_documents(loaded, Options(allow_hub=False, accelerator="nvidia-l4"))
    (cr,) = result.containers
    assert cr.serving.engine == "vllm" and cr.serving.model is not None
    assert cr.serving.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert cr.serving.get("dtype") == "half"  # from the container's args, passed through "$@"
    assert cr.plan is not None
    assert not [d for d in result.diagnostics if d.rule == "KV503"]
