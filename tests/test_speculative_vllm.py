"""Speculative decoding on vLLM: the CUDA-graph capture sizes widened by the speculative tokens (from 0.13.0),
``--speculative-config`` counts vLLM refuses, and the note when a drafter model is not named.

Expected figures come from kvlint's own model (a plan without speculation at the equivalent sequence count) or
from the engine's start-up log (gt-291, ``fixtures/logs/gt-291.log``), never typed in.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kvlint.engines import parse_command_line
from kvlint.memory import calibration as cal
from kvlint.memory.versions import parse_version
from kvlint.memory.vllm import (
    VllmSettings,
    decode_query_len,
    plan_vllm,
    plan_vllm_detailed,
    settings_from_config,
)
from kvlint.models import resolve_model
from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "plan" / "models"
GiB = 1 << 30
H100 = int(79.19 * GiB)
KW = dict(gpu_name="NVIDIA H100", compute_capability="9.0")
NGRAM6 = dict(num_speculative_tokens=6, speculative_method="ngram")


def _llama():
    return resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)


def test_speculative_tokens_widen_the_cuda_graph_estimate_from_0_13() -> None:
    """vLLM 0.13.0+ captures up to min(2 x max_num_seqs x (1 + k), 512) tokens with k speculative tokens. Before,
    kvlint priced the graphs of 24 sequences at 48 tokens whatever k; now 24 sequences with 6 speculative tokens
    capture the piecewise graphs of 168 sequences without them (the same 336-token capture), and FULL decode graphs
    for the sizes a 7-token decode step has (7 to 168 tokens), every size rounded up to a multiple of 7
    (CompilationConfig.adjust_cudagraph_sizes_for_spec_decode), as cudagraph_count counts them."""
    m = _llama()
    spec = plan_vllm(VllmSettings(version="0.20.0", max_num_seqs=24, **NGRAM6), m, H100, **KW)
    plain = plan_vllm(VllmSettings(version="0.20.0", max_num_seqs=24), m, H100, **KW)
    wide = plan_vllm(VllmSettings(version="0.20.0", max_num_seqs=24 * 7), m, H100, **KW)
    assert plain.cudagraph_bytes > 0
    assert cal.cudagraph_capture_tokens(24, 7) == cal.cudagraph_capture_tokens(24 * 7) == 336
    v = parse_version("0.20.0")
    # the 40 sizes rounded up to multiples of 7 (38), and FULL decode graphs for those from 7 to 168 (22)
    assert cal.cudagraph_count(336, 24, 7, v) == 38 + 22
    assert wide.cudagraph_bytes > spec.cudagraph_bytes > plain.cudagraph_bytes
    assert spec.kv_cache_bytes < plain.kv_cache_bytes
    # the 512-token ceiling holds: 64 sequences x 7 tokens x 2 capture what 256 plain sequences capture
    capped = plan_vllm(VllmSettings(version="0.20.0", max_num_seqs=64, **NGRAM6), m, H100, **KW)
    assert cal.cudagraph_capture_tokens(64, 7) == cal.cudagraph_capture_tokens(256) == 512
    assert capped.cudagraph_bytes == cal.cudagraph_bytes(32, 64, 7, capped.max_num_batched_tokens, None, v)
    notes = "\n".join(spec.assumptions)
    assert "widen each decode step to 7 tokens" in notes and "= 336 tokens" in notes
    assert "drafter's own graphs" not in notes  # ngram drafts without a model


def test_releases_before_0_13_do_not_widen_the_captures() -> None:
    """vLLM 0.12.0's _set_cudagraph_sizes ignores the speculative tokens: the plan is the plain one, and says so."""
    v12 = parse_version("0.12.0")
    assert decode_query_len(VllmSettings(**NGRAM6), v12) == 1
    assert decode_query_len(VllmSettings(**NGRAM6), parse_version("0.13.0")) == 7
    assert decode_query_len(VllmSettings(), parse_version("0.34.0")) == 1
    m = _llama()
    spec = plan_vllm(VllmSettings(version="0.12.0", max_num_seqs=24, **NGRAM6), m, H100, **KW)
    plain = plan_vllm(VllmSettings(version="0.12.0", max_num_seqs=24), m, H100, **KW)
    assert spec.kv_cache_bytes == plain.kv_cache_bytes
    assert any("whatever the 6 speculative token(s)" in a for a in spec.assumptions)
    assert not any("speculative" in a for a in plain.assumptions)
    # --enforce-eager: no graphs, no capture note
    eager = plan_vllm(VllmSettings(version="0.20.0", enforce_eager=True, **NGRAM6), m, H100, **KW)
    assert eager.cudagraph_bytes == 0 and not any("CUDA graphs: 6" in a for a in eager.assumptions)


