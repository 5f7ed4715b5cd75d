"""Mends of stop 27 (tidy27): one climb to a checkout's root, shared texts and constants instead of copies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import kvlint.load as load
import kvlint.render as render


def _chart_reading(directory: Path, value: str) -> Path:
    """A minimal chart at ``directory`` whose one template reads ``.Values.<value>``."""
    (directory / "templates").mkdir(parents=True)
    (directory / "Chart.yaml").write_text(f"apiVersion: v2\nname: {directory.name}\nversion: 0.1.0\n")
    (directory / "templates" / "deployment.yaml").write_text("{{ .Values." + value + " }}\n")
    return directory


def test_a_values_file_deep_in_a_checkout_still_names_its_chart(tmp_path: Path) -> None:
    """The search for a values file's chart stopped looking for the checkout's root 13 directories up, so a file
    deeper than that in a checkout was taken as outside any and named no chart; the one climb
    (:func:`kvlint.load.directories_to_repository_root`) goes to the root however deep the file is."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    near = repo.joinpath(*[f"d{i}" for i in range(12)])
    chart = _chart_reading(near / "charts" / "serving", "workload.image")
    values = near / "envs" / "prod" / "values.yaml"
    values.parent.mkdir(parents=True)
    values.write_text("workload:\n  image:\n")
    assert len(values.parent.relative_to(repo).parts) == 14
    load._charts_under.cache_clear()
    assert load.repository_chart(str(values)) == str(chart)
    # the same tree outside a checkout names none (kvlint searches only a repository for the chart)
    (repo / ".git").rmdir()
    load._charts_under.cache_clear()
    assert load.repository_chart(str(values)) is None
    load._charts_under.cache_clear()


def test_the_rendered_files_chart_search_climbs_as_far_as_the_repository_root(tmp_path: Path) -> None:
    """:func:`kvlint.render._search_places` lists the directories of that one climb, then the cwd: its last
    directory is :func:`kvlint.load.repository_root`, a ``.git`` that is a dangling link (a worktree whose main
    checkout moved) included, as git and the configuration's search take it."""
    repo = tmp_path / "repo"
    deep = repo / "deploy" / "rendered"
    deep.mkdir(parents=True)
    (repo / ".git").symlink_to(tmp_path / "moved")
    assert not (repo / ".git").exists()
    render.clear_file_cache()
    places = render._search_places(str(deep / "out.yaml"))
    render.clear_file_cache()
    assert places == [str(deep), str(repo / "deploy"), str(repo), os.getcwd()]
    assert load.repository_root(str(deep)) == places[-2]
    assert load.directories_to_repository_root(str(deep)) == (places[:-1], True)


def test_one_climb_serves_the_repository_root_the_values_search_and_the_rendered_files_search() -> None:
    assert not hasattr(load, "_checkout_root")
    assert render.directories_to_repository_root is load.directories_to_repository_root


def _values_doc(path: Path, text: str) -> object:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    docs = load.load_paths([str(path)]).documents
    assert len(docs) == 1
    return docs[0]


def test_the_keys_left_for_set_reach_the_fix_as_data(tmp_path: Path) -> None:
    """The fix of values that leave their engine chooser empty gives each empty key a value; the keys come with
    the reason (:func:`kvlint.render._values_reason`), not from splitting its message, so a fix is made from
    the keys whatever the reason's wording."""
    doc = _values_doc(
        tmp_path / "values.yaml", "workload:\n  framework:\n  image: ''\n  model:\n    name:\n  replicas: 1\n"
    )
    reason, keys, _ = render._values_reason(doc)  # type: ignore[misc, arg-type]
    assert keys == ("workload.framework", "workload.image", "workload.model.name")
    assert render.helm_values_reason(doc) == reason  # type: ignore[arg-type]
    finding = render.unrendered_file_finding(doc)  # type: ignore[arg-type]
    assert finding is not None and reason in finding.message
    sets = "--set workload.framework=VALUE --set workload.image=VALUE --set workload.model.name=VALUE"
    assert finding.fix is not None and f" {sets} | kvlint check -" in finding.fix
    reworded = render.values_file_finding(str(tmp_path / "values.yaml"), "reworded", None, set_keys=keys)
    assert reworded.fix == finding.fix
    # values that name their engine leave nothing for --set
    named = _values_doc(tmp_path / "named" / "values.yaml", "workload:\n  framework: vllm\n  image: x\n")
    assert render._values_reason(named)[1] == ()  # type: ignore[index, arg-type]


