"""The Markdown report's per-container sections (``## Workloads``): each counts the findings of its own object
(findings were counted by object name and container, so the eight corpus Deployments named vllm-gemma-deployment,
in eight files, each said "8 findings"), names where the container is (two objects of one name in two files had
the same heading and nothing to tell them apart), and a multi-node worker sized with its leader says so (it said
model `?` and "No memory plan: model or GPU unknown" while the sizing line counted it sized)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kvlint.pipeline import Options, run_check
from kvlint.report import render
from kvlint.types import CheckResult
from kvlint.webhook.worker import WARM_UP_OBJECT

ROOT = Path(__file__).resolve().parents[1]
#: a LeaderWorkerSet whose leader is sized on the GPU it names: its worker is sized with it
LWS = (
    ROOT
    / "fixtures"
    / "collected"
    / "kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__vllm.yaml"
)


def _result(paths: list[Path], jobs: int) -> CheckResult:
    from kvlint.stream import stream_check

    options = Options(allow_hub=False)
    names = [str(p) for p in paths]
    return run_check(names, options) if jobs == 0 else stream_check(names, options, jobs=jobs)


def _sections(markdown: str) -> list[list[str]]:
    """The ``### `` sections of the Workloads part, each as its lines."""
    part = markdown.split("\n## Workloads\n", 1)[1]
    return [s.splitlines() for s in part.split("\n### ")[1:]]


@pytest.mark.parametrize("jobs", [0, 1])
def test_objects_of_one_name_in_two_files_count_their_own_findings(tmp_path: Path, jobs: int) -> None:
    obj = copy.deepcopy(WARM_UP_OBJECT)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
    container["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    obj["spec"]["template"]["spec"]["nodeSelector"] = {"cloud.google.com/gke-accelerator": "nvidia-l4"}
    quiet = tmp_path / "a.yaml"
    quiet.write_text(yaml.safe_dump(obj, sort_keys=False), encoding="utf-8")
    # the same object with an unknown option and no --max-model-len: findings in b.yaml only
    container["args"] = ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--no-such-option"]
    noisy = tmp_path / "b.yaml"
    noisy.write_text(yaml.safe_dump(obj, sort_keys=False), encoding="utf-8")
    result = _result([quiet, noisy], jobs)
    own = {
        str(p): sum(1 for d in result.diagnostics if d.loc is not None and d.loc.file == str(p))
        for p in (quiet, noisy)
    }
    assert own[str(quiet)] == 0 and own[str(noisy)] > 0
    sections = _sections(render("markdown", result))
    assert len(sections) == 2 and sections[0][0] == sections[1][0]  # one heading: Deployment/NAME · container
    for lines in sections:
        line = lines[2]
        (path,) = [p for p in own if f"`{p}:" in line]
        n = own[path]
        assert f" · {n} finding{'s' if n != 1 else ''} · `{path}:" in line


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_worker_sized_with_its_leader_says_so(jobs: int) -> None:
    result = _result([LWS], jobs)
    sections = _sections(render("markdown", result))
    (worker,) = [s for s in sections if "container `vllm-worker`" in s[0]]
    text = "\n".join(worker)
    assert "No memory plan" not in text and "model `?`" not in text
    assert "Sized with its leader: this worker joins the engine of container `vllm-leader`" in text


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_finding_in_another_file_than_its_container_is_counted(jobs: int) -> None:
    """An InferenceService sized with the ServingRuntime of another file: its KV208 is on the runtime's image,
    in the runtime's file. Counted by the container's file, the section said 2 findings of a container with 3
    (parasol-insurance, granite-3-1-8b-instruct); every finding of a container is counted in its section, once."""
    from kvlint.types import findings_stood_for

    chart = ROOT / "fixtures" / "collected" / "charts" / "parasol-insurance-ic-shared-llm"
    result = _result([chart], jobs)
    named = {(c.object_ref, c.container_name) for c in result.containers}
    mine: dict[tuple[str, str], int] = {}
    elsewhere = 0
    for d in result.diagnostics:
        if (d.object, d.container) in named:
            mine[(d.object, d.container)] = mine.get((d.object, d.container), 0) + findings_stood_for(d)
            at = next(
                c for c in result.containers if (c.object_ref, c.container_name) == (d.object, d.container)
            )
            elsewhere += d.loc is not None and d.loc.file != at.workload.doc.path
    assert elsewhere > 0  # the case: a finding in the ServingRuntime's file
    sections = _sections(render("markdown", result))
    assert len(sections) == len(result.containers) == len(named)
    for c, lines in zip(result.containers, sections, strict=True):
        n = mine.get((c.object_ref, c.container_name), 0)
        assert f" · {n} finding{'s' if n != 1 else ''} · " in lines[2], (n, lines[2])
