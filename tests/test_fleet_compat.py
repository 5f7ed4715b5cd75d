"""Where would it fit, honestly: the fleet verdict (KV501) and ``kvlint plan --compare``/``--sweep`` never call a GPU
a fit where the engine refuses to start there, SGLang's short KV pool is ``risky`` (it starts), band-edge cells are
``risky``, and a MIG slice request is planned on the slice.

Every expected verdict is derived from the code paths the user runs: the same manifest checked with
``--accelerator`` (the hardware rules KV301/KV302/KV304 and the SGLang rules), the plan objects
(:func:`kvlint.memory.stage.fit_assessment`, :attr:`VllmPlanDetail.verdict`) and the catalogue's MIG table.
The manifests written here are small test inputs; ``fixtures/crds/kaito-inferenceset-mig.yaml`` is a copy of
a public KAITO example (fixtures/crds/SOURCE.md), ``fixtures/collected/bhajian__...`` a collected manifest
(fixtures/collected/INDEX.csv).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.accelerators import lookup
from kvlint.accelerators import registry as cat
from kvlint.accelerators.site import DEFAULT_FLEET, Site
from kvlint.capacity.cli import run_plan_extras
from kvlint.capacity.compare import FITS_TEXT, compare, render_compare
from kvlint.capacity.context import resolve
from kvlint.capacity.plan_command import plan_command
from kvlint.capacity.sweep import render_sweep, sweep
from kvlint.cli import main
from kvlint.config import apply_config, parse_config
from kvlint.memory.compat import fp8_kv_support_on
from kvlint.memory.sglang import SglangPlanDetail, pool_below_context_behaviour, warns_pool_below_context
from kvlint.memory.stage import fit_assessment
from kvlint.memory.vllm import plan_vllm_detailed
from kvlint.options import Options
from kvlint.pipeline import run_check

ROOT = Path(__file__).resolve().parents[1]
AKS = ROOT / "fixtures" / "collected" / "bhajian__redhat__llm-d-vllm-aks__manifest__vllm-redhat-llama8b.yaml"
KAITO_MIG = ROOT / "fixtures" / "crds" / "kaito-inferenceset-mig.yaml"
HARDWARE = ("KV304", "KV301", "KV302")  # the order in which kvlint.memory.compat.startup_refusal tests them

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  template:
    spec:
      containers:
        - name: engine
          image: {image}
          command: {command}
          resources:
            limits: {{{resource}: 1}}
"""


def _manifest(tmp_path: Path, name: str, image: str, command: list[str]) -> Path:
    path = tmp_path / f"{name}.yaml"
    # a ROCm image requests AMD's GPU resource: with nvidia.com/gpu it lands on an NVIDIA node and never starts
    # (KV304, kvlint.engines.images.gpu_build_on_other_accelerator), so there is no fleet to plan
    resource = "amd.com/gpu" if image.startswith("rocm/") else "nvidia.com/gpu"
    path.write_text(DEPLOYMENT.format(name=name, image=image, command=json.dumps(command), resource=resource))
    return path


def _vllm_fp8(tmp_path: Path, image: str = "vllm/vllm-openai:v0.11.0") -> Path:
    """A vLLM pod that names no GPU: a 1.5B model in float16 with an fp8 KV cache."""
    return _manifest(
        tmp_path,
        "fp8kv",
        image,
        [
            "vllm",
            "serve",
            "Qwen/Qwen2.5-1.5B-Instruct",
            "--dtype",
            "half",
            "--kv-cache-dtype",
            "fp8",
            "--max-model-len",
            "8192",
        ],
    )


def _sglang(tmp_path: Path, tag: str, *extra: str) -> Path:
    return _manifest(
        tmp_path,
        "sg",
        f"lmsysorg/sglang:{tag}",
        [
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--mem-fraction-static",
            "0.85",
            *extra,
        ],
    )


def _options(tmp_path: Path, config: str = "", **kw: object) -> Options:
    path = tmp_path / ".kvlint.yaml"
    path.write_text(config)
    return apply_config(Options(allow_hub=False, **kw), parse_config(config, str(path)))  # type: ignore[arg-type]


def _kv501(result) -> str:
    return next(d.message for d in result.diagnostics if d.rule == "KV501")


def _direct(path: Path, options: Options, acc_id: str) -> dict[str, str]:
    """Rule -> severity of the same manifest checked on ``acc_id`` (``--accelerator``)."""
    direct = run_check([str(path)], dataclasses.replace(options, accelerator=acc_id))
    return {d.rule: d.severity for d in direct.diagnostics}


