"""What a new user met on real manifests (branch newuser55): messages that named what the manifest does not
say. Real loader and pipeline, offline; fixtures/collected manifests."""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parent.parent
COLLECTED = ROOT / "fixtures" / "collected"
_ARGS = re.compile(r"its arguments \((.*?)\) are vLLM's own options")


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def _quoted_options(path: Path) -> list[list[str]]:
    r = run_check([str(path)], Options(allow_hub=False))
    found = [_ARGS.search(d.message) for d in r.diagnostics if d.rule == "KV504"]
    return [m.group(1).split(" ") for m in found if m]


def test_kv504_quotes_whole_options_and_marks_only_a_real_cut() -> None:
    """KV504 (an image kvlint does not know, read as vLLM because its arguments are vLLM's options) quotes those
    options. It cut their joined text at 80 characters, inside a word (``--enable-auto-to ...`` for
    ``--enable-auto-tool-choice``, ``--dtype=float3 ...`` for ``--dtype=float32``), and added ``...`` even when
    nothing was left out. Now each quoted word is an option the manifest has, and ``...`` stands only for
    options left out."""
    for name in (
        "aatchison__deploy-vllm-k8s__deploy-dual-moe.yaml",
        "trees/ahmedwaleedmalik-k8s-llm-inference-platform/serving/kserve/inferenceservice.yaml",
    ):
        path = COLLECTED / name
        options = {s for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) for s in _strings(doc)}
        quoted = _quoted_options(path)
        assert quoted, name
        for words in quoted:
            assert words[-1] == "...", words  # these command lines are longer than a note quotes
            assert all(w in options for w in words[:-1]), (name, words)
            assert len(" ".join(words[:-1])) <= 80


