"""Real public manifests kvlint had not seen (new-user pass 26, fixtures/collected: LeaderWorkerSet and
DisaggregatedSet examples at vLLM 0.28 / SGLang 0.5.18, NVIDIA Dynamo graph deployments, production-stack cloud
specifications, CoreWeave Knative, a homelab llama.cpp backend on an AMD GPU). What a first run on them showed to be
wrong, each checked on the file itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.sizing import summarise, unread

REPO = Path(__file__).resolve().parents[1]
COLLECTED = REPO / "fixtures" / "collected"
DYNAMO_TRTLLM = COLLECTED / "ai-dynamo__dynamo__examples__backends__trtllm__deploy__agg.yaml"
LLAMA_CPP = (
    COLLECTED / "rrumana__k8s-homelab-2__cluster__apps__ai__llama-backend__llama-static-a-deployment.yaml"
)
DYNAMO_VLLM = COLLECTED / "ai-dynamo__dynamo__examples__backends__vllm__deploy__agg.yaml"
LWS_LLAMA_CPP_CPU = COLLECTED / "kubernetes-sigs__lws__docs__examples__llamacpp__k8s__lws.yaml"


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def _kv503(res) -> list:  # type: ignore[no-untyped-def]
    return [d for d in res.diagnostics if d.rule == "KV503"]


def test_a_dynamo_tensorrt_llm_worker_is_said_not_to_be_sized() -> None:
    """Dynamo's TensorRT-LLM example (``python3 -m dynamo.trtllm`` on one GPU) was "0 errors, 0 warnings ... 0
    serving containers": a clean pass on a GPU engine kvlint never looked at. It now gets one KV503 info naming the
    engine, the container and its GPUs, and counts as not read (so ``--require-sizing`` does not pass it)."""
    text = DYNAMO_TRTLLM.read_text()
    assert "- dynamo.trtllm" in text and 'gpu: "1"' in text
    res = _run(DYNAMO_TRTLLM)
    assert res.containers == []
    notes = _kv503(res)
    assert len(notes) == 1
    d = notes[0]
    assert d.severity == "info"
    assert "runs TensorRT-LLM" in d.message and "TRTLLMWorker" in d.message
    assert "nvidia.com/gpu: 1" in d.message and "not vLLM, SGLang or TGI" in d.message
    # at the command the container runs, its first word
    assert d.loc is not None and d.loc.line == text.splitlines().index("          - dynamo.trtllm") - 1
    assert [why for _, why in unread(res)] == ["engine kvlint does not model"]
    assert summarise(res).not_read == 1


def test_llama_server_on_an_amd_gpu_is_said_not_to_be_sized() -> None:
    """A homelab's llama.cpp backend (``command: [llama-server]`` on ``rocm/llama.cpp``, ``amd.com/gpu: 1``) was a
    clean pass with 0 serving containers; it now gets the same note, naming llama.cpp."""
    res = _run(LLAMA_CPP)
    notes = _kv503(res)
    assert len(notes) == 1
    assert "runs llama.cpp (llama-server, amd.com/gpu: 1)" in notes[0].message
    assert "container llama-server" in notes[0].message
    assert summarise(res).not_read == 1


def test_require_sizing_fails_on_an_engine_kvlint_does_not_model() -> None:
    """``--require-sizing`` asks that every serving engine be sized: a TensorRT-LLM worker is not, so the run
    fails and says which object and why (before, the run passed with nothing to say)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kvlint",
            "check",
            "--offline",
            "--no-config",
            "--require-sizing",
            str(DYNAMO_TRTLLM),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert out.returncode == 1
    assert "kvlint: not read:" in out.stderr and "engine kvlint does not model" in out.stderr


def test_engines_kvlint_models_and_cpu_servers_get_no_such_note(tmp_path: Path) -> None:
    """The note is only for other engines on accelerators: Dynamo's vLLM worker is read and sized as before, and
    LWS's llama.cpp example, which requests no GPU, stays silent; so does the homelab Deployment with its GPU
    request removed (a CPU llama.cpp server has no GPU memory to size)."""
    res = _run(DYNAMO_VLLM)
    assert [cr.serving.engine for cr in res.containers] == ["vllm"]
    assert not any("not vLLM, SGLang or TGI" in d.message for d in res.diagnostics)
    assert _kv503(_run(LWS_LLAMA_CPP_CPU)) == []
    cpu = tmp_path / "cpu.yaml"
    cpu.write_text(LLAMA_CPP.read_text().replace('amd.com/gpu: "1"', 'ephemeral-storage: "1Gi"'))
    res = _run(cpu)
    assert _kv503(res) == [] and unread(res) == []


