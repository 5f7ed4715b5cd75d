"""`.kvlint.yaml`: discovery, schema validation with file:line:key errors, and each key's effect on a
real lint run (fixtures/config/)."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from kvlint.config import (
    Config,
    ConfigError,
    apply_config,
    config_schema,
    find_config,
    load_config,
    parse_config,
)
from kvlint.pipeline import Options, run_check

FIX = Path(__file__).resolve().parents[1] / "fixtures"
PROJECT = FIX / "config" / "project"
BAD = FIX / "config" / "bad"


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(config_schema())


def test_project_config_reads_every_key() -> None:
    cfg = load_config(str(PROJECT / ".kvlint.yaml"))
    assert cfg.select == ("KV1", "KV2", "KV4", "KV5")
    assert cfg.ignore == ("KV405",)
    assert cfg.severity == {"KV104": "error", "KV202": "info"}
    assert cfg.parameters == {"KV104": {"min_concurrency": 4}, "KV105": {"band": 0.10}}
    assert cfg.default_accelerator == "nvidia-l4"
    assert cfg.engine_version == "0.11.0"
    assert cfg.model_paths == {"/models/llama": "meta-llama/Llama-3.1-8B-Instruct"}
    assert cfg.exclude == ("generated",)
    assert cfg.fail_on == "warning"


def test_find_config_walks_upward(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "x.yaml").write_text("kind: List\n")
    assert find_config([str(deep / "x.yaml")]) is None
    (tmp_path / "a" / ".kvlint.yaml").write_text("ignore: [KV208]\n")
    assert find_config([str(deep / "x.yaml")]) == str(tmp_path / "a" / ".kvlint.yaml")
    assert find_config([str(deep)]) == str(tmp_path / "a" / ".kvlint.yaml")
    assert find_config(["-"], cwd=str(deep)) == str(tmp_path / "a" / ".kvlint.yaml")


@pytest.mark.parametrize(
    ("name", "line", "key", "words"),
    [
        ("unknown-key.yaml", 5, "exlude", "unknown key"),
        ("severity.yaml", 3, "rules.KV104.severity", "'fatal' is not one of"),
        ("unknown-rule.yaml", 3, "rules.KV999", "unknown rule id"),
        ("unknown-param.yaml", 3, "rules.KV104.min_concurency", "unknown parameter of KV104"),
        ("param-type.yaml", 3, "rules.KV407.startup_overhead_seconds", "not of type integer"),
        ("selector.yaml", 3, "select[1]", "'KV98' matches no rule"),
        ("yaml-error.yaml", 2, "", "invalid YAML"),
    ],
)
def test_errors_name_file_line_and_key(name: str, line: int, key: str, words: str) -> None:
    path = str(BAD / name)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}:{line}:"), msg
    assert key in msg and words in msg, msg


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("fail-on: warning\n", "did you mean 'fail_on'?"),  # the command-line flag's spelling
        ("--engine-version: '0.11.0'\n", "did you mean 'engine_version'?"),
        ("exlude: [charts]\n", "did you mean 'exclude'?"),
        ("accelerators:\n  node_label: {}\n", "did you mean 'node_labels'?"),
        ("colour: red\n", None),
        ("rules:\n  KV104: {min-concurrency: 4}\n", "did you mean 'min_concurrency'?"),
        ("rules:\n  KV104: {sevrity: error}\n", "did you mean 'severity'?"),
    ],
)
def test_unknown_key_names_the_key_it_stands_for(text: str, hint: str | None) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(text, "cfg.yaml")
    msg = str(exc.value)
    assert re.search(r"unknown (key|parameter of KV\d+)", msg) and "(allowed: " in msg, msg
    assert (hint in msg) if hint else ("did you mean" not in msg), msg


def test_bad_selector_and_unknown_accelerator_in_text() -> None:
    with pytest.raises(ConfigError, match=r"^cfg.yaml:1:10: select\[0\]: 'KV1x' is not a rule id or prefix"):
        parse_config("select: [KV1x]\n", "cfg.yaml")
    with pytest.raises(
        ConfigError, match=r"cfg.yaml:2:22: default_accelerator: unknown accelerator 'tpu-v9'"
    ):
        parse_config("# x\ndefault_accelerator: tpu-v9\n", "cfg.yaml")
    assert parse_config("", "empty.yaml") == Config(path="empty.yaml")


def test_flags_override_file() -> None:
    cfg = load_config(str(PROJECT / ".kvlint.yaml"))
    flags = Options(
        engine_version="0.10.1",
        select=("KV4",),
        severity={"KV104": "warning"},
        rule_params={"KV104": {"min_concurrency": 1.5}},
        model_paths={"/models/llama": "other/model"},
    )
    merged = apply_config(flags, cfg)
    assert merged.engine_version == "0.10.1"
    assert merged.select == ("KV4",)
    assert merged.ignore == ("KV405",)
    assert merged.severity == {"KV104": "warning", "KV202": "info"}
    assert merged.param("KV104", "min_concurrency") == 1.5
    assert merged.param("KV105", "band") == 0.10
    assert merged.model_paths["/models/llama"] == "other/model"
    assert merged.default_accelerator == "nvidia-l4"
    # --min-concurrency (Options.min_concurrency) beats everything
    assert replace(merged, min_concurrency=3.0).param("KV104", "min_concurrency") == 3.0


def _project_run(**changes: object) -> tuple[list[str], object]:
    cfg = load_config(str(PROJECT / ".kvlint.yaml"))
    opts = apply_config(replace(Options(allow_hub=False), **changes), cfg)  # type: ignore[arg-type]
    res = run_check([str(PROJECT / "deploy")], opts)
    return [d.rule for d in res.diagnostics], res


def test_project_keys_take_effect() -> None:
    rules, res = _project_run()
    assert res.files == 1  # generated/ excluded (its broken file would be a KV001)
    (c,) = res.containers
    assert c.placement.accelerator.id == "nvidia-l4"  # default_accelerator
    assert c.serving.version == "0.11.0"  # engine_version: no KV208
    assert c.model is not None and c.model.id == "meta-llama/Llama-3.1-8B-Instruct"  # model_paths
    assert c.plan is not None
    # rules.KV104.min_concurrency: 4 > the plan's concurrency, and severity: error
    assert c.plan.max_concurrency < 4
    (d,) = [d for d in res.diagnostics if d.rule == "KV104"]
    assert d.severity == "error" and "(minimum 4)" in d.message
    assert "KV208" not in rules and "KV001" not in rules


def test_min_concurrency_below_plan_silences_kv104() -> None:
    rules, res = _project_run(rule_params={"KV104": {"min_concurrency": 1}})
    assert "KV104" not in rules


def test_select_ignore_and_severity_apply_in_pipeline() -> None:
    path = [str(FIX / "examples" / "chat-8b-l4.yaml")]
    base = {d.rule: d.severity for d in run_check(path, Options(allow_hub=False)).diagnostics}
    assert base == {"KV103": "error", "KV202": "warning"}
    only = run_check(path, Options(allow_hub=False, select=("KV1",))).diagnostics
    assert [d.rule for d in only] == ["KV103"]
    ign = run_check(path, Options(allow_hub=False, ignore=("KV103",))).diagnostics
    assert [d.rule for d in ign] == ["KV202"]
    sev = run_check(path, Options(allow_hub=False, severity={"KV202": "error", "KV103": "off"})).diagnostics
    assert [(d.rule, d.severity) for d in sev] == [("KV202", "error")]


def test_schema_shipped_as_package_data() -> None:
    text = (Path(__file__).resolve().parents[1] / "kvlint" / "data" / "kvlint-config.schema.json").read_text()
    assert set(json.loads(text)["properties"]) >= {
        "select",
        "ignore",
        "rules",
        "default_accelerator",
        "engine_version",
        "model_paths",
        "exclude",
    }


def test_relative_model_dirs_resolve_against_config(tmp_path: Path) -> None:
    shutil.copytree(FIX / "models" / "acme--tiny-qwen3", tmp_path / "models" / "acme--tiny-qwen3")
    (tmp_path / ".kvlint.yaml").write_text(
        "model_dirs: [models]\nmodel_paths: {/mnt/m: models/acme--tiny-qwen3}\n"
    )
    cfg = load_config(str(tmp_path / ".kvlint.yaml"))
    assert cfg.model_dirs == (str((tmp_path / "models").resolve()),)
    assert cfg.model_paths == {"/mnt/m": str((tmp_path / "models" / "acme--tiny-qwen3").resolve())}


# ---- YAML 1.1 booleans, float versions, non-mapping roots, duplicate keys --------------------------------------


@pytest.mark.parametrize("word", ["off", "no", "false", "Off", "NO"])
def test_yaml11_boolean_off_is_severity_off_and_fail_on_never(word: str) -> None:
    cfg = parse_config(f"rules:\n  KV202: {{severity: {word}}}\nfail_on: {word}\n")
    assert cfg.severity == {"KV202": "off"}
    assert cfg.fail_on == "never"
    # the shipped schema accepts the same file, so editors using it do not flag it either
    import yaml

    jsonschema.validate(
        yaml.safe_load(f"rules: {{KV202: {{severity: {word}}}}}\nfail_on: {word}\n"), config_schema()
    )


def test_boolean_true_severity_is_still_rejected() -> None:
    with pytest.raises(ConfigError, match=r":2:21: rules\.KV202\.severity"):
        parse_config("rules:\n  KV202: {severity: yes}\n")


@pytest.mark.parametrize("written", ["0.11", "0.10", "1"])
def test_numeric_engine_version_gets_quote_hint(written: str) -> None:
    with pytest.raises(ConfigError) as ei:
        parse_config(f"engine_version: {written}\n")
    msg = str(ei.value)
    assert msg.startswith(".kvlint.yaml:1:17: engine_version:")
    assert f'write engine_version: "{written}"' in msg
    assert parse_config(f'engine_version: "{written}"\n').engine_version == written


@pytest.mark.parametrize(
    ("text", "kind"), [("- a\n- b\n", "a list"), ("just text\n", "a string"), ("42\n", "a number")]
)
def test_non_mapping_config_names_the_yaml_type(text: str, kind: str) -> None:
    with pytest.raises(ConfigError) as ei:
        parse_config(text)
    assert str(ei.value) == f".kvlint.yaml:1:1: the configuration must be a mapping (key: value), got {kind}"


def test_duplicate_keys_name_both_lines() -> None:
    text = "ignore: [KV208]\nrules:\n  KV104: {severity: error}\n  KV104: {severity: info}\nignore: [KV1]\n"
    with pytest.raises(ConfigError) as ei:
        parse_config(text, "p/.kvlint.yaml")
    lines = str(ei.value).splitlines()
    assert lines == [
        "p/.kvlint.yaml:4:3: rules.KV104: duplicate key (first at line 3, column 3); YAML keeps only the last",
        "p/.kvlint.yaml:5:1: ignore: duplicate key (first at line 1, column 1); YAML keeps only the last",
    ]
    # same key names in different mappings are not duplicates
    parse_config("rules:\n  KV104: {severity: error}\n  KV105: {severity: error}\n")


def test_find_config_walks_past_an_unreadable_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looking for .kvlint.yaml inside a directory without read permission raised PermissionError (a
    traceback); the search now goes on upwards. Root can read anything, so is_file raises for that path."""
    (tmp_path / ".kvlint.yaml").write_text("ignore: [KV208]\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_is_file = Path.is_file

    def is_file(self: Path) -> bool:
        if self.parent == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    assert find_config([str(locked)]) == str(tmp_path / ".kvlint.yaml")


# ---- a discovered configuration reads model directories only inside its repository -----------------------


def _repo_with_config(tmp_path: Path, text: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)  # what makes it a repository for kvlint: the nearest .git above
    (repo / "models").mkdir()
    (repo / ".kvlint.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "runner" / "secret").mkdir(parents=True)
    return repo


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("model_paths:\n  org/model: {secret}\n", "model_paths.org/model"),
        ("model_dirs: [models, ../runner/secret]\n", "model_dirs"),
        ("model_catalogue: ../runner\n", "model_catalogue"),
    ],
)
def test_discovered_configuration_reads_no_model_directory_outside_its_repository(
    tmp_path: Path, text: str, key: str
) -> None:
    secret = tmp_path / "runner" / "secret"
    repo = _repo_with_config(tmp_path, text.format(secret=secret))
    with pytest.raises(ConfigError) as exc:
        load_config(str(repo / ".kvlint.yaml"), discovered=True)
    message = str(exc.value)
    assert message.startswith(f"{repo / '.kvlint.yaml'}: {key}: ")
    assert f"is outside the repository {repo.resolve()} that holds this configuration" in message
    # named with --config, it is the user's choice and read as written
    load_config(str(repo / ".kvlint.yaml"))


