"""Hostile inputs to what landed at stop 26 (break27): pipeline layer partitions, speculative settings, verify's log
lines, the webhook. Expected figures come from kvlint's own model functions, never from engine numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.memory.vllm import PP_PARTITION_REFUSED, VllmSettings, pp_layer_split, pp_partition_refused


def _deployment(path: Path, container: dict) -> Path:
    """Write ``path``: a Deployment of the one ``container`` on an H100 node."""
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
                    "containers": [container],
                },
            },
        },
    }
    path.write_text(yaml.safe_dump(doc, width=10**6))
    return path


def _vllm_manifest(tmp_path: Path, args: list[str], env: dict[str, str], gpus: int = 2) -> Path:
    container = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", *args],
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "resources": {"limits": {"nvidia.com/gpu": gpus, "memory": "48Gi"}},
    }
    return _deployment(tmp_path / "deploy.yaml", container)


def _diagnostics(path: Path) -> list[dict]:
    result = CliRunner().invoke(main, ["check", "--offline", "--format", "json", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return json.loads(result.output)["diagnostics"]


@pytest.mark.parametrize(
    "partition",
    [
        # sums to Llama-3.1-8B's 32 layers, but a stage of 10^21 layers: the plan said "weights need
        # 406,265,497,207,641,604,096.00 GiB per GPU" (KV101) instead of vLLM's refusal
        "1000000000000000000000,-999999999999999999968",
        "40,-8",
        "16,16,0",  # three entries for two stages: kvlint planned vLLM's even split, vLLM refuses it
        "8;24",  # not integers: the same
        "",  # set but empty: os.getenv gives "", int("") fails in get_pp_indices
        "0,32",  # a stage with no layer, as a --pipeline-parallel-size above the layers gives (pp_exceeds_layers)
    ],
)
def test_vllm_pp_layer_partition_vllm_refuses_is_a_kv502_error(tmp_path: Path, partition: str) -> None:
    path = _vllm_manifest(tmp_path, ["--pipeline-parallel-size", "2"], {PP_PARTITION_REFUSED: partition})
    found = _diagnostics(path)
    refused = [d for d in found if d["rule"] == "KV502" and PP_PARTITION_REFUSED in d["message"]]
    assert len(refused) == 1 and refused[0]["severity"] == "error", found
    assert "get_pp_indices" in refused[0]["message"]
    # nothing is sized on the refused split
    assert not [d for d in found if d["rule"] in ("KV101", "KV102")], found


def test_vllm_pp_layer_partition_vllm_builds_sets_the_stages(tmp_path: Path) -> None:
    # a valid split is no finding, and the plan's stages follow it (kvlint's own split function)
    assert pp_layer_split(32, 2, (20, 12)) == [20, 12]
    path = _vllm_manifest(tmp_path, ["--pipeline-parallel-size", "2"], {PP_PARTITION_REFUSED: "20,12"})
    assert not [d for d in _diagnostics(path) if d["rule"] == "KV502"]


def test_pp_partition_refused_quotes_get_pp_indices_and_stays_short() -> None:
    def why(raw: str | None, pp: int = 2, layers: int = 32) -> str | None:
        settings = VllmSettings(pipeline_parallel_size=pp, pp_layer_partition_env=raw)
        return pp_partition_refused(layers, pp, settings)

    assert why(None) is None and why("16,16") is None and why(" 16,16 ") is None  # int() strips blanks
    assert why("32", pp=1) is None
    assert "len(partitions)=1 does not match pp_size=2." in (why("32") or "")
    assert "sum(partitions)=31 does not match num_hidden_layers=32." in (why("16,15") or "")
    # entries of 4,300 digits sum past what Python converts to text; a 5,000-digit one is not an int to vLLM
    huge = why("9" * 4300 + "," + "9" * 4300)
    assert huge is not None and "over 10^18" in huge and len(huge) < 600
    assert "Invalid partition string" in (why("9" * 5000 + ",1") or "")
    # one stage: the variable is still read (get_pp_indices runs whatever the stage count)
    assert "sum(partitions)=5" in (why("5", pp=1) or "")
    # a tuple given directly (no text) is checked as its text would be
    assert pp_partition_refused(32, 2, VllmSettings(pipeline_parallel_size=2, pp_layer_partition=(40, -8)))


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("{bad", "cannot be converted to <function loads"),  # optional_type(json.loads)'s argparse error
        # an integer past Python's 4,300-digit limit: json.loads raises ValueError in vLLM's argparse as here
        ('{"method": "ngram", "num_speculative_tokens": 1' + "0" * 4400 + "}", "4300 digits"),
        ("[4]", "a JSON list fails"),
        ('"ngram"', "a JSON string fails"),
        ("4", "a JSON number fails"),
    ],
)
def test_speculative_config_vllm_cannot_read_is_a_kv206_error(tmp_path: Path, value: str, words: str) -> None:
    # kvlint kept such a value as text, planned without speculative decoding and said nothing; vLLM exits
    path = _vllm_manifest(tmp_path, ["--speculative-config", value], {}, gpus=1)
    found = [d for d in _diagnostics(path) if d["rule"] == "KV206"]
    assert len(found) == 1 and "--speculative-config" in found[0]["message"], found
    assert words in found[0]["message"] and found[0]["severity"] == "error"
    assert len(found[0]["message"]) < 400  # the value is quoted cut, the parser's reason without positions


@pytest.mark.parametrize("value", ["", "None", "null", '{"method": "ngram", "num_speculative_tokens": 4}'])
def test_speculative_config_vllm_reads_is_no_finding(tmp_path: Path, value: str) -> None:
    # optional_type(json.loads) from 0.10.1: "" and "None" leave it unset; JSON null is unset too
    path = _vllm_manifest(tmp_path, ["--speculative-config", value], {}, gpus=1)
    assert not [d for d in _diagnostics(path) if d["rule"] in ("KV206", "KV502")]


def _ray_cluster(annotations: dict[str, str]) -> dict:
    """A RayCluster whose head container is TGI's image with no command: KubeRay writes ``ray start`` into it
    unless ``ray.io/overwrite-container-cmd`` is "true", when the image's launcher runs with MODEL_ID from env."""
    container = {
        "name": "engine",
        "image": "ghcr.io/huggingface/text-generation-inference:3.0.1",
        "env": [{"name": "MODEL_ID", "value": "meta-llama/Llama-3.1-70B-Instruct"}],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    template = {
        "metadata": {"annotations": annotations},
        "spec": {
            "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
            "containers": [container],
        },
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "team"},
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": template}},
    }


