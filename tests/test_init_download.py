"""An init container that fetches the model into a volume names the model the engine serves from a path
(kvlint/workloads/init_download.py, kvlint/pipeline.py ``_with_init_download``).

The first case is a real manifest (fixtures/collected, Goutham-Annem/eks-llm-inference: ``aws s3 sync
s3://$(MODEL_BUCKET)/$(MODEL_NAME)/ /mnt/model/`` with both variables from a ConfigMap of the same file, vLLM
given ``--model=/mnt/model``). The others are made up for the test, one per download command kvlint reads, each
beside its nearest neighbour that must not be read as a download of the engine's model."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

ROOT = Path(__file__).resolve().parents[1]
GOUTHAM = (
    ROOT / "fixtures" / "collected" / "Goutham-Annem__eks-llm-inference__manifests__vllm-deployment.yaml"
)


def _one(path: Path) -> object:
    result = run_check([str(path)], Options(allow_hub=False))
    (cr,) = result.containers
    return cr


def test_an_s3_sync_named_by_configmap_keys_names_the_model() -> None:
    cr = _one(GOUTHAM)
    assert str(cr.serving.model.value) == "/mnt/model"  # type: ignore[attr-defined]
    assert cr.model is not None, cr.model_error  # type: ignore[attr-defined]
    # the ConfigMap's modelName, meta-llama/Meta-Llama-3.1-8B-Instruct, read through the s3 location
    assert cr.model.id.endswith("Llama-3.1-8B-Instruct")  # type: ignore[attr-defined]
    assert "the init container model-downloader downloads the model to /mnt/model from s3://" in (
        cr.model.assumption or ""  # type: ignore[attr-defined]
    )


def _pod(init: str, model: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  template:
    spec:
      initContainers:
      - name: fetch
        image: python:3.12
{init}
        volumeMounts: [{{name: m, mountPath: /models}}]
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, {model}]
        volumeMounts: [{{name: m, mountPath: /models}}]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
      volumes: [{{name: m, emptyDir: {{}}}}]
"""


HF_CLI = "        command: [huggingface-cli, download, Qwen/Qwen2.5-7B, --local-dir, /models/base]"
HF_SCRIPT = """        command: [sh, -c]
        args:
        - |
          pip install -q huggingface_hub && \\
            hf download Qwen/Qwen2.5-7B --local-dir /models/base"""
SNAPSHOT = """        command:
        - python
        - -c
        - |
          from huggingface_hub import snapshot_download
          snapshot_download(repo_id="Qwen/Qwen2.5-7B", local_dir="/models/base")"""
GIT = "        command: [git, clone, 'https://huggingface.co/Qwen/Qwen2.5-7B', /models/base]"
# the repository from the env the init container is given, as the first (positional) argument, and the directory
# from another variable (sicknosn's Proyecto2 in fixtures/collected reads its repo_id from os.environ so)
SNAPSHOT_ENV = """        command:
        - python3
        - -c
        - |
          import os
          from huggingface_hub import snapshot_download
          snapshot_download(os.environ['MODEL_NAME'], local_dir=os.getenv("MODEL_DIR"), token=os.environ.get("T"))
        env:
        - {name: MODEL_NAME, value: Qwen/Qwen2.5-7B}
        - {name: MODEL_DIR, value: /models/base}"""


@pytest.mark.parametrize(
    "init",
    [HF_CLI, HF_SCRIPT, SNAPSHOT, GIT, SNAPSHOT_ENV],
    ids=["cli", "script", "python", "git", "python-env"],
)
def test_a_hub_download_names_the_model_exactly(tmp_path: Path, init: str) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(_pod(init, "/models/base"))
    cr = _one(path)
    assert cr.model is not None, cr.model_error  # type: ignore[attr-defined]
    assert cr.model.id == "Qwen/Qwen2.5-7B"  # type: ignore[attr-defined]
    assert not cr.model.assumption  # type: ignore[attr-defined]
    assert any("the init container fetch downloads Qwen/Qwen2.5-7B" in n for n in cr.model.notes)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "init",
    [
        # the download goes elsewhere than the path the engine serves
        "        command: [huggingface-cli, download, Qwen/Qwen2.5-7B, --local-dir, /models/other]",
        # the repository comes from a variable kvlint cannot resolve
        "        command: [huggingface-cli, download, $(REPO), --local-dir, /models/base]",
        # not a download: a script that only lists the directory
        "        command: [sh, -c, 'ls /models/base']",
    ],
    ids=["elsewhere", "variable", "no-download"],
)
def test_no_download_to_the_served_path_names_nothing(tmp_path: Path, init: str) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(_pod(init, "/models/base"))
    cr = _one(path)
    assert cr.model is None  # type: ignore[attr-defined]
    assert "/models/base" in (cr.model_error or "")  # type: ignore[attr-defined]


