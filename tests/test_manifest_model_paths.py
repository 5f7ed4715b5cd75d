"""A model path a manifest names is looked up on this machine only inside the git repository holding the manifest.

A pull request's ``--model /home/runner/.docker`` (a directory holding a ``config.json``) made CI read the runner's
file and quote its ``model_type`` in KV502, and told which paths exist; the repository's own directories are read
as before, and so is any path of a manifest outside a git repository (a user's own files)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import yaml

from kvlint.checkrun import run_paths
from kvlint.models import clear_cache
from kvlint.options import Options
from kvlint.report import render

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "fixtures" / "models" / "acme--tiny-qwen3"
SECRET = "SECRET_model_type_value"

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [%s]
        resources: {limits: {nvidia.com/gpu: 1}}
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
"""


def _secret_dir(where: Path) -> Path:
    """A directory like the runner's ``~/.docker``: a ``config.json`` that is no model config."""
    where.mkdir(parents=True)
    (where / "config.json").write_text(
        json.dumps({"auths": {"ghcr.io": {"auth": "eA=="}}, "model_type": SECRET})
    )
    return where


def _run(manifest: Path, args: str) -> str:
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(MANIFEST % args)
    clear_cache()  # (resolutions are memoised per process)
    result = run_paths([str(manifest)], Options(allow_hub=False), no_config=True).result
    return render("json", result)


def _kv502(report: str) -> list[str]:
    return [d["message"] for d in json.loads(report)["diagnostics"] if d["rule"] == "KV502"]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


def test_a_path_outside_the_repository_is_not_read_nor_told_apart(tmp_path: Path) -> None:
    outside = _secret_dir(tmp_path / "home" / ".docker")
    repo = _repo(tmp_path)
    for named in (outside, outside / "config.json"):
        report = _run(repo / "deploy" / "m.yaml", f'"--model", "{named}"')
        assert SECRET not in report
        (message,) = _kv502(report)
        # the same words as for a path that does not exist at all: no oracle of what the runner holds
        missing = tmp_path / "elsewhere" / named.relative_to(tmp_path / "home")
        (absent,) = _kv502(_run(repo / "deploy" / "m.yaml", f'"--model", "{missing}"'))
        assert message == absent.replace(str(missing), str(named))


def test_a_relative_path_or_a_link_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = _secret_dir(tmp_path / "home" / ".docker")
    repo = _repo(tmp_path)
    (repo / "models").mkdir()
    os.symlink(outside, repo / "models" / "leak")
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        for ref in ("../home/.docker", "models/leak", str(repo / "models" / "leak")):
            assert SECRET not in _run(repo / "m.yaml", f'"--model", "{ref}"'), ref
    finally:
        os.chdir(cwd)


def test_a_speculative_draft_outside_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = _secret_dir(tmp_path / "home" / ".docker")
    repo = _repo(tmp_path)
    spec = json.dumps(json.dumps({"model": str(outside), "num_speculative_tokens": 2}))
    report = _run(
        repo / "m.yaml", f'"--model", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config", {spec}'
    )
    assert SECRET not in report


