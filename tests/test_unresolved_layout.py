"""A parallel size kvlint cannot resolve is not sized on a made-up value: ``--tensor-parallel-size $(TP)`` with
``TP`` from a Secret, SGLang's ``--tp ${TP}`` in a shell script with ``TP`` from a fieldRef, TGI's
``NUM_SHARD`` from a Secret. vLLM (``ParallelConfig``), SGLang (``ServerArgs``) and TGI (``find_num_shards``)
would run on the value the pod gets; kvlint says it cannot read it (KV503 warning at the flag) and counts the
container "parallel size unknown" rather than planning TP 1. The manifests are a real one
(fixtures/collected, aatchison/deploy-vllm-k8s) with its literal size replaced by a variable."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import sizing_of

ROOT = Path(__file__).resolve().parents[1]
#: vLLM, google/gemma-4-31B-it with --tensor-parallel-size "2" on two MIG slices
REAL = ROOT / "fixtures" / "collected" / "aatchison__deploy-vllm-k8s__deploy-gemma4-31B-bf16-tp2.yaml"
SECRET_TP = """        - name: TP_SIZE
          valueFrom:
            secretKeyRef:
              name: serving-config
              key: tp
"""


def _variable_tp(tmp_path: Path, value: str) -> tuple[Path, int]:
    """The real manifest with its tensor-parallel size written as ``value`` (``TP_SIZE`` from a Secret);
    also the 1-based line of the value."""
    text = REAL.read_text()
    old = '        - "--tensor-parallel-size"\n        - "2"\n'
    assert old in text
    text = text.replace(old, f'        - "--tensor-parallel-size"\n        - "{value}"\n')
    text = text.replace("        env:\n", "        env:\n" + SECRET_TP, 1)
    p = tmp_path / "deploy.yaml"
    p.write_text(text)
    line = text.splitlines().index(f'        - "{value}"') + 1
    return p, line


def test_the_real_manifest_is_sized_with_its_literal_size() -> None:
    (cr,) = run_check([str(REAL)], Options(allow_hub=False)).containers
    assert sizing_of(cr) == "plan"


def test_a_tensor_parallel_size_from_a_secret_is_not_sized_on_one(tmp_path: Path) -> None:
    path, line = _variable_tp(tmp_path, "$(TP_SIZE)")
    result = run_check([str(path)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.plan is None and not cr.fleet
    assert sizing_of(cr) == "parallel size unknown"
    (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert d.severity == "warning" and d.loc is not None and d.loc.line == line
    assert "--tensor-parallel-size $(TP_SIZE)" in d.message and "not sized" in d.message
    assert "engine default is assumed" not in d.message
    # no capacity finding is made on a guessed layout
    assert not [d for d in result.diagnostics if d.rule.startswith("KV1")]
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--require-sizing", str(path)])
    assert r.exit_code == 1, r.output
    assert "not sized: parallel size unknown 1" in r.stdout


def test_an_unresolved_max_model_len_still_assumes_the_default(tmp_path: Path) -> None:
    """Only the layout sizes block sizing: an unresolved --max-model-len keeps its info note."""
    text = REAL.read_text().replace('- "262144"', '- "$(MAX_LEN)"')
    p = tmp_path / "d.yaml"
    p.write_text(text)
    result = run_check([str(p)], Options(allow_hub=False))
    (cr,) = result.containers
    assert sizing_of(cr) == "plan"
    (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert d.severity == "info" and "engine default is assumed" in d.message


def test_sglang_tp_in_a_script_and_tgi_num_shard_from_a_secret(tmp_path: Path) -> None:
    sglang = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: sglang
spec:
  replicas: 1
  selector:
    matchLabels: {app: sglang}
  template:
    metadata:
      labels: {app: sglang}
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:v0.5.5
        command: ["bash", "-c"]
        args:
        - python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp ${TP} --port 30000
        env:
        - name: TP
          valueFrom:
            fieldRef: {fieldPath: "metadata.annotations['tp']"}
        resources:
          limits:
            nvidia.com/gpu: 2
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
"""
    tgi = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: tgi
