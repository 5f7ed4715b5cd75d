"""Tests for the bundled model catalogue's breadth and provenance (kvlint/models/catalogue.py, build_catalogue.py,
kvlint/models/sources/*.yaml) and for name-derived quantized builds.

Expected values are read from the fixture configs and source lists (fixtures/models/catalogue, the YAML lists),
never typed here, except where a test states the rule it checks (suffix -> quantization method).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml

from kvlint.models import catalogue, clear_cache, resolve_model
from kvlint.models.build_catalogue import (
    SOURCES_DIR,
    CatalogueBuildError,
    load_extra_sources,
    load_variants,
    source_files,
)
from kvlint.models.weights import linear_bytes_per_param, param_breakdown, param_count, weight_bytes
from kvlint.types import ModelUnavailable

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "kvlint" / "data" / "models"
SOURCE_ENTRIES = [x for f in source_files() for x in load_extra_sources(f)]
BY_KIND: dict[str, list[dict]] = {}
for _x in SOURCE_ENTRIES:
    BY_KIND.setdefault(_x["source"].get("kind", "github"), []).append(_x)
FIDELITY_LEVELS = {
    "verbatim_copy",
    "resaved_copy",
    "serialized_to_dict",
    "test_fixture_full_size",
    "curated_subset",
    "abridged",
    "python_preset_converted",
    "hf_page_transcription",
    "litgpt_dims_on_template",
}


@pytest.fixture(autouse=True)
def _fresh_memo():
    clear_cache()
    yield
    clear_cache()


def _text(cfg: dict) -> dict:
    return cfg["text_config"] if isinstance(cfg.get("text_config"), dict) else cfg


def _first(d: dict, *keys: str):
    return next((d[k] for k in keys if d.get(k) is not None), None)


# -------------------------------------------------------------------------------------------------
# size and provenance


def test_catalogue_has_at_least_300_models_each_with_source_and_licence():
    rows = catalogue.list_index()
    n_variants = sum(len(r.variants) for r in rows)
    assert len(rows) + n_variants >= 300
    assert len(rows) >= 150  # stored configs, not only variants
    for e in catalogue.list_entries():
        s = e.source
        assert s.get("fidelity") in FIDELITY_LEVELS, (e.id, s.get("fidelity"))
        assert s.get("licence") and s["licence"] != "unknown", e.id
        kind = s.get("kind")
        if kind == "github":
            assert s.get("repo") and s.get("path") and re.fullmatch(r"[0-9a-f]{40}", str(s.get("commit"))), (
                e.id
            )
        elif kind == "pypi":
            assert s.get("package") and s.get("version") and s.get("path"), e.id
            assert re.fullmatch(r"[0-9a-f]{64}", str(s.get("wheel_sha256"))), e.id
        else:
            assert kind == "hf_page" and str(s.get("url")).startswith("https://huggingface.co/"), e.id
            assert s.get("commit") and s.get("retrieved_via"), e.id
        assert e.source_citation and "None" not in e.source_citation, e.id


def test_every_family_of_the_brief_is_catalogued():
    ids = [r.id.lower() for r in catalogue.list_index()]
    ids += [v.lower() for r in catalogue.list_index() for v in r.variants]
    families = {
        "llama 2": "llama-2-",
        "llama 3": "meta-llama-3-",
        "llama 3.1": "llama-3.1-",
        "llama 3.2": "llama-3.2-",
        "llama 3.3": "llama-3.3-",
        "llama 4": "llama-4-",
        "mistral": "mistral-7b",
        "mixtral": "mixtral-",
        "ministral": "ministral-",
        "mistral small": "mistral-small",
        "qwen 2": "qwen2-",
        "qwen 2.5": "qwen2.5-",
        "qwen 2.5 coder": "qwen2.5-coder",
        "qwen 3": "qwen3-",
        "qwen 3.5": "qwen3.5-",
        "qwen vl": "-vl-",
        "gemma 1": "gemma-7b",
        "gemma 2": "gemma-2-",
        "gemma 3": "gemma-3-",
        "phi 3": "phi-3",
        "phi 4": "phi-4",
        "deepseek v2": "deepseek-v2",
        "deepseek v3": "deepseek-v3",
        "deepseek r1": "deepseek-r1",
        "r1 distill": "r1-distill",
        "gpt-oss": "gpt-oss",
        "glm": "glm-",
        "falcon": "falcon-",
        "nemotron": "nemotron",
        "kimi": "kimi-",
        "minimax": "minimax-",
        "olmo": "olmo-",
        "smollm": "smollm",
    }
    missing = [f for f, needle in families.items() if not any(needle in i for i in ids)]
    assert not missing


@pytest.mark.parametrize("x", SOURCE_ENTRIES, ids=[x["id"] for x in SOURCE_ENTRIES])
def test_source_list_entries_are_the_bytes_recorded(x):
    data = x["config_path"].read_bytes()
    assert hashlib.sha256(data).hexdigest() == x["config_sha256"]
    assert (DATA / x["dir"] / "config.json").read_bytes() == data
    if x.get("quant_path"):
        assert (DATA / x["dir"] / "hf_quant_config.json").read_bytes() == x["quant_path"].read_bytes()
    e = catalogue.lookup(x["id"])
    assert e is not None and e.base_id == x["id"] and e.source["licence"] == x["source"]["licence"]


@pytest.mark.parametrize("x", SOURCE_ENTRIES, ids=[x["id"] for x in SOURCE_ENTRIES])
def test_source_list_entries_resolve_offline_with_the_fixture_numbers(x):
    cfg = json.loads(x["config_path"].read_text())
    t = _text(cfg)
    spec = resolve_model(x["id"], allow_hub=False)
    assert spec.source.startswith("kvlint catalogue: ") and "derived from name" not in spec.source
    # Nemotron-H's layers_block_type list is the layer count (transformers NemotronHConfig.num_hidden_layers)
    listed = t.get("layers_block_type") if isinstance(t.get("layers_block_type"), list) else None
    layers = len(listed) if listed else _first(t, "num_hidden_layers", "n_layer", "num_layers")
    if layers is None and t.get("model_type") == "llama":
        # a LLaVA text_config without its dimensions: LlamaConfig's defaults apply, as the llava test checks
        assert len(spec.layers) == spec.num_layers and t is cfg.get("text_config")
    else:
        assert spec.num_layers == len(spec.layers) == layers
        assert spec.hidden_size == _first(t, "hidden_size", "n_embd", "d_model")
        assert spec.num_attention_heads == _first(t, "num_attention_heads", "n_head")
    assert spec.vocab_size == _first(t, "vocab_size", "padded_vocab_size") or _first(cfg, "vocab_size")
    q = t.get("quantization_config") or cfg.get("quantization_config")
    if isinstance(q, dict) and q.get("quant_method"):
        want = str(q["quant_method"]).lower()
        if want == "modelopt" and "FP4" in str(q.get("quant_algo") or "").upper():
            want = "modelopt_fp4"  # vLLM's ModelOpt override reads quant_algo beside quant_method (NVFP4)
        assert spec.quant_method == want


def _plain_gqa(cfg: dict) -> bool:
    t = _text(cfg)
    plain = (
        "num_key_value_heads" in t
        and not any(
            k in t for k in ("kv_lora_rank", "layer_types", "hybrid_override_pattern", "block_configs")
        )
        and not any(
            k in t for k in ("sliding_window_pattern", "full_attention_interval", "linear_num_value_heads")
        )
        and not t.get("use_sliding_window")
        and not t.get("sliding_window")
    )
    return plain and t.get("model_type") in (
        "llama",
        "mistral",
        "qwen2",
        "qwen3",
        "qwen3_moe",
        "phi3",
        "olmo2",
    )


PLAIN = [x for x in SOURCE_ENTRIES if _plain_gqa(json.loads(x["config_path"].read_text()))]


@pytest.mark.parametrize("x", PLAIN, ids=[x["id"] for x in PLAIN])
def test_kv_bytes_of_plain_attention_models_follow_the_fixture_fields(x):
    """bf16 KV bytes/token = 2 x layers x kv_heads x head_dim x 2, all from the fixture config."""
    from kvlint.memory.kv import kv_bytes_per_token

    t = _text(json.loads(x["config_path"].read_text()))
    head = t.get("head_dim") or t["hidden_size"] // t["num_attention_heads"]
    expected = 2 * t["num_hidden_layers"] * t["num_key_value_heads"] * head * 2
    spec = resolve_model(x["id"], allow_hub=False)
    assert kv_bytes_per_token(spec, 1, "auto") == expected * (1 if spec.torch_dtype != "float32" else 2)


def test_pypi_entries_name_the_wheel_they_came_from():
    pypi = BY_KIND["pypi"]
    assert len(pypi) >= 60
    for x in pypi:
        src = x["source"]
        assert src["wheel"].startswith(src["package"].replace("-", "_") + "-" + src["version"] + "-")
        assert src["url"] == f"https://pypi.org/project/{src['package']}/{src['version']}/"
        if src["package"] == "aiconfigurator-core":
            assert src["path"].startswith("aiconfigurator_core/model_configs/")
            also = src.get("also_at")
            if also:  # recorded only when the repository holds the same bytes
                assert also["repo"] == "ai-dynamo/aiconfigurator" and len(also["commit"]) == 40


def test_real_quantized_builds_keep_their_quantization_config():
    quantized = []
    for x in SOURCE_ENTRIES:
        cfg = json.loads(x["config_path"].read_text())
        q = _text(cfg).get("quantization_config") or cfg.get("quantization_config")
        if isinstance(q, dict) or x.get("quant_path"):
            quantized.append(x)
            spec = resolve_model(x["id"], allow_hub=False)
            assert spec.quant_method, x["id"]
            if isinstance(q, dict):
                assert spec.quant_config == q
    methods = {resolve_model(x["id"], allow_hub=False).quant_method for x in quantized}
    assert len(quantized) >= 30 and {"fp8", "modelopt_fp4", "compressed-tensors"} <= methods


# -------------------------------------------------------------------------------------------------
# converted and cited entries: the recorded figures are the config's


def test_litgpt_conversions_carry_the_recorded_sizes():
    conv = [x for x in SOURCE_ENTRIES if x["fidelity"]["level"] == "litgpt_dims_on_template"]
    assert conv
    keys = {
        "n_layer": ("num_hidden_layers",),
        "n_embd": ("hidden_size",),
        "n_head": ("num_attention_heads",),
        "n_query_groups": ("num_key_value_heads",),
        "padded_vocab_size": ("vocab_size",),
        "intermediate_size": ("intermediate_size",),
    }
    for x in conv:
        t = _text(json.loads(x["config_path"].read_text()))
        for field, ks in keys.items():
            assert _first(t, *ks) == x["litgpt_sizes"][field], (x["id"], field)
        check = next(n for n in x["notes"] if n.startswith("checked: "))
        ours, cited = (int(v.replace(",", "")) for v in re.findall(r"([\d,]{7,})", check)[:2])
        spec = resolve_model(x["id"], allow_hub=False)
        parts = param_breakdown(spec)
        total = sum(parts.values()) - (parts["vision"] if "without the vision tower" in check else 0)
        assert total == ours and abs(ours - cited) <= 0.0005 * cited


_DIMS = re.compile(
    r"\((\d+) layers, hidden (\d+), (\d+) heads, (\d+) KV groups, head size (\d+), intermediate (\d+), vocab (\d+)"
)


def test_litgpt_cited_variants_state_the_base_config_values():
    """Each litgpt-cited variant names the sizes litgpt gives; the stored base config must have them."""
    rows = yaml.safe_load((SOURCES_DIR / "variants-litgpt.yaml").read_text())["variants"]
    n = 0
    for base, variants in rows.items():
        spec = resolve_model(base, allow_hub=False)
        for v in variants:
            m = _DIMS.search(v["why"])
            assert m, v["id"]
            layers, hidden, heads, kv, head, inter, vocab = (int(g) for g in m.groups())
            assert (spec.num_layers, spec.hidden_size, spec.num_attention_heads) == (layers, hidden, heads)
            assert (spec.num_kv_heads, spec.head_size, spec.vocab_size) == (kv, head, vocab)
            assert inter in (spec.intermediate_size, spec.moe_intermediate_size)
            vs = resolve_model(v["id"], allow_hub=False)
            assert vs.num_layers == spec.num_layers and vs.notes[0].startswith(
                f"{v['id']} uses the config of"
            )
            for key, val in (v.get("overrides") or {}).items():
                assert _text(vs.config).get(key) == val
            n += 1
    assert n >= 50


def test_every_variant_states_why():
    variants = load_variants()
    assert sum(len(v) for v in variants.values()) >= 50
    for base, rows in variants.items():
        assert catalogue.lookup(base) is not None
        for v in rows:
            assert len(v["why"]) > 40 and catalogue.lookup(v["id"]).base_id == catalogue.lookup(base).base_id


# -------------------------------------------------------------------------------------------------
# lookups: case, laziness


def test_lookup_is_case_insensitive_like_the_hub():
    x = BY_KIND["pypi"][0]
    for ref in (x["id"].upper(), x["id"].lower(), x["dir"]):
        e = catalogue.lookup(ref)
        assert e is not None and e.base_id == x["id"]
    spec = resolve_model(x["id"].swapcase(), allow_hub=False)
    assert spec.num_layers == resolve_model(x["id"], allow_hub=False).num_layers


def test_listing_reads_the_index_only():
    from click.testing import CliRunner

    from kvlint.cli import main

    catalogue._index.cache_clear()
    catalogue._raw.cache_clear()
    catalogue._by_name.cache_clear()
    out = CliRunner().invoke(main, ["models"])
    assert out.exit_code == 0, out.output
    assert catalogue._raw.cache_info().currsize == 0  # no entry.json was read
    rows = catalogue.list_index()
    assert all(r.id in out.output for r in rows)
    catalogue.lookup(rows[0].id)
    assert catalogue._raw.cache_info().currsize == 1


# -------------------------------------------------------------------------------------------------
# name-derived quantized builds

#: suffix -> quant_method the rule assigns (the table in docs/models.md), on a catalogued unquantized base.
SUFFIX_METHOD = {
    "-AWQ": "awq",
    "-GPTQ-Int4": "gptq",
    "-GPTQ-Int8": "gptq",
    "-FP8-dynamic": "compressed-tensors",
    "-bnb-4bit": "bitsandbytes",
    "-quantized.w4a16": "compressed-tensors",
    "-quantized.w8a8": "compressed-tensors",
    "-NVFP4": "compressed-tensors",
}


def _unquantized_base() -> str:
    """A catalogued unquantized dense llama/qwen2/mistral model whose repository name is catalogued once."""
    names: dict[str, int] = {}
    for r in catalogue.list_index():
        for i in (r.id, *r.variants):
            names[i.split("/")[1].lower()] = names.get(i.split("/")[1].lower(), 0) + 1
    for r in catalogue.list_index():
        spec = resolve_model(r.id, allow_hub=False)
        if spec.quant_method or spec.num_experts or spec.model_type not in ("llama", "qwen2", "mistral"):
            continue
        if names[r.id.split("/")[1].lower()] == 1:
            return r.id
    raise AssertionError("no plain base found")


def _ids() -> list[str]:
    return [r.id for r in catalogue.list_index()]


@pytest.mark.parametrize("suffix", sorted(SUFFIX_METHOD))
def test_name_derived_build_states_its_assumption(suffix):
    base = _unquantized_base()
    org, name = base.split("/")
    ref = f"someone-{org}/{name}{suffix}"  # another publisher: found by the unique repository name
    assert catalogue.lookup(ref) is None
    spec = resolve_model(ref, allow_hub=False)
    assert "derived from name" in spec.source and base in spec.source
    assert spec.notes[0].startswith("ASSUMPTION (derived from name)") and suffix in spec.notes[0]
    assert spec.quant_method == SUFFIX_METHOD[suffix]
    assert spec.weight_bytes is None  # the base's checkpoint size is of the unquantized weights
    b = resolve_model(base, allow_hub=False)
    assert (spec.num_layers, spec.num_kv_heads, spec.head_size) == (b.num_layers, b.num_kv_heads, b.head_size)
    # the weight estimate uses the inferred method's byte rate on the base's linear layers
    wq, src = weight_bytes(spec, dtype_bytes=2)
    parts = param_breakdown(b)
    rate, label = linear_bytes_per_param(spec.quant_method or "", spec.quant_config, 2)
    kept = parts["embed"] + parts["other"] + parts["vision"]
    assert wq == int((parts["linear"] + parts["experts"]) * rate + kept * 2) and label in src
    assert wq < weight_bytes(b.__class__(**{**b.__dict__, "weight_bytes": None}), dtype_bytes=2)[0]


def test_name_derivation_is_case_insensitive_and_prefers_the_same_publisher():
    base = _unquantized_base()
    spec = resolve_model(f"{base}-awq".upper(), allow_hub=False)
    assert spec.quant_method == "awq" and base in spec.source


def test_sibling_quantization_config_is_reused_without_layer_lists():
    """An unknown Qwen/...-FP8 reuses the quantization_config of a catalogued Qwen/...-FP8 of the same type."""
    sibs = [i for i in _ids() if i.startswith("Qwen/Qwen3-") and i.endswith("-FP8")]
    bases = [
        i for i in _ids() if i.startswith("Qwen/Qwen3-") and i + "-FP8" not in _ids() and i.endswith("B")
    ]
    bases = [b for b in bases if not resolve_model(b, allow_hub=False).quant_method]
    assert sibs and bases
    spec = resolve_model(bases[0] + "-FP8", allow_hub=False)
    assert "copied from the catalogued Qwen/" in spec.notes[0]
    sib_cfgs = [json.loads((DATA / catalogue.lookup(s).dir / "config.json").read_text()) for s in sibs]
    sib_qcs = [_text(c).get("quantization_config") or c.get("quantization_config") for c in sib_cfgs]
    stripped = [
        {k: v for k, v in q.items() if k not in ("modules_to_not_convert", "ignore")} for q in sib_qcs
    ]
    assert spec.quant_config in stripped


def test_no_derivation_without_a_known_suffix_or_base():
    base = _unquantized_base()
    assert catalogue.derive_quantized(base + "-Turbo") is None
    assert catalogue.derive_quantized("nobody/not-a-model-AWQ") is None
    q = next(i for i in _ids() if i.endswith("-FP8") and resolve_model(i, allow_hub=False).quant_method)
    assert catalogue.derive_quantized(q + "-AWQ") is None  # the base is itself quantized
    with pytest.raises(ModelUnavailable, match="not in the bundled catalogue"):
        resolve_model("nobody/not-a-model-AWQ", allow_hub=False)


def test_a_real_catalogued_build_wins_over_derivation():
    q = next(x["id"] for x in BY_KIND["pypi"] if x["id"].endswith("-FP8"))
    spec = resolve_model(q, allow_hub=False)
    assert "derived from name" not in spec.source and not spec.notes[:1] == ["ASSUMPTION"]


def test_derivation_after_a_failed_hub_lookup_quotes_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    base = _unquantized_base()
    spec = resolve_model(base + "-GPTQ-Int4", allow_hub=True)
    assert "derived from name" in spec.source and "HF_HUB_OFFLINE" in spec.notes[0]


# -------------------------------------------------------------------------------------------------
# build errors


def test_build_rejects_bad_source_entries(tmp_path):
    x = dict(BY_KIND["pypi"][0])
    entry = {k: v for k, v in x.items() if k not in ("config_path", "quant_path")}
    bad = tmp_path / "list.yaml"
    (tmp_path / x["dir"]).mkdir()
    (tmp_path / x["dir"] / "config.json").write_bytes(x["config_path"].read_bytes())
    bad.write_text(yaml.safe_dump({"entries": [entry]}))
    assert load_extra_sources(bad, tmp_path)[0]["id"] == x["id"]
    no_pkg = {**entry, "source": {k: v for k, v in entry["source"].items() if k != "package"}}
    bad.write_text(yaml.safe_dump({"entries": [no_pkg]}))
    with pytest.raises(CatalogueBuildError, match="source.package"):
        load_extra_sources(bad, tmp_path)
    no_lic = {**entry, "source": {k: v for k, v in entry["source"].items() if k != "licence"}}
    bad.write_text(yaml.safe_dump({"entries": [no_lic]}))
    with pytest.raises(CatalogueBuildError, match="source.licence"):
        load_extra_sources(bad, tmp_path)
    odd = {**entry, "source": {**entry["source"], "kind": "ftp"}}
    bad.write_text(yaml.safe_dump({"entries": [odd]}))
    with pytest.raises(CatalogueBuildError, match="unknown source.kind"):
        load_extra_sources(bad, tmp_path)


def test_variants_need_a_reason(tmp_path):
    (tmp_path / "variants.yaml").write_text(yaml.safe_dump({"variants": {"a/b": [{"id": "a/c"}]}}))
    with pytest.raises(CatalogueBuildError, match="why are required"):
        load_variants(tmp_path)


# -------------------------------------------------------------------------------------------------
# bench/model_coverage.py


def test_model_coverage_counts_hub_ids_of_given_directories(tmp_path):
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import model_coverage

    base = _unquantized_base()
    docs = []
    for i, model in enumerate([base, base + "-AWQ", "nobody/no-such-model", "/models/local-path"]):
        docs.append(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w{i}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
            f'        args: ["--model", "{model}"]\n'
        )
    (tmp_path / "m.yaml").write_text("---\n".join(docs))
    # an operator object naming its model (a KAITO preset): counted as the hub id kvlint looked up (the report's
    # model_id), here one the catalogue lacks, not left out because its command names no hub id
    kaito = (ROOT / "fixtures" / "crds" / "kaito-workspace-phi-3-medium-4k.yaml").read_text()
    (tmp_path / "k.yaml").write_text(kaito.replace("phi-3-medium-4k-instruct", "phi-3-medium-128k-instruct"))
    res = model_coverage.coverage([str(tmp_path)])
    status = {r["id"]: r["status"] for r in res["rows"]}
    assert status == {
        base: "catalogue",
        base + "-AWQ": "derived",
        "nobody/no-such-model": "unresolved",
        "microsoft/Phi-3-medium-128k-instruct": "unresolved",
    }
    assert res["hub_ids"] == 4 and res["resolved"] == 2
    assert not model_coverage.is_hub_id("/models/x") and not model_coverage.is_hub_id("$(MODEL)")
    assert not model_coverage.is_hub_id("kaito-preset:phi-4") and model_coverage.is_hub_id("org/name-1.5B")


def test_source_listing_names_every_fixture_config_with_its_source():
    listing = (ROOT / "fixtures" / "models" / "catalogue" / "SOURCE.md").read_text()
    rows = {line.split(" | ")[0].lstrip("| "): line for line in listing.splitlines() if line.startswith("| ")}
    kept = [x for x in SOURCE_ENTRIES if x["config_path"].parent.parent.name == "catalogue"]
    assert kept and len(kept) == len(rows) - 1  # minus the header row
    for x in kept:
        row, src = rows[x["id"]], x["source"]
        where = {"pypi": src.get("package"), "hf_page": src.get("url")}.get(
            src.get("kind"), src.get("commit")
        )
        assert str(where) in row and src["licence"] in row and x["fidelity"]["level"] in row


#: KAITO Workspaces copied from kaito-project/kaito (fixtures/crds/SOURCE.md) naming presets whose models the
#: catalogue holds through kvlint/models/sources/github-python-config-dicts.yaml.
KAITO_WORKSPACES = ["kaito-workspace-phi-3-medium-4k.yaml", "kaito-workspace-phi-3-mini-128k.yaml"]


@pytest.mark.parametrize("name", KAITO_WORKSPACES)
def test_kaito_workspace_presets_are_sized_from_the_catalogue_offline(name):
    """The preset -> hub id step (kvlint/data/kaito_presets.yaml) lands on a stored config: the Workspace is
    planned offline, with no KV502, and the plan's KV bytes per token follow that config's fields."""
    from kvlint.pipeline import Options, run_check

    path = ROOT / "fixtures" / "crds" / name
    preset = yaml.safe_load(path.read_text())["inference"]["preset"]["name"]
    presets = yaml.safe_load((ROOT / "kvlint" / "data" / "kaito_presets.yaml").read_text())["presets"]
    model_id = presets[preset]["model"]
    (x,) = [x for x in SOURCE_ENTRIES if x["id"] == model_id]
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = [c for c in res.containers if c.workload.kind == "Workspace"]
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    assert cr.model is not None and cr.model.id == model_id
    assert x["source"]["repo"] in cr.model.source
    assert cr.plan is not None
    cfg = _text(json.loads(x["config_path"].read_text()))
    head = cfg["hidden_size"] // cfg["num_attention_heads"]
    dtype_bytes = {"bfloat16": 2, "float16": 2}[cfg["torch_dtype"]]
    assert (
        cr.plan.kv_bytes_per_token
        == cfg["num_hidden_layers"] * cfg["num_key_value_heads"] * head * 2 * dtype_bytes
    )


def test_unresolved_kaito_preset_reports_the_hub_id_it_stands_for(tmp_path):
    """A KAITO Workspace whose preset's model has no config offline (KAITO's registry maps the preset
    phi-3-medium-128k-instruct to microsoft/Phi-3-medium-128k-instruct, which the catalogue lacks: docs/models.md
    "Left out") reports, as the JSON ``model_id``, that hub id -- the model kvlint looked up and the one to pull --
    as it does when the preset's model resolves, not the internal ``kaito-preset:`` reference."""
    from kvlint.models.resolve import kaito_hub_id, kaito_preset
    from kvlint.pipeline import Options, run_check

    text = (ROOT / "fixtures" / "crds" / "kaito-workspace-phi-3-medium-4k.yaml").read_text()
    (tmp_path / "w.yaml").write_text(text.replace("phi-3-medium-4k-instruct", "phi-3-medium-128k-instruct"))
    known = kaito_preset("phi-3-medium-128k-instruct")
    assert known is not None
    res = run_check([str(tmp_path / "w.yaml")], Options(allow_hub=False))
    (cr,) = [c for c in res.containers if c.workload.kind == "Workspace"]
    assert cr.model is None and cr.model_error and known[0] in cr.model_error
    assert cr.as_dict()["model_id"] == known[0]
    assert kaito_hub_id("kaito-image:phi-3-medium-128k-instruct") == known[0]
    assert kaito_hub_id("kaito-preset:no-such-preset") is None and kaito_hub_id(known[0]) is None


