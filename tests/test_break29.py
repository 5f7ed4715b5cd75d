"""Hostile inputs found by the break29 adversarial pass: ``kvlint plan --sweep`` fraction ranges, the webhook's
UPDATEs that raise a replica count, multi-node followers on another GPU than their leader, ``kvlint verify`` logs
with numbers Python cannot convert, digits ``int()`` refuses in a workload's path, ``COLUMNS`` and an Action input,
and engines run as sidecar init containers. Expected figures come from kvlint's own functions, never from engine
numbers; work is counted, never timed."""

from __future__ import annotations

import builtins
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import kvlint.capacity.sweep as sweep_mod
from kvlint.capacity.sweep import SweepError, parse_sweep
from kvlint.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("spec", ["1..1e400", "-inf..1", "0.5..inf", "nan..1", "0.5..nan"])
def test_sweep_fraction_range_with_an_infinite_or_nan_end_is_refused(spec: str) -> None:
    with pytest.raises(SweepError, match=r"must be in \(0, 1\]"):
        parse_sweep(f"gpu-memory-utilization={spec}")


def test_sweep_fraction_range_far_outside_0_1_is_refused_before_its_points_are_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = [0]

    def counting_round(*args: object) -> object:
        calls[0] += 1
        return builtins.round(*args)  # type: ignore[call-overload]

    # each point of a fraction range is made by one round(); the module's name shadows the builtin
    monkeypatch.setattr(sweep_mod, "round", counting_round, raising=False)
    with pytest.raises(SweepError):
        parse_sweep("gpu-memory-utilization=-1e4..1")
    assert calls[0] <= 2  # the step count at most; -1e4..1 made 200,021 points before it was refused
    calls[0] = 0
    assert parse_sweep("gpu-memory-utilization=0.05..1")[1][-1] == 1.0
    assert calls[0] == 1 + 20


