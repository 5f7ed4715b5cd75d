"""SGLang: defaults by version and GPU, context length, KV pool, KV701/KV702 (engine-memory-model.md §3, §4)."""

from __future__ import annotations

from pathlib import Path

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory.sglang import (
    default_mem_fraction_static,
    derive_context_length,
    gpu_tier,
    plan_sglang,
    plan_sglang_detailed,
    sglang_prelude,
)
from kvlint.models import resolve_model
from kvlint.rules.runner import check_container

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

#: The rules the SGLang checks used to report together (engine-specific and resolution rules).
SGLANG_RULES = {"KV101", "KV107", "KV201", "KV401", "KV402", "KV501", "KV502", "KV503", "KV701", "KV702"}


def check_sglang(cr, opts):
    """The SGLang container's diagnostics of :data:`SGLANG_RULES`, from the rule runner."""
    return [d for d in check_container(cr, opts) if d.rule in SGLANG_RULES]


FIX = Path(__file__).resolve().parent.parent / "fixtures"
MODEL_DIRS = (str(FIX / "sglang" / "models"), str(FIX / "plan" / "models"))


def _model(ref: str):
    return resolve_model(ref, model_dirs=MODEL_DIRS, allow_hub=False)


def _cmd(*args: str, version: str = "0.5.23"):
    s = parse_command_line(["python", "-m", "sglang.launch_server", *args], version)
    s.version = version
    return s


def test_parse_aliases() -> None:
    s = _cmd("--model-path", "m/x", "--tp", "2", "--mem-fraction-static", "0.8", "--context-length", "4096")
    assert s.engine == "sglang" and s.get("tp_size") == 2 and s.get("mem_fraction_static") == 0.8


def test_mfs_default_0_4_6_by_tp() -> None:
    # sglang@0.4.6 ServerArgs.__post_init__: 0.88 / 0.87 / 0.85 / 0.81 / 0.79 on <= 80 GiB GPUs
    got = [default_mem_fraction_static((0, 4, 6), 81559, tp=t)[0] for t in (1, 2, 4, 8, 16)]
    assert got == [0.88, 0.87, 0.85, 0.81, 0.79]


def test_mfs_default_on_a_larger_gpu_only_from_0_4_5_post3() -> None:
    """The PyPI wheels' ServerArgs.__post_init__: 0.4.3.post2, 0.4.4.post4 and 0.4.5(.post1/.post2) set the tp
    rule on every GPU; 0.4.5.post3 and 0.4.6 use (gpu - 13 GiB) / gpu above 81920 MiB (H200: 143771 MiB)."""
    from kvlint.memory.sglang import sglang_version

    h200 = 143771
    for text in ("0.4.3.post2", "v0.4.4.post4-cu124", "0.4.5", "0.4.5.post2"):
        v = sglang_version(text)[0]
        assert [default_mem_fraction_static(v, h200, tp=t)[0] for t in (1, 8)] == [0.88, 0.81], text
    for text in ("0.4.5.post3", "0.4.6"):
        v = sglang_version(text)[0]
        assert default_mem_fraction_static(v, h200, tp=1)[0] == round((h200 - 13 * 1024) / h200, 3), text
    assert default_mem_fraction_static((0, 4, 6), h200, tp=8)[0] == round((h200 - 13 * 1024) / h200, 3)


def test_mfs_default_names_the_releases_it_holds_for() -> None:
    """The reason a default fraction gives names the releases whose rule it is, not one of them: an 0.4.3 image
    on an A100 was told 'SGLang 0.4.6 default' (newuser7), and an 0.5.2 one 'SGLang 0.4.10 heuristic'."""
    from kvlint.memory.sglang import sglang_version

    for text, gpu in (("0.4.3.post2", 81559), ("0.4.6", 143771), ("0.5.2", 81559)):
        v = sglang_version(text)[0]
        why = default_mem_fraction_static(v, gpu, tp=1)[1]
        assert "0.4.6" not in why and "0.4.10 heuristic" not in why, (text, why)
    assert "before 0.4.10" in default_mem_fraction_static(sglang_version("0.4.3.post2")[0], 81559, tp=1)[1]
    assert "0.4.10 to 0.5.2" in default_mem_fraction_static(sglang_version("0.5.2")[0], 81559, tp=1)[1]