def test_kv504_adds_no_ellipsis_when_every_option_is_quoted(tmp_path: Path) -> None:
    path = tmp_path / "short.yaml"
    path.write_text(
        (COLLECTED / "aatchison__deploy-vllm-k8s__deploy-dual-moe.yaml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    deployments = [d for d in docs if isinstance(d, dict) and d.get("kind") == "Deployment"]
    for d in deployments:
        c = d["spec"]["template"]["spec"]["containers"][0]
        c["args"] = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "4096"]
    path.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    quoted = _quoted_options(path)
    assert quoted and all(words == ["--model", "--max-model-len"] for words in quoted), quoted


DAEMON = COLLECTED / "gkteco__vllm-on-gcp__k8s__vllm-daemon.yaml"


def _with_annotation(tmp_path: Path, value: str) -> Path:
    text = DAEMON.read_text(encoding="utf-8")
    assert text.count("metadata:\n  name: vllm-daemonset\n") == 1
    path = tmp_path / "annotated.yaml"
    path.write_text(
        text.replace(
            "metadata:\n  name: vllm-daemonset\n",
            f"metadata:\n  name: vllm-daemonset\n  annotations:\n    kvlint.io/accelerator: {value}\n",
        ),
        encoding="utf-8",
    )
    return path


def test_an_unknown_accelerator_annotation_is_said_where_the_pod_names_its_gpu(tmp_path: Path) -> None:
    """``kvlint.io/accelerator: rtx4090`` (the catalogue's alias is ``rtx-4090``) on a pod whose nodeSelector names
    an L4 was dropped without a word: the run sized the L4 and said nothing of the annotation, so its author took
    it to be applied. KV005 now warns at the annotation, names the ids spelled like it and the GPU sized."""
    path = _with_annotation(tmp_path, "rtx4090")
    r = run_check([str(path)], Options(allow_hub=False))
    line = path.read_text(encoding="utf-8").splitlines().index("    kvlint.io/accelerator: rtx4090") + 1
    notes = [d for d in r.diagnostics if d.rule == "KV005" and "rtx4090" in d.message]
    assert len(notes) == 1, [d.message for d in r.diagnostics]
    (note,) = notes
    assert note.severity == "warning" and note.loc is not None and note.loc.line == line
    assert "is not an accelerator kvlint knows" in note.message and "rtx-4090" in note.message
    assert "NVIDIA L4" in note.message  # what the pod is sized on instead
    # a known alias is applied and gets the contradiction warning instead, not this one
    known = run_check([str(_with_annotation(tmp_path, "rtx-4090"))], Options(allow_hub=False))
    assert not [d for d in known.diagnostics if "is not an accelerator kvlint knows" in d.message]


def test_an_unknown_accelerator_name_gets_close_names_on_the_command_line_and_in_the_config(
    tmp_path: Path,
) -> None:
    """``--accelerator rtx4090`` and ``default_accelerator: l5`` were refused with "`kvlint accelerators` lists the
    ids" only, though the catalogue has ``rtx-4090`` and ``l4``: the refusal now names the close ones, as
    ``kvlint models show`` does for a model id."""
    from click.testing import CliRunner

    from kvlint.cli import main

    plan = CliRunner().invoke(
        main, ["plan", "--offline", "--accelerator", "rtx4090", "--", "vllm", "serve", "x/y"]
    )
    assert plan.exit_code == 2 and "did you mean rtx-4090" in plan.output, plan.output
    check = CliRunner().invoke(main, ["check", "--accelerator", "rtx4090", str(DAEMON)])
    assert check.exit_code == 2 and "did you mean rtx-4090" in check.output, check.output
    (tmp_path / ".kvlint.yaml").write_text("default_accelerator: l5\n", encoding="utf-8")
    (tmp_path / "d.yaml").write_text(DAEMON.read_text(encoding="utf-8"), encoding="utf-8")
    config = CliRunner().invoke(main, ["check", str(tmp_path / "d.yaml")])
    assert config.exit_code == 2 and "did you mean l4" in config.output, config.output


def test_plan_given_a_docker_run_names_the_engine_command_to_type() -> None:
    """vLLM's and TGI's quick starts print a ``docker run``; pasted after ``kvlint plan --``, it was refused with
    "not an engine command: docker run --runtime" and the engine forms only. The refusal now names the command the
    image runs with those arguments, the release its tag pins, and not the token passed beside them; typed as
    named, it plans."""
    from click.testing import CliRunner

    from kvlint.cli import main

    quick = [
        *(
            "docker",
            "run",
            "--runtime",
            "nvidia",
            "--gpus",
            "all",
            "-v",
            "/root/.cache/huggingface:/root/.cache",
        ),
        *(
            "--env",
            "HUGGING_FACE_HUB_TOKEN=hf_secret",
            "-e",
            "VLLM_USE_V1=1",
            "-p",
            "8000:8000",
            "--ipc=host",
            "-it",
        ),
        *(
            "vllm/vllm-openai:v0.11.0",
            "--model",
            "meta-llama/Llama-3.1-8B-Instruct",
            "--max-model-len",
            "8192",
        ),
    ]
    for verb in ("plan", "simulate"):
        r = CliRunner().invoke(main, [verb, "--offline", "--accelerator", "l4", "--", *quick])
        assert r.exit_code == 2, r.output
        assert "not `docker run`" in r.output and "hf_secret" not in r.output, r.output
        typed = r.output.split("type: ", 1)[1].split()
        assert typed[:2] == ["kvlint", verb] and "--engine-version" in typed, typed
        assert typed[typed.index("--engine-version") + 1] == "0.11.0"
        engine_command = typed[typed.index("--") + 1 :]
        assert engine_command[0] == "VLLM_USE_V1=1" and "--max-model-len" in engine_command
    planned = CliRunner().invoke(
        main,
        ["plan", "--offline", "--accelerator", "l4", "--engine-version", "0.11.0", "--", *engine_command],
    )
    assert planned.exit_code in (0, 1) and "meta-llama/Llama-3.1-8B-Instruct" in planned.output, (
        planned.output
    )
    tgi = ["docker", "run", "--gpus", "all", "--shm-size", "1g", "-p", "8080:80", "-v", "/data:/data"]
    r = CliRunner().invoke(
        main,
        ["plan", "--offline", "--accelerator", "l4", "--", *tgi]
        + [
            "ghcr.io/huggingface/text-generation-inference:3.0.1",
            "--model-id",
            "mistralai/Mistral-7B-Instruct-v0.3",
        ],
    )
    assert r.exit_code == 2
    assert (
        "--engine-version 3.0.1 -- text-generation-launcher --model-id mistralai/Mistral-7B-Instruct-v0.3"
        in (" ".join(r.output.split()))
    ), r.output


UNDERPASS = COLLECTED / "trees" / "underpass-ai-underpass-vllms"


def test_chart_fixes_say_to_install_helm_where_helm_is_missing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without helm on PATH a walk reads a chart's files as plain files: each template and values file got a KV002
    whose fix was "kvlint check CHART (kvlint renders a chart directory it is given with helm)", which then stops
    with exit status 2 (helm is not on PATH). That fix now starts with installing helm; with helm on PATH it is
    unchanged."""
    import shutil

    helm = shutil.which("helm")
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no helm, no kubectl
    r = run_check([str(UNDERPASS)], Options(allow_hub=False))
    chart_fixes = [
        d.fix for d in r.diagnostics if d.rule == "KV002" and (d.fix or "").find("kvlint check") >= 0
    ]
    lints = [f for f in chart_fixes if "lint what the chart" in f]
    assert len(lints) >= 10, chart_fixes  # the templates' and the values files'
    assert all(
        f.startswith("install helm (https://helm.sh/docs/intro/install/; it is not on PATH), then ")
        for f in lints
    )
    if helm is None:
        return
    monkeypatch.setenv("PATH", os.path.dirname(helm))
    template = UNDERPASS / "charts" / "vllm" / "templates" / "cache-pvc.yaml"
    with_helm = run_check([str(template)], Options(allow_hub=False))
    fixes = [d.fix or "" for d in with_helm.diagnostics if d.rule == "KV002"]
    assert fixes and all(f.startswith("lint what the chart renders: kvlint check") for f in fixes), fixes


def test_kv502_names_the_model_paths_key_spelled_like_the_path(tmp_path: Path) -> None:
    """A ``model_paths`` key one letter off the manifest's path (``/models/merged-qwen25-7b-finetune`` for
    ``/models/merged-qwen25-7b-finetuned``) mapped nothing, and KV502 said only "config.json not found ... provide
    it with a `.kvlint.yaml` entry", so the entry looked written and the run looked wrong. KV502 now names the key
    that missed, and its fix the entry with that key's target; a key unlike the path is not named."""
    import json

    from click.testing import CliRunner

    from kvlint.cli import main

    src = COLLECTED / "farrukhmustafa__fintech-function-calling-llm__kubernetes__vllm-deployment.yaml"
    path = tmp_path / "deploy.yaml"
    path.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "r.json"

    def kv502(config: str) -> list[dict[str, str]]:
        (tmp_path / ".kvlint.yaml").write_text(config, encoding="utf-8")
        CliRunner().invoke(main, ["check", "--offline", "--format", f"json={out}", str(path)])
        return [d for d in json.loads(out.read_text(encoding="utf-8"))["diagnostics"] if d["rule"] == "KV502"]

    (miss,) = kv502("model_paths:\n  /models/merged-qwen25-7b-finetune: Qwen/Qwen2.5-7B-Instruct\n")
    assert "model_paths maps '/models/merged-qwen25-7b-finetune', not this path" in miss["message"], miss
    assert "{/models/merged-qwen25-7b-finetuned: Qwen/Qwen2.5-7B-Instruct}" in miss["fix"], miss
    (other,) = kv502("model_paths:\n  /mnt/other: Qwen/Qwen2.5-7B-Instruct\n")
    assert "model_paths maps" not in other["message"]
    assert not kv502("model_paths:\n  /models/merged-qwen25-7b-finetuned: Qwen/Qwen2.5-7B-Instruct\n")


