"""Adversarial pass on what session 45 landed (branch break46): each test fails before its fix."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents


def _deployment(
    image: str, env: str, args: str = "[--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '8192']"
) -> str:
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "      containers:\n      - name: c\n"
        f"        image: {image}\n        args: {args}\n"
        f"        env:\n{env}"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_refusal_at_the_env_entry_the_kubelet_keeps() -> None:
    # An env name given twice: the kubelet keeps the last entry (makeEnvironmentVariables), and kvlint's plan
    # reads the last (container_env), but the KV502 refusal was placed at the first entry's value, a value the
    # engine never sees ("VLLM_USE_V2_MODEL_RUNNER=0 raises ..." at the line of "1").
    env = (
        "        - {name: VLLM_USE_V2_MODEL_RUNNER, value: '1'}\n"
        "        - {name: OTHER, value: x}\n"
        "        - {name: VLLM_USE_V2_MODEL_RUNNER, value: 'zero'}\n"
    )
    text = _deployment("vllm/vllm-openai:v0.34.0", env)
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    kv502 = [d for d in result.diagnostics if d.rule == "KV502" and "VLLM_USE_V2_MODEL_RUNNER" in d.message]
    assert len(kv502) == 1, [d.message for d in result.diagnostics]
    assert "VLLM_USE_V2_MODEL_RUNNER=zero" in kv502[0].message
    assert kv502[0].loc.line == _line_of(text, "'zero'")


def test_refusal_at_the_last_entry_of_v1_and_tgi_attention() -> None:
    # the same helper places VLLM_USE_V1's and TGI's ATTENTION refusals
    env = "        - {name: ATTENTION, value: flashinfer}\n        - {name: ATTENTION, value: bogus}\n"
    text = _deployment(
        "ghcr.io/huggingface/text-generation-inference:3.3.4",
        env,
        "[--model-id, meta-llama/Llama-3.1-8B-Instruct]",
    )
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    found = [d for d in result.diagnostics if d.rule == "KV502" and "ATTENTION" in d.message]
    assert len(found) == 1, [d.message for d in result.diagnostics]
    assert found[0].loc.line == _line_of(text, "bogus")


def test_env_entry_named_by_a_list_beside_lws_variables() -> None:
    # LWS (and OME's multi-node runtimes) head each container's env with LWS's variables and drop the container's
    # own of those names (with_injected_env, operator_first): an entry whose name is a list was looked up in the
    # injected names' dict, TypeError "unhashable type: 'LList'", and the whole file was "could not finish
    # checking". Found by fuzzing an OME runtime of the corpus.
    text = (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {name: l}\nspec:\n"
        "  leaderWorkerTemplate:\n    size: 2\n    workerTemplate:\n      spec:\n"
        "        nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "        containers:\n        - name: c\n          image: vllm/vllm-openai:v0.11.0\n"
        "          args: [--model, meta-llama/Llama-3.1-8B-Instruct]\n"
        "          env:\n          - {name: [LWS_GROUP_SIZE], value: x}\n          - {name: {a: b}, value: y}\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    result = run_documents(load_text(text, "l.yaml"), Options(allow_hub=False))
    assert not [d.message for d in result.diagnostics if "could not finish" in d.message]
    assert result.workloads, [d.message for d in result.diagnostics]


def _workflow_commands(out: str) -> list[str]:
    """The lines of ``out`` the GitHub Actions runner would act on (``ActionCommand.TryParseV2``: ``::`` after
    leading whitespace; ``TryParse``: ``##[`` anywhere)."""
    return [line for line in out.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def test_kvlint_diff_text_holds_no_workflow_command() -> None:
    # `kvlint diff origin/main` runs in a pull request's workflow step; its text quoted the findings' file names
    # and object names raw: a file a pull request names "::warning title=x::y.yaml" started a finding line with
    # "  ::warning ..." (a command after leading whitespace), a Deployment named "x##[error]y" put the legacy
    # "##[error]" on every line naming it. `kvlint check`'s text report shows neither (inert_path, inert_line).
    from kvlint.prdiff import CAPACITY_COLUMNS, CapacityRow, Comparison, render_diff_text

    d = {
        "file": "::warning title=x::y.yaml",
        "line": 3,
        "column": 1,
        "severity": "error",
        "rule": "KV401",
        "message": "m",
        "object": "Deployment/x##[error]y",
        "container": "c",
    }
    row = CapacityRow(
        "Deployment/x##[error]y [c]",
        "::warning title=x::y.yaml",
        None,
        {k: "##[group]v" for k, _ in CAPACITY_COLUMNS},
    )
    out = render_diff_text("a..b", Comparison(new=[d], existing=[d], fixed=[d]), [row], ["::error::note"])
    assert "x##" in out  # the names are still shown
    assert not _workflow_commands(out), out


def test_kvlint_verify_text_holds_no_workflow_command(tmp_path) -> None:  # noqa: ANN001
    # `kvlint verify` quotes the start-up log's lines (and the model it printed) in its table and its error;
    # a log line holding "##[error]" was printed as it is, a legacy workflow command.
    from pathlib import Path

    from click.testing import CliRunner

    from kvlint.cli import main

    logs = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
    text = (logs / "gt-324.log").read_text()
    assert "Model loading took 2.98 GiB memory" in text
    hostile = tmp_path / "hostile.log"
    hostile.write_text(
        text.replace("Model loading took 2.98 GiB memory", "Model loading took 2.98 GiB memory ##[error]x")
    )
    res = CliRunner().invoke(main, ["verify", "--offline", str(hostile)], catch_exceptions=False)
    assert "line 9:" in res.output and "##" in res.output, res.output
    assert not _workflow_commands(res.output), res.output
    res = CliRunner().invoke(
        main, ["verify", "--offline", "--format", "json", str(hostile)], catch_exceptions=False
    )
    assert "##[error]x" in res.output.replace("\\u0023", "#") and not _workflow_commands(res.output), (
        res.output
    )
    # the model the log printed, quoted in the error when it cannot be replayed
    unknown = tmp_path / "unknown.log"
    unknown.write_text(text.replace("Qwen/Qwen2.5-Coder-1.5B-Instruct", "Qwen/x##[warning]m"))
    res = CliRunner().invoke(main, ["verify", "--offline", str(unknown)], catch_exceptions=False)
    assert res.exit_code == 2 and "x##" in res.output, res.output
    assert not _workflow_commands(res.output), res.output


def test_json_sarif_and_junit_reports_hold_no_legacy_workflow_command() -> None:
    # `kvlint check --format json deploy/` (or sarif, jsonl, junit) in a workflow step prints the report to the log,
    # where the runner honours the legacy "##[command]" anywhere in a line; a Deployment named "x##[error]y" put
    # it on every line quoting the name. The reports now write it as their readers read it back ("#\u0023[" in
    # JSON, "##&#91;" in XML): the same characters for json.loads and an XML parser.
    import json
    from xml.etree import ElementTree

    from kvlint.report import render

    text = _deployment(
        "vllm/vllm-openai:v0.11.0",
        "        - {name: X, value: '1'}\n",
        "[--model, meta-llama/Llama-3.1-8B-Instruct, --tensor-parallel-size, '3']",
    ).replace("metadata: {name: d}", "metadata: {name: 'x##[error]y'}")
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    assert any(d.object == "Deployment/x##[error]y" for d in result.diagnostics)
    for fmt in ("json", "jsonl", "sarif", "junit"):
        out = render(fmt, result)
        assert not _workflow_commands(out), (fmt, _workflow_commands(out)[:2])
        if fmt == "junit":
            assert "Deployment/x##[error]y" in ElementTree.tostring(
                ElementTree.fromstring(out), encoding="unicode"
            )
        elif fmt == "jsonl":
            assert any(
                json.loads(line).get("object") == "Deployment/x##[error]y" for line in out.splitlines()
            )
        else:
            assert "Deployment/x##[error]y" in json.dumps(json.loads(out), ensure_ascii=False)


def _grpc_findings(tag: str, extra: str) -> list:  # type: ignore[type-arg]
    text = _deployment(
        f"vllm/vllm-openai:{tag}",
        "        - {name: X, value: '1'}\n",
        "[--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '4096', " + extra + "]",
    ).replace("        args:", "        command: [python3, -m, vllm.entrypoints.grpc_server]\n        args:")
    result = run_documents(load_text(text, "g.yaml"), Options(allow_hub=False))
    return [d for d in result.diagnostics if d.rule == "KV205"]


def test_grpc_server_option_as_vllm_parser_reads_it() -> None:
    # vLLM's gRPC server (0.14.0 - 0.17.x) adds --disable-log-stats-server to the engine's options and parses them
    # with FlexibleArgumentParser, which reads --disable_log_stats_server as --disable-log-stats-server and, an
    # argparse parser with allow_abbrev, a unique prefix of it as it: both were KV205 errors ("unknown vLLM 0.14.0
    # option"), the exact spelling alone was accepted.
    assert _grpc_findings("v0.14.0", "--disable-log-stats-server") == []
    assert _grpc_findings("v0.14.0", "--disable_log_stats_server") == []
    (abbrev,) = _grpc_findings("v0.14.0", "--disable-log-stats-serv")
    assert abbrev.severity == "warning" and "abbreviation of --disable-log-stats-server" in abbrev.message
    # from 0.18.0 the server has no such option: an error whatever the spelling
    for spelling in ("--disable-log-stats-server", "--disable_log_stats_server", "--disable-log-stats-serv"):
        (gone,) = _grpc_findings("v0.18.0", spelling)
        assert gone.severity == "error", gone.message
    # a prefix the engine's own options share stays ambiguous for argparse: the engine parser's error stands
    (amb,) = _grpc_findings("v0.14.0", "--disable-log")
    assert amb.severity == "error"


def test_refusal_of_a_variable_from_a_configmap_is_placed_at_its_key() -> None:
    # VLLM_USE_V2_MODEL_RUNNER from an envFrom ConfigMap (or a configMapKeyRef) among the inputs: the plan reads
    # its value there, and the KV502 refusal ("set VLLM_USE_V2_MODEL_RUNNER to 0 ... or 1") was placed at the
    # container's args, where no such variable is written.
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vllm-env}\ndata:\n  HF_HOME: /cache\n"
        "  VLLM_USE_V2_MODEL_RUNNER: 'true'\n  ATTN: bogus\n---\n"
    ) + _deployment("vllm/vllm-openai:v0.25.0", "        - {name: OTHER, value: x}\n").replace(
        "        env:\n", "        envFrom:\n        - configMapRef: {name: vllm-env}\n        env:\n"
    )
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    (kv502,) = [
        d for d in result.diagnostics if d.rule == "KV502" and "VLLM_USE_V2_MODEL_RUNNER" in d.message
    ]
    assert kv502.loc.line == _line_of(text, "VLLM_USE_V2_MODEL_RUNNER: 'true'")
    tgi = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tgi-env}\ndata:\n  ATTN: bogus\n---\n"
    ) + _deployment(
        "ghcr.io/huggingface/text-generation-inference:3.3.4",
        "        - name: ATTENTION\n          valueFrom: {configMapKeyRef: {name: tgi-env, key: ATTN}}\n",
        "[--model-id, meta-llama/Llama-3.1-8B-Instruct]",
    )
    result = run_documents(load_text(tgi, "t.yaml"), Options(allow_hub=False))
    (kv502,) = [d for d in result.diagnostics if d.rule == "KV502" and "ATTENTION" in d.message]
    assert kv502.loc.line == _line_of(tgi, "ATTN: bogus")