def test_cross_checked_parameter_counts_hold():
    """A source-list note that quotes another source's parameter count as equal to kvlint's count (e.g.
    keras-hub's preset metadata for microsoft/Phi-3-mini-128k-instruct) stays true."""
    from kvlint.models.weights import param_count

    quoted = [
        (x["id"], int(m.group(1)))
        for x in SOURCE_ENTRIES
        for note in x.get("notes") or []
        for m in [re.search(r"params (\d+); kvlint counts the same", note)]
        if m
    ]
    assert quoted
    for model_id, n in quoted:
        assert param_count(resolve_model(model_id, allow_hub=False)) == n, model_id


# -------------------------------------------------------------------------------------------------
# models real manifests name (KubeAI's catalogue, vLLM's chart, llmaz): resolved offline from the catalogue

MANIFEST_MODELS = [
    "facebook/opt-125m",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
    "allenai/Llama-3.1-Tulu-3-8B",
    "intfloat/e5-mistral-7b-instruct",
    "arcee-ai/Llama-3.1-SuperNova-Lite",
    "Qwen/Qwen2-0.5B-Instruct",
    "mistralai/Mistral-Small-24B-Instruct-2501",
    "HuggingFaceH4/zephyr-7b-beta",
    "google/gemma-4-31B-it",
    "deepseek-ai/deepseek-coder-33b-instruct",
]
# catalogued beside them: siblings of a named model that public manifests also serve
SIBLING_MODELS = ["deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"]