def test_a_bucket_synced_to_the_served_path_is_read_by_its_name(tmp_path: Path) -> None:
    """``gsutil rsync -r gs://B/NAME /models/base`` fills /models/base itself; ``gsutil cp -r gs://B/NAME
    /models/base`` makes /models/base/NAME (the source's last component under the destination), so it is not the
    served /models/base."""
    rsync = "        command: [gsutil, -m, rsync, -r, 'gs://bucket/hf/Qwen2.5-7B', /models/base]"
    path = tmp_path / "d.yaml"
    path.write_text(_pod(rsync, "/models/base"))
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B"  # type: ignore[attr-defined]
    assert "the init container fetch downloads the model to /models/base from gs://bucket/hf/Qwen2.5-7B" in (
        cr.model.assumption  # type: ignore[attr-defined]
    )
    path.write_text(_pod(rsync.replace("rsync, -r", "cp, -r"), "/models/base"))
    assert _one(path).model is None  # type: ignore[attr-defined]


def test_aibrix_download_puts_the_model_under_its_model_name(tmp_path: Path) -> None:
    """AIBrix's downloader saves under ``--local-dir`` in a folder named ``--model-name``, else the URI's last
    component for object storage and the whole ``ORG/NAME`` for a Hub id (aibrix v0.3.0
    python/aibrix/aibrix/downloader/base.py ``BaseDownloader.download_model``: ``local_path / model_name_path``;
    s3.py/tos.py ``infer_model_name``; huggingface.py ``_parse_model_name_from_uri`` returns the id)."""
    path = tmp_path / "d.yaml"
    named = "        command: [aibrix_download, --model-uri, 's3://b/Qwen2.5-7B/', --local-dir, /models/, --model-name, qwen]"
    path.write_text(_pod(named, "/models/qwen"))
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B", cr.model_error  # type: ignore[attr-defined]
    assert "downloads the model to /models/qwen from s3://b/Qwen2.5-7B" in (cr.model.assumption or "")  # type: ignore[attr-defined]
    # the URI's own name is not where a --model-name download goes (the path itself may still name a model)
    path.write_text(_pod(named, "/models/Qwen2.5-7B"))
    assert not _downloaded(_one(path))
    # a Hub id: saved under /models/ORG/NAME
    hub = "        command: [aibrix_download, --model-uri, Qwen/Qwen2.5-7B, --local-dir, /models]"
    path.write_text(_pod(hub, "/models/Qwen/Qwen2.5-7B"))
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B", cr.model_error  # type: ignore[attr-defined]
    assert not cr.model.assumption and _downloaded(cr)  # type: ignore[attr-defined]


def _downloaded(cr: object) -> bool:
    """The model was read as an init container's download (its note says so)."""
    model = getattr(cr, "model", None)
    return model is not None and any("the init container" in n for n in model.notes)


def test_a_hub_download_names_the_model_over_the_name_of_its_directory(tmp_path: Path) -> None:
    """A directory named after one model that an init container fills with another from the Hub (the quantized
    build under the base model's name): the download's id is what the engine loads; the directory's name is only
    an assumption, which kvlint used before. The model of a path named after it, with no download, is still the
    assumption."""
    fetch = "        command: [hf, download, Qwen/Qwen2.5-7B-Instruct-AWQ, --local-dir, /models/Qwen2.5-7B-Instruct]"
    path = tmp_path / "d.yaml"
    path.write_text(_pod(fetch, "/models/Qwen2.5-7B-Instruct"))
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B-Instruct-AWQ", cr.model  # type: ignore[attr-defined]
    assert "path named after the model" not in (cr.model.assumption or "") and _downloaded(cr)  # type: ignore[attr-defined]
    # the download goes elsewhere: the served path's name is the (assumed) model
    path.write_text(
        _pod(fetch.replace("/models/Qwen2.5-7B-Instruct]", "/models/other]"), "/models/Qwen2.5-7B-Instruct")
    )
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B-Instruct"  # type: ignore[attr-defined]
    assert "path named after the model" in (cr.model.assumption or "") and not _downloaded(cr)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "script",
    [
        # fetched once into a volume kept between restarts
        "if [ ! -f /models/base/config.json ]; then hf download Qwen/Qwen2.5-7B --local-dir /models/base; fi",
        # a variable set for the command alone
        "HF_HUB_ENABLE_HF_TRANSFER=1 huggingface-cli download Qwen/Qwen2.5-7B --local-dir /models/base",
        # the output piped or redirected
        "hf download Qwen/Qwen2.5-7B --local-dir /models/base 2>&1 | tail -3",
        "gsutil -m rsync -r gs://b/Qwen2.5-7B /models/base > /dev/null",
        "exec timeout 3600 hf download Qwen/Qwen2.5-7B --local-dir /models/base",
    ],
    ids=["if-then", "env-prefix", "pipe", "redirect", "exec-timeout"],
)
def test_a_download_in_a_shell_construct_is_read(tmp_path: Path, script: str) -> None:
    """The download command as a script's line often has shell words around it; the command itself is read."""
    init = f"        command: [sh, -c]\n        args: ['{script}']"
    path = tmp_path / "d.yaml"
    path.write_text(_pod(init, "/models/base"))
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B", cr.model_error  # type: ignore[attr-defined]
    assert _downloaded(cr)