def test_mfs_default_0_5_x_w8() -> None:
    # §7 W8: H100 80 GB (81 559 MiB), TP1, non-MLA -> reserved 13 440 MiB -> 0.835
    assert default_mem_fraction_static((0, 5, 23), 81559, tp=1)[0] == 0.835


def test_mfs_default_0_4_10() -> None:
    f = default_mem_fraction_static((0, 4, 10), 81559, tp=1)[0]
    assert f == round((81559 - 10.0 * 1024) / 81559, 3)


def test_context_length_first_key_and_rope() -> None:
    m = _model("meta-llama/Llama-3.1-8B")  # llama3 rope type is not multiplied
    for v in ((0, 5, 5), (0, 5, 23)):
        assert derive_context_length(m, v) == (131072, "max_position_embeddings")


def test_context_length_scaled_by_rope_names_the_factor() -> None:
    """google/gemma-3-12b-it (bundled catalogue): max_position_embeddings 131072 with a linear rope_scaling of factor
    8, which SGLang's ``get_context_length`` multiplies (sglang@0.5.5 ``utils/hf_transformers_utils.py``: no
    ``original_max_position_embeddings``, not ``llama3``), giving 1,048,576 tokens. KV202 and the plan said
    "(1048576 tokens, max_position_embeddings)", a figure the user finds nowhere in config.json: the source now names
    the key's own value and the factor. Up to 0.5.9 (transformers 4.57.1) only."""
    m = _model("google/gemma-3-12b-it")
    base = m.text_config["max_position_embeddings"]
    factor = m.text_config["rope_scaling"]["factor"]
    n, key = derive_context_length(m, (0, 5, 9))
    assert n == int(base * factor) > base
    assert key == f"max_position_embeddings {base} × rope_scaling factor {factor:g}", key
    d = plan_sglang_detailed(
        _cmd("--model-path", "x", "--tp-size", "2", version="0.5.9"),
        m,
        lookup("h100-80gb").memory_bytes,
        gpus=2,
    )
    assert d.plan.max_model_len == n and d.plan.max_model_len_source == key


def test_context_length_gemma3_rope_not_multiplied_on_transformers_5() -> None:
    """From 0.5.10 SGLang pins transformers 5 (5.3.0; 0.5.23: 5.19.0), where ``config.rope_scaling`` is the
    ``rope_parameters`` property and Gemma3TextConfig puts config.json's flat ``rope_scaling`` under
    ``rope_parameters["full_attention"]``: ``get_context_length`` finds no top-level ``factor`` and derives
    max_position_embeddings itself, 131,072 for gemma-3-12b-it, not 1,048,576. A --context-length above it stops
    SGLang ("User-specified context_length ... greater than the derived context_length")."""
    m = _model("google/gemma-3-12b-it")
    base = m.text_config["max_position_embeddings"]
    for v in ((0, 5, 10), (0, 5, 23)):
        assert derive_context_length(m, v) == (base, "max_position_embeddings")
    assert derive_context_length(m, (0, 5, 9))[0] > base
    d = plan_sglang_detailed(
        _cmd("--model-path", "x", "--tp-size", "2"), m, lookup("h100-80gb").memory_bytes, gpus=2
    )
    assert d.plan.max_model_len == base
    too_long = str(2 * base)
    for version, refused in (("0.5.9", False), ("0.5.10", True)):
        s = _cmd("--model-path", "x", "--tp-size", "2", "--context-length", too_long, version=version)
        d = plan_sglang_detailed(s, m, lookup("h100-80gb").memory_bytes, gpus=2)
        assert (d.context_error is not None) == refused, (version, d.context_error)