def _fixture_texts_naming(model_id: str) -> list[Path]:
    """Manifest and chart-values fixtures (not the catalogue's own files) whose text names ``model_id``."""
    hits = []
    for p in (ROOT / "fixtures").rglob("*.yaml"):
        if "models" in p.relative_to(ROOT / "fixtures").parts[:1]:
            continue
        if model_id in p.read_text(errors="replace"):
            hits.append(p)
    return hits


@pytest.mark.parametrize("model_id", MANIFEST_MODELS)
def test_models_real_manifests_name_are_catalogued(model_id):
    """Each id is named by a real manifest or chart kept under fixtures/ and is in the bundled catalogue."""
    assert _fixture_texts_naming(model_id), model_id
    assert catalogue.lookup(model_id) is not None


@pytest.mark.parametrize("model_id", MANIFEST_MODELS + SIBLING_MODELS)
def test_models_real_manifests_name_resolve_offline_with_their_stored_shape(model_id):
    """The id resolves offline (no hub) to the shape of the config the catalogue stores for it (read here from
    that stored file, not typed)."""
    entry = catalogue.lookup(model_id)
    assert entry is not None
    cfg, _ = catalogue.load_config(entry)
    t = _text(cfg)
    spec = resolve_model(model_id, allow_hub=False)
    assert spec.id == model_id and "derived from name" not in spec.source
    heads = t["num_attention_heads"]
    assert spec.num_layers == len(spec.layers) == t["num_hidden_layers"]
    assert spec.hidden_size == t["hidden_size"] and spec.num_attention_heads == heads
    assert spec.num_kv_heads == t.get("num_key_value_heads", heads)
    assert spec.head_size == t.get("head_dim") or t["hidden_size"] // heads
    assert spec.vocab_size == t["vocab_size"]
    assert spec.max_position_embeddings == t["max_position_embeddings"]