def _gt291() -> tuple[dict, str]:
    cases = yaml.safe_load((ROOT / "bench" / "groundtruth" / "cases.yaml").read_text())
    case = next(c for c in cases if c["id"] == "gt-291")
    return case, (ROOT / "fixtures" / "logs" / "gt-291.log").read_text()


def test_gt291_largest_capture_size_is_the_one_vllm_printed() -> None:
    """gt-291 (vLLM 0.20.2, DFlash with 6 speculative tokens, max_num_seqs 24) printed 'Profiling CUDA graph
    memory: PIECEWISE=38 (largest=336)'. kvlint's capture size for the case's own flags is that largest size
    (48 before), and its CUDA-graph estimate for the case moves up toward the 'Estimated CUDA graph memory' printed."""
    case, log = _gt291()
    largest = int(re.search(r"PIECEWISE=\d+ \(largest=(\d+)\)", log).group(1))
    printed_gib = float(re.search(r"Estimated CUDA graph memory: ([\d.]+) GiB", log).group(1))
    argv = ["vllm", "serve", "m", "--max-num-seqs", str(case["max_num_seqs"])]
    for flag in case["other_flags"]:
        argv += flag.split(" ", 1)  # the option, then its value as one word (a JSON with spaces)
    cfg = parse_command_line(argv)
    assert not [f for f in cfg.findings if f.rule == "KV206"]
    s = settings_from_config(cfg)
    q = decode_query_len(s, parse_version(case["engine_version"].split()[0]))
    assert cal.cudagraph_capture_tokens(case["max_num_seqs"], q) == largest
    # the graph counts it printed: sizes rounded up to multiples of q = 7 (review47A; memory47 counted 40 + 21)
    pw, full = (int(x) for x in re.search(r"PIECEWISE=(\d+) .*FULL=(\d+)", log).groups())
    v = parse_version(case["engine_version"].split()[0])
    assert cal.cudagraph_count(largest, case["max_num_seqs"], q, v) == pw + full
    assert cal.cudagraph_capture_tokens(case["max_num_seqs"]) < largest  # the old capture
    # the estimate on a stand-in model grows with the capture size, and stays under what vLLM printed
    before = cal.cudagraph_bytes(32, case["max_num_seqs"])  # Llama-3.1-8B's 32 layers stand in
    after = cal.cudagraph_bytes(32, case["max_num_seqs"], q)
    assert before < after < printed_gib * GiB


def test_a_drafter_that_is_not_named_is_said_to_be_unplanned() -> None:
    """'{"method": "dflash", "num_speculative_tokens": 6}' (gt-291's config) drafts with a separate model the
    config does not name: the plan says its weights, KV layers and graphs are not counted (it said nothing)."""
    m = _llama()
    d = plan_vllm_detailed(
        VllmSettings(version="0.20.0", num_speculative_tokens=6, speculative_method="dflash"), m, H100, **KW
    )
    notes = "\n".join(d.plan.assumptions)
    assert "speculative method 'dflash' drafts with a separate model" in notes
    assert "the drafter's own graphs are not counted" in notes
    for quiet in ("ngram", "suffix", "mtp", "deepseek_mtp"):
        p = plan_vllm(
            VllmSettings(version="0.20.0", num_speculative_tokens=2, speculative_method=quiet), m, H100, **KW
        )
        assert not any("drafts with a separate model" in a for a in p.assumptions), quiet


@pytest.mark.parametrize(
    ("count", "why"),
    [
        ("0", "greater than zero"),
        ("-3", "greater than zero"),
        ("2.5", "whole number"),
        ('"six"', "whole number"),
        ("false", "greater than zero"),  # pydantic's lax int reads false as 0
        ('"6.5"', "whole number"),
        ('"1__0"', "whole number"),
        ('"6e0"', "whole number"),
        ("100000", "absurd"),
    ],
)
def test_speculative_counts_vllm_refuses_are_kv206_and_not_planned(count: str, why: str) -> None:
    """vLLM's SpeculativeConfig refuses num_speculative_tokens <= 0 or not an integer (Field(gt=0)); kvlint took
    the count as given (a negative count planned as is). Now each is a KV206 error and the plan has no
    speculation; an absurd count is refused the same way."""
    sc = '{"method": "ngram", "prompt_lookup_max": 3, "num_speculative_tokens": ' + count + "}"
    cfg = parse_command_line(["vllm", "serve", "m", "--speculative-config", sc])
    found = [f for f in cfg.findings if f.rule == "KV206"]
    assert [(getattr(f, "option", ""), f.severity) for f in found] == [("--speculative-config", "error")]
    assert why in found[0].message
    assert "speculative_config" not in cfg.flags
    assert settings_from_config(cfg).num_speculative_tokens == 0