def test_check_given_a_url_says_it_reads_local_files_and_how_to_fetch() -> None:
    """``kvlint check https://raw.githubusercontent.com/.../deploy.yaml`` (a manifest's address copied from the
    browser) said "no such file or directory", as for a mistyped file name. It now says that kvlint reads local
    files, with the command that pipes the file in (an ``oci://`` chart: ``helm template``); exit status 2 still."""
    from click.testing import CliRunner

    from kvlint.cli import main

    url = "https://raw.githubusercontent.com/vllm-project/production-stack/main/helm/values.yaml?x=1&y=2"
    r = CliRunner().invoke(main, ["check", "--offline", url])
    assert r.exit_code == 2 and "not URLs" in r.output, r.output
    assert f"curl -fsSL '{url}' | kvlint check --stdin-filename NAME.yaml -" in " ".join(r.output.split())
    oci = CliRunner().invoke(main, ["check", "--offline", "oci://registry-1.docker.io/bitnamicharts/nginx"])
    assert oci.exit_code == 2
    assert (
        "helm template RELEASE oci://registry-1.docker.io/bitnamicharts/nginx | kvlint check -" in oci.output
    )
    plain = CliRunner().invoke(main, ["check", "--offline", "no-such-deploy.yaml"])
    assert plain.exit_code == 2 and "not URLs" not in plain.output


