"""Behaviour that read the wording of kvlint's own messages, now typed (branch tidy29): the findings and results
carry what the code acts on. Real loader and pipeline, offline; fixtures/collected manifests."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parent.parent
DYNAMO = (
    ROOT
    / "fixtures"
    / "collected"
    / ("sjm446__ai-on-eks__blueprints__inference__nvidia-dynamo__vllm__vllm-disaggregated-default.yaml")
)


def test_dynamo_options_are_named_from_the_findings_not_read_back_from_their_messages(tmp_path: Path) -> None:
    """A Dynamo worker's options vLLM does not know are taken as Dynamo's own, named in KV504. They were cut out
    of each KV205's message (up to the first blank or ';'), so an option word holding a blank, which KV205 quotes
    whole, was named as its first half ("'--odd"). They come from the findings' option now."""
    line = '"python3 -m dynamo.vllm --model Qwen/Qwen3-0.6B --is-prefill-worker 2>&1 | tee /tmp/vllm-prefill.log"'
    text = DYNAMO.read_text(encoding="utf-8")
    assert line in text
    odd = line.replace("--is-prefill-worker", "--is-prefill-worker '--odd option'")
    path = tmp_path / "dynamo.yaml"
    path.write_text(text.replace(line, odd), encoding="utf-8")
    r = run_check([str(path)], Options(allow_hub=False))
    notes = [d for d in r.diagnostics if d.rule == "KV504" and "taken as Dynamo's own" in d.message]
    assert len(notes) == 1
    assert "--is-prefill-worker, '--odd option' are taken as Dynamo's own" in notes[0].message
    assert "'--odd option' are Dynamo options" in notes[0].fix
    assert not [d for d in r.diagnostics if d.rule == "KV205"]  # taken as Dynamo's, not reported as vLLM's


def test_capacity_cells_read_the_plans_refusal_and_fallback_not_its_notes() -> None:
    """``kvlint plan --compare/--sweep`` call a cell ``refused`` when the max-model-len is above the length vLLM
    derives (KV201), and say when vLLM 0.8 - 0.10 runs its V0 engine. Both were found by the wording of the plan's
    notes (an ending, a prefix); the plan carries them now. A cell whose notes say neither is still judged by
    them."""
    import dataclasses

    from kvlint.capacity.context import cell_verdict, plan_detail, resolve
    from kvlint.options import Options

    opts = Options(accelerator="a100-80gb", engine_version="0.10.0", allow_hub=False)
    ctx = resolve(["vllm", "serve", "google/gemma-3-27b-it", "--max-model-len", "32768"], opts)
    acc = ctx.accelerator
    assert acc is not None
    long = plan_detail(ctx, acc, max_model_len=10**7)
    assert long.length_refused is not None and long.length_refused.startswith(
        "--max-model-len 10000000 exceeds"
    )
    fp8 = plan_detail(ctx, acc, kv_cache_dtype="fp8")
    assert fp8.plan.era == "v0" and fp8.v0_fallback == "--kv-cache-dtype fp8 unsupported by V1 on this GPU"
    for detail, changes in ((long, {"max_model_len": 10**7}), (fp8, {"kv_cache_dtype": "fp8"})):
        verdict = cell_verdict(ctx, acc, detail, **changes)
        silent = dataclasses.replace(detail, plan=dataclasses.replace(detail.plan, assumptions=()))
        assert cell_verdict(ctx, acc, silent, **changes) == verdict
    assert cell_verdict(ctx, acc, long, max_model_len=10**7)[0::2] == ("refused", "KV201")
    assert (
        "vLLM runs its V0 engine here (--kv-cache-dtype fp8 unsupported by V1 on this GPU)"
        in (cell_verdict(ctx, acc, fp8, kv_cache_dtype="fp8")[1])
    )
    auto = plan_detail(ctx, acc)
    assert auto.length_refused is None and auto.v0_fallback is None


