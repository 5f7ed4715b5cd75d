"""A multi-node engine whose worker pods run the engine themselves, as follower nodes of the leader's (vLLM
``--headless`` with ``--node-rank``, SGLang ``--node-rank`` of ``--nnodes``), is one engine: sized once, at the
leader, with the findings on the group's settings there, and each worker checked for what is its own (its pod,
its image, its GPUs against the share of the group's workers its node starts). Real manifests: the
LeaderWorkerSet project's vLLM 0.28 example (fixtures/collected, pass 26) and its SGLang example (the corpus)."""

from __future__ import annotations

import re
from pathlib import Path

from kvlint.engines.layout import parallelism
from kvlint.pipeline import Options, run_check
from kvlint.sizing import outcomes

REPO = Path(__file__).resolve().parents[1]
VLLM_LWS = REPO / "fixtures/collected/kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__vllm.yaml"
SGLANG_LWS = REPO.parent / "shared/corpus/manifests/kubernetes-sigs__lws__docs__examples__sglang__lws.yaml"
SGLANG_LWS_COPY = (
    REPO / "fixtures/collected/kubernetes-sigs__lws__docs__examples__leaderworkerset__basic__sglang.yaml"
)


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def _by_container(res) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    out: dict[str, list[str]] = {}
    for d in res.diagnostics:
        out.setdefault(d.container, []).append(d.rule)
    return out


def test_a_headless_vllm_worker_is_sized_with_its_leader_once() -> None:
    """The vLLM example's worker runs ``vllm serve ... --nnodes $(LWS_GROUP_SIZE) --node-rank $(LWS_WORKER_INDEX)
    --headless``: it starts the GPU workers of the leader's engine (TP 8 x PP 2 over 2 nodes). Its KV202 and KV501
    were reported a second time at the worker's command; now they are at the leader only, and the worker is
    counted as sized with its leader."""
    text = VLLM_LWS.read_text()
    assert "- --headless" in text and "- $(LWS_WORKER_INDEX)" in text
    res = _run(VLLM_LWS)
    rules = _by_container(res)
    assert sorted(rules["vllm-leader"]) == ["KV202", "KV501"]
    assert "vllm-worker" not in rules
    worker = next(cr for cr in res.containers if cr.container_name == "vllm-worker")
    joins = worker.serving.joins
    assert joins is not None and joins.follower and joins.leader_container == "vllm-leader"
    assert "--headless --node-rank 1 of --nnodes 2" in joins.how
    assert worker.plan is None and not worker.fleet  # sized once: at the leader
    assert outcomes(res.containers) == ["fleet", "leader"]


def test_sglang_node_rank_worker_keeps_only_its_own_image_finding() -> None:
    """SGLang's example runs the same command on both nodes with ``--node-rank $(LWS_WORKER_INDEX)``: the worker's
    KV202 and KV501 duplicated the leader's. Its own unpinned image (``lmsysorg/sglang:latest`` on the worker's
    ``image:`` line) is still the worker's KV208."""
    for path in (SGLANG_LWS, SGLANG_LWS_COPY):
        if not path.exists():  # the corpus copy is shared data; the collected one is in the repository
            continue
        res = _run(path)
        rules = _by_container(res)
        assert "KV202" in rules["sglang-leader"] and "KV501" in rules["sglang-leader"], path
        assert set(rules.get("sglang-worker", [])) <= {"KV208"}, path
        assert outcomes(res.containers) == ["fleet", "leader"], path


def test_a_worker_whose_settings_differ_from_its_leader_is_sized_on_its_own(tmp_path: Path) -> None:
    """Only a worker with the leader's model and settings (apart from the per-node ones: rank, ports, addresses,
    ``--headless``) is the leader's engine: one with another ``--max-model-len`` is sized and reported on its own,
    as before."""
    text = VLLM_LWS.read_text()
    changed = tmp_path / "lws.yaml"
    changed.write_text(
        text.replace(
            "              - --headless\n",
            '              - --headless\n              - --max-model-len\n              - "8192"\n',
        )
    )
    res = _run(changed)
    worker = next(cr for cr in res.containers if cr.container_name == "vllm-worker")
    assert worker.serving.joins is None
    assert "KV501" in _by_container(res)["vllm-worker"]


def test_a_follower_pod_with_fewer_gpus_than_its_share_is_an_error(tmp_path: Path) -> None:
    """The worker node starts TP x PP / nodes = 8 of the leader's GPU workers: with 4 GPUs in its pod the engine
    cannot start; KV403 says so at the worker's GPU limit. With 16 it warns of idle GPUs."""
    text = VLLM_LWS.read_text()
    worker_at = text.index("workerTemplate:")
    for gpus, severity in (("4", "error"), ("16", "warning")):
        f = tmp_path / f"lws{gpus}.yaml"
        f.write_text(
            text[:worker_at] + text[worker_at:].replace('nvidia.com/gpu: "8"', f'nvidia.com/gpu: "{gpus}"', 1)
        )
        res = _run(f)
        kv403 = [d for d in res.diagnostics if d.rule == "KV403" and d.container == "vllm-worker"]
        assert len(kv403) == 1, gpus
        d = kv403[0]
        assert d.severity == severity and "starts 8 GPU workers on this node" in d.message
        assert d.loc is not None and f'nvidia.com/gpu: "{gpus}"' in f.read_text().splitlines()[d.loc.line - 1]
    worker = next(cr for cr in _run(VLLM_LWS).containers if cr.container_name == "vllm-worker")
    assert worker.serving.joins is not None and worker.serving.joins.leader is not None
    lay = parallelism(worker.serving.joins.leader)
    assert lay.tp * lay.pp // lay.nnodes == 8  # the share the check above compares with


