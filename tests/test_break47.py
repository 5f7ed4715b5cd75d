"""Adversarial pass on what session 46 landed (branch break47): each test fails before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.types import ContainerResult


@pytest.mark.parametrize(
    "tagged", ["!!int", "!!float", "!!int ''", '!!float ""', "!!int +", "!!int _", "!!float _"]
)
def test_an_explicit_numeric_tag_on_empty_text_is_a_tag_error(tagged: str) -> None:
    # PyYAML's construct_yaml_int/float read value[0] after removing '_' and the sign: an IndexError the loader
    # did not catch, so the whole file was "kvlint could not finish checking" (please report it) where kubectl
    # refuses the document (go-yaml: cannot decode !!str `` as a !!int). Found by fuzzing corpus files.
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  x: {tagged}\n"
    loaded = load_text(text, "p.yaml")
    found = [f for f in loaded.findings if f.rule == "KV001"]
    assert len(found) == 1, [f.message for f in loaded.findings]
    assert "kubectl rejects the document" in found[0].message
    assert found[0].loc is not None and found[0].loc.line == 5
    result = run_documents(loaded, Options(allow_hub=False))
    assert not [d for d in result.diagnostics if "could not finish" in d.message]


def _script_deployment(script: str) -> str:
    body = "".join(f"          {line}\n" for line in script.splitlines())
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "      containers:\n      - name: c\n        image: vllm/vllm-openai:v0.10.2\n"
        '        command: ["/bin/bash", "-c"]\n        args:\n        - |\n'
        f"{body}"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


@pytest.mark.parametrize(
    ("script", "quote_line", "needle"),
    [
        # a double quote never closed on a line before the engine command
        (
            'set -e\npip install "vllm==0.6.6"\necho "starting\nvllm serve Qwen/Qwen2.5-7B \\\n  --max-model-len 4096',
            3,
            '"starting',
        ),
        # an apostrophe closes the first quote and opens another that is never closed
        ("echo 'it's up'\nexec vllm serve Qwen/Qwen2.5-7B --max-model-len 4096", 1, "'"),
        # the swallowed text holds a quote of its own that is never closed either
        ("echo \"it's\nvllm serve Qwen/Qwen2.5-7B --max-model-len 4096", 1, '"it'),
    ],
)
def test_a_quote_never_closed_before_the_engine_command_is_the_kv503_error(
    tmp_path: Path, script: str, quote_line: int, needle: str
) -> None:
    # bash reads a -c script a command at a time: the commands before the quote run, then it reads the rest of
    # the script into the quoted word and stops ("unexpected EOF while looking for matching"), so the vllm serve
    # inside that word never runs. The KV503 error said so only when the quote was in the engine command itself;
    # a quote opened on an earlier line gave the KV503 warning "the shell script starts no engine directly ...
    # runs `pip install vllm==0.6.6`".
    text = _script_deployment(script)
    path = tmp_path / "d.yaml"
    path.write_text(text)
    result = run_check([str(path)], Options(allow_hub=False))
    kv503 = [d for d in result.diagnostics if d.rule == "KV503"]
    assert len(kv503) == 1, [d.message for d in result.diagnostics]
    assert kv503[0].severity == "error"
    assert f"at line {quote_line} of the shell script is never closed" in kv503[0].message
    assert "before running vllm" in kv503[0].message
    # at the quote never closed: the last of the needle's spelling on its line
    line = next(n for n, t in enumerate(text.splitlines(), 1) if needle in t and "echo" in t)
    assert kv503[0].loc is not None and kv503[0].loc.line == line
    assert kv503[0].loc.column == text.splitlines()[line - 1].rindex(needle) + 1


def test_a_quote_never_closed_after_the_engine_command_leaves_it_planned() -> None:
    # the engine command is complete before the stray quote: the shell runs it (in the background here)
    text = _script_deployment('vllm serve Qwen/Qwen2.5-7B --max-model-len 4096 &\necho "started\nwait')
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV503"], [d.message for d in result.diagnostics]
    assert [c.plan for c in result.containers if isinstance(c, ContainerResult) and c.plan is not None]


@pytest.mark.parametrize(
    ("script", "words"),
    [
        # the quote escaped inside $'...' does not close it, so the ) after it closes the substitution
        ("vllm serve Qwen/Qwen2.5-7B --served-model-name $(echo $'it\\'s') --max-model-len 4096", 7),
        # $$ is a parameter: the ' after it opens a plain quote, which a backslash does not escape
        ("vllm serve Qwen/Qwen2.5-7B --served-model-name $(echo $$'a\\') --max-model-len 4096", 7),
    ],
)
def test_ansi_c_quotes_inside_a_command_substitution(script: str, words: int) -> None:
    # bash's $'...' was read at the top level of a script (review46E) but not inside $(...): there
    # the scanner took $'it\'s' for the single-quoted 'it\' and then a quote never closed, so the substitution ran
    # to the end of the script and --max-model-len 4096 was lost (bash prints: vllm serve ... it's
    # --max-model-len 4096)
    from kvlint.engines.shell import commands

    got = [[w.text for w in cmd] for cmd in commands(script, {})]
    assert len(got) == 1 and len(got[0]) == words, got
    assert got[0][-2:] == ["--max-model-len", "4096"]
    assert all(w.unclosed < 0 for cmd in commands(script, {}) for w in cmd)


def test_an_assignment_from_an_ansi_c_substitution_leaves_the_engine_command_read() -> None:
    script = "NAME=$(echo $'it\\'s')\nvllm serve Qwen/Qwen2.5-7B --served-model-name \"$NAME\" --max-model-len 4096"
    text = _script_deployment(script)
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV503"], [d.message for d in result.diagnostics]
    assert [c for c in result.containers if isinstance(c, ContainerResult) and c.plan is not None]


def test_a_model_on_a_hostpath_of_the_root_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    # hostPath / with subPath Qwen/Qwen3-8B mounted at /data: the KV505 note said "/data is Qwen/Qwen3-8B" (a
    # relative path, read as a hub id) instead of /Qwen/Qwen3-8B on the node
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
        "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}\n"
        "      containers:\n      - name: c\n        image: vllm/vllm-openai:v0.10.2\n"
        "        args: [--model, /data, --max-model-len, '4096']\n"
        "        volumeMounts: [{name: m, mountPath: /data, subPath: Qwen/Qwen3-8B}]\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
        "      volumes: [{name: m, hostPath: {path: /}}]\n"
    )
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    kv505 = [d for d in result.diagnostics if d.rule == "KV505"]
    assert len(kv505) == 1, [d.message for d in result.diagnostics]
    assert "so /data is /Qwen/Qwen3-8B," in kv505[0].message, kv505[0].message


def _pip_then_vllm(tmp_path: Path, install: str) -> Path:
    m = tmp_path / "p.yaml"
    m.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.10.2\n    command: [/bin/bash, -c]\n    args:\n    - |\n"
        f"      {install}\n"
        "      python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-0.5B-Instruct\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return m


@pytest.mark.parametrize(
    ("install", "release"),
    [
        # pip's option parser (optparse) splits a cluster of one-letter options: -qU is -q -U, an upgrade
        ("pip install -qU vllm", None),
        ("pip install -Uq vllm", None),
        # -t takes the rest of the cluster or word as its directory: nothing goes to the environment vLLM runs from
        ("pip install -qt /opt/extra vllm==0.8.5", "0.10.2"),
        ("pip install -t/opt/extra vllm==0.8.5", "0.10.2"),
        # -r takes the rest of the cluster as its file, and the pin after it counts
        ("pip install -qrrequirements.txt vllm==0.8.5", "0.8.5"),
    ],
)
def test_pip_one_letter_option_clusters_are_split_as_pip_splits_them(
    tmp_path: Path, install: str, release: str | None
) -> None:
    result = run_check([str(_pip_then_vllm(tmp_path, install))], Options(allow_hub=False))
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    assert c.serving.version == release, (install, c.serving.version)


def test_a_locale_string_is_a_double_quoted_string() -> None:
    # bash's $"..." is a double-quoted string translated by the locale (as written in the C locale): the $ was kept
    # ('$meta-llama/...' read as the model); inside double quotes $" is a $ and the closing quote
    from kvlint.engines.shell import commands

    (cmd,) = commands('vllm serve $"meta-llama/Llama-3.1-8B" --served-model-name $"my model" x"$"y', {})
    assert [w.text for w in cmd] == [
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B",
        "--served-model-name",
        "my model",
        "x$y",
    ]


_EXTRAS = "vllm[" + ",".join(f"a{k}" for k in range(300)) + "]>=0.4.3"  # 1,402 characters, no pin


def _count_parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patch packaging's Requirement as kvlint's reader calls it to record the length of each text parsed."""
    import kvlint.engines.requirements as R

    parsed: list[int] = []
    real = R.Requirement

    def counting(text: str) -> object:
        parsed.append(len(text))
        return real(text)

    monkeypatch.setattr(R, "Requirement", counting)
    return parsed