def test_a_program_name_inside_another_word_is_not_that_engine(tmp_path: Path) -> None:
    """Only a word that is the program counts: a flag value or path that merely contains ``llama-server`` (a
    model directory named after it) is not llama.cpp."""
    other = tmp_path / "other.yaml"
    other.write_text(
        LLAMA_CPP.read_text()
        .replace("            - llama-server\n", "            - /opt/app/serve\n")
        .replace("$(MODEL_PATH)", "/models/my-llama-server-model.gguf")
    )
    assert _kv503(_run(other)) == []


KSERVE_FLUID = COLLECTED / "kserve__kserve__docs__samples__fluid__kserve-isvc.yaml"


def test_a_storage_uri_named_org_dash_dash_name_names_its_model() -> None:
    """KServe's fluid sample stores Llama 3.1 8B at ``s3://${bucket}/models/meta-llama--Meta-Llama-3.1-8B-Instruct``
    (the ``<org>--<name>`` spelling kvlint's own ``--model-dir`` folders use): kvlint said "no config.json for model
    '/mnt/models'" and sized nothing. The last component spells a catalogued hub id, so the model is taken to be
    that one, stated as an assumption (KV505), and sized on the A10G its ``g5.8xlarge`` node selector names."""
    text = KSERVE_FLUID.read_text()
    assert "storageUri: s3://${bucket}/models/meta-llama--Meta-Llama-3.1-8B-Instruct" in text
    res = _run(KSERVE_FLUID)
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    notes = [d for d in res.diagnostics if d.rule == "KV505"]
    assert len(notes) == 1
    assert "'meta-llama--Meta-Llama-3.1-8B-Instruct' is the <org>--<name> spelling of the catalogued" in (
        notes[0].message
    )
    assert cr.plan is not None and summarise(res).plan == 1


def test_an_org_dash_dash_name_that_is_not_catalogued_names_nothing(tmp_path: Path) -> None:
    """Only a catalogued ``<org>/<name>`` is taken: an unknown one, or a Hugging Face cache folder's ``models--``
    prefix read as an org, leaves the model unknown (KV502), as before."""
    for uri in ("s3://b/models/acme--Widget-7B-Chat", "s3://b/models--meta-llama"):
        f = tmp_path / "isvc.yaml"
        f.write_text(
            KSERVE_FLUID.read_text().replace(
                "s3://${bucket}/models/meta-llama--Meta-Llama-3.1-8B-Instruct", uri
            )
        )
        res = _run(f)
        assert [d.rule for d in res.diagnostics if d.rule in ("KV502", "KV505")] == ["KV502"], uri


AKS_DYNAMO = (
    COLLECTED
    / "NVIDIA__nim-deploy__cloud-service-providers__azure__workshops__aks-dynamo__disagg_planner.yaml"
)


def test_dynamos_sla_planner_is_not_an_engine_whose_command_cannot_be_read() -> None:
    """NVIDIA's AKS Dynamo workshop runs the SLA planner as ``python3 -m planner_sla`` (Dynamo 0.8.0, on the vLLM
    runtime image): kvlint took it for a vLLM container and warned "engine command cannot be read ... run the engine
    directly (command: [vllm, serve, MODEL, ...])", a remedy for a component that loads no model. The planner is now
    no serving container; the two vLLM workers are read and sized as before."""
    text = AKS_DYNAMO.read_text()
    assert "componentType: planner" in text and "- planner_sla" in text
    res = _run(AKS_DYNAMO)
    assert not [d for d in res.diagnostics if d.rule == "KV503" and d.severity == "warning"]
    names = sorted(cr.serving.container_name for cr in res.containers)
    assert names == ["VllmDecodeWorker", "VllmPrefillWorker"]
    assert summarise(res).sized == 2


def test_a_placeholder_in_the_storage_uri_is_a_template_finding(tmp_path: Path) -> None:
    """The same sample's ``storageUri`` holds ``${bucket}``, which its README asks the user to fill in: applied as
    written, KServe's storage initializer is given ``s3://${bucket}/...`` and the pod never starts. It was not
    said; it is now a KV002 at the storageUri, and the service is still sized. A storageUri without a placeholder
    gets no such finding."""
    text = KSERVE_FLUID.read_text()
    res = _run(KSERVE_FLUID)
    kv002 = [d for d in res.diagnostics if d.rule == "KV002"]
    assert len(kv002) == 1
    d = kv002[0]
    assert (
        "holds ${bucket}" in d.message
        and "KServe's storage initializer would fetch it literally" in d.message
    )
    assert d.loc is not None and text.splitlines()[d.loc.line - 1].strip().startswith(
        "storageUri: s3://${bucket}"
    )
    assert summarise(res).plan == 1
    plain = tmp_path / "isvc.yaml"
    plain.write_text(text.replace("${bucket}", "my-models"))
    assert not [d for d in _run(plain).diagnostics if d.rule == "KV002"]