def test_unquantized_variant_drops_the_quantized_builds_settings():
    """google/gemma-4-31B-it is listed as the unquantized checkpoint of the stored nvidia/Gemma-4-31B-IT-NVFP4
    config: same layer stack and parameter count, but no quantization_config nor hf_quant_config.json, no cited
    checkpoint size, and its weights priced at 2 B a parameter (bf16), above the NVFP4 build's."""
    nv_entry = catalogue.lookup("nvidia/Gemma-4-31B-IT-NVFP4")
    entry = catalogue.lookup("google/gemma-4-31B-it")
    assert nv_entry is not None and entry is not None and entry.base_id == nv_entry.id
    assert entry.unquantized and not nv_entry.unquantized
    nv_cfg, nv_quant = catalogue.load_config(nv_entry)
    cfg, quant = catalogue.load_config(entry)
    assert "quantization_config" in nv_cfg and nv_quant is not None
    assert "quantization_config" not in cfg and quant is None and entry.weight_bytes is None
    assert _text(cfg) == _text(nv_cfg)
    nv_spec = resolve_model("nvidia/Gemma-4-31B-IT-NVFP4", allow_hub=False)
    spec = resolve_model("google/gemma-4-31B-it", allow_hub=False)
    assert nv_spec.quant_method is not None and spec.quant_method is None
    assert spec.layers == nv_spec.layers
    n = param_count(spec)
    assert n == param_count(nv_spec)
    bf16, _ = weight_bytes(spec, dtype_bytes=2)
    nvfp4, _ = weight_bytes(nv_spec, dtype_bytes=2)
    assert bf16 == 2 * n and nvfp4 < bf16
    # the base stays as it was: its own lookup is not unquantized by the variant
    assert catalogue.lookup("nvidia/Gemma-4-31B-IT-NVFP4").has_hf_quant_config