def test_kv502_tells_a_refused_config_by_what_resolution_found_not_by_the_references_words(
    tmp_path: Path,
) -> None:
    """KV502 says "found but refused" or "not a decoder LLM" when model resolution read a config and refused it;
    it read that back from the resolution's message, which quotes the model reference: a path naming no config
    but worded like a refusal got the refusal's finding (with a garbled path), or was called a 'bert' model."""
    pod = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}\n      containers:\n"
        '        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n          args: ["--model={ref}"]\n'
        "          resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )
    for ref in ("/models/x was read but refused: y", "/models/model_type 'bert' is not a decoder-only LLM"):
        path = tmp_path / "m.yaml"
        path.write_text(pod.format(ref=ref), encoding="utf-8")
        r = run_check([str(path)], Options(allow_hub=False))
        (cr,) = r.containers
        assert cr.model is None and cr.model_refusal is None
        (d,) = [d for d in r.diagnostics if d.rule == "KV502"]
        assert d.message.startswith(f"no config.json for model '{ref}'"), d.message


def test_a_refused_config_is_carried_with_its_path_and_reason(tmp_path: Path) -> None:
    """A config that is read and refused (malformed JSON; an encoder) reaches KV502 as a ConfigRefusal."""
    import json

    from kvlint.types import ConfigRefusal

    bad = tmp_path / "models" / "acme--bad"
    bad.mkdir(parents=True)
    (bad / "config.json").write_text('{"architectures": ["LlamaForCausalLM"],', encoding="utf-8")
    bert = tmp_path / "models" / "acme--enc"
    bert.mkdir(parents=True)
    (bert / "config.json").write_text(
        json.dumps({"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 8}), encoding="utf-8"
    )
    opts = Options(allow_hub=False, accelerator="h100", model_dirs=(str(tmp_path / "models"),))
    for model, expect in (("acme/bad", "malformed JSON"), ("acme/enc", "bert")):
        path = tmp_path / "m.yaml"
        path.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
            f"      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
            f"          args: [--model={model}]\n          resources: {{limits: {{nvidia.com/gpu: 1}}}}\n",
            encoding="utf-8",
        )
        r = run_check([str(path)], opts)
        (cr,) = r.containers
        refusal = cr.model_refusal
        assert isinstance(refusal, ConfigRefusal) and refusal.path.startswith(str(tmp_path / "models"))
        (d,) = [d for d in r.diagnostics if d.rule == "KV502"]
        if expect == "bert":
            assert (refusal.model_type, refusal.encoder_decoder) == ("bert", False)
            assert "is a 'bert' model, not a decoder LLM" in d.message
        else:
            assert refusal.model_type is None and refusal.why.startswith("malformed JSON")
            assert "was found but refused" in d.message and "malformed JSON" in d.message


_SCRIPT_POD = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: scr}
data:
  start.sh: |
    #!/bin/sh
    exec vllm serve meta-llama/Llama-3.1-8B-Instruct
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          command: ["DIR/start.sh"]
          volumeMounts: [{name: scr, mountPath: "DIR"}]
          resources: {limits: {nvidia.com/gpu: 1}}
      volumes: [{name: scr, configMap: {name: scr}}]
"""


def _kv503(path: Path) -> list:
    return [d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"]


def test_a_script_past_kvlints_read_budget_is_unread_not_a_container_that_never_starts(
    tmp_path: Path, monkeypatch
) -> None:
    """Past the characters of mounted scripts one run reads (MOUNTED_SCRIPT_CHARS), a container's script is not
    read. That was reported as the container never starting: a KV503 error with the fix for a script without the
    execute bit. It is a warning that kvlint did not read the command, with a fix that says so."""
    from kvlint.engines import command

    path = tmp_path / "m.yaml"
    path.write_text(
        _SCRIPT_POD.replace("DIR", "/scripts").replace('["/scripts/start.sh"]', '["sh", "/scripts/start.sh"]')
    )
    monkeypatch.setattr(command, "_PROCESS_MOUNTED_LEFT", [10])
    (d,) = _kv503(path)
    assert "which kvlint did not read" in d.message and "the most it reads" in d.message
    assert (
        d.severity == "warning"
        and "defaultMode" not in d.fix
        and "nothing to change in the container" in d.fix
    )