def test_the_download_and_the_served_path_are_compared_on_the_volume(tmp_path: Path) -> None:
    """The init container and the engine may mount one volume at different paths (each container's
    ``volumeMounts``); a download to a path on no volume stays in the init container's own file system."""
    fetch = "        command: [hf, download, Qwen/Qwen2.5-7B, --local-dir, /mnt/dl/base]"
    path = tmp_path / "d.yaml"
    text = _pod(fetch, "/models/base").replace(
        "volumeMounts: [{name: m, mountPath: /models}]\n      containers",
        "volumeMounts: [{name: m, mountPath: /mnt/dl}]\n      containers",
    )
    assert "mountPath: /mnt/dl" in text
    path.write_text(text)
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B", cr.model_error  # type: ignore[attr-defined]
    assert _downloaded(cr)
    # the same path in the init container, on no volume: the engine's /models/base is not what it fetched
    local = _pod(fetch.replace("/mnt/dl/base", "/models/base"), "/models/base").replace(
        "volumeMounts: [{name: m, mountPath: /models}]\n      containers",
        "volumeMounts: []\n      containers",
    )
    assert "volumeMounts: []" in local
    path.write_text(local)
    assert _one(path).model is None  # type: ignore[attr-defined]


def test_the_script_of_sh_c_is_the_word_after_c_not_the_last(tmp_path: Path) -> None:
    """``sh -c SCRIPT NAME ARG...``: the shell runs SCRIPT, the words after it are ``$0``, ``$1``... (POSIX sh
    ``-c``); an init container with its script in ``command`` and words in ``args`` runs the script."""
    init = (
        "        command: [sh, -c, 'hf download Qwen/Qwen2.5-7B --local-dir /models/base', fetch]\n"
        "        args: [extra]"
    )
    path = tmp_path / "d.yaml"
    path.write_text(_pod(init, "/models/base"))
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B", cr.model_error  # type: ignore[attr-defined]
    assert _downloaded(cr)


def test_an_option_value_before_the_repository_is_not_read_as_it(tmp_path: Path) -> None:
    """``huggingface-cli download --local-dir-use-symlinks False ORG/NAME``: ``False`` is the option's value
    (huggingface_hub ``commands/download.py`` in the releases that have it), the repository is the next word."""
    init = (
        "        command: [huggingface-cli, download, --local-dir-use-symlinks, 'False', Qwen/Qwen2.5-7B, "
        "--local-dir, /models/base]"
    )
    path = tmp_path / "d.yaml"
    path.write_text(_pod(init, "/models/base"))
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B", cr.model_error  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "init",
    [
        "        command: [hf, download, Qwen/Qwen2.5-7B, --revision, abc123, --local-dir, /models/base]",
        "        command: [git, clone, --branch, abc123, 'https://huggingface.co/Qwen/Qwen2.5-7B', /models/base]",
        """        command:
        - python
        - -c
        - |
          from huggingface_hub import snapshot_download
          snapshot_download(repo_id="Qwen/Qwen2.5-7B", revision="abc123", local_dir="/models/base")""",
    ],
    ids=["cli", "git", "python"],
)
def test_the_revision_is_the_downloads_not_the_engines(tmp_path: Path, init: str) -> None:
    """The engine given a directory loads what is in it: its own ``--revision`` applies to a Hub id, not to a local
    path (transformers reads a local directory as it is); the revision the init container downloads is the
    model's."""
    path = tmp_path / "d.yaml"
    path.write_text(
        _pod(init, "/models/base").replace("serve, /models/base]", "serve, /models/base, --revision, zzz999]")
    )
    cr = _one(path)
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B", cr.model_error  # type: ignore[attr-defined]
    notes = " ".join(cr.model.notes)  # type: ignore[attr-defined]
    assert "revision abc123" in notes and "zzz999" not in notes, notes