@pytest.mark.parametrize(
    "engine",
    [
        ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"],
        ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"],
    ],
)
def test_plan_sweep_with_an_infinite_fraction_is_a_usage_error(engine: list[str]) -> None:
    name = "gpu-memory-utilization" if engine[0] == "vllm" else "mem-fraction-static"
    r = CliRunner().invoke(
        main, ["plan", "--offline", "--accelerator", "h100", "--sweep", f"{name}=1..1e400", "--", *engine]
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2 and "(0, 1]" in r.output


def _shared_gpu_deployment(replicas: int | None) -> dict[str, Any]:
    """fixtures/rules/KV106/vllm.yaml's passing Deployment on a GPU time-shared by up to four pods, each engine
    claiming 0.3 of it."""
    doc = list(yaml.safe_load_all((ROOT / "fixtures" / "rules" / "KV106" / "vllm.yaml").read_text()))[1]
    spec = doc["spec"]["template"]["spec"]
    spec["nodeSelector"]["cloud.google.com/gke-max-shared-clients-per-gpu"] = "4"
    args = spec["containers"][0]["args"]
    args[args.index("--gpu-memory-utilization") + 1] = "0.3"
    if replicas is None:
        del doc["spec"]["replicas"]
    else:
        doc["spec"]["replicas"] = replicas
    return doc


def _review(new: dict[str, Any], old: dict[str, Any] | None) -> Any:
    from kvlint.webhook.review import parse_review

    request = {
        "uid": "u-29",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "namespace": "serving",
        "operation": "UPDATE" if old is not None else "CREATE",
        "userInfo": {"username": "alice"},
        "object": new,
        "oldObject": old,
    }
    return parse_review(
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    )


def _errors(review: Any) -> set[str]:
    from kvlint.webhook.review import lint_review, webhook_options

    return {d.rule for d in lint_review(review, webhook_options()).diagnostics if d.severity == "error"}


def test_an_update_raising_replicas_into_a_kv106_error_is_reviewed() -> None:
    pytest.importorskip("starlette")
    from kvlint.webhook.review import WebhookSettings, skip_reason

    one, four = _shared_gpu_deployment(1), _shared_gpu_deployment(4)
    # kvlint's own verdicts: one replica fits the shared GPU, four engines claim more than it holds
    assert "KV106" not in _errors(_review(one, None)) and "KV106" in _errors(_review(four, None))
    up = _review(four, one)
    assert skip_reason(up, WebhookSettings()) is None  # was "update changes only replicas ...": admitted
    assert "KV106" in _errors(up)
    for old in (_shared_gpu_deployment(None), {**one, "spec": {**one["spec"], "replicas": "1"}}):
        assert skip_reason(_review(four, old), WebhookSettings()) is None  # added, or not an integer before


def test_an_update_lowering_replicas_is_still_skipped() -> None:
    pytest.importorskip("starlette")
    from kvlint.webhook.review import WebhookSettings, counts_not_lowered, skip_reason

    four, one = _shared_gpu_deployment(4), _shared_gpu_deployment(1)
    four["status"] = {"replicas": 4}
    one["status"] = {"replicas": 9}  # status counts are the controller's, never compared
    assert skip_reason(_review(one, four), WebhookSettings()) is not None
    assert not counts_not_lowered(one, four) and counts_not_lowered(four, one)
    assert counts_not_lowered({"a": [{"minReplicas": 2}]}, {"a": [{"minReplicas": 1}]})
    assert counts_not_lowered(
        {"a": [{"minReplicas": 1}]}, {"a": [{"minReplicas": True}]}
    )  # a bool is no count
    assert counts_not_lowered({"a": [{}, {"replicas": 1}]}, {"a": [{}]})  # an item added with a count
    assert not counts_not_lowered({"a": [{"replicas": 1}]}, {"a": [{"replicas": 1}, {"replicas": 5}]})


def test_counts_not_lowered_walks_deep_objects_without_recursion() -> None:
    from kvlint.webhook.review import counts_not_lowered

    new: dict[str, Any] = {"replicas": 1}
    old: dict[str, Any] = {"replicas": 1}
    for _ in range(sys.getrecursionlimit() * 2):
        new, old = {"x": new}, {"x": old}
    assert not counts_not_lowered(new, old)


VLLM_LWS = ROOT / "fixtures/collected/kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__vllm.yaml"
SGLANG_LWS = (
    ROOT / "fixtures/collected/kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__sglang.yaml"
)


def _lws_on(tmp_path: Path, source: Path, leader_gpu: str, worker_gpu: str) -> Path:
    """``source``'s LeaderWorkerSet with its leader and worker pods on the GKE accelerators named ("": no
    nodeSelector)."""
    docs = list(yaml.safe_load_all(source.read_text()))
    lws = next(d for d in docs if d and d.get("kind") == "LeaderWorkerSet")
    for key, gpu in (("leaderTemplate", leader_gpu), ("workerTemplate", worker_gpu)):
        spec = lws["spec"]["leaderWorkerTemplate"][key]["spec"]
        if gpu:
            spec["nodeSelector"] = {"cloud.google.com/gke-accelerator": gpu}
    out = tmp_path / f"lws-{leader_gpu}-{worker_gpu}.yaml"
    out.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return out


@pytest.mark.parametrize("source", [VLLM_LWS, SGLANG_LWS])
def test_a_follower_node_on_another_gpu_than_its_leader_is_sized_on_its_own(
    tmp_path: Path, source: Path
) -> None:
    from kvlint.pipeline import Options, run_check

    def worker(path: Path) -> Any:
        res = run_check([str(path)], Options(allow_hub=False))
        (cr,) = [cr for cr in res.containers if cr.workload.role == "worker"]
        return cr, {
            d.rule for d in res.diagnostics if d.container == cr.container_name and d.severity == "error"
        }

    same, same_errors = worker(_lws_on(tmp_path, source, "nvidia-h100-80gb", "nvidia-h100-80gb"))
    assert same.serving.joins is not None and same.serving.joins.follower and same.plan is None
    mixed, mixed_errors = worker(_lws_on(tmp_path, source, "nvidia-h100-80gb", "nvidia-l4"))
    # the L4 workers load their share of the model on L4s: sized there (was joined, nothing checked)
    assert mixed.serving.joins is None and mixed.placement.accelerator.id == "nvidia-l4"
    assert mixed.plan is not None
    assert not same_errors
    if source == VLLM_LWS:  # 405B at TP 8 x PP 2: a node's share of the weights does not fit eight L4s
        assert mixed_errors
    # the leader's GPU named, the worker's not: sized against the fleet (KV501), as before followers were joined
    loose, _ = worker(_lws_on(tmp_path, source, "nvidia-h100-80gb", ""))
    assert loose.serving.joins is None and loose.placement.accelerator is None and loose.fleet
    both, _ = worker(_lws_on(tmp_path, source, "", ""))  # neither named: one engine, sized at the leader
    assert both.serving.joins is not None and both.serving.joins.follower


LOGS = ROOT / "fixtures" / "logs"


@pytest.mark.parametrize("total", ["9" * 400, "0", "-5"])
def test_verify_a_printed_gpu_total_that_is_not_a_size_is_not_read(total: str) -> None:
    from kvlint.verify.logparse import parse_log

    text = (LOGS / "gt-219.log").read_text()
    assert "total_gpu_memory (79.22GiB)" in text
    hostile = text.replace("total_gpu_memory (79.22GiB)", f"total_gpu_memory ({total}GiB)")
    assert parse_log(hostile).gpu_total_gib is None and parse_log(text).gpu_total_gib == pytest.approx(79.22)
    r = CliRunner().invoke(
        main, ["verify", "--offline", "--model", "meta-llama/Llama-3.2-11B-Vision", "-"], input=hostile
    )
    # 400 digits read as an infinite float: OverflowError in the replay, a traceback (exit status 1)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2 and "GPU total" in r.output


def _without_typed_tp(text: str, tp: str) -> str:
    """gt-213's log with its engine-config line's tensor_parallel_size set to ``tp`` and none in its non-default
    args, so that verify --record takes the count from the config line."""
    assert "tensor_parallel_size=2" in text and "'tensor_parallel_size': 2, " in text
    return text.replace("tensor_parallel_size=2", f"tensor_parallel_size={tp}").replace(
        "'tensor_parallel_size': 2, ", ""
    )


@pytest.mark.parametrize("tp", ["²", "1" * 5000])
def test_verify_record_with_a_config_tp_int_refuses_records_no_count(tp: str) -> None:
    text = _without_typed_tp((LOGS / "gt-213.log").read_text(), tp)
    args = [
        "verify",
        "--offline",
        "--accelerator",
        "h100",
        "--model",
        "Qwen/Qwen2-7B-Instruct",
        "--record",
        "-",
        "-",
    ]
    r = CliRunner().invoke(main, args, input=text)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code in (0, 1) and "tensor_parallel: null" in r.output
    plain = CliRunner().invoke(main, args, input=_without_typed_tp((LOGS / "gt-213.log").read_text(), "2"))
    assert "tensor_parallel: 2" in plain.output


DGD = ROOT / "fixtures/collected/ai-dynamo__dynamo__examples__backends__sglang__deploy__disagg-multinode.yaml"


@pytest.mark.parametrize("name", ["²", "①"])
def test_a_service_named_by_digits_int_refuses_is_checked_with_its_ignore_annotation(
    tmp_path: Path, name: str
) -> None:
    from kvlint.pipeline import Options, run_check
    from kvlint.types import is_internal_error

    doc = yaml.safe_load(DGD.read_text())
    services = doc["spec"]["services"]
    services[name] = services.pop("decode")
    doc["metadata"]["annotations"] = {"kvlint.io/ignore": "KV202=context set by the router"}
    path = tmp_path / "dgd.json"
    path.write_text(json.dumps(doc))
    res = run_check([str(path)], Options(allow_hub=False))
    # the workload's path held the key, read back as a list index by int(): a KV503 for the whole file
    assert not [d for d in res.diagnostics if is_internal_error(d.rule, d.message)]
    assert any(w.path.startswith(f"spec.services.{name}") for w in (cr.workload for cr in res.containers))
    assert res.suppressed and not [d for d in res.diagnostics if d.rule == "KV202"]


def test_columns_of_digits_int_refuses_is_the_default_width(monkeypatch: pytest.MonkeyPatch) -> None:
    from kvlint.report.text import DEFAULT_WIDTH, report_width

    for bad in ("²", "1" * 5000, "0", ""):
        monkeypatch.setenv("COLUMNS", bad)
        assert report_width() == DEFAULT_WIDTH
    monkeypatch.setenv("COLUMNS", "120")
    assert report_width() == 120


@pytest.mark.parametrize("limit", ["²", "1" * 5000])
def test_action_summary_limit_of_digits_int_refuses_is_an_input_error(limit: str) -> None:
    from kvlint.action import validate_inputs

    errors = validate_inputs({"KVLINT_SUMMARY_LIMIT": limit}, str(ROOT))  # "never raises"
    assert any(e.startswith("KVLINT_SUMMARY_LIMIT:") for e in errors)


def _sidecar_pod(tmp_path: Path, restart: str | None) -> Path:
    """A Deployment whose vLLM engine (a 70B model on one L4, KV101 in kvlint's model) is an init container beside an
    application container: a sidecar with ``restartPolicy: Always``, else a plain init container."""
    engine: dict[str, Any] = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--max-model-len", "8192"],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    if restart is not None:
        engine["restartPolicy"] = restart
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "app-with-llm-sidecar"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                    "initContainers": [engine],
                    "containers": [{"name": "app", "image": "example.com/app:1.0"}],
                },
            },
        },
    }
    path = tmp_path / f"sidecar-{restart}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_an_engine_run_as_a_sidecar_init_container_is_checked(tmp_path: Path) -> None:
    from kvlint.pipeline import Options, run_check

    res = run_check([str(_sidecar_pod(tmp_path, "Always"))], Options(allow_hub=False))
    # was "0 serving containers", no finding
    (cr,) = res.containers
    assert cr.container_name == "vllm" and cr.plan is not None
    assert any(d.severity == "error" and d.container == "vllm" for d in res.diagnostics)
    # a plain init container runs to completion before the pod starts: no server runs in one
    assert not run_check([str(_sidecar_pod(tmp_path, None))], Options(allow_hub=False)).containers
    # a sidecar requesting no accelerator (a routing proxy) serves no model kvlint sizes
    proxy = _sidecar_pod(tmp_path, "Always")
    proxy.write_text(proxy.read_text().replace("nvidia.com/gpu: 1", "cpu: 1"))
    assert not run_check([str(proxy)], Options(allow_hub=False)).containers