def test_a_short_vllm_option_typed_with_two_dashes_is_named() -> None:
    """``--tp 2`` (SGLang's spelling; vLLM's short option is ``-tp``) was "unknown vLLM option --tp", fix "remove
    --tp", which drops the tensor parallelism the user asked for. KV205 now names ``-tp`` and the fix uses it."""
    from kvlint.engines import parse_command_line

    for typed, short in (("--tp", "-tp"), ("--pp", "-pp")):
        cfg = parse_command_line(["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", typed, "2"], "0.11.0")
        (f,) = [f for f in cfg.findings if f.rule == "KV205"]
        assert (
            f.message.startswith(f"unknown vLLM 0.11.0 option {typed}")
            and f"{short}, with one dash" in f.message
        )
        assert f.fix == f"use {short}", f.fix
    typo = parse_command_line(
        ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-length", "4096"], "0.11.0"
    )
    (f,) = [f for f in typo.findings if f.rule == "KV205"]
    assert "with one dash" not in f.message and f.fix == "use --max-model-len"


def test_models_listing_says_what_its_columns_mean() -> None:
    """``kvlint models`` printed "(estimated)" in its checkpoint column for 204 of 213 models and a bare count under
    "variants", and said neither what "(estimated)" means nor what a variant is. Its last line says so now."""
    from click.testing import CliRunner

    from kvlint.cli import main

    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0
    assert "(estimated)" in r.output
    last = r.output.rstrip().splitlines()[-1]
    assert "(estimated) where kvlint computes the weights from the architecture" in last
    assert "variants: how many other hub ids" in last


def test_junit_names_the_comment_that_suppressed_a_finding(tmp_path: Path) -> None:
    """A finding suppressed by a ``# kvlint: ignore`` comment was reported in JUnit as "suppressed by
    kvlint.io/ignore", an annotation the manifest does not have; the skipped test case names the comment now, and
    an annotation's suppression still names the annotation."""
    from click.testing import CliRunner

    from kvlint.cli import main

    src = (ROOT / "fixtures" / "config" / "suppress" / "noreason.yaml").read_text(encoding="utf-8")
    annotated = tmp_path / "annotated.yaml"
    annotated.write_text(src, encoding="utf-8")
    assert "          image: vllm/vllm-openai:latest\n" in src
    commented = tmp_path / "commented.yaml"
    commented.write_text(
        src.replace(
            '        kvlint.io/ignore: "KV202, KV208=pinned by digest in prod"\n', "        team: x\n"
        ).replace(
            "          image: vllm/vllm-openai:latest\n",
            "          # kvlint: ignore KV208=pinned by digest in prod\n          image: vllm/vllm-openai:latest\n",
        ),
        encoding="utf-8",
    )
    for path, by in ((annotated, "kvlint.io/ignore"), (commented, "# kvlint: ignore")):
        out = tmp_path / f"{path.stem}.xml"
        CliRunner().invoke(main, ["check", "--offline", "--format", f"junit={out}", str(path)])
        xml = out.read_text(encoding="utf-8")
        assert f'<skipped message="suppressed by {by}: pinned by digest in prod"' in xml, xml


def test_verify_says_what_it_read_before_asking_for_more() -> None:
    """``kvlint verify LOG`` on a log that names no model printed ``printed: {"gpu_blocks": 157794, ...}`` (a JSON
    object of internal field names) before asking for ``--model``; and ``printed: {}`` for a file with none of the
    figures it compares. It now says what it read from the log, and that nothing was compared."""
    from click.testing import CliRunner

    from kvlint.cli import main

    log = ROOT / "fixtures" / "logs" / "gt-201.log"
    r = CliRunner().invoke(main, ["verify", "--offline", str(log)])
    assert r.exit_code == 2 and "give --model" in r.output, r.output
    assert "read from the log, not compared (see below): gpu_blocks 157794, cpu_blocks 4096" in r.output
    assert "printed: {" not in r.output