def test_a_node_rank_the_engine_refuses_is_not_a_follower(tmp_path: Path) -> None:
    """A worker whose ``--node-rank`` is not below ``--nnodes`` is no node of the group: it is left to be read on
    its own."""
    text = VLLM_LWS.read_text()
    worker_at = text.index("workerTemplate:")
    f = tmp_path / "lws.yaml"
    f.write_text(text[:worker_at] + text[worker_at:].replace("- $(LWS_WORKER_INDEX)", '- "5"', 1))
    res = _run(f)
    worker = next(cr for cr in res.containers if cr.container_name == "vllm-worker")
    assert worker.serving.joins is None


RBG = REPO / "fixtures/collected/sgl-project__rbg__examples__inference__agg-leader-worker.yaml"
LLMAZ = REPO / "fixtures/collected/InftyAI__llmaz__docs__examples__multi-nodes__service.yaml"


def test_a_role_based_groups_worker_gets_its_index_and_follows_its_leader() -> None:
    """RBG puts ``RBG_LWP_WORKER_INDEX`` (0 for the leader) in a leader/worker group's pods, as it does
    ``RBG_LWP_GROUP_SIZE``: the agg-leader-worker example's ``--node-rank $(RBG_LWP_WORKER_INDEX)`` was "a variable
    kvlint cannot resolve" (KV503) and its worker was sized on its own; it is now rank 1 of 2, a follower of the
    leader's SGLang engine."""
    assert "- $(RBG_LWP_WORKER_INDEX)" in RBG.read_text()
    res = _run(RBG)
    assert not [d for d in res.diagnostics if d.rule == "KV503" and "RBG_LWP_WORKER_INDEX" in d.message]
    ranks = [cr.serving.get("node_rank") for cr in res.containers]
    assert ranks == [0, 1]
    worker = res.containers[1]
    assert worker.serving.joins is not None and worker.serving.joins.follower
    assert outcomes(res.containers) == ["fleet", "leader"]


def test_an_embedded_lws_template_gets_the_worker_index_lws_injects(tmp_path: Path) -> None:
    """An llmaz Service embeds a LeaderWorkerTemplate (``spec.workloadTemplate``): LWS adds LWS_WORKER_INDEX to its
    pods as it does LWS_GROUP_SIZE. The example declares the variable itself from the pod's worker-index label (a
    fieldRef kvlint does not resolve, so it is left as written); without that declaration the variable is LWS's,
    and the worker is rank 1, a follower sized with its leader."""
    text = LLMAZ.read_text()
    decl = re.compile(
        r"^ *- name: LWS_WORKER_INDEX\n *valueFrom:\n *fieldRef:\n *fieldPath: "
        r"metadata\.labels\['leaderworkerset\.sigs\.k8s\.io/worker-index'\]\n",
        re.M,
    )
    assert len(decl.findall(text)) == 2
    f = tmp_path / "service.yaml"
    f.write_text(decl.sub("", text))
    res = _run(f)
    assert [cr.serving.get("node_rank") for cr in res.containers] == [0, 1]
    assert outcomes(res.containers) == ["fleet", "leader"]
    rules = [d.rule for d in res.diagnostics if d.loc is not None and d.loc.line > 60]
    assert "KV202" not in rules and "KV501" not in rules


def _worker_part(text: str) -> int:
    return text.index("workerTemplate:")


def test_a_probe_on_a_headless_vllm_follower_never_passes(tmp_path: Path) -> None:
    """``vllm serve --headless`` starts the engine cores and GPU workers only (vllm/entrypoints/cli/serve.py::
    run_headless): no API server, so a probe on the worker's port never succeeds. KV408 skipped every follower."""
    text = VLLM_LWS.read_text()
    at = _worker_part(text)
    probe = (
        "            readinessProbe:\n              tcpSocket:\n                port: 8080\n"
        "            volumeMounts:\n"
    )
    f = tmp_path / "lws-probe.yaml"
    f.write_text(text[:at] + text[at:].replace("            volumeMounts:\n", probe, 1))
    res = _run(f)
    (d,) = [d for d in res.diagnostics if d.rule == "KV408"]
    assert d.container == "vllm-worker" and d.severity == "error"
    assert "serves no HTTP" in d.message and "--headless" in d.message
    assert d.loc is not None and "port: 8080" in f.read_text().splitlines()[d.loc.line - 1]
    assert not [d for d in _run(VLLM_LWS).diagnostics if d.rule == "KV408"]  # the example has none