def test_a_chart_directory_a_fix_names_is_one_shell_word(tmp_path: Path) -> None:
    """The fixes for a chart's own values.yaml and for a subchart's values name the chart to give ``kvlint check``
    as one shell word (:func:`kvlint.wording.shell_word`), as every other fix does: a directory with a blank or a
    ``$(...)`` in its name was written as is."""
    import shlex

    parent = tmp_path / "odd $(dir)" / "parent"
    sub = parent / "charts" / "sub"
    for chart in (parent, sub):
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {chart.name}\nversion: 0.1.0\n")
    text = "replicaCount: 1\nimage:\n  repository: vllm/vllm-openai\n"
    for values in (parent / "values.yaml", sub / "values.yaml"):
        finding = render.unrendered_file_finding(_values_doc(values, text))  # type: ignore[arg-type]
        assert finding is not None and finding.fix is not None
        command = finding.fix.split("kvlint check ", 1)[1].split(" (", 1)[0]
        assert command == shlex.quote(str(parent)), finding.fix
        assert shlex.split(command) == [str(parent)]


def _plan_assumptions(*argv: str) -> list[str]:
    from cli_runs import plan_json

    return list(plan_json("--accelerator", "h100", "--", *argv)["assumptions"])


def test_the_planners_kv201_refusal_is_found_by_the_note_the_memory_model_writes() -> None:
    """``kvlint plan --compare/--sweep`` finds a max-model-len vLLM refuses (KV201) by the end of the memory model's
    note, one constant (:data:`kvlint.memory.vllm.ABOVE_DERIVED_REFUSED`) where the planner kept its own copy."""
    import kvlint.capacity.context as context
    from kvlint.memory.vllm import ABOVE_DERIVED_REFUSED

    assert not hasattr(context, "_ABOVE_DERIVED")
    serve = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "256000"]
    refused = [a for a in _plan_assumptions(*serve) if a.endswith(ABOVE_DERIVED_REFUSED)]
    assert len(refused) == 1 and refused[0].startswith("--max-model-len 256000 exceeds the derived ")
    allowed = _plan_assumptions("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", *serve)
    assert any(a.startswith("--max-model-len 256000 exceeds the derived ") for a in allowed)
    assert not any(a.endswith(ABOVE_DERIVED_REFUSED) for a in allowed)


def test_sglangs_state_pool_refusals_are_written_once_in_the_memory_model() -> None:
    """KV701 quotes SGLang's two hybrid state-pool refusals from :mod:`kvlint.memory.sglang_mamba`, where the other
    refusal texts of the memory model live; the rule module wrote them itself. (KV701's own tests,
    tests/test_sglang_mamba.py, check the texts the findings quote.)"""
    import inspect

    import kvlint.rules.families.sglang as rules
    from kvlint.memory.sglang_mamba import NO_STATE_POOL, STATE_POOL_TOO_SMALL

    source = inspect.getsource(rules)
    for text in (NO_STATE_POOL, STATE_POOL_TOO_SMALL):
        assert "(mamba/linear-attention) state cache" in text
        assert text not in source
    assert STATE_POOL_TOO_SMALL.endswith("state cache is too small to serve any requests")


