"""SGLang command-line gaps read from the wheels (docs/engine-memory-model.md §3, "sglang serve and the parser's
refusals"): ``sglang serve MODEL`` with a positional model (``sglang/cli/serve.py::_normalize_positional_model_path``,
0.5.16 on) and ``--model-type`` (``_extract_model_type_override``, 0.5.10 on); ``--config`` given twice or without
a file (``ConfigArgumentMerger._extract_config_file_path`` raises); ``--cuda-graph-bs=8 16`` (argparse gives an
``=`` value one argument and leaves the rest over: "unrecognized arguments")."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.command import parse_command_line
from kvlint.engines.sglang import SERVE_MODEL_TYPE_FROM, SERVE_POSITIONAL_FROM, parse_sglang_argv
from kvlint.pipeline import Options, run_check
from kvlint.source import Loc

MODEL = "Qwen/Qwen2.5-7B-Instruct"
NEW = ".".join(map(str, SERVE_POSITIONAL_FROM))
OLD = ".".join(map(str, (*SERVE_POSITIONAL_FROM[:2], SERVE_POSITIONAL_FROM[2] - 1)))


def _rules(cfg) -> list[str]:
    return [f.rule for f in cfg.findings]


@pytest.mark.parametrize("version", [NEW, "0.5.23", None, "latest"])
@pytest.mark.parametrize(
    "head", [["sglang", "serve"], ["python3", "-m", "sglang.cli.main", "serve"]], ids=["sglang", "cli.main"]
)
def test_a_positional_model_is_the_model(head: list[str], version: str | None) -> None:
    cfg = parse_command_line([*head, MODEL, "--tp", "2"], version)
    assert cfg.engine == "sglang" and cfg.model is not None and cfg.model.value == MODEL
    assert cfg.flags["tp_size"].value == 2 and not cfg.findings, cfg.findings


def test_a_later_model_path_wins_over_the_positional() -> None:
    """The positional becomes ``--model-path WORD`` in front; argparse keeps the last value."""
    cfg = parse_command_line(["sglang", "serve", MODEL, "--model-path", "meta-llama/Llama-3.1-8B"], NEW)
    assert cfg.model is not None and cfg.model.value == "meta-llama/Llama-3.1-8B" and not cfg.findings


def test_the_positional_wins_over_a_config_file_model() -> None:
    """The merger puts the file's arguments first, the command line (the positional's --model-path) after."""
    text = "model-path: meta-llama/Llama-3.1-8B\ntp-size: 2\n"
    cfg = parse_sglang_argv(
        [MODEL, "--config", "/etc/s.yaml"],
        version=NEW,
        serve_cli=True,
        config_loader=lambda path: (text, Loc("cm.yaml", 5, 1)),
    )
    assert cfg.model is not None and cfg.model.value == MODEL and cfg.flags["tp_size"].value == 2
    assert "KV207" not in _rules(cfg)


@pytest.mark.parametrize(
    ("extra", "then"), [([], "--model-path is required"), (["--model-path", "m"], "unrecognized")]
)
def test_a_release_before_the_positional_refuses_it(extra: list[str], then: str) -> None:
    cfg = parse_command_line(["sglang", "serve", MODEL, *extra], OLD)
    (bad,) = [f for f in cfg.findings if f.rule == "KV206"]
    assert bad.severity == "error" and "positional" in bad.message and then in bad.message
    assert cfg.model is None if not extra else cfg.model.value == "m"  # type: ignore[union-attr]


def test_launch_server_takes_no_positional() -> None:
    """``python -m sglang.launch_server MODEL`` is not ``sglang serve``: the word is not the model."""
    cfg = parse_command_line(["python3", "-m", "sglang.launch_server", MODEL], NEW)
    assert cfg.model is None


@pytest.mark.parametrize("form", [["--model-type", "llm"], ["--model-type=llm"]])
def test_model_type_is_taken_off_by_sglang_serve(form: list[str]) -> None:
    first = ".".join(map(str, SERVE_MODEL_TYPE_FROM))
    cfg = parse_command_line(["sglang", "serve", *form, "--model-path", MODEL], first)
    assert not cfg.findings and cfg.model is not None and cfg.model.value == MODEL
    before = ".".join(map(str, (*SERVE_MODEL_TYPE_FROM[:2], SERVE_MODEL_TYPE_FROM[2] - 1)))
    old = parse_command_line(["sglang", "serve", *form, "--model-path", MODEL], before)
    assert _rules(old) == ["KV205"]
    # launch_server never takes it
    assert "KV205" in _rules(parse_command_line(["python3", "-m", "sglang.launch_server", *form], first))


def test_serve_positional_in_a_pod_is_sized(tmp_path: Path) -> None:
    """The whole path: a Deployment's ``sglang serve MODEL`` gets the model and a plan (kvlint said no model)."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}\n  containers:\n  - name: engine\n"
        f"    image: lmsysorg/sglang:v0.5.23\n    command: [sglang, serve, {MODEL}, --tp, '1']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    result = run_check([str(path)], Options(allow_hub=False))
    (c,) = [c for c in result.containers if c.serving is not None]
    assert c.serving.model is not None and c.serving.model.value == MODEL
    assert c.serving.model.loc is not None and c.serving.model.loc.line == 9
    assert c.plan is not None


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--config", "/a.yaml", "--config", "/b.yaml"], "Multiple config files"),
        (["--config", "/a.yaml", "--tp", "2", "--config", "/a.yaml"], "Multiple config files"),
        (["--config"], "No config file specified"),
    ],
)
def test_config_twice_or_without_a_file_is_refused(argv: list[str], said: str) -> None:
    read: list[str] = []

    def loader(path: str):
        read.append(path)
        return ("tp-size: 4\n", None)

    cfg = parse_sglang_argv(["--model-path", MODEL, *argv], version="0.5.23", config_loader=loader)
    (bad,) = cfg.findings
    assert bad.rule == "KV206" and bad.severity == "error" and said in bad.message, cfg.findings
    assert not read and "config" not in cfg.flags  # no file merged, no "the last wins"