def test_deepseek_coder_33b_instruct_matches_its_checkpoint_tensors():
    """deepseek-ai/deepseek-coder-33b-instruct (a variant of the stored llm4decompile-33b config): kvlint's
    parameter count equals the 33,342,991,360 elements a listing of its checkpoint (snapshot 61dc97b9, cited in
    the variant's reason) counts, and the instruct model's eos (32021) is set over the base fine-tune's."""
    entry = catalogue.lookup("deepseek-ai/deepseek-coder-33b-instruct")
    assert entry is not None and entry.base_id == "arise-sustech/llm4decompile-33b"
    assert "33,342,991,360" in entry.notes[0]
    cfg, _ = catalogue.load_config(entry)
    assert cfg["eos_token_id"] == 32021
    spec = resolve_model("deepseek-ai/deepseek-coder-33b-instruct", allow_hub=False)
    assert param_count(spec) == 33_342_991_360


def test_unquantized_must_be_true():
    """A variant list may only mark ``unquantized: true`` (anything else is refused when the catalogue is built)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "variants.yaml").write_text(
            "variants:\n  a/b:\n  - id: c/d\n    why: test\n    unquantized: 'no'\n"
        )
        with pytest.raises(CatalogueBuildError, match="unquantized"):
            load_variants(Path(tmp))
        (Path(tmp) / "variants.yaml").write_text(
            "variants:\n  a/b:\n  - id: c/d\n    why: test\n    unquantized: true\n"
        )
        assert load_variants(Path(tmp)) == {"a/b": [{"id": "c/d", "why": "test", "unquantized": True}]}


@pytest.mark.parametrize(
    "model_id", ["deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"]
)
def test_r1_distill_qwen_sliding_window_is_not_applied(model_id):
    """The distills' configs carry sliding_window 4096 with use_sliding_window false: every layer is full
    attention, so bf16 KV bytes/token = 2 x layers x kv_heads x head_dim x 2 over all layers (stored config)."""
    from kvlint.memory.kv import kv_bytes_per_token

    t = json.loads((DATA / model_id.replace("/", "--") / "config.json").read_text())
    assert t["sliding_window"] and t["use_sliding_window"] is False
    spec = resolve_model(model_id, allow_hub=False)
    assert {ly.kind for ly in spec.layers} == {"full"}
    head = t["hidden_size"] // t["num_attention_heads"]
    assert (
        kv_bytes_per_token(spec, 1, "auto")
        == 2 * t["num_hidden_layers"] * t["num_key_value_heads"] * head * 2
    )


def test_kubeai_distill_model_is_sized_offline():
    """KubeAI's deepseek-r1-distill-qwen-1.5b Model (fixtures/collected) resolves offline: no KV502."""
    from kvlint.pipeline import Options, run_check

    path = (
        ROOT
        / "fixtures"
        / "collected"
        / "substratusai__kubeai__manifests__models__deepseek-r1-distill-qwen-1.5b-rtx4070.yaml"
    )
    res = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"


# -------------------------------------------------------------------------------------------------
# models the shared corpus and fixtures/collected name that models7 left unknown (docs/models.md)

HF_CACHE_MODELS = ["deepseek-ai/deepseek-coder-6.7b-instruct"]


@pytest.mark.parametrize("model_id", HF_CACHE_MODELS)
def test_hf_cache_snapshot_configs_are_the_hubs_bytes(model_id):
    """A config copied from a Hugging Face cache committed to a repository is recorded with the cache's proof: the
    git blob id of the stored bytes equals the blob id the note quotes from the Hub's file listing of that
    revision (trees/<revision>.json), and its size too."""
    (e,) = [x for x in SOURCE_ENTRIES if x["id"] == model_id]
    data = e["config_path"].read_bytes()
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    assert e["source"]["path"].endswith(f"/blobs/{blob}")
    note = " ".join(e["notes"])
    assert f"config.json as blob {blob}, {len(data)} bytes" in note