def test_a_model_paths_value_read_from_the_current_directory_is_held_to_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``model_paths`` target is read as resolve_model reads it: ``~`` expanded, then relative to the current
    directory. A value that is not an existing directory beside the configuration stayed relative and was not
    checked: ``~/.docker``, ``../../.docker/config.json`` (a file) or a link of the repository to a file out of
    it made CI read the runner's ``config.json``."""
    repo = _repo_with_config(tmp_path, "")
    secret = tmp_path / "runner" / "secret"
    (secret / "config.json").write_text("{}", encoding="utf-8")
    (repo / "models" / "leak.json").symlink_to(secret / "config.json")
    monkeypatch.chdir(repo)  # the Action runs at the checkout's root
    monkeypatch.setenv("HOME", str(tmp_path / "runner"))
    for value in ("~/secret", "../runner/secret/config.json", "../runner/absent", "models/leak.json"):
        (repo / ".kvlint.yaml").write_text(f"model_paths:\n  /models/x: {value}\n", encoding="utf-8")
        with pytest.raises(ConfigError) as exc:
            load_config(str(repo / ".kvlint.yaml"), discovered=True)
        assert f"model_paths./models/x: {value} is outside the repository" in str(exc.value), value
        load_config(str(repo / ".kvlint.yaml"))  # named with --config: read as written
    # inside the repository, and hub ids, as before
    (repo / "models" / "tiny.json").write_text("{}", encoding="utf-8")
    for value in ("models/tiny.json", "./models/absent", "org/model", "model"):
        (repo / ".kvlint.yaml").write_text(f"model_paths:\n  /models/x: {value}\n", encoding="utf-8")
        assert load_config(str(repo / ".kvlint.yaml"), discovered=True).model_paths == {"/models/x": value}


