"""``kvlint models pull`` against a local endpoint speaking the Hub's API (tests/fakehub.py) through the real
``huggingface_hub`` client, and the pulled catalogue then read offline by ``kvlint check``, ``kvlint plan``
and the webhook's options.

The fake Hub serves real ``config.json`` / ``hf_quant_config.json`` files of the bundled catalogue (sources in
each ``kvlint/data/models/<dir>/entry.json``) under their own ids or test ids, with safetensors files reduced to
headers computed here from each config's shapes; manifests are fixtures/pull/deploy (fixtures/pull/SOURCE.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import huggingface_hub.utils._http as hf_http
import pytest
from click.testing import CliRunner, Result
from fakehub import FakeHub, Repo, commit_sha, llama_shapes, one_commit, safetensors_header, serve, sharded

from kvlint.cli import main
from kvlint.models import clear_cache, resolve_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "kvlint" / "data" / "models"
DEPLOY = ROOT / "fixtures" / "pull" / "deploy"
TOKEN = "hf_test_reader_token"


def _cfg(d: str) -> bytes:
    return (MODELS / d / "config.json").read_bytes()


SMALL = (
    ROOT / "fixtures" / "hub" / "config.json"
).read_bytes()  # Llama-3.2-1B-Instruct (fixtures/hub/SOURCE.md)
SINGLE, SINGLE_BYTES, SINGLE_PARAMS = safetensors_header(llama_shapes(json.loads(SMALL)))
SHARDS, SHARDED_BYTES, SHARDED_PARAMS = sharded(llama_shapes(json.loads(SMALL)), 3)
NVFP4 = "nvidia--Qwen3-32B-NVFP4"


def _repos() -> dict[str, Repo]:
    """Test ids (not in the bundled catalogue, so the Hub path is really taken) and the ids the fixture
    manifests name (in the bundled catalogue: the pulled entry must win over it)."""
    gemma = _cfg("google--gemma-2b-it")
    qwen = _cfg("Qwen--Qwen3-32B")
    smol135, smol360 = _cfg("HuggingFaceTB--SmolLM2-135M"), _cfg("HuggingFaceTB--SmolLM2-360M")
    qwen_files, _, _ = sharded(llama_shapes(json.loads(qwen)), 2)
    return {
        "acme-lab/single-file": one_commit(
            {"config.json": SMALL, "model.safetensors": SINGLE}, commit_sha("s1")
        ),
        "acme-lab/sharded": one_commit({"config.json": SMALL, **SHARDS}, commit_sha("sh1")),
        "acme-lab/qwen3-nvfp4": one_commit(
            {
                "config.json": _cfg(NVFP4),
                "hf_quant_config.json": (MODELS / NVFP4 / "hf_quant_config.json").read_bytes(),
                "README.md": b"readme",
            },
            commit_sha("nv1"),
        ),
        "acme-lab/gated": one_commit(
            {"config.json": SMALL, "model.safetensors": SINGLE}, commit_sha("g1"), gated=True, token=TOKEN
        ),
        "google/gemma-2b-it": one_commit(
            {
                "config.json": gemma,
                "model.safetensors": safetensors_header(llama_shapes(json.loads(gemma)))[0],
            },
            commit_sha("gemma"),
        ),
        "Qwen/Qwen3-32B": one_commit({"config.json": qwen, **qwen_files}, commit_sha("qwen")),
        "HuggingFaceTB/SmolLM2-135M": Repo(
            refs={"main": commit_sha("smol-main"), "v1.0": commit_sha("smol-v1")},
            files={
                commit_sha("smol-main"): {"config.json": smol135},
                commit_sha("smol-v1"): {"config.json": smol135},
            },
        ),
        "HuggingFaceTB/SmolLM2-360M": one_commit({"config.json": smol360}, commit_sha("smol360")),
    }


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub on 127.0.0.1 (``HF_ENDPOINT``), no token, online; the working directory is ``tmp_path``."""
    import huggingface_hub.constants as hfc

    clear_cache()
    state = FakeHub(_repos())
    gen = serve(state)
    next(gen)
    monkeypatch.setenv("HF_ENDPOINT", state.endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "3")
    for var in ("HF_HUB_OFFLINE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(hfc, "HF_HUB_OFFLINE", False)
    monkeypatch.chdir(tmp_path)
    yield state
    gen.close()
    clear_cache()


def _run(*args: str) -> Result:
    clear_cache()
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _offline(monkeypatch: pytest.MonkeyPatch, refused_port: int) -> None:
    """No network from here on: HF_HUB_OFFLINE and an endpoint where nothing listens (``refused_port``, the
    fixture of tests/conftest.py, held for the whole test)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{refused_port}")


def _tree(d: Path) -> dict[str, str]:
    return {
        str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


def _provenance(d: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((d / "provenance.json").read_text())
    return data


# --------------------------------------------------------------------------------------------------


def test_pull_ids_stores_configs_headers_and_provenance(hub: FakeHub, tmp_path: Path) -> None:
    r = _run("models", "pull", "acme-lab/single-file", "acme-lab/sharded", "acme-lab/qwen3-nvfp4")
    assert r.exit_code == 0, r.output
    cat = tmp_path / ".kvlint" / "models"
    single = _provenance(cat / "acme-lab--single-file")
    assert (
        single["commit"] == commit_sha("s1")
        and single["revision"] is None
        and single["id"] == "acme-lab/single-file"
    )
    assert single["files"]["config.json"] == {"sha256": hashlib.sha256(SMALL).hexdigest(), "size": len(SMALL)}
    assert (cat / "acme-lab--single-file" / "config.json").read_bytes() == SMALL
    assert (
        single["checkpoint"]["bytes"] == SINGLE_BYTES and single["checkpoint"]["parameters"] == SINGLE_PARAMS
    )
    assert single["pulled_at"].endswith("Z") and single["endpoint"] == hub.endpoint
    shard = _provenance(cat / "acme-lab--sharded")
    assert shard["checkpoint"]["bytes"] == SHARDED_BYTES and len(shard["checkpoint"]["files"]) == 3
    idx = SHARDS["model.safetensors.index.json"]
    assert shard["read"]["model.safetensors.index.json"]["sha256"] == hashlib.sha256(idx).hexdigest()
    assert not (cat / "acme-lab--sharded" / "model.safetensors.index.json").exists()  # read, not stored
    nv = cat / "acme-lab--qwen3-nvfp4"
    assert (nv / "hf_quant_config.json").read_bytes() == (
        MODELS / NVFP4 / "hf_quant_config.json"
    ).read_bytes()
    assert not (nv / "README.md").exists()
    # the weights are never downloaded: every safetensors GET is a header range read
    st = [q for q in hub.requests if q.method == "GET" and q.path.endswith(".safetensors")]
    assert st and all(q.range and q.range.startswith("bytes=") for q in st)
    # every file was read at the commit the revision pointed to
    assert all(
        f"/resolve/{commit_sha('s1')}/" in q.path for q in hub.requests if "single-file/resolve" in q.path
    )
    assert "3 pulled" in r.output


@pytest.mark.parametrize("model", ["acme-lab/single-file", "acme-lab/sharded", "acme-lab/qwen3-nvfp4"])
def test_pulled_catalogue_offline_gives_the_hub_plan(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_port: int, model: str
) -> None:
    argv = [
        "plan",
        "--format",
        "json",
        "--accelerator",
        "h100",
        "--",
        "vllm",
        "serve",
        model,
        "--max-model-len",
        "8192",
    ]
    online = _run(*argv)
    assert online.exit_code in (0, 1), online.output
    via_hub = json.loads(online.stdout)
    assert via_hub["model_source"].startswith("huggingface hub")
    (tmp_path / ".kvlint.yaml").write_text("fail_on: error\n")
    assert _run("models", "pull", model).exit_code == 0
    _offline(monkeypatch, refused_port)
    offline = _run(*argv[:1], "--offline", *argv[1:])
    via_pull = json.loads(offline.stdout)
    assert via_pull["model_source"].startswith("pulled catalogue"), via_pull["model_source"]
    assert offline.exit_code == online.exit_code
    if via_hub["weights_source"].startswith("checkpoint size"):  # the NVFP4 repo has no safetensors
        assert via_pull["weights_source"].startswith(f"checkpoint size (pulled {model} (commit ")
    for d in (via_hub, via_pull):  # where the facts came from differs; the facts and the plan must not
        d.pop("model_source"), d.pop("weights_source")
        for diag in d["diagnostics"]:
            diag.pop("message"), diag.pop("fix")
    assert via_pull == via_hub


def test_pull_manifest_directory_then_check_offline(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    shutil.copytree(DEPLOY, tmp_path / "deploy")
    (tmp_path / ".kvlint.yaml").write_text(
        "model_paths:\n  /models/smollm2-135m: HuggingFaceTB/SmolLM2-135M\n"
    )
    r = _run("models", "pull", "--format", "json", "deploy")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    got = {(m["id"], m["revision"]) for m in out["models"]}
    assert got == {
        ("google/gemma-2b-it", None),
        ("Qwen/Qwen3-32B", None),
        ("HuggingFaceTB/SmolLM2-135M", "v1.0"),  # model_paths + the manifest's --revision
        ("HuggingFaceTB/SmolLM2-360M", None),  # kvlint.io/model annotation
    }
    assert all(m["status"] == "pulled" for m in out["models"])
    where = {m["id"]: m["where"] for m in out["models"]}
    assert any("vllm-smollm-pvc.yaml" in w for w in where["HuggingFaceTB/SmolLM2-135M"])
    cat = tmp_path / ".kvlint" / "models"
    v1 = _provenance(cat / "HuggingFaceTB--SmolLM2-135M@v1.0")
    assert v1["revision"] == "v1.0" and v1["commit"] == commit_sha("smol-v1")

    _offline(monkeypatch, refused_port)
    assert _run("models", "pull", "--check", "deploy").exit_code == 0
    check = _run("check", "--offline", "--format", "json", "deploy")
    rows = [w for w in json.loads(check.stdout)["workloads"] if w.get("engine")]
    assert len(rows) == 4
    # every model comes from the pulled catalogue, also those the bundled catalogue has
    assert all(str(w["model_source"]).startswith("pulled catalogue") for w in rows), [
        w["model_source"] for w in rows
    ]
    smol = next(w for w in rows if w["name"] == "vllm-smollm-deployment")
    assert "HuggingFaceTB/SmolLM2-135M@v1.0" in smol["model_source"]


def test_check_names_missing_stale_and_edited_models(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    shutil.copytree(DEPLOY, tmp_path / "deploy")
    (tmp_path / ".kvlint.yaml").write_text(
        "model_paths:\n  /models/smollm2-135m: HuggingFaceTB/SmolLM2-135M\n"
    )
    _offline(monkeypatch, refused_port)
    empty = _run("models", "pull", "--check", "deploy")
    # three are in kvlint's bundled catalogue (sized offline without a pull); the pinned revision is not
    assert empty.exit_code == 1 and "1 of 4 models missing" in empty.output
    assert "bundled  Qwen/Qwen3-32B: in kvlint's bundled catalogue" in empty.output
    assert "missing  HuggingFaceTB/SmolLM2-135M@v1.0: not pulled" in empty.output
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert _run("models", "pull", "deploy").exit_code == 0
    _offline(monkeypatch, refused_port)
    cat = tmp_path / ".kvlint" / "models"
    shutil.rmtree(cat / "HuggingFaceTB--SmolLM2-360M")
    cfg = cat / "google--gemma-2b-it" / "config.json"
    cfg.write_text(cfg.read_text().replace('"num_hidden_layers": 18', '"num_hidden_layers": 19'))
    r = _run("models", "pull", "--check", "deploy")
    assert r.exit_code == 1
    # removed from the pulled catalogue, but the bundled one has it: available offline, not a failure
    assert "bundled  HuggingFaceTB/SmolLM2-360M" in r.output
    assert "corrupt  google/gemma-2b-it: config.json differs from the sha256" in r.output
    assert "1 of 4 models missing or changed" in r.output and "kvlint models pull deploy" in r.output
    # the default branch was not pulled, only v1.0
    other = _run("models", "pull", "--check", "HuggingFaceTB/SmolLM2-135M")
    assert other.exit_code == 1 and "pulled only at v1.0, not at the default branch" in other.output
    # no target: every entry is verified
    every = _run("models", "pull", "--check")
    assert every.exit_code == 1 and "corrupt  google/gemma-2b-it" in every.output
    shutil.rmtree(next(cat.glob("HuggingFaceTB--SmolLM2-135M*")))
    r = _run("models", "pull", "--check", "deploy")
    assert "missing  HuggingFaceTB/SmolLM2-135M@v1.0: not pulled" in r.output
    assert "vllm-smollm-pvc.yaml" in r.output  # where the missing model is named
    assert "2 of 4 models missing or changed" in r.output


def test_pull_is_idempotent(hub: FakeHub, tmp_path: Path) -> None:
    ids = ("acme-lab/single-file", "acme-lab/sharded")
    assert _run("models", "pull", *ids).exit_code == 0
    cat = tmp_path / ".kvlint" / "models"
    before = _tree(cat)
    time.sleep(1.1)  # a second later: a rewritten provenance.json would carry another pulled_at
    again = _run("models", "pull", *ids)
    assert again.exit_code == 0 and "2 unchanged" in again.output
    assert _tree(cat) == before
    # pinned to a full commit sha that is already complete: not even asked again
    sha = commit_sha("s1")
    assert _run("models", "pull", f"acme-lab/single-file@{sha}").exit_code == 0
    n = len(hub.requests)
    pinned = _run("models", "pull", "acme-lab/single-file", "--revision", sha)
    assert pinned.exit_code == 0 and "no network request" in pinned.output and len(hub.requests) == n


def test_gated_model_needs_hf_token(hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    r = _run("models", "pull", "acme-lab/gated")
    assert r.exit_code == 1
    assert "acme-lab/gated: the repository is gated (401" in r.output
    assert f"request access on {hub.endpoint}/acme-lab/gated" in r.output and "HF_TOKEN" in r.output
    monkeypatch.setenv("HF_TOKEN", "hf_someone_else")
    denied = _run("models", "pull", "acme-lab/gated")
    assert denied.exit_code == 1 and "(403)" in denied.output and "has no access" in denied.output
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    ok = _run("models", "pull", "acme-lab/gated")
    assert ok.exit_code == 0, ok.output
    assert _provenance(tmp_path / ".kvlint" / "models" / "acme-lab--gated")["gated"] == "manual"
    assert any(q.authorization == f"Bearer {TOKEN}" for q in hub.requests)


def test_missing_model_and_revision_name_the_fix(hub: FakeHub) -> None:
    r = _run("models", "pull", "acme-lab/single-fiel", "acme-lab/single-file@v9", "acme-lab/sharded")
    assert r.exit_code == 1
    assert "acme-lab/single-fiel: no such model on the Hub" in r.output and "typo" in r.output
    assert "private, set HF_TOKEN" in r.output
    assert "acme-lab/single-file@v9: revision 'v9' not found (404)" in r.output
    assert "pulled    acme-lab/sharded" in r.output  # one failure does not stop the others


def test_dead_server_fails_fast_with_the_fix(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch, refused_port: int, tmp_path: Path
) -> None:
    """Nothing listens at HF_ENDPOINT: each model fails at once on the refused connection, named as such (not
    at kvlint's per-request deadline, which says "did not answer within the deadline"), and without a retry's
    back-off (huggingface_hub's ``http_backoff`` sleeps 1 s, 2 s, ... between attempts; ~20 s in all). Judged by
    what happened, not by a wall-clock bound that a loaded machine can stretch."""
    dead = f"http://127.0.0.1:{refused_port}"
    monkeypatch.setenv("HF_ENDPOINT", dead)
    slept: list[float] = []
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(hf_http.time, "sleep", sleep)
    r = _run("models", "pull", "acme-lab/single-file", "acme-lab/sharded")
    assert slept == []
    assert r.exit_code == 1
    assert f"acme-lab/single-file: not pulled: cannot reach the Hugging Face Hub at {dead}" in r.output
    assert "HF_ENDPOINT" in r.output and "--offline" in r.output
    assert "acme-lab/sharded: not pulled" in r.output
    assert not (tmp_path / ".kvlint" / "models" / "acme-lab--single-file").exists()


def test_usage_errors_exit_2(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run("models", "pull").exit_code == 2
    bad = _run("models", "pull", "not a model")
    assert (
        bad.exit_code == 2
        and "neither an existing file or directory nor a Hugging Face model id" in bad.output
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    off = CliRunner().invoke(main, ["models", "pull", "acme-lab/single-file"])
    assert off.exit_code == 2 and "HF_HUB_OFFLINE is set" in off.output


def test_configured_catalogue_reaches_webhook_and_model_dir(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    """``model_catalogue`` in .kvlint.yaml: pull writes there; the webhook's options (built from --config as
    ``kvlint webhook serve`` builds them) and ``--model-dir`` read it offline."""
    from kvlint.load import load_text
    from kvlint.pipeline import run_documents
    from kvlint.webhook.cli import build_settings

    conf = tmp_path / "ops" / ".kvlint.yaml"
    conf.parent.mkdir()
    conf.write_text("model_catalogue: ../model-lock\n")
    r = _run("models", "pull", "--config", str(conf), "google/gemma-2b-it")
    assert r.exit_code == 0, r.output
    lock = tmp_path / "model-lock"
    assert (lock / "google--gemma-2b-it" / "provenance.json").is_file()

    _offline(monkeypatch, refused_port)
    settings = build_settings(config=str(conf))
    assert str(lock) in settings.options.model_catalogues and settings.options.allow_hub is False
    clear_cache()
    docs = load_text((DEPLOY / "vllm-gemma-2b-it.yaml").read_bytes(), "vllm-gemma-2b-it.yaml")
    result = run_documents(docs, settings.options)
    [cr] = [c for c in result.containers if c.model is not None]
    assert cr.model.source.startswith("pulled catalogue") and cr.model.weight_bytes

    clear_cache()
    spec = resolve_model("google/gemma-2b-it", model_dirs=(str(lock),), allow_hub=False)
    assert spec.source.startswith("pulled catalogue") and spec.weight_bytes == cr.model.weight_bytes
    assert os.path.isdir(lock)


def test_manifest_collection_includes_the_draft_model() -> None:
    """The models of a real SGLang manifest with a speculative draft (offline: only kvlint's pipeline runs)."""
    from kvlint.models.pull import collect_from_manifests
    from kvlint.options import Options

    found, skipped = collect_from_manifests(
        [str(ROOT / "fixtures" / "pull" / "speculative")], Options(allow_hub=False)
    )
    assert [r.label for r in found] == ["moonshotai/Kimi-K3", "moonshotai/Kimi-K3-DSpark"]
    assert all("sglang-kimi-k3-statefulset.yaml" in r.where[0] for r in found) and skipped == []


def test_check_fails_on_a_container_path_kvlint_cannot_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    """Two real aibrix manifests (fixtures/pull/SOURCE.md) serve in-container paths named after catalogued models,
    /models/Qwen2.5-VL-7B-Instruct/ and /models/llava-1.5-7b-hf/: both are sized from their names (KV505) and only
    skipped. With the llava path renamed to a directory that names no catalogued model (made up for this test:
    /models/vision-7b-finetune/), the workload stays unsized: --check (and pull) exit 1 saying it cannot be pulled
    or checked, as --require-sizing fails kvlint check; mapping the path to a hub id turns it into an ordinary
    model to pull."""
    shutil.copytree(ROOT / "fixtures" / "pull" / "container-paths", tmp_path / "deploy")
    monkeypatch.chdir(tmp_path)
    _offline(monkeypatch, refused_port)
    real = _run("models", "pull", "--check", "deploy")
    assert real.exit_code == 0 and "unsized" not in real.output, real.output
    named = [ln for ln in real.output.splitlines() if ln.startswith("skipped  /models/")]
    assert len(named) == 2 and any("sizes it as llava-hf/llava-1.5-7b-hf" in ln for ln in named)

    manifest = tmp_path / "deploy" / "llava-7b.yaml"
    manifest.write_text(
        manifest.read_text().replace("/models/llava-1.5-7b-hf/", "/models/vision-7b-finetune/")
    )
    r = _run("models", "pull", "--check", "deploy")
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    llava = [ln for ln in lines if ln.startswith("unsized  /models/vision-7b-finetune/ ")]
    assert len(llava) == 1 and "llava-7b.yaml:69:15 Deployment/llava-7b container vllm-openai" in llava[0]
    assert "cannot be pulled or checked" in llava[0] and "cannot size this workload" in llava[0]
    qwen = [ln for ln in lines if "/models/Qwen2.5-VL-7B-Instruct/" in ln]
    assert len(qwen) == 1 and qwen[0].startswith("skipped  ")
    assert "sizes it as Qwen/Qwen2.5-VL-7B-Instruct" in qwen[0]
    assert lines[-1].startswith("1 serving container names a model that cannot be pulled or checked")
    check = _run("check", "--offline", "--require-sizing", "deploy")
    assert check.exit_code == 1 and "model unknown 1" in check.output  # the same verdict from kvlint check
    as_json = json.loads(_run("models", "pull", "--check", "--format", "json", "deploy").stdout)
    assert [s["unsized"] for s in as_json["skipped"] if "vision-7b" in s["ref"]] == [True]

    (tmp_path / ".kvlint.yaml").write_text(
        "model_paths:\n  /models/vision-7b-finetune/: llava-hf/llava-1.5-13b-hf\n"
    )
    mapped = _run("models", "pull", "--check", "deploy")
    assert "unsized" not in mapped.output and "cannot be pulled or checked" not in mapped.output
    assert "missing  llava-hf/llava-1.5-13b-hf: not pulled" in mapped.output  # now an ordinary hub model
    # a serving-runtime template's /mnt/models is named by the InferenceService: skipped, not a failure
    shutil.copy(
        ROOT
        / "fixtures"
        / "load"
        / "kserve__kserve__config__runtimes__kserve-huggingfaceserver-multinode.yaml",
        tmp_path / "rt.yaml",
    )
    rt = _run("models", "pull", "--check", "rt.yaml")
    assert rt.exit_code == 0 and "unsized" not in rt.output, rt.output
    assert "skipped" in rt.output and "serving-runtime template" in rt.output


def test_plain_pull_output_escapes_what_manifests_and_the_hub_name(hub: FakeHub, tmp_path: Path) -> None:
    """``kvlint models pull`` (without --check) printed the manifests' model references, revisions and object
    names, and the Hub's answers, raw: a NUL, a terminal escape or a bidi override in a manifest (a pull request
    from anyone) reached the terminal or CI log as is. Its lines are escaped as ``--check``'s and the reports'
    (kvlint.report.escape.printable); the JSON report keeps the text (JSON escapes it)."""
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    odd = "\\e[31m\\u202e\\0"  # YAML double-quoted escapes: ESC, RIGHT-TO-LEFT OVERRIDE, NUL
    raw = "\x1b[31m\u202e\x00"
    pod = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
        "          args: [{args}]\n          resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )
    (deploy / "path.yaml").write_text(pod.format(name="p", args=f'"--model=/models/x{odd}y/"'))
    (deploy / "rev.yaml").write_text(
        pod.format(name="r", args=f'"--model=acme-lab/single-file", "--revision=v{odd}1"')
    )
    r = _run("models", "pull", "deploy")
    assert r.exit_code == 1, r.output
    assert not any(c in r.output for c in "\x1b\u202e\x00"), r.output
    assert "unsized   /models/x\\x1b[31m\\u202e\\x00y/ (deploy/path.yaml:" in r.output
    failed = [ln for ln in r.output.splitlines() if ln.startswith("failed ")]
    assert len(failed) == 1 and "v\\x1b[31m\\u202e\\x001" in failed[0], r.output
    as_json = json.loads(_run("models", "pull", "--format", "json", "deploy").stdout)
    assert [s["ref"] for s in as_json["skipped"]] == [f"/models/x{raw}y/"]
