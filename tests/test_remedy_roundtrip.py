"""Capacity remedies applied to the manifest they were printed for: re-running kvlint must not trade the finding
for another capacity finding (KV103/KV105 for KV104, or KV404 for a move to more GPUs), unless the remedy text
says so explicitly. Also KV105's wording when kvlint's band reaches "no KV cache at all", and KV105 for TGI's
defaulted limits. Real pipeline runs on the bundled catalogue; every figure asserted comes from the run's own
plan or finding."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvlint.memory.calibration import BAND_REL, band_bytes
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.context import gib
from kvlint.types import CheckResult

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "rules"


def _first_doc(rule: str, engine: str) -> str:
    return (FIXTURES / rule / f"{engine}.yaml").read_text().split("\n---\n")[0]


def _run(tmp_path: Path, text: str, name: str) -> CheckResult:
    p = tmp_path / name
    p.write_text(text)
    return run_check([str(p)], Options(allow_hub=False))


def _rules(r: CheckResult) -> set[str]:
    return {d.rule for d in r.diagnostics}


def _only(r: CheckResult, rule: str):  # noqa: ANN202 - Diagnostic
    (d,) = [d for d in r.diagnostics if d.rule == rule]
    return d


def _set_arg(text: str, flag: str, value: str) -> str:
    """``text`` with ``flag`` set to ``value`` in the container's one-line args list (replaced or appended)."""
    m = re.search(rf'"{re.escape(flag)}", "[^"]*"', text)
    if m:
        return text.replace(m.group(0), f'"{flag}", "{value}"')
    return re.sub(r"(args: \[[^\]]*)\]", rf'\1, "{flag}", "{value}"]', text, count=1)


_SHM = (
    "          volumeMounts:\n            - {name: dshm, mountPath: /dev/shm}\n"
    "      volumes:\n        - {name: dshm, emptyDir: {medium: Memory}}\n"
)


def _apply(text: str, alternative: str) -> str:
    """One ``; or ``-separated alternative of a vLLM capacity fix, applied to the fixture text."""
    m = re.match(r"--([a-z-]+) (\S+)", alternative)
    assert m, alternative
    flag, value = f"--{m.group(1)}", m.group(2)
    out = _set_arg(text, flag, value)
    g = re.search(r"and (\d+) GPUs per pod", alternative)
    if g:
        out = out.replace("nvidia.com/gpu: 1", f"nvidia.com/gpu: {g.group(1)}")
    if "emptyDir {medium: Memory} mounted at /dev/shm" in alternative:
        out = out.rstrip("\n") + "\n" + _SHM
    return out


@pytest.mark.parametrize("rule", ["KV103", "KV105"])
def test_every_vllm_remedy_applied_leaves_no_capacity_finding_it_does_not_announce(
    tmp_path: Path, rule: str
) -> None:
    text = _first_doc(rule, "vllm")
    fix = _only(_run(tmp_path, text, "orig.yaml"), rule).fix
    alternatives = fix.split("; or ")
    assert any(a.startswith("--max-model-len") for a in alternatives)
    for i, alt in enumerate(alternatives):
        after = _rules(_run(tmp_path, _apply(text, alt), f"fixed{i}.yaml"))
        assert not {"KV103", "KV105", "KV404"} & after, (alt, after)
        announced = "KV104 then warns" in alt
        assert ("KV104" in after) == announced, (alt, after)


def test_kv103_length_remedy_reaches_kv104_minimum_when_one_exists(tmp_path: Path) -> None:
    """KV103's fixture: the proposed --max-model-len is aimed at KV104's min_concurrency (its concurrency is at
    least that figure, taken from the options), so applying it leaves neither KV103 nor KV104."""
    text = _first_doc("KV103", "vllm")
    fix = _only(_run(tmp_path, text, "orig.yaml"), "KV103").fix
    m = re.search(r"--max-model-len (\d+) fits \(([\d.]+)x", fix)
    assert m
    assert float(m.group(2)) >= Options().param("KV104", "min_concurrency")
    after = _run(tmp_path, _set_arg(text, "--max-model-len", m.group(1)), "fixed.yaml")
    assert not {"KV103", "KV104", "KV105"} & _rules(after)


def test_tp_remedy_names_dev_shm_and_it_is_needed(tmp_path: Path) -> None:
    """The TP remedy on a pod without a memory-backed /dev/shm says to add one: without it the moved pod is
    KV404, with it it is not."""
    text = _first_doc("KV103", "vllm")
    fix = _only(_run(tmp_path, text, "orig.yaml"), "KV103").fix
    (tp,) = [a for a in fix.split("; or ") if a.startswith("--tensor-parallel-size")]
    assert "emptyDir {medium: Memory} mounted at /dev/shm" in tp and "KV404" in tp
    bare = _set_arg(text, "--tensor-parallel-size", re.match(r"--tensor-parallel-size (\d+)", tp).group(1))  # type: ignore[union-attr]
    bare = bare.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2")
    assert "KV404" in _rules(_run(tmp_path, bare, "bare.yaml"))
    assert "KV404" not in _rules(_run(tmp_path, _apply(text, tp), "shm.yaml"))
    # a pod that already has it is not told again
    with_shm = text.rstrip("\n") + "\n" + _SHM
    fix2 = _only(_run(tmp_path, with_shm, "has.yaml"), "KV103").fix
    assert "--tensor-parallel-size" in fix2 and "/dev/shm" not in fix2