def test_discovered_configuration_inside_its_repository_and_outside_any(tmp_path: Path) -> None:
    repo = _repo_with_config(tmp_path, "model_dirs: [models]\nmodel_paths: {/models/x: org/model}\n")
    config = load_config(str(repo / ".kvlint.yaml"), discovered=True)
    assert config.model_dirs == (str((repo / "models").resolve()),)
    assert config.model_paths == {"/models/x": "org/model"}  # a hub id, not a directory
    # a link inside the repository that leads out of it is outside
    (repo / "linked").symlink_to(tmp_path / "runner" / "secret")
    (repo / ".kvlint.yaml").write_text("model_dirs: [linked]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="model_dirs: .*secret is outside the repository"):
        load_config(str(repo / ".kvlint.yaml"), discovered=True)
    # no repository above: nothing to hold it to (a directory of manifests on a laptop)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".kvlint.yaml").write_text("model_dirs: [../runner/secret]\n", encoding="utf-8")
    assert load_config(str(plain / ".kvlint.yaml"), discovered=True).model_dirs == (
        str((tmp_path / "runner" / "secret").resolve()),
    )


@pytest.mark.parametrize(
    ("rule", "text"),
    [
        ("KV104", "min_concurrency: .inf"),
        ("KV104", "min_concurrency: .nan"),
        ("KV105", "band: .NaN"),
        ("KV407", "min_load_bandwidth_gib_s: .Inf"),
    ],
)
def test_rule_parameter_not_finite_is_refused(rule, text):
    # a fresh user's `KV104: {min_concurrency: .inf}` was taken: every fit became KV104 "(minimum inf)"; the
    # command-line --min-concurrency refuses it, so the file must too, at the value's line
    with pytest.raises(ConfigError, match=rf"^cfg.yaml:2:\d+: rules\.{rule}\.\w+: .* is not a finite number"):
        parse_config(f"rules:\n  {rule}: {{{text}}}\n", "cfg.yaml")


def test_rule_parameter_finite_still_read():
    cfg = parse_config("rules:\n  KV104: {min_concurrency: 3.5}\n  KV105: {band: 0.1}\n", "cfg.yaml")
    assert cfg.parameters == {"KV104": {"min_concurrency": 3.5}, "KV105": {"band": 0.1}}