# --------------------------------------------------------------------------------------------------
# (1) the fleet verdict uses the hardware rules' tests


def _assert_fleet_matches_rules(path: Path, options: Options) -> list:
    """Every fleet entry is refused by rule R exactly when the same manifest on that GPU gets R as an error (the
    first of KV304, KV301, KV302); a refused entry is ``fails`` and KV501 quotes its reason; any other entry keeps
    the memory model's verdict."""
    result = run_check([str(path)], options)
    (cr,) = result.containers
    assert cr.fleet
    message = _kv501(result)
    for e in cr.fleet:
        rules = _direct(path, options, e.accelerator.id)
        expected = next((r for r in HARDWARE if rules.get(r) == "error"), None)
        likely = (
            "KV302" if rules.get("KV302") == "warning" else None
        )  # "most likely fails" (ROCm without fp8)
        assert e.refused_by == (expected or likely), (e.accelerator.id, rules)
        if expected is not None:
            assert e.verdict == "fails" and e.reason and e.reason in " ".join(message.split())
        elif likely is not None:
            assert e.detail is not None and e.reason
            memory = fit_assessment(e.detail)[0]
            assert e.verdict == ("fails" if memory == "fails" else "risky")
        elif e.detail is not None:
            assert (e.verdict, e.reason) == fit_assessment(e.detail)
    return list(cr.fleet)


def test_fp8_kv_cache_on_t4_fails_with_the_reason_and_fits_on_l4(tmp_path: Path) -> None:
    path = _vllm_fp8(tmp_path)
    options = _options(tmp_path, "fleet: [t4, l4, a100-80gb, h100]\n")
    entries = {e.accelerator.id: e for e in _assert_fleet_matches_rules(path, options)}
    t4, l4 = entries["nvidia-t4"], entries["nvidia-l4"]
    # the memory model alone would call the T4 a fit: only the KV302 test makes it fail
    assert t4.detail is not None and fit_assessment(t4.detail)[0] == "fits"
    assert t4.verdict == "fails" and t4.refused_by == "KV302"
    (cr,) = run_check([str(path)], options).containers
    sup = fp8_kv_support_on(cr.serving, cr.model, lookup("t4"), "fp8", t4.detail.plan.dtype)  # type: ignore[arg-type]
    assert sup.outcome == "raises" and sup.why in (t4.reason or "") and "Tesla T4" in (t4.reason or "")
    assert l4.verdict != "fails" and l4.refused_by is None
    # the JSON report carries the reason and the rule, beside the fields it had
    from kvlint.report.jsonout import render_json

    fleet = json.loads(render_json(run_check([str(path)], options)))["workloads"][0]["fleet"]
    t4_json = next(f for f in fleet if f["accelerator"] == "nvidia-t4")
    assert (
        t4_json["verdict"] == "fails" and t4_json["refused_by"] == "KV302" and t4_json["reason"] == t4.reason
    )
    assert {"kv_tokens", "max_concurrency", "error"} <= set(t4_json)


def test_bf16_and_fp8_of_a_collected_manifest(tmp_path: Path) -> None:
    # --dtype bfloat16 and --kv-cache-dtype fp8 (RHAIIS image); the default fleet
    options = _options(
        tmp_path, "model_paths: {RedHatAI/Llama-3.1-8B-Instruct: meta-llama/Llama-3.1-8B-Instruct}\n"
    )
    entries = _assert_fleet_matches_rules(AKS, options)
    assert [e.accelerator.id for e in entries] == list(DEFAULT_FLEET)
    refused = [e for e in entries if e.refused_by]
    assert refused and all(e.refused_by == "KV301" for e in refused)
    assert any(e.verdict == "fits" for e in entries)


@pytest.mark.parametrize(
    ("image", "refused"),
    [
        ("vllm/vllm-openai:v0.11.0", {"amd-instinct-mi300x", "google-tpu-v5e"}),
        ("rocm/vllm:latest", {"nvidia-l4"}),
    ],
)
def test_an_image_for_another_platform_fails_on_that_accelerator(
    tmp_path: Path, image: str, refused: set[str]
) -> None:
    path = _vllm_fp8(tmp_path, image)
    options = _options(tmp_path, "fleet: [mi300x, tpu-v5e, l4]\n")
    entries = _assert_fleet_matches_rules(path, options)
    kv304 = {e.accelerator.id for e in entries if e.refused_by == "KV304"}
    assert kv304 == refused
    assert not any(e.verdict == "fits" for e in entries if e.accelerator.id in refused)