def test_one_config_is_still_read() -> None:
    cfg = parse_sglang_argv(
        ["--model-path", MODEL, "--config", "/a.yaml"],
        version="0.5.23",
        config_loader=lambda p: ("tp-size: 4\n", None),
    )
    assert not cfg.findings and cfg.flags["tp_size"].value == 4


@pytest.mark.parametrize(
    ("option", "version"), [("--cuda-graph-bs", "0.5.13"), ("--cuda-graph-bs-decode", "0.5.23")]
)
def test_a_graph_list_after_an_equals_sign_is_refused(option: str, version: str) -> None:
    dest = option[2:].replace("-", "_")
    cfg = parse_sglang_argv(["--model-path", MODEL, f"{option}=8", "16", "32"], version=version)
    (bad,) = cfg.findings
    assert bad.rule == "KV206" and bad.severity == "error" and "'16 32'" in bad.message
    assert "unrecognized arguments" in bad.message and f"{option} 8 16 32" in bad.fix
    assert cfg.flags[dest].value == (8,)  # what argparse read before it stopped
    spaced = parse_sglang_argv(["--model-path", MODEL, option, "8", "16"], version=version)
    assert not spaced.findings and spaced.flags[dest].value == (8, 16)
    alone = parse_sglang_argv(["--model-path", MODEL, f"{option}=8", "--tp", "2"], version=version)
    assert not alone.findings and alone.flags[dest].value == (8,)


@pytest.mark.parametrize("value", ["nan", ".nan", "inf", ".inf", "1e3", "1.0e3", "1000.0", '"12.5"'])
@pytest.mark.parametrize("key", ["cuda-graph-max-bs", "cuda-graph-bs", "piecewise-cuda-graph-max-tokens"])
def test_graph_sizes_sglang_cannot_read_as_int_in_a_config_file_are_refused(key: str, value: str) -> None:
    """yaml.safe_load, then str(value) after the option (ConfigArgumentMerger._add_scalar_arg): argparse's int()
    refuses each, so SGLang does not start; kvlint says so and sizes nothing from it."""
    cfg = parse_sglang_argv(
        ["--model-path", MODEL, "--config", "/c.yaml"],
        version="0.5.13",
        config_loader=lambda p: (f"{key}: {value}\n", None),
    )
    assert [f.rule for f in cfg.findings] == ["KV206"] and cfg.findings[0].severity == "error"
    assert key.replace("-", "_") not in cfg.flags


@pytest.mark.parametrize(("value", "read"), [("0x40", 64), ("010", 8), ("1_000", 1000), ("+64", 64)])
def test_graph_sizes_yaml_reads_as_integers_are_read_so(value: str, read: int) -> None:
    cfg = parse_sglang_argv(
        ["--model-path", MODEL, "--config", "/c.yaml"],
        version="0.5.13",
        config_loader=lambda p: (f"cuda-graph-max-bs: {value}\n", None),
    )
    assert not cfg.findings and cfg.flags["cuda_graph_max_bs"].value == read


@pytest.mark.parametrize("version", ["0.5.10", "0.5.23", None])
def test_serve_with_the_model_only_in_the_config_file_is_refused(version: str | None) -> None:
    """``sglang serve`` looks for the model on its command line (cli/utils.py::get_model_path) before the server
    merges the --config file; python -m sglang.launch_server reads it from the file."""
    text = f"model-path: {MODEL}\n"

    def run(serve: bool):
        return parse_sglang_argv(
            ["--config", "/c.yaml", "--tp", "2"],
            version=version,
            serve_cli=serve,
            config_loader=lambda p: (text, Loc("cm.yaml", 7, 5)),
        )

    cfg = run(True)
    (bad,) = cfg.findings
    assert bad.rule == "KV206" and bad.severity == "error" and "--model-path is required" in bad.message
    assert bad.loc == cfg.model.loc and "in the --config file" in bad.message  # type: ignore[union-attr]
    assert not run(False).findings


@pytest.mark.parametrize(
    ("version", "refused"), [("0.5.10", True), ("0.5.11", False), ("0.5.12", False), (None, False)]
)
def test_serve_takes_model_alias_from_0_5_11(version: str | None, refused: bool) -> None:
    cfg = parse_sglang_argv(["--model", MODEL], version=version, serve_cli=True)
    assert cfg.model is not None and cfg.model.value == MODEL
    assert [f.rule for f in cfg.findings] == (["KV206"] if refused else [])
    # --model-path= and a positional (0.5.16 on) count
    assert not parse_sglang_argv([f"--model-path={MODEL}"], version=version, serve_cli=True).findings


@pytest.mark.parametrize("head", [["sglang", "serve"], ["python3", "-m", "sglang.cli.main", "serve"]])
def test_serve_before_the_sglang_program_exists_is_refused(head: list[str]) -> None:
    """The ``sglang`` console script (sglang.cli.main:main) comes with 0.5.5: an older image has no such program.
    The options are still read (as launch_server's), and no serve-specific finding is added on top."""
    cfg = parse_command_line([*head, "--model", MODEL, "--tp", "2"], "0.5.4")
    (bad,) = cfg.findings
    assert bad.rule == "KV206" and bad.severity == "error" and "has no `sglang serve`" in bad.message
    assert cfg.model is not None and cfg.model.value == MODEL and cfg.flags["tp_size"].value == 2
    assert not parse_command_line([*head, "--model-path", MODEL], "0.5.5").findings