def test_command_args_and_env_values_that_are_not_strings_are_errors() -> None:
    # `args: [--max-model-len, 4096]` and `env: [{name: X, value: 1}]`: the API server decodes Container.Args
    # ([]string) and EnvVar.Value (string) and refuses the object ("json: cannot unmarshal number into Go struct
    # field ... of type string"); kvlint read 4096 as "4096" and planned a container that is never created.
    text = _deployment(
        "vllm/vllm-openai:v0.11.0",
        "        - {name: A, value: '1'}\n        - {name: B, value: true}\n        - {name: C, value: 2}\n",
        "[--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, 4096]",
    )
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    found = sorted(
        (d.loc.line, d.loc.column, d.message.split(":")[0])
        for d in result.diagnostics
        if d.rule == "KV005" and d.severity == "error"
    )
    assert found == [
        (_line_of(text, "4096]"), text.splitlines()[_line_of(text, "4096]") - 1].index("4096") + 1,
         "args[3] of container 'c' is a number, not a string"),
        (_line_of(text, "value: true"), text.splitlines()[_line_of(text, "value: true") - 1].index("true") + 1,
         "the value of env 'B' of container 'c' is a bool, not a string (and 1 more in its env)"),
    ]  # fmt: skip
    # quoted, null (decoded as "") and YAML 1.1 base-60 text, which kubectl's YAML reader keeps as a string
    # (PyYAML made "8000:9000" 489000): no finding, and the engine gets the text as written
    ok = _deployment(
        "vllm/vllm-openai:v0.11.0",
        "        - {name: A, value: '1'}\n        - {name: B, value: null}\n        - {name: C, value: 1:20}\n",
        "[--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '4096', --lora-modules, 8000:9000]",
    )
    result = run_documents(load_text(ok, "d.yaml"), Options(allow_hub=False))
    assert not [d.message for d in result.diagnostics if d.rule == "KV005"]
    (cr,) = result.containers
    assert cr.serving is not None and cr.serving.env.get("C") == "1:20"