def test_a_scripts_requirements_are_parsed_within_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # pip install ${R}1 ${R}2 ... : 900 distinct 1,400-character requirements from a 9 KB script, each costing
    # packaging's parser over a millisecond (1.5 s of CPU a container; 10 such containers took 18 s)
    parsed = _count_parsed(monkeypatch)
    script = f"R='{_EXTRAS}'\npip install " + " ".join(f"${{R}}{n}" for n in range(900))
    script += " transformers==4.45.0 vllm==0.8.5\nvllm serve Qwen/Qwen2.5-7B --max-model-len 4096"
    text = _script_deployment(script)
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    # a dozen of the 900 parsed, within the reader's budget; transformers==4.45.0 not at all (it names no vLLM);
    # the short vllm==0.8.5 still fits in what is left
    assert len(parsed) <= 20 and len("transformers==4.45.0") not in parsed, (len(parsed), sum(parsed))
    assert c.serving.version == "0.8.5"


def test_a_rayservices_requirements_repeated_by_aliases_are_parsed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # one 1,400-character requirement repeated through YAML aliases into every application's runtime_env.pip
    # (here 500 each in 40 applications: 20,000 parses of the same text; 127,000 and minutes of CPU in a 1 MB
    # RayService)
    parsed = _count_parsed(monkeypatch)
    apps = "".join(
        f"    - {{name: a{n}, route_prefix: /{n}, import_path: 'ai-ml.gke-ray.rayserve.llm.serve:model', "
        "runtime_env: *env}\n"
        for n in range(40)
    )
    text = (
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: r}\nspec:\n  serveConfigV2: |\n"
        f"    pad: {'x' * 200_000}\n"
        f'    r: &r "{_EXTRAS}"\n'
        "    e: &env\n"
        "      working_dir: https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/archive/main.zip\n"
        f"      pip: [{', '.join(['*r'] * 500)}]\n"
        "      env_vars: {MODEL_ID: meta-llama/Meta-Llama-3-8B-Instruct, TENSOR_PARALLELISM: '1'}\n"
        f"    applications:\n{apps}"
        "  rayClusterConfig:\n    headGroupSpec:\n      template:\n        spec:\n"
        "          containers: [{name: head, image: 'rayproject/ray-ml:2.9.0-py310'}]\n"
        "    workerGroupSpecs:\n    - groupName: gpu\n      replicas: 1\n      template:\n        spec:\n"
        "          nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
        "          containers: [{name: llm, image: 'rayproject/ray-ml:2.9.0-py310', "
        "resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    )
    result = run_documents(load_text(text, "r.yaml"), Options(allow_hub=False))
    assert len([c for c in result.containers if isinstance(c, ContainerResult)]) == 40, [
        d.message for d in result.diagnostics
    ][:5]
    assert parsed == [len(_EXTRAS)], (len(parsed), sum(parsed))