def test_speculative_counts_vllm_accepts_are_not_findings() -> None:
    for sc in (
        '{"method": "ngram", "prompt_lookup_max": 3, "num_speculative_tokens": 6}',
        '{"method": "ngram", "prompt_lookup_max": 3, "num_speculative_tokens": 6.0}',
        '{"method": "suffix"}',  # suffix decoding sets its own count
        '{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3-Instruct-8B"}',  # a draft may carry n_predict
    ):
        cfg = parse_command_line(["vllm", "serve", "m", "--speculative-config", sc])
        assert not [f for f in cfg.findings if f.rule == "KV206"], sc


@pytest.mark.parametrize(
    ("count", "n"), [("true", 1), ('"6"', 6), ('" +6 "', 6), ('"6.000"', 6), ('"1_0"', 10), ('"06"', 6)]
)
def test_speculative_counts_pydantic_reads_as_integers_are_planned(count: str, n: int) -> None:
    """SpeculativeConfig is a pydantic dataclass (vllm@0.13.0:vllm/config/speculative.py) whose lax int takes
    true as 1 and a string spelling a whole number with a sign, blanks, single underscores or a zero fraction (what
    pydantic 2.14's TypeAdapter(int) accepts); vLLM starts with these, so kvlint plans them. 'true' and '"+6"'
    were KV206 errors before."""
    sc = '{"method": "ngram", "prompt_lookup_max": 3, "num_speculative_tokens": ' + count + "}"
    cfg = parse_command_line(["vllm", "serve", "m", "--speculative-config", sc])
    assert not [f for f in cfg.findings if f.rule == "KV206"], count
    assert settings_from_config(cfg).num_speculative_tokens == n


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: spec
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.20.0
          args:
            - --model=meta-llama/Llama-3.1-8B
            - --speculative-config
            - '{"method": "ngram", "prompt_lookup_max": 3, "num_speculative_tokens": -1}'
"""


def test_refused_count_in_a_manifest_points_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(MANIFEST)
    res = run_check([str(path)], Options(allow_hub=False))
    found = [d for d in res.diagnostics if d.rule == "KV206"]
    assert len(found) == 1 and found[0].loc is not None
    line = next(i for i, t in enumerate(MANIFEST.splitlines(), 1) if "num_speculative_tokens" in t)
    assert (Path(found[0].loc.file).name, found[0].loc.line) == ("spec.yaml", line)
    assert path.read_text() == MANIFEST  # never written


def test_capture_size_is_capped_by_max_num_batched_tokens() -> None:
    """vLLM 0.13.0's _set_cudagraph_sizes takes ``min(max_num_batched_tokens, max_cudagraph_capture_size)``: with
    256 sequences, 3 speculative tokens and --max-num-batched-tokens 384, the largest capture is 384 tokens, not 512
    (0.20.0: the estimate is deducted from the KV budget).
    The plan's graph estimate and its note follow the cap (both used 512 before)."""
    assert cal.cudagraph_capture_tokens(256, 4) == 512
    assert cal.cudagraph_capture_tokens(256, 4, 384) == 384
    assert cal.cudagraph_capture_tokens(100, 1, 150) == 150  # the cap holds without speculation too
    assert cal.cudagraph_capture_tokens(100, 1, 0) == 200  # no scheduler value: no cap
    m = _llama()
    spec = {"num_speculative_tokens": 3, "speculative_method": "ngram"}
    capped = plan_vllm_detailed(
        VllmSettings(version="0.20.0", max_num_seqs=256, max_num_batched_tokens=384, **spec), m, H100, **KW
    )
    assert capped.plan.max_num_batched_tokens == 384
    wide = plan_vllm_detailed(
        VllmSettings(version="0.20.0", max_num_seqs=256, max_num_batched_tokens=8192, **spec), m, H100, **KW
    )
    assert capped.plan.cudagraph_bytes < wide.plan.cudagraph_bytes
    notes = "\n".join(capped.plan.assumptions)
    assert "min(2 x 256 x 4, 512, 384) = 384 tokens (no more than max_num_batched_tokens)" in notes
    assert "= 512 tokens (VllmConfig" in "\n".join(wide.plan.assumptions)