def test_an_update_setting_kuberays_overwrite_container_cmd_is_reviewed() -> None:
    """Setting ``ray.io/overwrite-container-cmd: "true"`` makes the container run TGI's launcher (70B on one L4:
    KV101, an error the webhook denies) instead of KubeRay's ``ray start`` (an info). kvlint reads the annotation
    (:func:`kvlint.pipeline.kuberay_writes_command`), but the webhook's projection dropped it, so the UPDATE adding
    it was admitted unreviewed as "metadata only"."""
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import (
        READ_ANNOTATIONS,
        WebhookSettings,
        lint_relevant,
        parse_review,
        skip_reason,
    )
    from kvlint.webhook.worker import lint_object
    from kvlint.workloads.base import RAY_OVERWRITE_CMD_ANNOTATION

    assert RAY_OVERWRITE_CMD_ANNOTATION in READ_ANNOTATIONS
    ray_start, own = _ray_cluster({}), _ray_cluster({RAY_OVERWRITE_CMD_ANNOTATION: "true"})

    def errors(obj: dict) -> list[str]:
        res = lint_object(json.loads(json.dumps(obj)), "<admission test>.json", webhook_options())
        return [d.rule for d in res.diagnostics if d.severity == "error"]

    assert errors(ray_start) == [] and "KV101" in errors(own)
    assert lint_relevant(ray_start) != lint_relevant(own)
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "kind": {"group": "ray.io", "version": "v1", "kind": "RayCluster"},
            "resource": {"group": "ray.io", "version": "v1", "resource": "rayclusters"},
            "namespace": "team",
            "operation": "UPDATE",
            "userInfo": {"username": "alice"},
            "object": own,
            "oldObject": ray_start,
        },
    }
    assert skip_reason(parse_review(json.dumps(review)), WebhookSettings()) is None