def test_a_leaderworkerset_engine_run_as_a_sidecar_gets_the_lws_env_and_joins_its_leader(
    tmp_path: Path,
) -> None:
    """LWS injects its variables into the init containers too (kubernetes-sigs/lws ``pkg/utils/pod/pod_utils.go``
    ``AddLWSVariables``), and a follower's leader is found among the containers the leader's analysis reads. The
    LWS SGLang example with its engine moved into a sidecar init container read ``--nnodes $(LWS_GROUP_SIZE)`` and
    ``--node-rank $(LWS_WORKER_INDEX)`` as unresolved (KV503) and sized the worker on its own, its findings repeated;
    it now reads as the same example with the engine in ``containers``."""
    from kvlint.pipeline import Options, run_check

    docs = list(yaml.safe_load_all(SGLANG_LWS.read_text()))
    lws = next(d for d in docs if d and d.get("kind") == "LeaderWorkerSet")
    for key in ("leaderTemplate", "workerTemplate"):
        spec = lws["spec"]["leaderWorkerTemplate"][key]["spec"]
        (engine,) = spec["containers"]
        spec["initContainers"] = [{**engine, "restartPolicy": "Always"}]
        spec["containers"] = [{"name": "app", "image": "example.com/app:1.0"}]
    path = tmp_path / "lws-sidecar.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    res = run_check([str(path)], Options(allow_hub=False))
    by_role = {cr.workload.role: cr for cr in res.containers}
    worker = by_role["worker"].serving
    assert worker is not None
    assert worker.flags["nnodes"].value == 2 and worker.flags["node_rank"].value == 1
    assert worker.joins is not None and worker.joins.follower
    assert not [d for d in res.diagnostics if d.rule == "KV503"], res.diagnostics
    plain = run_check([str(SGLANG_LWS)], Options(allow_hub=False))
    assert sorted((d.rule, d.container) for d in res.diagnostics) == sorted(
        (d.rule, d.container) for d in plain.diagnostics
    )