def test_context_length_yarn_without_original_length_on_transformers_5() -> None:
    """A YaRN rope_scaling with no original_max_position_embeddings: transformers 4 leaves the dict as it is, so
    SGLang <= 0.5.9 multiplies by the factor; transformers 5's ``standardize_rope_params`` adds
    ``original_max_position_embeddings`` (the config's max_position_embeddings), so 0.5.10+ does not."""
    from dataclasses import replace

    m = _model("meta-llama/Llama-3.1-8B")
    tc = dict(m.text_config)
    tc["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0}
    m = replace(m, text_config=tc, config=tc)
    base = tc["max_position_embeddings"]
    assert derive_context_length(m, (0, 5, 9))[0] == 4 * base
    assert derive_context_length(m, (0, 5, 10)) == (base, "max_position_embeddings")


def test_w8_pool_and_running_requests() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    acc = lookup("h100-80gb")
    d = plan_sglang_detailed(_cmd("--model-path", "x"), m, acc.memory_bytes, gpus=1)
    # §7 W8: ≈ 416 700 tokens (±5%), max_running_requests 2048
    assert abs(d.max_total_num_tokens - 416700) / 416700 < 0.05
    assert d.max_running_requests == 2048 and d.plan.kv_bytes_per_token == 131072


def test_running_requests_0_4_x_request_pool() -> None:
    # sglang@0.4.6 and @0.4.9.post2 model_runner.py::init_memory_pool + tp_worker.py::TpModelWorker: the request
    # pool (clamp(tokens/context x 512, 2048, 4096) rows, + 1 up to 0.4.6) bounds max_running_requests, not only
    # tokens // 2. Ground truth gt-250 / gt-252 print max_running_requests=2049 for pools of 444,500 / 46,611 tokens.
    m = _model("meta-llama/Llama-3.1-8B")
    acc = lookup("h100-80gb")
    for version, extra in (("0.4.6", 1), ("0.4.9.post2", 0)):
        d = plan_sglang_detailed(_cmd("--model-path", "x", version=version), m, acc.memory_bytes, gpus=1)
        tokens, ctx = d.max_total_num_tokens, d.context_length
        assert tokens // 2 > 4097  # a large pool: the request pool is the bound
        rows = min(max(int(tokens / ctx * 512), 2048), 4096) + extra
        assert d.max_running_requests == d.plan.max_num_seqs == rows, version
    # a user value sizes the pool itself (+ 1 row up to 0.4.6)
    d = plan_sglang_detailed(
        _cmd("--model-path", "x", "--max-running-requests", "64", version="0.4.6"),
        m,
        acc.memory_bytes,
        gpus=1,
    )
    assert d.max_running_requests == 64
    # a small pool: tokens // 2 binds
    d = plan_sglang_detailed(
        _cmd("--model-path", "x", "--max-total-tokens", "3000", version="0.4.9.post2"),
        m,
        acc.memory_bytes,
        gpus=1,
    )
    assert d.max_running_requests == 1500


def test_running_requests_0_4_x_ground_truth() -> None:
    # gt-250 (docs.sglang.ai quick start, 2025-01-23): Meta-Llama-3.1-8B-Instruct, TP1, 80 GB-class GPU,
    # mem_fraction_static 0.88 -> "max_running_requests=2049"; the release is not printed, so every 0.4.x
    # release up to 0.4.6 (the pool's + 1 row) must give the printed figure.
    import yaml

    cases = yaml.safe_load((Path(__file__).resolve().parents[1] / "bench/groundtruth/cases.yaml").read_text())
    printed = next(c for c in cases if c["id"] == "gt-250")["figures"]["max_running_requests"]
    m = _model("meta-llama/Llama-3.1-8B")
    acc = lookup("h100-80gb")
    for version in ("0.4.0", "0.4.4.post1", "0.4.6"):
        s = _cmd("--model-path", "x", "--mem-fraction-static", "0.88", version=version)
        assert plan_sglang_detailed(s, m, acc.memory_bytes, gpus=1).max_running_requests == printed


def test_page_rounding_and_cap() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("h100-80gb").memory_bytes
    p = plan_sglang(_cmd("--model-path", "x", "--page-size", "64"), m, total, gpus=1)
    assert p.capacity_tokens % 64 == 0
    p2 = plan_sglang(_cmd("--model-path", "x", "--max-total-tokens", "10000"), m, total, gpus=1)
    assert p2.capacity_tokens == 10000


def _cr(accelerator: str = "l4"):
    from kvlint.pipeline import Options, run_check

    opts = Options(model_dirs=MODEL_DIRS, allow_hub=False, accelerator=accelerator)
    path = next((FIX / "sglang").glob("*.yaml"))
    crs = [c for c in run_check([str(path)], opts).containers if c.serving.engine == "sglang"]
    return crs[0], opts


def test_kv101_qwen3_32b_on_one_l4() -> None:
    """Qwen3-32B's bf16 weights (about 61 GiB) are larger than a whole L4: loading fails with CUDA out of
    memory before SGLang sizes its pool, so this is KV101, not KV701."""
    cr, opts = _cr()
    diags = check_sglang(cr, opts)
    d = next(x for x in diags if x.rule == "KV101")
    assert "loading fails with CUDA out of memory" in d.message
    assert "--tp-size" in d.fix
    assert not any(x.rule == "KV701" for x in diags)


def test_kv701_qwen3_32b_mem_fraction_on_h100() -> None:
    """The weights load on an H100, but --mem-fraction-static 0.7 of the free memory leaves them no pool."""
    from kvlint.pipeline import analyse_serving
    from kvlint.types import Value

    cr, opts = _cr("h100")
    cr.serving.flags["mem_fraction_static"] = Value(0.7, cr.serving.flags["mem_fraction_static"].loc)
    cr = analyse_serving(cr.workload, cr.container, cr.serving, opts, placement=cr.placement)
    d = next(x for x in check_sglang(cr, opts) if x.rule == "KV701")
    assert "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.7" in d.message
    assert "--tp-size" in d.fix or "--mem-fraction-static" in d.fix


def test_kv702_and_kv201() -> None:
    cr, opts = _cr()
    from kvlint.pipeline import analyse_serving
    from kvlint.types import Value

    cr.serving.flags["tp_size"] = Value(4, None)
    cr.serving.flags["context_length"] = Value(1_000_000, None)
    cr = analyse_serving(cr.workload, cr.container, cr.serving, opts, placement=cr.placement)  # plan again
    rules = [d.rule for d in check_sglang(cr, opts)]
    # SGLang refuses the context length while building its model config, before loading weights (KV201 is a
    # before_loading rule): the pool sizing behind KV702 is not reached
    assert "KV201" in rules and "KV702" not in rules
    # with the override SGLang starts, and the million-token context no longer fits the pool
    cr.serving.env["SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"] = "1"
    cr = analyse_serving(cr.workload, cr.container, cr.serving, opts, placement=cr.placement)
    rules = [d.rule for d in check_sglang(cr, opts)]
    assert "KV201" not in rules and "KV702" in rules


def test_every_corpus_tgi_sglang_container_gets_plan_or_kv5xx() -> None:
    """Issue 5 "done when": each TGI/SGLang container of the shared corpus gets a plan or a KV5xx."""
    import glob

    import pytest

    from kvlint.pipeline import Options, run_check
    from tests.test_tgi import check_tgi

    files = sorted(glob.glob(str(SHARED / "corpus/manifests") + "/*.yaml"))
    files = [f for f in files if "sglang" in f or "text-generation" in f or "tgi" in f]
    if not files:
        pytest.skip("shared corpus not present")
    opts = Options(model_dirs=(str(SHARED / "corpus/models"),), allow_hub=False)
    crs = [c for c in run_check(files, opts).containers if c.serving.engine in ("tgi", "sglang")]
    assert len(crs) >= 10
    for cr in crs:
        diags = (check_tgi if cr.serving.engine == "tgi" else check_sglang)(cr, opts)
        # a follower node (--node-rank 1 of --nnodes 2) is sized with its leader, whose plan this checks too
        follower = cr.serving.joins is not None and cr.serving.joins.follower
        assert cr.plan is not None or follower or any(d.rule.startswith("KV5") for d in diags), cr.object_ref


def _fleet_gpus():
    from kvlint.accelerators import registry as cat

    return tuple(a for a in cat.catalogue().values() if a.vendor in ("nvidia", "amd"))


def test_fleet_notes_stay_in_sglang_order() -> None:
    """plan_fleet settles an SGLang container's GPU-independent steps once (sglang_prelude); on every GPU the
    notes keep the order in which SGLang meets them, GPU steps among the settled ones: version, the default
    mem_fraction_static and chunked_prefill_size (the GPU's), dtype, cell size, the pre-load heuristic, the
    --max-total-tokens cap (the GPU's), the derived context length, max_running_requests (the GPU's), the
    request-to-token table it sizes (the GPU's)."""
    from kvlint.memory.stage import plan_fleet
    from kvlint.types import Placement

    m = _model("meta-llama/Llama-3.1-8B")
    s = _cmd("--model-path", "x", "--max-total-tokens", "1000", version="")
    s.version = None
    entries = plan_fleet(s, None, m, Placement(accelerator=None), _fleet_gpus(), 1)
    order = [
        "SGLang version unknown",
        "mem_fraction_static ",
        "chunked_prefill_size ",
        "dtype auto -> ",
        "cell_size ",
        "[calibrated] pre-load free",
        "--max-total-tokens 1000 caps the pool",
        "context_length 131072 derived from max_position_embeddings",
        "max_running_requests = ",
        "request-to-token table ",
    ]
    planned = 0
    for e in entries:
        if e.detail is None or e.detail.max_total_num_tokens != 1000:
            continue  # not planned, or a pool below the cap (no cap note)
        notes = e.detail.plan.assumptions
        assert len(notes) == len(order), notes
        for note, start in zip(notes, order, strict=True):
            assert note.startswith(start), (e.accelerator.id, notes)
        planned += 1
    assert planned > 10
    # two GPUs of different memory: the GPU's own figures, the settled ones shared
    by_total = {e.detail.plan.total_bytes: e.detail for e in entries if e.detail is not None}
    small, big = by_total[min(by_total)], by_total[max(by_total)]
    assert small.mem_fraction_static != big.mem_fraction_static
    assert small.plan.kv_bytes_per_token == big.plan.kv_bytes_per_token == 131072


def test_fleet_prelude_with_overrides_and_reuse_plans_as_alone() -> None:
    """One sglang_prelude serves every GPU: each plan equals the plan computed alone (prelude built inside), with
    flags given by overrides (a remedy's) and after the prelude served other GPUs (nothing of one GPU stays)."""
    from kvlint.memory.sglang import sglang_prelude

    m = _model("meta-llama/Llama-3.1-8B")
    s = _cmd("--model-path", "x", "--tp", "2")
    cases = [
        None,
        {"mem_fraction_static": 0.8},
        {"chunked_prefill_size": 0, "max_prefill_tokens": 4096, "context_length": 4096},
        {"max_total_tokens": 1000, "max_running_requests": 7, "page_size": 16},
        {"dtype": "float16", "kv_cache_dtype": "fp8_e4m3", "tp_size": 4},
    ]
    for ov in cases:
        pre = sglang_prelude(s, m, ov)
        seen = set()
        for acc in _fleet_gpus():
            kw = {
                "gpus": 2,
                "gpu_name": acc.name,
                "compute_capability": acc.compute_capability,
                "overrides": ov,
            }
            shared = plan_sglang_detailed(s, m, acc.memory_bytes, prelude=pre, **kw)
            assert shared == plan_sglang_detailed(s, m, acc.memory_bytes, **kw), (ov, acc.id)
            seen.add(shared.max_total_num_tokens)
        assert len(seen) > 1 or (ov or {}).get("max_total_tokens")


def test_fleet_of_a_model_without_kv_layers_reports_the_error_on_each_gpu() -> None:
    """The prelude raises (no KV-holding layer): plan_fleet leaves it to each GPU's plan, which raises the same
    error there, so every planned GPU gets verdict unknown with it."""
    from dataclasses import replace as dc_replace

    from kvlint.memory.stage import plan_fleet
    from kvlint.types import LayerSpec, Placement

    m = _model("meta-llama/Llama-3.1-8B")
    m = dc_replace(m, layers=tuple(LayerSpec("mamba", state_bytes=1 << 20) for _ in m.layers))
    entries = plan_fleet(_cmd("--model-path", "x"), None, m, Placement(accelerator=None), _fleet_gpus(), 1)
    planned = [e for e in entries if e.refused_by is None]
    assert planned and all(e.verdict == "unknown" for e in planned)
    assert all("has no attention layer holding a KV cache" in (e.error or "") for e in planned)


def _ground_truth(case_id: str) -> dict:
    import yaml

    cases = yaml.safe_load((Path(__file__).resolve().parents[1] / "bench/groundtruth/cases.yaml").read_text())
    return next(c for c in cases if c["id"] == case_id)


def test_preload_single_rank_has_no_distributed_memory() -> None:
    # SGLang measures its pre-load free memory after the parallel groups exist; with one rank GroupCoordinator
    # creates no PyNccl communicator and no custom all-reduce (sglang@0.4.6 / 0.5.23 parallel_state.py), so a TP1
    # plan holds only the CUDA context outside the pre-load figure, a TP2 plan also the distributed set-up.
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("h100-80gb").memory_bytes
    one = plan_sglang_detailed(_cmd("--model-path", "x", "--mem-fraction-static", "0.88"), m, total, gpus=1)
    two = plan_sglang_detailed(
        _cmd("--model-path", "x", "--mem-fraction-static", "0.88", "--tp-size", "2"), m, total, gpus=2
    )
    assert total - one.pre_free_bytes < total - two.pre_free_bytes
    # pp ranks are peers too (the world group spans tp x pp)
    pp = plan_sglang_detailed(
        _cmd("--model-path", "x", "--mem-fraction-static", "0.88", "--pp-size", "2"), m, total, gpus=2
    )
    assert pp.pre_free_bytes == two.pre_free_bytes


def test_preload_band_covers_printed_preload_usage() -> None:
    # The memory in use before loading, as SGLang's logs give it (total - 'Load weight begin. avail mem'), must lie
    # inside the plan's band: TP1 on 80 GB H100s (gt-250: 78.81 GB free before loading; SGLang's "GB" are GiB),
    # TP4 on PCIe-only L4s (gt-252: 21.63), and TP8 on NVLink H200s (gt-254, sgl-project/sglang#11716, TP0:
    # "Load weight begin. avail mem=137.34 GB" after "Init torch distributed ends. mem usage=1.96 GB").
    # The band on the pool is mfs x the band on the pre-load usage, so compare the implied usage bounds.
    from kvlint.memory.sglang import preload_bytes

    gib = 1 << 30
    for acc_id, tp, free_before in (
        ("h100-80gb", 1, _ground_truth("gt-250")["figures"]["free_before_weights_gb"]),
        # gt-251 prints the free memory after loading and what loading took: their sum is the pre-load figure
        (
            "h100-80gb",
            1,
            sum(_ground_truth("gt-251")["figures"][k] for k in ("weights_gb", "free_after_weights_gb")),
        ),
        ("l4", 4, _ground_truth("gt-252")["figures"]["free_before_weights_gb"]),
        ("h200", 8, _ground_truth("gt-254")["figures"]["free_before_weights_gb"]),
    ):
        total = lookup(acc_id).memory_bytes
        used = total - free_before * gib
        _point, low, high = preload_bytes(tp)
        assert low <= used <= high, (acc_id, tp, used / gib, low / gib, high / gib)


def test_scored_sglang_ground_truth_inside_the_band() -> None:
    # bench/accuracy_engines.py replays the SGLang start-ups whose every input is known (gt-250, gt-251, gt-252,
    # gt-264): the printed max_total_num_tokens must lie inside kvlint's band [num_blocks_low, num_blocks_high] x page.
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import accuracy_engines as ae

    for cid in ("gt-250", "gt-251", "gt-252", "gt-264"):
        args, model_id, acc_id, version, gpus = ae.REPLAY[cid]
        m = resolve_model(model_id, model_dirs=MODEL_DIRS, allow_hub=False)
        acc = lookup(acc_id)
        s = parse_command_line(
            ["python", "-m", "sglang.launch_server", "--model-path", model_id, *args], version
        )
        p = plan_sglang_detailed(s, m, acc.memory_bytes, gpus=gpus).plan
        printed = _ground_truth(cid)["figures"]["kv_tokens"]
        assert p.num_blocks_low * p.block_size <= printed <= p.num_blocks_high * p.block_size, cid


def test_default_fraction_ground_truth_qwen3_14b() -> None:
    # Two real Qwen3-14B TP1 start-ups without a memory flag (bench/groundtruth/cases.yaml):
    # gt-264 (xorbitsai/inference#3481, May 2025, a 48 GB-class card, SGLang 0.4.6.x): the printed K + V is what
    # SGLang's rest = avail_after_weights - free_before x (1 - mem_fraction_static) gives with kvlint's 0.4.x
    # default; gt-265 (LMCache/LMCache#2400, Jan 2026, an 80 GB Hopper): server_args prints the resolved
    # mem_fraction_static, which kvlint's >= 0.5.5 default must reproduce on an H100 80GB.
    gib = 1 << 30
    m = _model("Qwen/Qwen3-14B")
    f = _ground_truth("gt-264")["figures"]
    d = plan_sglang_detailed(
        _cmd("--model-path", "x", version="0.4.6.post4"), m, lookup("l40").memory_bytes, gpus=1
    )
    free_before = f["weights_gb"] + f["free_after_weights_gb"]
    rest = f["free_after_weights_gb"] - free_before * (1 - d.mem_fraction_static)
    assert abs(rest - (f["k_size_gb"] + f["v_size_gb"])) < 0.02
    assert abs(rest * gib / d.plan.kv_bytes_per_token - f["kv_tokens"]) / f["kv_tokens"] < 0.001
    # the release is not printed: the value is that of the releases without prefill CUDA graphs by default (up to
    # 0.5.9); from 0.5.10 they are on for this model and their reserve lowers the fraction (sglang_graphs)
    printed = _ground_truth("gt-265")["figures"]["mem_fraction_static"]
    for version in ("0.5.5", "0.5.8", "0.5.23"):
        s = _cmd("--model-path", "x", version=version)
        d = plan_sglang_detailed(s, m, lookup("h100-80gb").memory_bytes, gpus=1)
        pg = sglang_prelude(s, m).prefill_graphs
        assert (pg is not None and pg.on) == (version == "0.5.23"), version
        if pg is not None and pg.on:
            gpu_mib = lookup("h100-80gb").memory_bytes / (1 << 20) + 512
            graphs = pg.reserve_mib(gpu_tier(gpu_mib, 1, (0, 5, 23))[0], amd=False)[0]
            want = default_mem_fraction_static((0, 5, 23), gpu_mib, tp=1, prefill_graph_mib=graphs)[0]
            assert graphs > 0 and d.mem_fraction_static == want < printed
        else:
            assert d.mem_fraction_static == printed, version


def test_a_separate_draft_model_is_said_to_be_uncounted() -> None:
    """A draft checkpoint of its own (``--speculative-draft-model-path``) that is not resolved (this plan is given
    none: the plan stage resolves it, tests/test_sglang_spec.py) is not sized (docs/engine-memory-model.md §3.3): the
    plan says so and sizes the target's cell alone; NGRAM (no
    draft model) and none say nothing of a draft. Both reset an unset --max-running-requests (kvlint.memory.
    sglang_spec, tests/test_sglang_spec.py for the MTP head SGLang does size)."""
    from kvlint.memory.sglang_spec import SPEC_MAX_RUNNING_REQUESTS

    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("h100-80gb").memory_bytes
    base = plan_sglang_detailed(_cmd("--model-path", "x"), m, total, gpus=1)
    eagle = plan_sglang_detailed(
        _cmd(
            "--model-path",
            "x",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
        ),
        m,
        total,
        gpus=1,
    )
    said = [n for n in eagle.plan.assumptions if "draft's KV layers are not counted" in n]
    assert len(said) == 1 and "a separate draft model (lmsys/sglang-EAGLE-LLaMA3-Instruct-8B)" in said[0]
    assert eagle.plan.kv_bytes_per_token == base.plan.kv_bytes_per_token
    assert eagle.max_total_num_tokens == base.max_total_num_tokens
    assert eagle.max_running_requests == SPEC_MAX_RUNNING_REQUESTS < base.max_running_requests
    assert not any("draft" in n for n in base.plan.assumptions)
    ngram = plan_sglang_detailed(
        _cmd("--model-path", "x", "--speculative-algorithm", "NGRAM"), m, total, gpus=1
    )
    assert not any("draft" in n for n in ngram.plan.assumptions)
    assert ngram.max_running_requests == SPEC_MAX_RUNNING_REQUESTS


def test_small_gpu_tier_changes_at_0_5_20_not_0_5_6() -> None:
    """The < 35 GiB tier (RTX 4090) keeps 0.5.5's chunked prefill and decode graph batch up to 0.5.19
    (``server_args.py`` of 0.5.6 - 0.5.18, ``memory_hook.py`` of 0.5.19) and takes the larger ones from 0.5.20
    (``memory_hook.py`` of 0.5.20 - 0.5.23); kvlint switched at 0.5.6, so its default fraction on a 24 GiB GPU
    reserved too much for 0.5.6 - 0.5.19."""
    from kvlint.memory.sglang import TIER_35_FROM, default_mem_fraction_static, gpu_tier

    acc = lookup("rtx-4090")
    assert acc is not None
    mib = acc.memory_bytes / (1 << 20) + 512
    for tp in (1, 4):
        old = gpu_tier(mib, tp, (0, 5, 5))
        for v in ((0, 5, 6), (0, 5, 8), (0, 5, 13), (0, 5, 19)):
            assert gpu_tier(mib, tp, v) == old, (tp, v)
            assert default_mem_fraction_static(v, mib, tp=tp) == default_mem_fraction_static(
                (0, 5, 5), mib, tp=tp
            )
        new = gpu_tier(mib, tp, TIER_35_FROM)
        assert new[0] > old[0] and new[1] > old[1], tp
        assert gpu_tier(mib, tp, (0, 5, 23)) == new


def test_decode_graph_batch_capped_by_max_running_requests_from_0_5_22() -> None:
    """0.5.22's and 0.5.23's handle_gpu_memory_settings lower a default decode CUDA-graph batch above the user's
    --max-running-requests to it before the reserve is computed (0.5.21 does not); an explicit --cuda-graph-max-bs
    (or, from 0.5.15, --cuda-graph-max-bs-decode) is kept. Expected fractions from the heuristic itself."""
    from kvlint.memory.sglang import DECODE_BS_CAPPED_FROM, sglang_version

    m = _model("meta-llama/Llama-3.1-8B")
    acc = lookup("h100-80gb")
    gpu_mib = acc.memory_bytes / (1 << 20) + 512

    def mfs(*args: str, version: str) -> float:
        return plan_sglang_detailed(
            _cmd("--model-path", "x", *args, version=version), m, acc.memory_bytes, gpus=1
        ).mem_fraction_static

    def want(version: str, **kw) -> float:
        s = _cmd("--model-path", "x", version=version)
        pg = sglang_prelude(s, m).prefill_graphs
        v = sglang_version(version)[0]
        graphs = pg.reserve_mib(gpu_tier(gpu_mib, 1, v)[0], amd=False)[0] if pg is not None else 0.0
        return default_mem_fraction_static(v, gpu_mib, tp=1, prefill_graph_mib=graphs, **kw)[0]

    tier_bs = gpu_tier(gpu_mib, 1, (0, 5, 23))[1]
    cap = tier_bs // 4
    for version in ("0.5.21", "0.5.22", "0.5.23"):
        got = mfs("--max-running-requests", str(cap), version=version)
        capped = sglang_version(version)[0] >= DECODE_BS_CAPPED_FROM
        assert got == want(version, cuda_graph_max_bs=cap if capped else None), version
        assert (got > mfs(version=version)) == capped, version
    # an explicit decode graph batch is not capped
    assert mfs(
        "--max-running-requests", str(cap), "--cuda-graph-max-bs-decode", str(tier_bs), version="0.5.23"
    ) == (mfs(version="0.5.23"))