def test_junit_report_keeps_a_quoted_line_break_and_bidi_override_inert(tmp_path: Path) -> None:
    """A ``kvlint.io/model`` annotation is quoted as written in KV502's message, and a suppression's reason in the
    skipped testcase. The JUnit report kept their line breaks (and U+202E) in element text, so printed in a GitHub
    Actions log (``kvlint check --format junit``) a line began ``::error file=...::``, a workflow command."""
    import xml.etree.ElementTree as ET

    forged = "x\n::error file=/etc/passwd,line=1::forged\r\u202etxt"
    path = _vllm_manifest(tmp_path, ["--max-num-seqs", "many"], {}, gpus=1)  # a KV206, suppressed
    doc = yaml.safe_load(path.read_text())
    doc["metadata"]["annotations"] = {
        "kvlint.io/model": forged,
        "kvlint.io/ignore": "KV206=ok\n::warning::forged",
    }
    path.write_text(yaml.safe_dump(doc, width=10**6))
    result = CliRunner().invoke(main, ["check", "--offline", "--format", "junit", str(path)])
    out = result.output
    root = ET.fromstring(out.split("\n", 1)[1])  # well-formed after the declaration
    assert root.find(".//failure") is not None and root.find(".//skipped") is not None
    assert "forged" in out  # quoted, shown escaped
    assert not [line for line in out.splitlines() if line.lstrip().startswith("::")], out
    assert "\u202e" not in out and "\r" not in out


def _internal_error_review(monkeypatch: pytest.MonkeyPatch, annotations: dict[str, str]):  # type: ignore[no-untyped-def]
    """The L4 example Deployment linted on the webhook's path with GPU placement made to raise (a stand-in for a
    future bug, as tests/test_fail_closed.py injects it; no manifest is known to make it raise), and its review."""
    import kvlint.accelerators as accelerators
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import parse_review
    from kvlint.webhook.worker import lint_object

    def fault(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(accelerators, "workload_placement", fault)
    obj = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / "fixtures/examples/chat-8b-l4.yaml").read_text()
    )
    obj.setdefault("metadata", {})["annotations"] = annotations
    result = lint_object(json.loads(json.dumps(obj)), "<admission test>.json", webhook_options())
    request = {
        "uid": "u1",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "namespace": "serving",
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": obj,
    }
    review = parse_review(
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    )
    return result, review


def test_an_internal_error_is_never_suppressed_by_the_objects_annotation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kvlint.io/ignore: KV503=... hid kvlint's own failure to check the workload: the object was admitted with
    no finding and no warning, whatever the failure mode."""
    from kvlint.types import is_internal_error

    result, _ = _internal_error_review(
        monkeypatch, {"kvlint.io/ignore": "KV503=our wrapper script, KV1=fine"}
    )
    assert [d.rule for d in result.diagnostics if is_internal_error(d.rule, d.message)] == ["KV503"]
    assert not [
        s for s in result.suppressed_diagnostics if is_internal_error(s.diagnostic.rule, s.diagnostic.message)
    ]


@pytest.mark.parametrize("mode", ["enforce", "warn", "audit"])
def test_failure_mode_closed_denies_an_object_kvlint_could_not_finish(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A stage raising on the object is caught by the pipeline (KV503 warning, the other workloads checked), so
    the review finished and the object was admitted with a warning under --failure-mode closed, which promises
    that an object kvlint could not check is denied. Open still admits it with the warning."""
    from kvlint.webhook.review import WebhookSettings, build_response

    result, review = _internal_error_review(monkeypatch, {})
    closed, verdict = build_response(review, WebhookSettings(mode=mode, failure_mode="closed"), result)
    assert closed["response"]["allowed"] is False and verdict.outcome == "internal_error"
    assert "RuntimeError" in closed["response"]["status"]["message"]
    opened, _ = build_response(review, WebhookSettings(mode=mode, failure_mode="open"), result)
    assert opened["response"]["allowed"] is True
    if mode != "audit":
        assert any("could not finish" in w for w in opened["response"]["warnings"])


def _plan_kv(
    tmp_path: Path, args: list[str], image: str = "vllm/vllm-openai:v0.34.0"
) -> tuple[int, list[dict]]:
    path = _vllm_manifest(tmp_path, args, {}, gpus=1)
    path.write_text(path.read_text().replace("vllm/vllm-openai:v0.11.0", image))
    result = CliRunner().invoke(main, ["check", "--offline", "--format", "json", str(path)])
    report = json.loads(result.output)
    return report["workloads"][0]["plan"]["memory"]["kv_cache_bytes"], report["diagnostics"]