@pytest.mark.parametrize(
    "sc",
    [
        '{"method": "mtp"}',
        '{"method": "deepseek_mtp"}',
        '{"method": "eagle"}',
        '{"method": "ngram", "prompt_lookup_max": 3}',
    ],
)
def test_no_count_and_no_draft_is_kv206_with_vllms_text(sc: str) -> None:
    """Without num_speculative_tokens vLLM sets up no draft for a method (the MTP draft from the target included:
    ``if self.model is None and self.num_speculative_tokens is not None``), so no n_predict can supply the count and
    SpeculativeConfig._verify_args refuses it (0.9.2 - 0.34.0). kvlint took '{"method": "mtp"}' as accepted."""
    from kvlint.engines.vllm import SPEC_COUNT_REQUIRED

    cfg = parse_command_line(["vllm", "serve", "m", "--speculative-config", sc])
    found = [f for f in cfg.findings if f.rule == "KV206"]
    assert [(getattr(f, "option", ""), f.severity) for f in found] == [("--speculative-config", "error")]
    assert SPEC_COUNT_REQUIRED in found[0].message
    assert "speculative_config" not in cfg.flags
    for version, refused in (("0.9.2", True), ("0.34.0", True), ("0.8.5", False)):  # read from 0.9.2 on
        cfg = parse_command_line(["vllm", "serve", "m", "--speculative-config", sc], version)
        assert any(f.rule == "KV206" for f in cfg.findings) == refused, version


STEP = "stepfun-ai/Step-3.7-Flash"  # num_nextn_predict_layers 3: vLLM's n_predict for its MTP draft


def test_an_mtp_count_the_layers_cannot_reuse_is_refused() -> None:
    """vLLM rewrites the target's config for its MTP draft with n_predict = the MTP layers and refuses a count above
    n_predict that is not a multiple of it ("num_speculative_tokens:K must be divisible by n_predict=N"). A count up
    to N or a multiple of it is planned."""
    from kvlint.memory.vllm import SPEC_REFUSED, PlanError, model_facts, mtp_count_refusal

    m = resolve_model(STEP, allow_hub=False)
    n = model_facts(m).mtp_config_layers
    assert n > 1
    for k, refused in ((n + 1, True), (2 * n + 1, True), (n, False), (n - 1, False), (2 * n, False)):
        s = VllmSettings(
            version="0.34.0", num_speculative_tokens=k, speculative_method="mtp", tensor_parallel_size=8
        )
        why = mtp_count_refusal(s, model_facts(m))
        assert (why is not None) == refused, k
        if refused:
            assert why.startswith(SPEC_REFUSED + " ")
            assert f"num_speculative_tokens:{k} must be divisible by n_predict={n}" in why
            with pytest.raises(PlanError):
                plan_vllm_detailed(s, m, 141 * GiB, **KW)
        else:
            assert plan_vllm_detailed(s, m, 141 * GiB, **KW).plan.kv_cache_bytes > 0
    # a named draft model is not the target's MTP head: no such check
    named = VllmSettings(
        version="0.34.0",
        num_speculative_tokens=n + 1,
        speculative_method="mtp",
        speculative_model_id="x/draft",
    )
    assert mtp_count_refusal(named, model_facts(m)) is None


STEP_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: step
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-H200
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.34.0
          args:
            - --model=stepfun-ai/Step-3.7-Flash
            - --tensor-parallel-size=8
            - --speculative-config
            - '{"method": "mtp", "num_speculative_tokens": COUNT}'
          resources:
            limits:
              nvidia.com/gpu: 8
"""


def test_mtp_count_refusal_is_an_error_at_the_speculative_config_line(tmp_path: Path) -> None:
    from kvlint.memory.vllm import model_facts

    n = model_facts(resolve_model(STEP, allow_hub=False)).mtp_config_layers
    text = STEP_MANIFEST.replace("COUNT", str(n + 1))
    path = tmp_path / "step.yaml"
    path.write_text(text)
    res = run_check([str(path)], Options(allow_hub=False))
    found = [d for d in res.diagnostics if "must be divisible by n_predict" in d.message]
    assert len(found) == 1 and found[0].severity == "error" and found[0].loc is not None
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "num_speculative_tokens" in t)
    assert found[0].loc.line == line
    ok = tmp_path / "ok.yaml"
    ok.write_text(STEP_MANIFEST.replace("COUNT", str(2 * n)))
    res = run_check([str(ok)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if "n_predict" in d.message]
    assert path.read_text() == text  # never written