spec:
  replicas: 1
  selector:
    matchLabels: {app: tgi}
  template:
    metadata:
      labels: {app: tgi}
    spec:
      containers:
      - name: tgi
        image: ghcr.io/huggingface/text-generation-inference:3.3.6
        args: ["--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
        env:
        - name: NUM_SHARD
          valueFrom:
            secretKeyRef: {name: s, key: n}
        resources:
          limits:
            nvidia.com/gpu: 2
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
"""
    for name, text, said, line in (
        ("s.yaml", sglang, "--tp-size ${TP}", 18),
        ("t.yaml", tgi, "NUM_SHARD", 20),
    ):
        p = tmp_path / name
        p.write_text(text)
        result = run_check([str(p)], Options(allow_hub=False))
        (cr,) = result.containers
        assert sizing_of(cr) == "parallel size unknown", name
        (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
        assert d.severity == "warning" and said in d.message and d.loc is not None and d.loc.line == line
        # the same manifest with a literal size is sized
        lit = text.replace("--tp ${TP}", "--tp 2").replace(
            "valueFrom:\n            secretKeyRef: {name: s, key: n}", 'value: "2"'
        )
        p.write_text(lit)
        (cr,) = run_check([str(p)], Options(allow_hub=False)).containers
        assert sizing_of(cr) == "plan", name


def test_a_runtime_template_size_stays_an_info_note() -> None:
    """KServe's multi-node runtime (fixtures/load) passes --tensor-parallel-size=${TENSOR_PARALLEL_SIZE}, which
    KServe sets from the InferenceService's workerSpec: the template is "runtime template" (not sized on its own),
    and the note says the service sets the size instead of warning."""
    path = ROOT / "fixtures/load/kserve__kserve__config__runtimes__kserve-huggingfaceserver-multinode.yaml"
    result = run_check([str(path)], Options(allow_hub=False))
    notes = [d for d in result.diagnostics if d.rule == "KV503" and "-parallel-size" in d.message]
    assert notes and all(
        d.severity == "info" and "the service that uses this runtime" in d.message for d in notes
    )
    got = {sizing_of(cr) for cr in result.containers}
    assert "runtime template" in got and "parallel size unknown" not in got


def test_the_parser_told_of_a_runtime_template_says_the_service_sets_the_size() -> None:
    """Each engine's parser, told that the command is a runtime template's, notes an unresolved parallel size as
    the service's (info) rather than warning that the container is not sized; a ``--config`` file read for the
    template is told too. Not told, the same command gets the warning."""
    from kvlint.engines.options import LAYOUT_FROM_SERVICE, LAYOUT_UNSIZED
    from kvlint.engines.sglang import parse_sglang_argv
    from kvlint.engines.tgi import parse_tgi_argv
    from kvlint.engines.vllm import parse_vllm_argv

    def cfg_file(path: str) -> tuple[str, None]:
        return "pipeline-parallel-size: ${PP}\n", None

    cases = (
        (
            parse_vllm_argv,
            ["m", "--tensor-parallel-size", "${TP}", "--config", "/c.yaml"],
            {"config_loader": cfg_file},
        ),
        (parse_sglang_argv, ["--model-path", "m", "--tp-size", "$(TP)"], {}),
        (parse_tgi_argv, ["--model-id", "m", "--num-shard", "${N}"], {}),
    )
    for parse, argv, kw in cases:
        for template, end, severity in (
            (True, LAYOUT_FROM_SERVICE, "info"),
            (False, LAYOUT_UNSIZED, "warning"),
        ):
            cfg = parse(argv, runtime_template=template, **kw)
            notes = [f for f in cfg.findings if f.rule == "KV503"]
            assert len(notes) == (2 if parse is parse_vllm_argv else 1), (parse.__name__, notes)
            assert all(f.message.endswith(end) and f.severity == severity for f in notes), (
                parse.__name__,
                notes,
            )


def test_a_preset_that_names_its_model_leaves_its_sizes_to_the_service() -> None:
    """An LLMInferenceServiceConfig preset may name its model (fixtures/collected's kserve-llmisvc-e2e-gpt-oss
    pd-disagg preset: ``spec.model.name: RedHatAI/gpt-oss-20b``) and still leave ``--tensor-parallel-size
    {{ .Spec.Parallelism.Tensor }}`` to the LLMInferenceService KServe merges it under: each of its containers
    is "runtime template" (the KV503 note says the service sets the size), not "parallel size unknown", the
    reason of a size the user left unresolved in a workload that runs as written."""
    chart = ROOT / "fixtures/collected/charts/kserve-llmisvc-e2e-gpt-oss/llmisvc_config_pd_disagg.yaml"
    presets = (
        ROOT / "fixtures/collected/kserve__kserve__config__llmisvcconfig__config-llm-prefill-template.yaml"
    )
    result = run_check([str(chart), str(presets)], Options(allow_hub=False))
    mine = [cr for cr in result.containers if cr.workload.name == "llmisvc-config-pd-disagg"]
    assert mine and all(cr.model is not None and cr.serving.unresolved for cr in mine)
    notes = [d for d in result.diagnostics if d.rule == "KV503" and "--tensor-parallel-size" in d.message]
    assert notes and all(
        d.severity == "info" and "the service that uses this runtime" in d.message for d in notes
    )
    assert {sizing_of(cr) for cr in mine} == {"runtime template"}