def test_spec_shorthands_are_read_as_the_speculative_config_keys_they_set(tmp_path: Path) -> None:
    """vLLM 0.24.0 and later take --spec-method / --spec-model / --spec-tokens and write them into the speculative
    config (EngineArgs.create_speculative_config). kvlint ignored them: the draft model's weights and KV layers
    were not planned, and --spec-tokens was not checked at all."""
    draft = "meta-llama/Llama-3.2-1B-Instruct"
    plain, _ = _plan_kv(tmp_path, [])
    config, _ = _plan_kv(
        tmp_path, ["--speculative-config", json.dumps({"model": draft, "num_speculative_tokens": 5})]
    )
    short, found = _plan_kv(tmp_path, ["--spec-model", draft, "--spec-tokens", "5"])
    assert config < plain  # the draft's weights and KV layers share the GPU
    assert short == config and not [d for d in found if d["rule"] in ("KV205", "KV206")], found


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--spec-tokens", "0"], "greater than zero"),
        (["--spec-tokens", "1000000"], "absurd"),
        (
            [
                "--speculative-config",
                '{"method": "ngram", "num_speculative_tokens": 4}',
                "--spec-tokens",
                "3",
            ],
            "mutually exclusive",
        ),
    ],
)
def test_spec_shorthands_vllm_refuses_are_kv206_errors(tmp_path: Path, args: list[str], words: str) -> None:
    _, found = _plan_kv(tmp_path, args)
    refused = [d for d in found if d["rule"] == "KV206"]
    assert len(refused) == 1 and words in refused[0]["message"] and refused[0]["severity"] == "error", found


def test_an_absurd_speculative_count_is_named_in_a_short_message(tmp_path: Path) -> None:
    # 1e308 is a whole number to pydantic; its 309 digits were written out with thousands separators
    _, found = _plan_kv(
        tmp_path, ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 1e308}']
    )
    (refused,) = [d for d in found if d["rule"] == "KV206"]
    assert "above 4,096 is absurd" in refused["message"] and len(refused["message"]) < 300


@pytest.mark.parametrize("revs", [["--output=OUT"], ["HEAD", "--output=OUT"]])
def test_diff_never_hands_git_a_revision_that_is_an_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, revs: list[str]
) -> None:
    """``kvlint diff -- --output=FILE`` ran ``git archive --format=tar --output=FILE``: git took the revision for
    its option and created (or emptied) FILE; as HEAD (``git diff ... --output=FILE``) too. A revision starting with
    '-' is refused (no ref name may start with one), exit 2, and no file is written."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    (repo / "a.yaml").write_text("a: 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, capture_output=True)
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "base"],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(
        main, ["diff", "--offline", "--", *(r.replace("OUT", str(victim)) for r in revs)]
    )
    assert victim.read_text() == "keep me\n"
    assert result.exit_code == 2, result.output
    assert "not a git revision" in result.output


def test_plan_text_shows_what_the_command_line_carries_as_printable_text() -> None:
    """``kvlint plan``'s text printed the model and the findings and notes quoting the command line as written: a
    model or a speculative method holding a line break and an OSC sequence started a line with a GitHub workflow
    command and retitled the terminal (``kvlint check``'s text report escapes the same values)."""
    forged = "x\n::error file=/etc/passwd::forged\x1b]0;owned\x07\u202e"
    model_out = (
        CliRunner()
        .invoke(main, ["plan", "--offline", "--accelerator", "h100", "--", "vllm", "serve", "org/m" + forged])
        .output
    )
    config = json.dumps({"method": "eagle" + forged, "num_speculative_tokens": 3})
    note_out = (
        CliRunner()
        .invoke(
            main,
            [
                "plan",
                "--offline",
                "--accelerator",
                "h100",
                "--",
                "vllm",
                "serve",
                "meta-llama/Llama-3.1-8B-Instruct",
                "--max-model-len",
                "8192",
                "--speculative-config",
                config,
            ],
        )
        .output
    )
    assert "speculative method 'eagle" in note_out  # the note that quotes the method is shown
    for out in (model_out, note_out):
        assert "forged" in out
        assert not [line for line in out.splitlines() if line.lstrip().startswith("::")], out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


def _tgi_findings(tmp_path: Path, env: dict[str, str]) -> list[dict]:
    container = {
        "name": "tgi",
        "image": "ghcr.io/huggingface/text-generation-inference:3.0.1",
        "env": [{"name": "MODEL_ID", "value": "meta-llama/Llama-3.1-8B-Instruct"}]
        + [{"name": k, "value": v} for k, v in env.items()],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    return _diagnostics(_deployment(tmp_path / "tgi.yaml", container))


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        # past usize: clap's "number too large to fit in target type"; kvlint planned 10^20 shards (KV401-403)
        ("NUM_SHARD", "100000000000000000000", "at most 18,446,744,073,709,551,615"),
        # within usize but no cluster's: refused as absurd, as a flag's parallel size is
        ("NUM_SHARD", "10000000000000000000", "implausibly large"),
        ("MAX_BATCH_PREFILL_TOKENS", "-5", "unsigned"),  # a u32: Python's int() took it and planned with it
        ("MAX_BATCH_TOTAL_TOKENS", "5000000000", "at most 4,294,967,295"),  # past u32
        ("MAX_TOTAL_TOKENS", "1_000", "an integer is required"),  # Rust's parser takes no separator
        ("MAX_TOTAL_TOKENS", " 4096", "an integer is required"),  # nor a blank
    ],
)
def test_tgi_integers_the_launcher_refuses_are_kv206(
    tmp_path: Path, name: str, value: str, words: str
) -> None:
    found = _tgi_findings(tmp_path, {name: value})
    refused = [d for d in found if d["rule"] == "KV206" and name in d["message"]]
    assert len(refused) == 1 and words in refused[0]["message"] and refused[0]["severity"] == "error", found
    assert not [d for d in found if d["rule"] in ("KV401", "KV402", "KV403")], found


