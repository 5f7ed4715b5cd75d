"""OME InferenceServices that name no runtime are planned with the runtime OME auto-selects among the inputs
(kvlint.workloads.ome_select, restating sgl-project/ome@17b77eda ``pkg/runtimeselector``).

Inputs: sgl-project/ome's GLM FP8 sample (fixtures/collected/trees/sgl-project-ome-glm-fp8: two
ClusterBaseModels, one ClusterServingRuntime, two InferenceServices naming no runtime), and copies of it with
runtimes changed or added the way OME's selector reads them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import outcomes
from kvlint.workloads.ome_select import model_size

REPO = Path(__file__).resolve().parents[1]
TREE = REPO / "fixtures" / "collected" / "trees" / "sgl-project-ome-glm-fp8"
RUNTIME = "config/runtimes/srt/zai-org/glm-text-fp8-tp8-rt.yaml"
ISVC_47 = "config/samples/isvc/zai-org/glm-4-7-fp8.yaml"


def _check(*paths: Path):
    return run_check([str(p) for p in paths], Options(allow_hub=False))


def _tree(tmp_path: Path) -> Path:
    """A copy of the GLM tree with only GLM-4.7-FP8 (catalogued) and its InferenceService."""
    root = tmp_path / "tree"
    shutil.copytree(TREE, root)
    (root / "config/models/zai-org/GLM-4.6-FP8.yaml").unlink()
    (root / "config/samples/isvc/zai-org/glm-4-6-fp8.yaml").unlink()
    return root


def _runtime_text() -> str:
    return (TREE / RUNTIME).read_text()


def _add_runtime(root: Path, name: str, text: str) -> None:
    (root / "config/runtimes" / f"{name}.yaml").write_text(text)


def _variant(name: str, tp: int, **swap: str) -> str:
    """The GLM runtime renamed ``name``, with ``--tp-size tp`` and GPUs ``tp``, and ``swap`` replacements."""
    text = _runtime_text().replace("name: srt-glm-text-fp8-tp8", f"name: {name}")
    text = text.replace('- --tp-size\n        - "8"', f'- --tp-size\n        - "{tp}"')
    text = text.replace("nvidia.com/gpu: 8", f"nvidia.com/gpu: {tp}")
    for old, new in swap.items():
        assert old.replace("_", " ") in text or old in text
        text = text.replace(old, new)
    return text


def _served(result):
    """The serving containers planned for the InferenceServices (a runtime no service selects stays a template)."""
    return [cr for cr in result.containers if cr.workload.kind == "InferenceService"]


def _notes(result, rule: str):
    return [d for d in result.diagnostics if d.rule == rule]


def test_glm_sample_is_planned_on_the_runtime_ome_selects() -> None:
    # the runtime alone is a template (KV502); with the models and services beside it, the services are planned
    assert outcomes(_check(TREE / RUNTIME).containers) == ["runtime template"]
    result = _check(TREE)
    assert [cr.workload.kind for cr in result.containers] == ["InferenceService", "InferenceService"]
    notes = _notes(result, "KV504")
    assert len(notes) == 2 and all("'srt-glm-text-fp8-tp8'" in d.message for d in notes)
    assert all("auto-selects" in d.message and d.severity == "info" for d in notes)
    assert all("template" not in d.message for d in _notes(result, "KV502"))
    assert "runtime template" not in outcomes(result.containers)
    by_name = {cr.workload.name: cr for cr in result.containers}
    assert by_name["glm-4-7-fp8"].serving.get("tp_size") == 8
    assert outcomes([by_name["glm-4-7-fp8"]]) in (["fleet"], ["plan"])


def test_higher_priority_runtime_wins(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _add_runtime(root, "tp4", _variant("srt-glm-a-tp4", 4, **{"priority: 1": "priority: 2"}))
    result = _check(root)
    (cr,) = _served(result)
    assert cr.serving.get("tp_size") == 4
    (note,) = _notes(result, "KV504")
    assert "'srt-glm-a-tp4'" in note.message and "score 30" in note.message
    assert (
        "also matching, ranked after it: ClusterServingRuntime 'srt-glm-text-fp8-tp8' (score 15)"
        in note.message
    )


def test_disabled_runtime_is_skipped(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _add_runtime(
        root,
        "tp4",
        _variant("srt-glm-a-tp4", 4, **{"priority: 1": "priority: 2", "disabled: false": "disabled: true"}),
    )
    result = _check(root)
    (cr,) = _served(result)
    assert cr.serving.get("tp_size") == 8
    (note,) = _notes(result, "KV504")
    assert "'srt-glm-a-tp4': it is disabled" in note.message


def test_no_matching_runtime_is_a_warning(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    path = root / RUNTIME
    path.write_text(_runtime_text().replace("min: 350B", "min: 400B").replace("max: 360B", "max: 700B"))
    result = _check(root)
    (warning,) = [d for d in _notes(result, "KV503") if "OME would select" in d.message]
    assert warning.severity == "warning"
    assert "outside its modelSizeRange [400B, 700B]" in warning.message
    assert warning.loc.file.endswith("glm-4-7-fp8.yaml")
    assert not [cr for cr in _served(result) if cr.serving.get("tp_size")]
    assert outcomes(result.containers) == ["runtime template"]


def test_no_auto_select_is_not_selected(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / RUNTIME).write_text(_runtime_text().replace("autoSelect: true", "autoSelect: false"))
    result = _check(root)
    (warning,) = [d for d in _notes(result, "KV503") if "OME would select" in d.message]
    assert "no supported format has autoSelect: true" in warning.message


def test_other_architecture_or_quantization_does_not_match(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / RUNTIME).write_text(_runtime_text().replace("quantization: fp8", "quantization: int4"))
    result = _check(root)
    (warning,) = [d for d in _notes(result, "KV503") if "OME would select" in d.message]
    assert "quantization fp8 (runtime: int4)" in warning.message


def test_equal_runtimes_are_ambiguous_and_ome_takes_the_first_name(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _add_runtime(root, "tp4", _variant("srt-glm-a-tp4", 4))
    result = _check(root)
    (cr,) = _served(result)
    assert cr.serving.get("tp_size") == 4  # "srt-glm-a-tp4" < "srt-glm-text-fp8-tp8"
    (note,) = _notes(result, "KV504")
    assert note.severity == "warning" and "Ambiguous" in note.message
    assert "'srt-glm-text-fp8-tp8'" in note.message


def test_closer_size_range_wins_a_tie_of_scores(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    # 355B: [300B, 400B] is 100B away in all, the original [350B, 360B] 10B: the original wins
    _add_runtime(
        root, "tp4", _variant("srt-glm-a-tp4", 4, **{"min: 350B": "min: 300B", "max: 360B": "max: 400B"})
    )
    result = _check(root)
    (cr,) = _served(result)
    assert cr.serving.get("tp_size") == 8
    (note,) = _notes(result, "KV504")
    assert note.severity == "info"


def test_namespaced_runtime_is_preferred_over_a_cluster_one(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    text = _variant("srt-glm-z-tp4", 4).replace(
        "kind: ClusterServingRuntime\nmetadata:\n", "kind: ServingRuntime\nmetadata:\n  namespace: glm\n"
    )
    assert "kind: ServingRuntime" in text
    _add_runtime(root, "ns", text)
    result = _check(root)
    (cr,) = _served(result)
    assert cr.serving.get("tp_size") == 4
    (note,) = _notes(result, "KV504")
    assert "ServingRuntime 'srt-glm-z-tp4'" in note.message and "namespaced" in note.message


def test_namespaced_runtime_of_another_namespace_is_not_considered(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    text = _variant("srt-glm-z-tp4", 4).replace(
        "kind: ClusterServingRuntime\nmetadata:\n", "kind: ServingRuntime\nmetadata:\n  namespace: other\n"
    )
    _add_runtime(root, "ns", text)
    result = _check(root)
    tps = [cr.serving.get("tp_size") for cr in _served(result)]
    assert tps == [8]


def test_named_runtime_is_used_without_selection(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _add_runtime(root, "tp4", _variant("srt-glm-a-tp4", 4, **{"autoSelect: true": "autoSelect: false"}))
    isvc = root / ISVC_47
    isvc.write_text(
        isvc.read_text().replace("  engine:\n", "  runtime:\n    name: srt-glm-a-tp4\n  engine:\n")
    )
    result = _check(root)
    tps = [cr.serving.get("tp_size") for cr in _served(result)]
    assert tps == [4]
    (note,) = _notes(result, "KV504")
    assert "spec.runtime.name" in note.message


def _cli(root: Path, jobs: int) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", "kvlint", "check", "--offline", "--jobs", str(jobs), str(root)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    return done.stdout


def test_streaming_run_with_two_jobs_gives_the_same_selection(tmp_path: Path) -> None:
    # the command line reads files as a stream: the BaseModels must reach the context pass (stream.py)
    root = _tree(tmp_path)
    _add_runtime(root, "tp4", _variant("srt-glm-a-tp4", 4, **{"priority: 1": "priority: 2"}))
    one, two = _cli(root, 1), _cli(root, 2)
    assert one == two
    assert "kvlint sized this OME InferenceService on ClusterServingRuntime 'srt-glm-a-tp4'" in one


def test_named_runtime_that_does_not_match_is_refused_by_ome(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    _add_runtime(root, "tp4", _variant("srt-glm-a-tp4", 4, **{"disabled: false": "disabled: true"}))
    isvc = root / ISVC_47
    isvc.write_text(
        isvc.read_text().replace("  engine:\n", "  runtime:\n    name: srt-glm-a-tp4\n  engine:\n")
    )
    result = _check(root)
    (note,) = _notes(result, "KV504")
    assert note.severity == "warning"
    assert "OME refuses it (RuntimeValidationError" in note.message and "it is disabled" in note.message


MODEL_47 = "config/models/zai-org/GLM-4.7-FP8.yaml"


def test_version_with_a_non_ascii_digit_does_not_match_and_does_not_crash(tmp_path: Path) -> None:
    # "²" is a digit to str.isdigit but not to int() nor to OME's modelver.Parse (ASCII digits only): the
    # format does not match, the service gets the KV503 warning, no traceback
    root = _tree(tmp_path)
    (root / RUNTIME).write_text(_runtime_text().replace('version: "4.52.3"', 'version: "4.5²"'))
    result = _check(root)
    (warning,) = [d for d in _notes(result, "KV503") if "OME would select" in d.message]
    assert "no supported model format matches" in warning.message


def test_version_with_a_leading_zero_does_not_parse_in_ome(tmp_path: Path) -> None:
    # modelver.Parse refuses "03" (parseNumeric: leading zeroes), so 4.52.03 never equals the model's 4.52.3
    root = _tree(tmp_path)
    (root / RUNTIME).write_text(_runtime_text().replace('version: "4.52.3"', 'version: "4.52.03"'))
    result = _check(root)
    (warning,) = [d for d in _notes(result, "KV503") if "OME would select" in d.message]
    assert "modelFramework differs" in warning.message
    # a number above 2**64 - 1 does not parse either (and a huge one is refused before int() sees it)
    (root / RUNTIME).write_text(_runtime_text().replace('version: "4.52.3"', 'version: "' + "9" * 5000 + '"'))
    (warning,) = [d for d in _notes(_check(root), "KV503") if "OME would select" in d.message]
    assert "modelFramework differs" in warning.message
    # the same runtime written without the zero matches (the warning is about the zero alone)
    (root / RUNTIME).write_text(_runtime_text())
    assert [d for d in _notes(_check(root), "KV504") if "auto-selects" in d.message]


def test_prerelease_versions_compare_without_the_v_prefix(tmp_path: Path) -> None:
    # a version with a suffix is compared with modelver.Equal (CompareVersion: numbers and suffixes, not the
    # "v" prefix): the model's v4.52.3-rc1 is the runtime's 4.52.3-rc1
    root = _tree(tmp_path)
    model = root / MODEL_47
    model.write_text(model.read_text().replace('version: "4.52.3"', 'version: "v4.52.3-rc1"'))
    (root / RUNTIME).write_text(_runtime_text().replace('version: "4.52.3"', 'version: "4.52.3-rc1"'))
    result = _check(root)
    (note,) = _notes(result, "KV504")
    assert "auto-selects" in note.message and "'srt-glm-text-fp8-tp8'" in note.message
    # a different pre-release does not match
    (root / RUNTIME).write_text(_runtime_text().replace('version: "4.52.3"', 'version: "4.52.3-rc2"'))
    assert [d for d in _notes(_check(root), "KV503") if "OME would select" in d.message]


def test_model_size_is_read_as_go_parse_float_reads_it() -> None:
    # parseModelSize: one T/B/M suffix off, strconv.ParseFloat on the rest, 0 on any error (overflow included)
    assert model_size("355B") == 355e9 and model_size("0.5T") == 5e11 and model_size("12M") == 12e6
    assert model_size("3.55e2B") == model_size("355B")
    assert model_size(".5B") == 5e8
    for unreadable in ("1e400B", "9" * 400 + "B", " 70B", "70 B", "7b", "1_0B", "B", "", None):
        assert model_size(unreadable) == 0.0, unreadable


def test_model_size_in_exponent_notation_is_in_range(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    model = root / MODEL_47
    model.write_text(model.read_text().replace("modelParameterSize: 355B", "modelParameterSize: 3.55e2B"))
    result = _check(root)
    (note,) = _notes(result, "KV504")
    assert "auto-selects" in note.message and "'srt-glm-text-fp8-tp8'" in note.message