def test_modelopt_and_awq_skip_lists_cost_no_more_per_name_as_they_grow(monkeypatch) -> None:  # noqa: ANN001
    # A ModelOpt `exclude_modules` (or AWQ `modules_to_not_convert`) list is a config.json's, which a pull request
    # can write (a local model path, --model-dir): up to 4 MiB, 300,000 entries. Each was tried against every
    # module name as two regex alternations of all the entries (19 CPU s for one 3 MB config, per run). The
    # substring test is now a set lookup per slice length, and only entries holding a wildcard go to the fnmatch
    # alternation, at most MAX_GPTQ_RULES of them. Counted: the alternatives compiled; and the answers are those
    # of the short list.
    import random
    import re

    from kvlint.models import weights
    from kvlint.models.resolve import resolve_model

    m = resolve_model("meta-llama/Llama-3.1-8B", allow_hub=False)
    real = ["model.layers.0.self_attn", "*mlp.down_proj*", "model.layers.3[0-9].mlp", "lm_head"]
    noise = [f"q{i}" for i in range(100_000)] + [f"*zz{i}*" for i in range(3000)]
    compiled: list[int] = []
    compile_ = re.compile

    def counted(pattern, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        compiled.append(str(pattern).count("|") + 1)
        return compile_(pattern, *args, **kwargs)

    monkeypatch.setattr(re, "compile", counted)
    for method, key in (("modelopt", "exclude_modules"), ("awq", "modules_to_not_convert")):
        short = weights.skipped_params(m, method, {"quant_method": method, key: real})
        compiled.clear()
        long = weights.skipped_params(m, method, {"quant_method": method, key: real + noise})
        assert long == short != (0, 0, ""), (method, long, short)
        assert max(compiled, default=0) <= 2 * weights.MAX_GPTQ_RULES, max(compiled)
    rng = random.Random(46)
    texts = ["".join(rng.choice("ab.") for _ in range(rng.randint(0, 4))) for _ in range(40)]
    for _ in range(500):
        name = "".join(rng.choice("ab.") for _ in range(rng.randint(0, 9)))
        for group in (texts[:5], texts[5:], [t for t in texts if t]):
            assert weights._substring_test(group)(name) == any(t in name for t in group), (name, group)


def test_sglang_is_embedding_is_a_switch() -> None:
    # SGLang's --is-embedding is store_true (ServerArgs.add_cli_args, 0.3 - 0.5.23): "--is-embedding false" stops
    # the server ("unrecognized arguments: false"), "--is-embedding=false" too ("ignored explicit argument"); kvlint
    # took the word for its value, found no error and planned the model in embedding mode (bool("false")).
    from kvlint.engines.sglang import parse_sglang_argv

    base = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"]
    for extra in (["--is-embedding", "false"], ["--is-embedding=false"]):
        cfg = parse_sglang_argv(base[3:] + extra, version="0.5.5")
        kv206 = [f for f in cfg.findings if f.rule == "KV206"]
        assert len(kv206) == 1 and "--is-embedding is a switch" in kv206[0].message, cfg.findings
        assert cfg.get("is_embedding") is True  # read as the option alone, as the other switches
    cfg = parse_sglang_argv([*base[3:], "--is-embedding", "--enable-metrics"], version="0.5.5")
    assert cfg.get("is_embedding") is True and cfg.get("enable_metrics") is True
    assert not [f for f in cfg.findings if f.rule in ("KV205", "KV206")]