def test_tgi_integers_the_launcher_reads_are_no_finding(tmp_path: Path) -> None:
    # a leading + is read by Rust's parser; the largest u32 prefill budget too
    found = _tgi_findings(tmp_path, {"MAX_TOTAL_TOKENS": "+4096", "MAX_BATCH_PREFILL_TOKENS": "4096"})
    assert not [d for d in found if d["rule"] == "KV206"], found


@pytest.mark.parametrize("sub", [False, True])
def test_the_chart_named_in_a_values_files_fix_is_one_shell_word(tmp_path: Path, sub: bool) -> None:
    """A chart's own values.yaml (and a subchart's) linted alone: the fix names the chart to lint instead, and wrote
    its directory as is (``kvlint check $(touch pwned) x``), the two forms break26's quoting missed."""
    import shlex

    chart = tmp_path / "$(touch pwned) x"
    target = chart / "charts" / "sub" if sub else chart
    for d in {chart, target}:
        (d / "templates").mkdir(parents=True)
        (d / "Chart.yaml").write_text(
            f"apiVersion: v2\nname: {d.name.split()[0][:1] or 'c'}c\nversion: 0.1.0\n"
        )
    values = target / "values.yaml"
    values.write_text("image:\n  repository: vllm/vllm-openai\n  tag: v0.11.0\n")
    result = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(values)])
    (fix,) = [
        d["fix"] for d in json.loads(result.output)["diagnostics"] if "kvlint check" in (d.get("fix") or "")
    ]
    command = fix.split("kvlint check ", 1)[1].split(" (", 1)[0]
    assert shlex.split(command) == [str(chart)], fix  # one word, the chart the fix means


def test_a_count_given_by_spec_tokens_is_not_a_missing_count() -> None:
    """``--speculative-config '{"method": "mtp"}' --spec-tokens 2``: vLLM merges the shorthand into the config
    before ``SpeculativeConfig`` checks for a count (``EngineArgs.create_speculative_config``, 0.34.0), so the
    missing-count refusal (KV206) does not apply; without ``--spec-tokens`` it does."""
    from kvlint.engines import parse_command_line

    def kv206(*extra: str) -> list[str]:
        cmd = ["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", '{"method": "mtp"}', *extra]
        serving = parse_command_line(cmd, version="0.34.0")
        return [
            f.message for f in serving.findings if f.rule == "KV206" and "num_speculative_tokens" in f.message
        ]

    assert kv206() != []
    assert kv206("--spec-tokens", "2") == []