def test_a_likely_start_up_failure_is_risky(tmp_path: Path) -> None:
    # an fp8 KV cache on a ROCm GPU without fp8 hardware: KV302 as a warning ("most likely fails")
    path = _vllm_fp8(tmp_path, "rocm/vllm:latest")
    entries = _assert_fleet_matches_rules(path, _options(tmp_path, "fleet: [mi250x, mi300x]\n"))
    likely = [e for e in entries if e.refused_by == "KV302"]
    assert likely and all(e.verdict == "risky" and "most likely" in (e.reason or "") for e in likely)
    assert any(e.refused_by is None for e in entries)


# --------------------------------------------------------------------------------------------------
# (2) SGLang: a pool below context_length is risky (the engine starts); too small to start is fails


@pytest.mark.parametrize("tag", ["v0.4.6.post1-cu124", "v0.5.23"])
def test_sglang_pool_below_context_is_risky_with_the_release_behaviour(tmp_path: Path, tag: str) -> None:
    path = _sglang(tmp_path, tag)
    options = _options(tmp_path, "fleet: [l4, a10g]\n")
    result = run_check([str(path)], options)
    (cr,) = result.containers
    short = [
        e
        for e in cr.fleet
        if isinstance(e.detail, SglangPlanDetail)
        and 0 < e.detail.max_total_num_tokens < e.detail.context_length
    ]
    assert short  # the case under test occurs
    message = _kv501(result)
    for e in short:
        assert isinstance(e.detail, SglangPlanDetail)
        assert e.verdict == "risky"
        behaviour = pool_below_context_behaviour(e.detail.version)
        assert behaviour in (e.reason or "") and behaviour in " ".join(message.split())
        assert ("warns" in behaviour) == warns_pool_below_context(e.detail.version)
        direct = run_check([str(path)], dataclasses.replace(options, accelerator=e.accelerator.id))
        rules = {d.rule: d.severity for d in direct.diagnostics}
        assert rules.get("KV702") == "warning"  # SGLang starts: no start-up error on that GPU
        assert not {"KV101", "KV701"} & {r for r, sev in rules.items() if sev == "error"}


def test_sglang_pool_too_small_to_start_depends_on_the_release(tmp_path: Path) -> None:
    # --max-total-tokens caps the pool; 0.4.6 also needs max_req_len - 5 > 0, 0.5.23 only max_req_len > 0
    verdicts = {}
    for tag in ("v0.4.6.post1-cu124", "v0.5.23"):
        path = _sglang(tmp_path, tag, "--max-total-tokens", "5")
        (cr,) = run_check([str(path)], _options(tmp_path, "fleet: [l4]\n")).containers
        (e,) = cr.fleet
        assert isinstance(e.detail, SglangPlanDetail) and e.detail.max_total_num_tokens == 5
        verdicts[tag] = (e.verdict, e.reason or "")
    assert verdicts["v0.4.6.post1-cu124"][0] == "fails" and "too small" in verdicts["v0.4.6.post1-cu124"][1]
    assert verdicts["v0.5.23"][0] == "risky"


# --------------------------------------------------------------------------------------------------
# (3) plan --compare and --sweep: risky, refused, the fleet by default, the engine release named

LLAMA = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "32k", "--dtype", "half"]