def test_accelerator_resource_names_are_written_once() -> None:
    """The extended resources of GPUs and other accelerators (``nvidia.com/gpu``, ``amd.com/gpu``, MIG slices, TPU,
    Gaudi, Neuron, Intel) are constants of :mod:`kvlint.gpu_resources`; five modules kept their own
    ``("nvidia.com/gpu", "amd.com/gpu")`` and more wrote the names inline. No other module of kvlint writes one
    as a string of its own, but the webhook's warm-up Deployment, a manifest as a user writes it."""
    import ast

    from kvlint import gpu_resources
    from kvlint.accelerators import placement
    from kvlint.engines import images

    names = {*gpu_resources.GPU_RESOURCES, gpu_resources.MIG_RESOURCE_PREFIX}
    assert {"nvidia.com/gpu", "amd.com/gpu", "google.com/tpu", "nvidia.com/mig-"} <= names
    package = Path(gpu_resources.__file__).parent
    written = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "gpu_resources.py" or path.relative_to(package).as_posix() == "webhook/worker.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                written.append(f"{path.relative_to(package)}:{node.lineno} {node.value}")
    assert written == []
    # the modules that had their own lists now hold the shared ones
    assert placement.GPU_RESOURCES is gpu_resources.GPU_RESOURCES
    assert images.NON_GPU_RESOURCES is gpu_resources.NON_GPU_RESOURCES
    assert gpu_resources.GPU_RESOURCES == (
        gpu_resources.NVIDIA_GPU, gpu_resources.NVIDIA_GPU_SHARED, gpu_resources.AMD_GPU, *images.NON_GPU_RESOURCES
    )  # fmt: skip


def test_the_located_copies_of_hardware_profiles_and_gitops_are_base_located_copy() -> None:
    """A copy keeps the positions of its values and keys in dictionaries of its own (editing the copy's leaves
    the original's), at the original's position or, for hardware profiles, the given one when it has none."""
    from kvlint.source import LDict, Loc
    from kvlint.workloads import gitops, hardwareprofile
    from kvlint.workloads.base import located_copy

    at, here, there = Loc("f.yaml", 3, 1), Loc("f.yaml", 4, 3), Loc("f.yaml", 9, 1)
    d = LDict({"a": 1}, loc=at)
    d.locs, d.key_locs = {"a": here}, {"a": here}
    for copy in (located_copy(d), located_copy(d, there), gitops._copy(d), hardwareprofile._copy(d, there)):
        assert copy == d and copy is not d and copy.loc == at
        assert copy.locs == {"a": here} and copy.key_locs == {"a": here}
        copy.locs["b"] = there
        assert "b" not in d.locs
    unplaced = LDict({"a": 1})
    assert located_copy(unplaced).loc is None
    assert located_copy(unplaced, there).loc == hardwareprofile._copy(unplaced, there).loc == there
    assert hardwareprofile._copy(None, there) == {} and hardwareprofile._copy([1], there).loc == there
    assert hardwareprofile._copy({"a": 1}, there) == {"a": 1}


def test_a_pulled_entrys_recorded_name_is_inside_it_by_the_model_readers_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kvlint models pull --check`` holds each name an entry's provenance.json records to the entry's directory
    with the test the model resolver uses, :func:`kvlint.models.pulled.inside` (below it, not the directory
    itself); a name with a NUL in it stopped the check with a ValueError traceback."""
    import hashlib
    import json

    from click.testing import CliRunner

    from kvlint.cli import main
    from kvlint.models import pulled

    entry = tmp_path / ".kvlint" / "models" / "acme--x"
    entry.mkdir(parents=True)
    config = b'{"architectures": ["LlamaForCausalLM"]}'
    (entry / "config.json").write_bytes(config)
    (tmp_path / "outside.json").write_text("{}")
    (entry / "link.json").symlink_to(tmp_path / "outside.json")
    files = {"config.json": {"sha256": hashlib.sha256(config).hexdigest()}}
    for name in ("a\x00b", ".", "../outside.json", "link.json"):
        files[name] = {"sha256": "0" * 64}
    provenance = {"format": pulled.FORMAT, "id": "acme/x", "commit": "0" * 40, "files": files}
    (entry / pulled.PROVENANCE).write_text(json.dumps(provenance))
    pulled.clear()
    (found,) = pulled.load_entries(tmp_path / ".kvlint" / "models")
    from kvlint.models import resolve

    assert resolve._inside is pulled.inside
    assert pulled.verify(found) == [
        ". is not a file of the entry",
        "../outside.json is not a file of the entry",
        "a\x00b is not a file of the entry",
        "link.json is not a file of the entry",
    ]
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["models", "pull", "--check"])
    pulled.clear()
    assert r.exit_code == 1 and not isinstance(r.exception, ValueError), r.output
    assert "1 of 1 models missing or changed" in r.output