@pytest.mark.parametrize("model_id", HF_CACHE_MODELS)
def test_hf_cache_models_resolve_offline_with_their_stored_shape(model_id):
    """Offline, the id resolves to the stored config's shape (read here from that file), and its cited
    checkpoint size is the bf16 bytes of the parameters kvlint counts from the architecture (the index's
    total_size is tensor bytes, so an architecture read wrongly would not match it)."""
    from kvlint.models.weights import param_count

    entry = catalogue.lookup(model_id)
    assert entry is not None
    cfg, _ = catalogue.load_config(entry)
    t = _text(cfg)
    spec = resolve_model(model_id, allow_hub=False)
    assert spec.id == model_id and "derived from name" not in spec.source
    assert spec.num_layers == t["num_hidden_layers"] and spec.hidden_size == t["hidden_size"]
    assert spec.num_kv_heads == t["num_key_value_heads"] and spec.vocab_size == t["vocab_size"]
    assert spec.weight_bytes is not None and spec.weight_bytes == 2 * param_count(spec)


# Made up for this test: one model directory, /models/deepseek-coder-6.7b-instruct (the path vllm-project/aibrix's
# samples/heterogeneous deployments serve), named by a Deployment's vLLM args, a KServe storage URI and a
# production-stack modelURL.
_CODER_DIR = "/models/deepseek-coder-6.7b-instruct"
_CODER_DEPLOYMENT = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: coder-args}}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [python3, -m, vllm.entrypoints.openai.api_server]
        args: [--model, {_CODER_DIR}, --max-model-len, "8192"]
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""
_CODER_KSERVE = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: coder-kserve}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      storageUri: pvc://models/deepseek-coder-6.7b-instruct
      args: [--backend=vllm, --max-model-len=8192]
      resources: {limits: {nvidia.com/gpu: "1"}}
"""
_CODER_STACK = f"""\
servingEngineSpec:
  modelSpec:
  - name: coder-stack
    repository: vllm/vllm-openai
    tag: v0.8.5
    modelURL: {_CODER_DIR}
    replicaCount: 1
    requestCPU: 4
    requestMemory: 16Gi
    requestGPU: 1
    vllmConfig: {{maxModelLen: 8192}}