def test_compare_cells_follow_the_plan_band_and_the_rules() -> None:
    options = Options(allow_hub=False, engine_version="0.11.0")
    ctx = resolve(LLAMA, options)
    rows = compare(ctx, ["t4", "l4", "a100"], tp_sizes=(1, 2))
    for r in rows:
        acc = lookup(r.accelerator)
        assert acc is not None
        d = plan_vllm_detailed(
            dataclasses.replace(ctx.settings, tensor_parallel_size=r.tp, kv_cache_dtype=r.kv_cache_dtype),
            ctx.model,
            acc.memory_bytes,
            gpu_name=acc.name,
            compute_capability=acc.compute_capability,
        )
        # the same command with that accelerator, TP and KV dtype through `kvlint plan` and its rules
        argv = [*LLAMA, "--tensor-parallel-size", str(r.tp), "--kv-cache-dtype", r.kv_cache_dtype]
        out = plan_command(argv, dataclasses.replace(options, accelerator=acc.id))
        hardware = [x.rule for x in out.diagnostics if x.rule in HARDWARE and x.severity == "error"]
        if hardware:
            assert r.verdict == "refused" and r.refused_by == hardware[0] and not r.fits
        else:
            assert r.verdict == {"ok": "fits", "risky": "risky", "fail": "fails"}[d.verdict]
            assert r.fits == d.fits and r.kv_tokens == d.plan.capacity_tokens
    verdicts = {r.verdict for r in rows}
    assert {"fits", "risky", "refused"} <= verdicts  # each case occurs in this comparison
    # a band-edge cell: one request fits at the band's high end but not at its low end
    edge = next(r for r in rows if r.verdict == "risky")
    acc = lookup(edge.accelerator)
    assert acc is not None
    d = plan_vllm_detailed(
        dataclasses.replace(ctx.settings, tensor_parallel_size=edge.tp, kv_cache_dtype=edge.kv_cache_dtype),
        ctx.model,
        acc.memory_bytes,
        gpu_name=acc.name,
        compute_capability=acc.compute_capability,
    )
    assert d.plan.kv_cache_bytes_low < d.needed_bytes <= d.plan.kv_cache_bytes_high
    table = render_compare(rows, "text")
    line = next(
        ln
        for ln in table.splitlines()
        if ln.startswith(f"{edge.accelerator} ") and f" {edge.kv_cache_dtype} " in ln
    )
    assert " risky " in line and " yes " not in line
    refused = next(r for r in rows if r.verdict == "refused")
    refused_line = next(
        ln
        for ln in table.splitlines()
        if ln.startswith(f"{refused.accelerator} ")
        and f" {refused.tp} " in ln
        and f" {refused.kv_cache_dtype} " in ln
    )
    assert FITS_TEXT["refused"] in refused_line and refused.reason in refused_line


def test_compare_defaults_to_the_fleet() -> None:
    ctx = resolve(LLAMA, Options(allow_hub=False))
    default = {r.accelerator for r in compare(ctx, tp_sizes=(1,), kv_dtypes=("auto",))}
    assert default == set(DEFAULT_FLEET)
    site = Site(fleet=("l4", "h100"))
    mine = [r.accelerator for r in compare(ctx, tp_sizes=(1,), kv_dtypes=("auto",), site=site)]
    assert mine == [a.id for a in site.fleet_accelerators()[0]]


def test_compare_cli_names_the_engine_release_and_reads_the_configured_fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".kvlint.yaml").write_text("fleet: [t4, l4]\n")
    runner = CliRunner()
    pinned = runner.invoke(
        main,
        [
            "plan",
            "--compare",
            "--offline",
            "--engine-version",
            "0.11.0",
            "--",
            *LLAMA,
            "--kv-cache-dtype",
            "fp8",
        ],
    )
    assert pinned.exit_code == 0, pinned.output
    heading = pinned.output.splitlines()[0]
    assert "vLLM 0.11.0" in heading and "(assumed)" not in heading
    assert "the configured fleet" in pinned.output
    accs = {ln.split()[0] for ln in pinned.output.splitlines() if ln.startswith("nvidia-")}
    assert accs == {"nvidia-t4", "nvidia-l4"}
    assert any(ln.startswith("nvidia-t4") and " refused " in ln for ln in pinned.output.splitlines())
    assumed = runner.invoke(main, ["plan", "--compare", "--offline", "--", *LLAMA])
    assert assumed.exit_code == 0, assumed.output
    assert "(assumed)" in assumed.output.splitlines()[0] and "--engine-version" in assumed.output


def test_bf16_rows_on_a_t4_are_refused_not_skipped() -> None:
    argv = ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--dtype", "bfloat16", "--max-model-len", "8192"]
    ctx = resolve(argv, Options(allow_hub=False))
    rows = [r for r in compare(ctx, ["t4", "l4"]) if r.accelerator == "nvidia-t4"]
    assert rows and {r.kv_cache_dtype for r in rows} == {"auto", "fp8"}
    assert all(r.verdict == "refused" and r.refused_by == "KV301" for r in rows)