def test_a_probe_on_an_sglang_follower_is_checked_against_its_port(tmp_path: Path) -> None:
    """SGLang's node-rank > 0 serves a stand-in /health on its own --port (launch_dummy_health_check_server in
    entrypoints/engine.py::_launch_subprocesses): a probe on another port never passes, one on --port does."""
    text = SGLANG_LWS_COPY.read_text()
    at = _worker_part(text)
    worker = text[at:]
    port = re.search(r"- --port\s*\n\s*- \"?(\d+)\"?", worker)
    served = int(port.group(1)) if port else 30000
    indent = re.search(r"\n(\s*)image: ", worker)
    assert indent
    pad = indent.group(1)
    for probe_port, expected in ((served + 1, 1), (served, 0)):
        probe = f"\n{pad}readinessProbe:\n{pad}  httpGet: {{path: /health, port: {probe_port}}}"
        f = tmp_path / f"sg-{probe_port}.yaml"
        f.write_text(text[:at] + worker.replace(f"\n{pad}image: ", f"{probe}\n{pad}image: ", 1))
        res = _run(f)
        worker_cr = next(cr for cr in res.containers if cr.container_name == "sglang-worker")
        assert worker_cr.serving.joins is not None and worker_cr.serving.joins.follower
        kv408 = [d for d in res.diagnostics if d.rule == "KV408" and d.container == "sglang-worker"]
        assert len(kv408) == expected, (probe_port, [d.message for d in kv408])


def _with_gpus(text: str, leader: str, worker: str) -> str:
    at = _worker_part(text)
    sel = "        nodeSelector:\n          cloud.google.com/gke-accelerator: {}\n        containers:\n"
    head = text[:at].replace("        containers:\n", sel.format(leader), 1)
    return head + text[at:].replace("        containers:\n", sel.format(worker), 1)


def test_a_follower_on_another_gpu_type_than_its_leader_is_said(tmp_path: Path) -> None:
    """The group is one engine sized by its smallest GPU (vLLM: the fewest KV blocks any worker holds; SGLang: the
    least free memory over the ranks), and kvlint plans it at the leader: a worker template scheduled on a smaller
    GPU was not compared with the leader's."""
    text = VLLM_LWS.read_text()
    f = tmp_path / "mixed.yaml"
    f.write_text(_with_gpus(text, "nvidia-h200-141gb", "nvidia-h100-80gb"))
    res = _run(f)
    (d,) = [d for d in res.diagnostics if d.rule == "KV403" and d.container == "vllm-worker"]
    assert d.severity == "warning" and "overstates the KV cache" in d.message
    assert "H100" in d.message and "H200" in d.message
    # the follower is also sized on its own GPU (kvlint.pipeline._other_gpu_than_leader): the message says so
    assert "this node on its own GPU" in d.message
    (worker,) = [cr for cr in res.containers if cr.container_name == "vllm-worker"]
    assert worker.plan is not None and worker.serving.joins is None and worker.serving.apart_from is not None
    # the other way round: the leader's GPU is the smaller, its plan holds (info)
    f.write_text(_with_gpus(text, "nvidia-h100-80gb", "nvidia-h200-141gb"))
    (d,) = [d for d in _run(f).diagnostics if d.rule == "KV403" and d.container == "vllm-worker"]
    assert d.severity == "info" and "the leader's plan holds" in d.message
    # the same GPU on both: nothing
    f.write_text(_with_gpus(text, "nvidia-h100-80gb", "nvidia-h100-80gb"))
    assert not [d for d in _run(f).diagnostics if d.rule == "KV403" and d.container == "vllm-worker"]


def test_a_lws_followers_shm_finding_is_at_its_own_tp(tmp_path: Path) -> None:
    """A LeaderWorkerSet worker template without /dev/shm: its KV404 is at the worker template's own ``--tp``, not
    at the leader template's (the group's layout is read from the leader). TP 2 over the 2 nodes: one GPU worker in
    each pod, and /dev/shm is each pod's own."""
    text = SGLANG_LWS_COPY.read_text()
    worker_at = text.index("    workerTemplate:")
    tail = text[worker_at:]
    shm = "            volumeMounts:\n              - mountPath: /dev/shm\n                name: dshm\n"
    assert shm in tail
    changed = tmp_path / "lws.yaml"
    changed.write_text(text[:worker_at] + tail.replace(shm, "", 1))
    res = _run(changed)
    kv404 = [d for d in res.diagnostics if d.rule == "KV404"]
    assert [d.container for d in kv404] == ["sglang-worker"], [d.message for d in kv404]
    lines = changed.read_text().splitlines()
    loc = kv404[0].loc
    assert loc is not None and loc.line > text[:worker_at].count("\n"), loc
    # at the value of the worker template's own --tp
    assert lines[loc.line - 2].strip() == "- --tp", lines[loc.line - 2]
    assert kv404[0].message.startswith("1 GPU worker of this pod (--tp 2: 2 over 2 nodes) communicates "), (
        kv404[0].message
    )