def test_kv105_band_reaching_no_kv_cache_is_said_in_words_with_its_dominant_term(tmp_path: Path) -> None:
    """Lower --gpu-memory-utilization until the plan's pessimistic KV cache is at or below zero while the
    optimistic end still holds a request: KV105 says 'no KV cache at all', never prints a clamped 0.00 GiB
    next to the negative figure of the equation, and names the largest heuristic term with its estimate."""
    base = _first_doc("KV105", "vllm")
    for hundredths in range(88, 75, -1):
        text = _set_arg(base, "--gpu-memory-utilization", f"{hundredths / 100:.2f}")
        text = _set_arg(text, "--max-model-len", "1024")
        (cr,) = _run(tmp_path, text, f"u{hundredths}.yaml").containers
        p = cr.plan
        if p is None or not (p.kv_cache_bytes_low <= 0 < p.kv_cache_bytes):
            continue
        length = max(1024, int(p.kv_cache_bytes_high // p.kv_bytes_per_token * 0.8) // 16 * 16)
        r = _run(tmp_path, _set_arg(text, "--max-model-len", str(length)), f"l{hundredths}.yaml")
        d = _only(r, "KV105")
        assert d.severity == "warning"
        text_all = d.message + " " + d.summary
        assert "no KV cache at all" in d.summary and "no KV cache at all" in d.message
        assert "0.00 GiB" not in text_all
        assert gib(p.kv_cache_bytes_low) in d.message  # the signed figure, as in the equation
        # each term's part of the pessimistic half of the band (kvlint.memory.calibration's formula); what is
        # left beyond it is the other sampler's activation
        half = p.kv_cache_bytes - p.kv_cache_bytes_low
        terms = {
            "activation": (p.activation_bytes, BAND_REL * p.activation_bytes),
            "non-torch": (p.non_torch_bytes, BAND_REL * p.non_torch_bytes),
            "CUDA graph": (p.cudagraph_bytes, BAND_REL * p.cudagraph_bytes),
        }
        rest = half - band_bytes(p.activation_bytes + p.non_torch_bytes + p.cudagraph_bytes)
        if rest > 0:
            terms["sampler"] = (rest, rest)
        largest = max(terms, key=lambda k: terms[k][1])
        assert f"{largest} estimate ({gib(terms[largest][0])})" in d.summary
        return
    pytest.fail("no utilization in 0.76-0.88 puts the pessimistic KV cache at or below zero")


def test_kv105_tgi_checks_a_set_max_input_tokens_when_max_total_tokens_is_defaulted(tmp_path: Path) -> None:
    """TGI 3.x with only --max-input-tokens: max_total_tokens comes from the KV blocks at warmup and must
    exceed max_input_tokens. A max_input_tokens between the band's low end and the predicted capacity is
    KV105; the remedy's value, applied, is not (nor KV601)."""
    text = re.sub(r',\s*"--max-total-tokens", "\d+"', "", _first_doc("KV105", "tgi"))
    assert '"--max-total-tokens"' not in text
    (cr,) = _run(tmp_path, text, "probe.yaml").containers
    d0 = cr.plan_detail
    low = d0.plan.num_blocks_low * d0.plan.block_size
    mid = (low + d0.max_batch_total_tokens) // 2
    r = _run(tmp_path, _set_arg(text, "--max-input-tokens", str(mid)), "mid.yaml")
    kv105 = _only(r, "KV105")
    assert f"max_input_tokens {mid:,} + 1" in kv105.message
    assert "`max_input_tokens` must be < `max_total_tokens`" in kv105.message
    m = re.search(r"--max-input-tokens (\d+)", kv105.fix)  # the option the container's args write
    assert m and int(m.group(1)) < low
    after = _run(tmp_path, _set_arg(text, "--max-input-tokens", m.group(1)), "fixed.yaml")
    assert not {"KV105", "KV601", "KV603"} & _rules(after)


def test_kv105_tgi_remedy_for_a_set_max_total_tokens_also_clears_kv104(tmp_path: Path) -> None:
    text = _first_doc("KV105", "tgi")
    fix = _only(_run(tmp_path, text, "orig.yaml"), "KV105").fix
    m = re.search(r"--max-total-tokens (\d+) and --max-input-tokens (\d+)", fix)
    assert m
    fixed = _set_arg(_set_arg(text, "--max-total-tokens", m.group(1)), "--max-input-tokens", m.group(2))
    after = _rules(_run(tmp_path, fixed, "fixed.yaml"))
    assert not {"KV105", "KV603", "KV601"} & after
    assert ("KV104" in after) == ("KV104 then warns" in fix)