@pytest.mark.parametrize(
    ("script", "name"),
    [
        (
            'vllm serve Qwen/Qwen2.5-7B --served-model-name ${NAME:-"my model"} --max-model-len 4096',
            "my model",
        ),
        (
            "vllm serve Qwen/Qwen2.5-7B --served-model-name ${NAME:-'my model'} --max-model-len 4096",
            "my model",
        ),
        (
            "vllm serve Qwen/Qwen2.5-7B --served-model-name ${NAME:-$'my\\tmodel'} --max-model-len 4096",
            "my\tmodel",
        ),
        (
            "vllm serve Qwen/Qwen2.5-7B --served-model-name \"${NAME:-$'it\\'s'}\" --max-model-len 4096",
            "it's",
        ),
    ],
)
def test_a_quoted_default_of_an_unset_variable_is_one_word(script: str, name: str) -> None:
    # bash removes the default's quotes and does not split it: --served-model-name 'my model' (kvlint split it
    # into 'my' and 'model', making 'model' a stray positional, and kept $' of an ANSI-C default)
    from kvlint.engines.shell import commands

    (cmd,) = commands(script, {})
    words = [w.text for w in cmd]
    assert words[words.index("--served-model-name") + 1] == name, words
    assert words[-2:] == ["--max-model-len", "4096"] and len(words) == 7, words