def test_sweep_marks_the_refused_kv_dtype() -> None:
    argv = ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--dtype", "half", "--max-model-len", "8192"]
    options = Options(allow_hub=False, accelerator="t4", engine_version="0.11.0")
    ctx = resolve(argv, options)
    assert ctx.accelerator is not None
    _, pts = sweep(ctx, ctx.accelerator, "kv-cache-dtype=auto,fp8")
    by = {p.value: p for p in pts}
    fp8_rules = {
        d.rule
        for d in plan_command([*argv, "--kv-cache-dtype", "fp8"], options).diagnostics
        if d.severity == "error"
    }
    assert "KV302" in fp8_rules
    assert by["fp8"].verdict == "refused" and by["fp8"].refused_by == "KV302" and not by["fp8"].fits
    assert by["auto"].verdict in ("fits", "risky", "fails") and by["auto"].refused_by == ""
    text = render_sweep("kv_cache_dtype", pts)
    assert any(ln.startswith("fp8 ") and " refused " in ln for ln in text.splitlines())
    extras = run_plan_extras(
        argv,
        options,
        compare=False,
        accelerators=None,
        sweep=["kv-cache-dtype=auto,fp8"],
        fmt="text",
        plot=None,
    )
    assert "with vLLM 0.11.0" in extras.splitlines()[0]


# --------------------------------------------------------------------------------------------------
# (4) a MIG slice request is planned on the slice


def test_kaito_mig_partition_is_planned_on_the_slice(tmp_path: Path) -> None:
    result = run_check([str(KAITO_MIG)], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.placement is not None and cr.placement.accelerator is None  # the profile alone names no GPU
    profile = "2g.24gb"
    assert cr.placement.resource == f"nvidia.com/mig-{profile}"
    # KAITO v0.12.0's command for a MIG partition
    assert (
        cr.serving.get("gpu_memory_utilization") == 0.84 and cr.serving.flags["max_model_len"].raw == "auto"
    )
    offering = cat.mig_gpus(profile)
    assert offering and [e.accelerator.id for e in cr.fleet] == offering
    for e in cr.fleet:
        prof, _ = cat.mig_profile(e.accelerator.id, profile)
        assert prof is not None and e.detail is not None and e.mig_profile == profile
        assert e.detail.plan.total_bytes == prof.memory_bytes < e.accelerator.memory_bytes
        assert e.detail.plan.max_model_len_source == "auto"  # vLLM's auto-fit on the slice
    assert f"MIG {profile}" in _kv501(result)
    # a configured fleet keeps its own GPUs that offer the profile
    options = _options(tmp_path, f"fleet: [l4, {offering[-1]}]\n")
    (mine,) = run_check([str(KAITO_MIG)], options).containers
    assert [e.accelerator.id for e in mine.fleet] == [offering[-1]]
    assert "of the configured fleet" in _kv501(run_check([str(KAITO_MIG)], options))


def test_rocm_workload_without_a_named_gpu_is_planned_on_the_rocm_fleet() -> None:
    """A pod requesting ``amd.com/gpu`` with a ROCm image (the AMD block of vLLM's Kubernetes guide) and no GPU
    named is planned on the default ROCm fleet (AMD Instinct), not on the CUDA fleet where every entry was a
    KV304 refusal; a configured fleet is still the one used."""
    from kvlint.accelerators.registry import llvm_target
    from kvlint.accelerators.site import DEFAULT_ROCM_FLEET
    from kvlint.engines.images import rocm_family_target
    from kvlint.pipeline import run_check

    path = str(Path(__file__).resolve().parents[1] / "fixtures/rocm/vllm-docs-k8s-amd-gpu.yaml")
    r = run_check([path], Options(allow_hub=False))
    (cr,) = r.containers
    # the guide's image tag names its family (rocm/vllm:..._mi300_...: gfx942, gpus54): the ROCm fleet's boards
    # of that target, in the fleet's order
    target, _word = rocm_family_target(cr.serving.image) or ("", "")
    family = [a for a in DEFAULT_ROCM_FLEET if llvm_target(a) == target]
    assert target == "gfx942" and 0 < len(family) < len(DEFAULT_ROCM_FLEET)
    assert [e.accelerator.id for e in cr.fleet] == family
    assert all(e.refused_by is None and e.detail is not None for e in cr.fleet)
    (kv501,) = [d for d in r.diagnostics if d.rule == "KV501"]
    assert "default ROCm fleet (AMD Instinct)" in kv501.message and "amd.com/gpu.product-name" in kv501.fix
    mine = run_check([path], Options(allow_hub=False, site=Site(fleet=("l4", "mi300x"))))
    (cr,) = mine.containers
    assert [e.accelerator.id for e in cr.fleet] == ["nvidia-l4", "amd-instinct-mi300x"]
    assert cr.fleet[0].refused_by == "KV304" and cr.fleet[1].refused_by is None