"""


@pytest.mark.parametrize(
    "name,text",
    [("args.yaml", _CODER_DEPLOYMENT), ("kserve.yaml", _CODER_KSERVE), ("values.yaml", _CODER_STACK)],
)
def test_directory_named_after_a_catalogued_model_is_sized_alike_everywhere(tmp_path, name, text):
    """A model directory whose last component is a catalogued repository name is sized as that model, with the
    KV505 note and no KV502, whether a Deployment's engine args, a KServe storage URI or a production-stack
    modelURL names it."""
    from kvlint.pipeline import Options, run_check

    f = tmp_path / name
    f.write_text(text)
    res = run_check([str(f)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "deepseek-ai/deepseek-coder-6.7b-instruct", cr.model_error
    assert cr.plan is not None or cr.fleet is not None
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    (note,) = [d.message for d in res.diagnostics if d.rule == "KV505"]
    assert "deepseek-coder-6.7b-instruct" in note


# -------------------------------------------------------------------------------------------------
# Nemotron-H configs that list their blocks (layers_block_type) and latent MoE (moe_latent_size)

LISTED_BLOCK_MODELS = [
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
    "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",
]


@pytest.mark.parametrize("model_id", LISTED_BLOCK_MODELS)
def test_layers_block_type_gives_the_layers_and_their_kinds(model_id):
    """A Nemotron-H config that stores its blocks as the list ``layers_block_type`` (no hybrid_override_pattern)
    has len(list) layers (transformers' NemotronHConfig.num_hidden_layers), KV only on its attention blocks and
    Mamba state on its Mamba blocks, counted here from the stored list."""
    cfg, _ = catalogue.load_config(catalogue.lookup(model_id))
    blocks = cfg["layers_block_type"]
    assert "hybrid_override_pattern" not in cfg
    spec = resolve_model(model_id, allow_hub=False)
    assert spec.num_layers == len(spec.layers) == len(blocks)
    kinds = [ly.kind for ly in spec.layers]
    assert kinds.count("full") == sum(b in ("attention", "full_attention") for b in blocks)
    assert kinds.count("mamba") == sum(b in ("mamba", "linear_attention") for b in blocks)
    assert kinds.count("full") + kinds.count("mamba") + kinds.count("none") == len(blocks)


@pytest.mark.parametrize(
    "model_id",
    ["nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8"],
)
def test_latent_moe_experts_are_counted_at_the_latent_width(model_id):
    """With ``moe_latent_size`` l, vLLM's NemotronHMoE runs the routed experts (up + down, relu2) at width l and
    adds the projections h x l and l x h: the count differs from the same config without the latent by exactly
    moe_layers x (E x 2 x (h - l) x I_moe - 2 x h x l), derived here from the stored config; and the total is
    within 1 % of the total the publisher's id states (120B, 550B)."""
    import dataclasses

    from kvlint.models.shapes import nemotron_h_pattern
    from kvlint.models.weights import param_count

    spec = resolve_model(model_id, allow_hub=False)
    t = spec.text_config or spec.config
    h, lat, E, inter = (
        t["hidden_size"],
        t["moe_latent_size"],
        t["n_routed_experts"],
        t["moe_intermediate_size"],
    )
    n_moe = nemotron_h_pattern(t).count("E")
    plain = dataclasses.replace(spec, config={**t, "moe_latent_size": None}, text_config=None)
    assert param_count(plain) - param_count(spec) == n_moe * (E * 2 * (h - lat) * inter - 2 * h * lat)
    stated = int(re.search(r"-(\d+)B-A\d+B", model_id).group(1)) * 10**9
    assert abs(param_count(spec) - stated) / stated < 0.01


def test_fp8_block_build_of_a_bf16_release_is_derived_and_sized():
    """KServe's Nemotron-3 Ultra sample serves RedHatAI/...-FP8-block: not catalogued, it is derived (KV505) from
    nvidia's -BF16 build with compressed-tensors' FP8_BLOCK scheme, and both containers are sized (no KV502)."""
    from kvlint.pipeline import Options, run_check

    ref = "RedHatAI/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8-block"
    entry = catalogue.derive_quantized(ref)
    assert entry is not None and entry.base_id == "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"
    (group,) = entry.derived["quantization_config"]["config_groups"].values()
    assert group["weights"]["strategy"] == "block" and group["weights"]["block_structure"] == [128, 128]
    path = (
        ROOT
        / "fixtures"
        / "collected"
        / "kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__nemotron-3-ultra-pd.yaml"
    )
    res = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    assert res.containers and all(cr.model is not None and cr.model.id == ref for cr in res.containers)
    assert all(cr.plan is not None or cr.fleet is not None for cr in res.containers)


def test_qwen3_coder_30b_a3b_is_catalogued_and_sizes_kserves_tool_calling_sample():
    """Qwen/Qwen3-Coder-30B-A3B-Instruct (github-model-dirs.yaml: the config lucienhuangfu/eLLM first committed,
    before its test edits) resolves offline to its stored shape, and KServe's agentic tool-calling sample, which
    serves the -FP8 build, is sized against the fleet from it (KV505: derived from the name) instead of "model
    unknown" (KV502)."""
    from kvlint.pipeline import Options, run_check

    base = "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    entry = catalogue.lookup(base)
    assert entry is not None
    cfg, _ = catalogue.load_config(entry)
    spec = resolve_model(base, allow_hub=False)
    assert spec.num_layers == cfg["num_hidden_layers"] and spec.num_kv_heads == cfg["num_key_value_heads"]
    assert spec.max_position_embeddings == cfg["max_position_embeddings"]
    assert (spec.num_experts, spec.moe_intermediate_size) == (
        cfg["num_experts"],
        cfg["moe_intermediate_size"],
    )
    path = (
        ROOT
        / "fixtures"
        / "collected"
        / "kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__llmisvc-single-gpu.yaml"
    )
    res = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == base + "-FP8" and cr.fleet


@pytest.mark.parametrize("model_id", ["google/gemma-4-26B-A4B", "nvidia/Gemma-4-31B-IT-NVFP4"])
def test_gemma4_full_attention_layers_use_the_global_head_shape(model_id):
    """vLLM's Gemma4DecoderLayer gives full-attention layers head_dim = global_head_dim and, with
    attention_k_eq_v, num_global_key_value_heads KV heads; sliding layers keep head_dim and num_key_value_heads.
    bf16 KV bytes/token at TP 1 is therefore the sum over the stored layer_types of 2 x heads x dim x 2."""
    from kvlint.memory.kv import kv_bytes_per_token

    cfg, _ = catalogue.load_config(catalogue.lookup(model_id))
    t = cfg["text_config"]
    assert t["attention_k_eq_v"] and t["global_head_dim"] != t["head_dim"]
    spec = resolve_model(model_id, allow_hub=False)
    full = [ly for ly in spec.layers if ly.kind == "full"]
    assert full and {(ly.kv_heads, ly.head_size) for ly in full} == {
        (t["num_global_key_value_heads"], t["global_head_dim"])
    }
    per_type = {
        "full_attention": 2 * t["num_global_key_value_heads"] * t["global_head_dim"] * 2,
        "sliding_attention": 2 * t["num_key_value_heads"] * t["head_dim"] * 2,
    }
    assert kv_bytes_per_token(spec, 1, "auto") == sum(per_type[x] for x in t["layer_types"])


def _gemma4_e2b_text_config() -> dict:
    """Gemma 4 E2B's text_config as its published values are quoted in vllm-project/tpu-inference PR #2690 (the
    E2B/E4B text_config table: hidden 1536, 35 layers, 1 KV head, num_kv_shared_layers 20, layer_types
    (4 sliding + 1 full) x 7) and the Gemma 4 fragments the catalogue notes cite (head_dim 256, global_head_dim
    512, sliding_window 512, 8 attention heads); the other keys are left out. Not a catalogued config."""
    return {
        "model_type": "gemma4_text",
        "hidden_size": 1536,
        "num_hidden_layers": 35,
        "num_attention_heads": 8,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "global_head_dim": 512,
        "sliding_window": 512,
        "num_kv_shared_layers": 20,
        "intermediate_size": 6144,
        "vocab_size": 262144,
        "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7,
        "dtype": "bfloat16",
    }


def test_gemma4_kv_shared_layers_hold_no_kv_cache():
    """vLLM's Gemma4Attention gives the last num_kv_shared_layers layers a kv_sharing_target_layer_name (the last
    earlier layer of the same type) and GPUModelRunner.get_kv_cache_spec skips them, so only the first
    35 - 20 = 15 layers hold KV: layer_types[:15] is 12 sliding (1 KV head x 256) and 3 full (1 x 512).
    bf16 at TP 1: 12 x 2 x 1 x 256 x 2 + 3 x 2 x 1 x 512 x 2 = 12,288 + 6,144 = 18,432 B/token (all 35 layers
    would be 43,008). The V1 KV-cache groups count 15 layers, and weights still count every layer's attention."""
    from kvlint.memory.kv import kv_bytes_per_token
    from kvlint.memory.vllm import build_groups
    from kvlint.models.config import parse_config
    from kvlint.models.weights import param_count

    t = _gemma4_e2b_text_config()
    spec = parse_config({"text_config": t, "model_type": "gemma4"}, model_id="gemma4-e2b-test", source="test")
    first = t["num_hidden_layers"] - t["num_kv_shared_layers"]
    held = t["layer_types"][:first]
    per_type = {
        "full_attention": 2 * t["num_key_value_heads"] * t["global_head_dim"] * 2,
        "sliding_attention": 2 * t["num_key_value_heads"] * t["head_dim"] * 2,
    }
    assert kv_bytes_per_token(spec, 1, "auto") == sum(per_type[x] for x in held) == 18_432
    assert [ly.kv_shared for ly in spec.layers] == [False] * first + [True] * t["num_kv_shared_layers"]
    groups, _, _, _ = build_groups(list(spec.layers), 1, 2, "auto", 16, True)
    assert sum(g.layers for g in groups) == first
    unshared = parse_config(
        {"text_config": {**t, "num_kv_shared_layers": 0}, "model_type": "gemma4"}, model_id="x", source="test"
    )
    assert kv_bytes_per_token(unshared, 1, "auto") == sum(per_type[x] for x in t["layer_types"]) == 43_008
    assert param_count(spec) == param_count(unshared)  # the shared layers' projections are in the checkpoint
    assert any("num_kv_shared_layers 20" in n for n in spec.notes)


def test_gemma4_e2b_is_catalogued_with_its_published_text_config_and_sizes_the_kuberay_sample():
    """google/gemma-4-E2B-it (tt-metal's copy, github-tt-metal.yaml) has the text_config values published for
    E2B (the dict above), resolves offline under any letter case, holds KV in its first num_hidden_layers -
    num_kv_shared_layers layers only, and the KubeRay Ray Serve LLM sample that serves it (shared corpus) is
    sized on the B200 it names instead of "model unknown"."""
    from kvlint.memory.kv import kv_bytes_per_token
    from kvlint.pipeline import Options, run_check

    cfg, _ = catalogue.load_config(catalogue.lookup("google/gemma-4-E2B-it"))
    t = cfg["text_config"]
    assert {k: t[k] for k in _gemma4_e2b_text_config()} == _gemma4_e2b_text_config()
    spec = resolve_model("google/gemma-4-E2B-it", allow_hub=False)
    assert resolve_model("google/gemma-4-e2b-it", allow_hub=False).source == spec.source
    held = t["layer_types"][: t["num_hidden_layers"] - t["num_kv_shared_layers"]]
    per_type = {
        "full_attention": 2 * t["num_key_value_heads"] * t["global_head_dim"] * 2,
        "sliding_attention": 2 * t["num_key_value_heads"] * t["head_dim"] * 2,
    }
    assert kv_bytes_per_token(spec, 1, "auto") == sum(per_type[x] for x in held)
    sample = (
        ROOT.parent
        / "shared"
        / "corpus"
        / "manifests"
        / ("ray-project__kuberay__ray-operator__config__samples__ray-service.high-throughput-gemma4.yaml")
    )
    if not sample.is_file():
        pytest.skip("the shared corpus is not beside the repository")
    res = run_check([str(sample)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "google/gemma-4-E2B-it" and cr.plan is not None


def test_llava_text_config_takes_llamaconfig_defaults():
    """llava-hf/llava-1.5-7b-hf's text_config stores no layer count, widths or heads; transformers (LlavaConfig ->
    LlamaConfig) and so vLLM run it with LlamaConfig's defaults. With them the fp16 parameter bytes kvlint counts
    (vision tower estimated roughly) come within 0.5 % of the checkpoint size cited from the uploaded
    model.safetensors.index.json; without a layer count the config would not parse at all."""
    from kvlint.models.weights import param_count

    cfg, _ = catalogue.load_config(catalogue.lookup("llava-hf/llava-1.5-7b-hf"))
    assert "num_hidden_layers" not in cfg["text_config"] and "hidden_size" not in cfg["text_config"]
    spec = resolve_model("llava-hf/llava-1.5-7b-hf", allow_hub=False)
    assert spec.max_position_embeddings == cfg["text_config"]["max_position_embeddings"]
    assert spec.vocab_size == cfg["text_config"]["vocab_size"]
    assert any("LlamaConfig defaults" in n for n in spec.notes)
    assert spec.weight_bytes and abs(2 * param_count(spec) - spec.weight_bytes) / spec.weight_bytes < 0.005


def test_layers_block_type_is_read_only_for_nemotron_h():
    """The list is NemotronHConfig's (legacy names mamba/attention remapped as transformers does); another
    model type's list of that name is not read as a Nemotron-H pattern. The dicts are made up for this test."""
    from kvlint.models.shapes import nemotron_h_pattern

    blocks = ["mamba", "moe", "attention", "mlp", "linear_attention", "full_attention"]
    assert nemotron_h_pattern({"model_type": "nemotron_h", "layers_block_type": blocks}) == "ME*-M*"
    assert nemotron_h_pattern({"model_type": "zamba2", "layers_block_type": ["mamba", "mamba"]}) is None
    assert nemotron_h_pattern({"model_type": "nemotron_h", "layers_block_type": ["mamba", "hybrid"]}) is None


def test_granite_3_1_8b_instruct_is_a_cited_variant_and_sizes_the_modelcar_that_serves_it(tmp_path):
    """ibm-granite/granite-3.1-8b-instruct is listed on the stored granite-3.2-8b config (sources/variants.yaml:
    configs saved from it carry the same architecture values), so the Parasol insurance chart's KServe modelcar
    oci://registry.redhat.io/rhelai1/modelcar-granite-3-1-8b-instruct:1.5 (fixtures/collected/charts) is sized
    from the image's name (KV505) instead of "model unknown". The variant: the same InferenceService with the
    modelcar named by its repository instead of its tag still resolves; a name of no catalogued Granite does not."""
    from kvlint.pipeline import Options, run_check

    entry = catalogue.lookup("ibm-granite/granite-3.1-8b-instruct")
    assert entry is not None and entry.base_id == "huihui-ai/granite-3.2-8b-instruct-abliterated"
    cfg, _ = catalogue.load_config(entry)
    assert (cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_key_value_heads"], cfg["vocab_size"]) == (
        40,
        4096,
        8,
        49155,
    )
    path = (
        ROOT
        / "fixtures/collected/charts/parasol-insurance-ic-shared-llm/inference-service-granite-modelcar.yaml"
    )
    text = path.read_text()
    image = "oci://registry.redhat.io/rhelai1/modelcar-granite-3-1-8b-instruct:1.5"
    assert text.count(image) == 1
    runtime = path.parent / "serving-runtime-vllm-granite-modelcar.yaml"
    res = run_check([str(path), str(runtime)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "ibm-granite/granite-3.1-8b-instruct"
    assert cr.plan is not None or cr.fleet is not None
    assert [d for d in res.diagnostics if d.rule == "KV505"] and not [
        d for d in res.diagnostics if d.rule == "KV502"
    ]
    for other, resolves in [
        ("oci://quay.io/example/granite-3.1-8b-instruct:modelcar", True),
        ("oci://quay.io/example/modelcar-granite-9-9-8b-instruct:1.0", False),
    ]:
        variant = tmp_path / "isvc.yaml"
        variant.write_text(text.replace(image, other))
        (cr,) = run_check([str(variant), str(runtime)], Options(allow_hub=False)).containers
        assert (cr.model is not None) is resolves, other


def test_tinyllama_chat_v0_3_is_v1_0_with_three_more_tokens_and_sizes_the_kubeai_model(tmp_path):
    """TinyLlama/TinyLlama-1.1B-Chat-v0.3 (sources/variants.yaml) takes the stored TinyLlama-1.1B-Chat-v1.0 config
    with its own vocabulary (32003, as configs saved from it at PY007/ read): KubeAI's dev Model with LoRA adapters
    (fixtures/collected, on an nvidia-gpu-l4 profile) gets a plan instead of "model unknown". The variant: the same
    Model naming v1.0 is planned with 32000 tokens, and the v0.3 plan's weights are 3 x hidden x 2 (embedding and
    head rows) x 2 bytes larger."""
    from kvlint.pipeline import Options, run_check

    v03 = resolve_model("TinyLlama/TinyLlama-1.1B-Chat-v0.3", allow_hub=False)
    v10 = resolve_model("TinyLlama/TinyLlama-1.1B-Chat-v1.0", allow_hub=False)
    assert (v03.vocab_size, v10.vocab_size) == (32003, 32000)
    assert param_count(v03) - param_count(v10) == 3 * v10.hidden_size * 2
    path = ROOT / "fixtures/collected/substratusai__kubeai__hack__dev-models__vllm-with-adapters.yaml"
    text = path.read_text()
    assert text.count("TinyLlama/TinyLlama-1.1B-Chat-v0.3") == 1
    (cr,) = run_check([str(path)], Options(allow_hub=False)).containers
    assert (
        cr.model is not None and cr.model.id == "TinyLlama/TinyLlama-1.1B-Chat-v0.3" and cr.plan is not None
    )
    variant = tmp_path / "model.yaml"
    variant.write_text(text.replace("TinyLlama-1.1B-Chat-v0.3", "TinyLlama-1.1B-Chat-v1.0"))
    (other,) = run_check([str(variant)], Options(allow_hub=False)).containers
    assert other.plan is not None and other.model is not None and other.model.vocab_size == 32000


def test_mistral_small_3_1_prices_its_pixtral_tower():
    """The catalogue's Mistral-Small-3.1 config was cut inside vision_config on the page it was transcribed from;
    completed from transformers' Mistral3Config defaults (the entry's fidelity note), the 24-layer Pixtral encoder and
    its projector are priced, and the two vLLM start-ups of the model print the weights kvlint now plans: gt-262
    (bf16, TP 1, 0.11.0: 44.76 GiB) and gt-366 (W8A8, TP 2, 0.19.0: 12.11 GiB), each within 1 % (-1.8 % and -3.9 %
    with the text stack alone)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import accuracy

    m = resolve_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503", allow_hub=False)
    assert m.config["vision_config"]["num_hidden_layers"] == 24
    assert param_breakdown(m)["vision"] > 0
    cases = {c["id"]: c for c in accuracy.load_cases(ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml")}
    for gid in ("gt-262", "gt-366"):
        case = cases[gid]
        p = accuracy.plan_case(case, accuracy.REPLAY[gid], ROOT / "fixtures" / "plan" / "models").plan
        printed = case["figures"]["weights_gib"]
        assert abs(p.weights_bytes / 2**30 - printed) / printed < 0.01, gid