def test_a_model_directory_in_the_repository_is_read(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shutil.copytree(TINY, repo / "models" / "tiny")
    report = _run(repo / "deploy" / "m.yaml", f'"--model", "{repo / "models" / "tiny"}"')
    assert _kv502(report) == []
    (entry,) = json.loads(report)["workloads"]
    assert entry["model_source"] == str(repo / "models" / "tiny" / "config.json")
    assert entry["plan"] is not None


def test_a_manifest_outside_any_repository_reads_its_paths_as_before(tmp_path: Path) -> None:
    outside = _secret_dir(tmp_path / "home" / ".docker")
    assert not any((p / ".git").exists() for p in tmp_path.parents)
    report = _run(tmp_path / "m.yaml", f'"--model", "{outside}"')
    assert SECRET in report  # the user's own file, read and refused as a model config


def _leaky_dir(d: Path, secret: Path) -> Path:
    """A real directory of the repository whose ``config.json`` is a link to the runner's file."""
    d.mkdir(parents=True)
    (d / "config.json").symlink_to(secret / "config.json")
    return d


def test_a_config_json_linked_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    """The directory is in the repository, its ``config.json`` a link out of it: read as no config.json at all."""
    secret = _secret_dir(tmp_path / "home" / ".docker")
    repo = _repo(tmp_path)
    leaky = _leaky_dir(repo / "models" / "x", secret)
    empty = repo / "models" / "empty"
    empty.mkdir()
    (message,) = _kv502(_run(repo / "m.yaml", f'"--model", "{leaky}"'))
    assert SECRET not in message
    (absent,) = _kv502(_run(repo / "m.yaml", f'"--model", "{empty}"'))
    assert message == absent.replace(str(empty), str(leaky))
    # a link that stays in the repository (a Hugging Face cache's snapshot -> blob) is read
    (repo / "blobs").mkdir()
    shutil.copy(TINY / "config.json", repo / "blobs" / "cfg")
    (repo / "models" / "cached").mkdir()
    (repo / "models" / "cached" / "config.json").symlink_to(repo / "blobs" / "cfg")
    assert _kv502(_run(repo / "m.yaml", f'"--model", "{repo / "models" / "cached"}"')) == []


def test_a_model_directory_or_pulled_catalogue_of_the_repository_reads_no_file_out_of_it(
    tmp_path: Path,
) -> None:
    """A discovered configuration's ``model_dirs`` and the repository's pulled catalogue (``.kvlint/models``) are
    held to the repository, but a ``config.json`` in them was read through a link out of it."""
    from kvlint.models import pulled

    secret = _secret_dir(tmp_path / "home" / ".docker")
    repo = _repo(tmp_path)
    _leaky_dir(repo / "models" / "acme--leak", secret)
    entry = _leaky_dir(repo / ".kvlint" / "models" / "acme--pulled", secret)
    provenance = {
        "format": pulled.FORMAT,
        "id": "acme/pulled",
        "commit": "0" * 40,
        "files": {
            "config.json": {"sha256": "0" * 64},
            "../../../../home/.docker/config.json": {"sha256": "0"},
        },
    }
    (entry / pulled.PROVENANCE).write_text(json.dumps(provenance))
    (repo / ".kvlint.yaml").write_text("model_dirs: [models]\n")
    manifest = repo / "deploy" / "m.yaml"
    for ref in ("acme/leak", "acme/pulled"):
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(MANIFEST % f'"--model", "{ref}"')
        clear_cache()
        pulled.clear()
        result = run_paths([str(manifest)], Options(allow_hub=False)).result  # its .kvlint.yaml discovered
        report = render("json", result)
        assert SECRET not in report, ref
        assert _kv502(report), ref  # no config read: the model is unknown
    # the entry's record names a file out of it: not read (nor hashed), said so
    (found,) = pulled.load_entries(repo / ".kvlint" / "models")
    assert "../../../../home/.docker/config.json is not a file of the entry" in pulled.verify(found)


def test_a_model_paths_prefix_does_not_let_a_manifest_climb_out_of_its_directory(tmp_path: Path) -> None:
    """``model_paths: {/models: DIR}`` maps ``/models/x`` to ``DIR/x``; ``/models/../../x`` named ``DIR/../../x``,
    any file of the machine: the admission webhook, whose model_paths an admin sets, read the server's files a
    manifest chose and quoted them in its warnings."""
    from kvlint.models.resolve import map_model_path
    from kvlint.webhook.review import webhook_options
    from kvlint.webhook.worker import lint_object

    secret = _secret_dir(tmp_path / "home" / ".docker")
    models = tmp_path / "srv" / "models"
    shutil.copytree(TINY, models / "tiny")
    mapping = {"/models": str(models)}
    assert map_model_path("/models/tiny", mapping) == str(models / "tiny")
    assert map_model_path("/models/../../home/.docker", mapping) is None
    assert map_model_path("/models/a/../../../x", {"/models/": "m"}) is None
    options = webhook_options(Options(allow_hub=False, model_paths=mapping))
    for ref, read in (("/models/../../home/.docker", False), ("/models/tiny", True)):
        obj = yaml.safe_load(MANIFEST % f'"--model", "{ref}"')
        clear_cache()
        result = lint_object(obj, "Deployment/serving/x.json", options)
        text = render("json", result)
        assert SECRET not in text and str(secret) not in text, ref
        assert (not any(d.rule == "KV502" for d in result.diagnostics)) is read, ref


def test_a_discovered_model_paths_directory_reads_no_link_out_of_the_repository(tmp_path: Path) -> None:
    """A discovered ``.kvlint.yaml`` maps ``/models`` to the repository's ``models`` (inside it, as it must); the pull
    request also wrote ``models/leak -> ~/.docker`` and ``models/real/config.json -> ~/.docker/config.json``."""
    secret = _secret_dir(tmp_path / "home" / ".docker")
    repo = _repo(tmp_path)
    (repo / "models").mkdir()
    (repo / "models" / "leak").symlink_to(secret)
    _leaky_dir(repo / "models" / "real", secret)
    shutil.copytree(TINY, repo / "models" / "tiny")
    (repo / ".kvlint.yaml").write_text("model_paths:\n  /models: models\n")
    manifest = repo / "deploy" / "m.yaml"
    manifest.parent.mkdir()
    for ref, read in (("/models/leak", False), ("/models/real", False), ("/models/tiny", True)):
        manifest.write_text(MANIFEST % f'"--model", "{ref}"')
        clear_cache()
        report = render("json", run_paths([str(manifest)], Options(allow_hub=False)).result)
        assert SECRET not in report, ref
        assert (_kv502(report) == []) is read, ref
