"""Growth of kvlint's CPU time on hostile text that made its regexes quadratic or worse (an unclosed ``{{``,
``${A:``, ``-MIG-`` or ``Free memory on device`` repeated thousands of times, a long run of blanks or capitals
in a log line, a chart line of several actions against a long rendered line), at two sizes N and 4N.

Each case is measured in a child process (so a quadratic run can be stopped by ``--timeout``): in-process
calls of the affected function (``fn``; repeated until 0.2 s of CPU have passed, for a stable figure) and,
for the manifest and log cases, the command line (``cli``: ``kvlint check --offline -j 1`` or ``kvlint
verify``; the child's CPU time, start-up included). It prints CPU seconds at N and 4N and the ratio
t(4N)/t(N): about 4 is linear, about 16 quadratic. No timing is asserted anywhere; this is a report. The
script measures the kvlint of the tree it sits in: a copy in an older checkout (``git archive``) gives the
figures before a change.

Usage::

    python bench/hostile.py [--n 5000] [--timeout 120] [--only CASE ...] [--no-cli]

``N`` counts repetitions of the hostile unit (``{{``, ``{{ ``, ``${A:``...), so the text is a few times N
characters. Exit status 0 always (a timed-out measurement is printed as ``>TIMEOUT``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VLLM = "vllm/vllm-openai:v0.11.0"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _deployment(container: dict[str, Any]) -> str:
    c = {"name": "vllm", "image": VLLM, **container, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    spec = {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}, "containers": [c]}
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    obj["spec"] = {"template": {"spec": spec}}
    return json.dumps(obj)


def _sh(script: str) -> str:
    return _deployment({"command": ["sh", "-c", f"vllm serve {MODEL} {script}"]})


def _rayservice(n: int) -> str:
    """A RayService whose serveConfigV2 (a JSON string, as the webhook receives it) holds ``n // 20``
    Ray Serve LLM ``llm_configs`` entries, each its own model id and context length (no plan shared)."""
    entries = [
        {
            "model_loading_config": {"model_id": f"m{i}", "model_source": MODEL},
            "engine_kwargs": {"max_model_len": 1024 + i, "tensor_parallel_size": 1},
        }
        for i in range(n // 20)
    ]
    serve = {
        "applications": [{"import_path": "ray.serve.llm:build_openai_app", "args": {"llm_configs": entries}}]
    }
    c = {
        "name": "w",
        "image": "rayproject/ray-llm:2.56.0-py312-cu130",
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    worker = {"replicas": 1, "template": {"spec": {"containers": [c]}}}
    spec = {"serveConfigV2": json.dumps(serve), "rayClusterConfig": {"workerGroupSpecs": [worker]}}
    return json.dumps(
        {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "r"}, "spec": spec}
    )


def _kserve(arg: str) -> str:
    """A ServingRuntime whose args KServe renders as Go templates, and an InferenceService using it."""
    rt = {
        "apiVersion": "serving.kserve.io/v1alpha1",
        "kind": "ServingRuntime",
        "metadata": {"name": "rt"},
        "spec": {
            "supportedModelFormats": [{"name": "huggingface", "autoSelect": True}],
            "containers": [
                {
                    "name": "kserve-container",
                    "image": VLLM,
                    "args": ["--model", MODEL, "--served-model-name", arg],
                }
            ],
        },
    }
    isvc = {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "i"},
        "spec": {
            "predictor": {
                "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                "model": {
                    "modelFormat": {"name": "huggingface"},
                    "runtime": "rt",
                    "resources": {"limits": {"nvidia.com/gpu": 1}},
                },
            }
        },
    }
    return json.dumps(rt) + "\n---\n" + json.dumps(isvc) + "\n"


def _fn_template_actions(n: int) -> Callable[[], object]:
    from kvlint.load import template_actions

    text = "a: " + "{{" * n + "\n"
    return lambda: template_actions(text)


def _fn_commands(unit: str, *, lead: bool = False) -> Callable[[int], Callable[[], object]]:
    """``commands`` on N units after an engine command, or before it (``lead``: a command prefix)."""

    def make(n: int) -> Callable[[], object]:
        from kvlint.engines.shell import commands

        script = unit * n + f"vllm serve {MODEL}" if lead else f"vllm serve {MODEL} " + unit * n
        return lambda: list(commands(script, {"B": "b"}))

    return make


def _nested_after_vars(n: int) -> str:
    """N ``export aI=1; sh -c :`` lines (each its own variable), then the engine: each nested script started from a
    copy of its shell's growing variables (quadratic, 2.9 s at N = 20,000)."""
    return "".join(f"export a{i}=1; sh -c :\n" for i in range(n))


def _fn_nested_after_vars(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _nested_after_vars(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _shifts(n: int) -> str:
    """``set --`` of N words, then N ``shift`` lines: each shift copied the parameters left (quadratic, 1.5 s at
    N = 20,000)."""
    return "set -- " + "a " * n + "\n" + "shift\n" * n


def _fn_shifts(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _shifts(n) + f'vllm serve {MODEL} "$@"'
    return lambda: list(commands(script, {"B": "b"}))


def _subshells(n: int) -> str:
    """N ``export aI=1; ( bI=2 )`` lines: each subshell saves the shell's growing variables (bounded to a few)."""
    return "".join(f"export a{i}=1; ( b{i}=2 )\n" for i in range(n))


def _fn_subshells(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _subshells(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _fn_function_calls(n: int) -> Callable[[], object]:
    """A function calling itself twice, then N calls of it: each call reads its body again (bounded)."""
    from kvlint.engines.shell import commands

    script = "f() { f; f; :; }\n" + "f\n" * n + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _source_heredocs(n: int) -> str:
    """N ``. /dev/stdin <<E;`` on one line, then their N bodies: each sourced body is found by reading on to the end
    of the line (bounded to a few)."""
    return ". /dev/stdin <<E; " * n + ":\n" + "export A=1\nE\n" * n


def _fn_source_heredocs(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _source_heredocs(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _dollar_at(n: int) -> str:
    """4,000 positional parameters, then N ``: $@;``: the parameters' cost was summed at each reference, after the
    budget was spent too (4 s at N = 10,000 before break50)."""
    return "set -- " + "a " * 4000 + "; " + ": $@; " * n


def _fn_dollar_at(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _dollar_at(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _shifted_params(n: int) -> str:
    """40,000 positional parameters, then N ``shift; : "$@" "${@:3}" $7 $#`` lines: the parameters left were summed
    after each shift (14 s at N = 500 before shell51); their sums are now the base list's, kept once."""
    return "set -- " + "a " * 40_000 + "\n" + 'shift; : "$@" "${@:3}" $7 $#\n' * n


def _fn_shifted_params(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _shifted_params(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _array_appends(n: int) -> str:
    """N ``A+=(--x 1)`` lines, then ``"${A[@]}"`` N times: each append grows the list in place (a copy each was
    quadratic), the elements a reading assigns are bounded (``_ARRAY_ELEMENTS``), each reference's cost summed once."""
    return "A+=(--x 1)\n" * n + ': "${A[@]}"\n' * n


def _fn_array_appends(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _array_appends(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _fn_env_split(n: int) -> Callable[[], object]:
    """An ``env -S`` string of one word of N unset ``${A}``: shlex grew the word a character at a time (15 s for
    1 MB before break50)."""
    from kvlint.engines.shell import env_split_words

    text = f"vllm serve {MODEL} --served-model-name " + "${A}" * n
    return lambda: env_split_words(text, {})


def _ifs_commas(n: int) -> str:
    """``IFS=,``, a value of 100,000 commas, then N ``: $A;``: each reference makes 100,000 empty fields until the
    budget (which charges each field) is spent (7.7 s at N = 100 before break50)."""
    return "IFS=,; A='" + "," * 100_000 + "'; " + ": $A; " * n


def _fn_ifs_commas(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _ifs_commas(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {"B": "b"}))


def _substrings(n: int) -> str:
    """``IFS=,``, a value of 100,000 commas, then N ``: ${A:1} "${A: -99999}";``: substring expansions of a long
    value (each searched the whole value for an unresolved reference, 2 ms a reference, before shell52)."""
    return "IFS=,; A='" + "," * 100_000 + "'; " + ': ${A:1} "${A: -99999}"; ' * n


def _fn_substrings(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _substrings(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {}))


def _compounds(n: int) -> str:
    """N ``if :; then A=1; fi | cat; { B=2; } && C=3 & `` (each compound command at nesting 0 read ahead to the
    operator after its end, shell52: a pipeline part or a background list keeps its state apart)."""
    return "if :; then A=1; fi | cat; { B=2; } && C=3 & " * n


def _fn_compounds(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _compounds(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {}))


def _braces(n: int) -> str:
    """N words of 10,000 characters and a brace expansion of 1,001 items (10 MB of words each if made; the budget
    is charged before they are, shell52)."""
    return ": " + ("x" * 10_000 + "{" + "a," * 1000 + "b} ") * n + "; "


def _fn_braces(n: int) -> Callable[[], object]:
    from kvlint.engines.shell import commands

    script = _braces(n) + f"vllm serve {MODEL}"
    return lambda: list(commands(script, {}))


def _no_binary(n: int) -> str:
    """A pip install of vLLM whose ``--no-binary`` value is N ``:all:`` and a final ``:none:`` (pip's own loop scanned
    the rest of the value once per ``:all:``, break52)."""
    return "pip install vllm --no-binary=" + ",".join([":all:"] * n + [":none:"]) + " && "


def _fn_no_binary(n: int) -> Callable[[], object]:
    from kvlint.engines.images import pip_source_build

    args = ["vllm", "--no-binary=" + ",".join([":all:"] * n + [":none:"])]
    return lambda: pip_source_build(args)


def _sh_lead(script: str) -> str:
    return _deployment({"command": ["sh", "-c", f"{script}vllm serve {MODEL}"]})


def _blank_lines_block(n: int) -> str:
    """A Deployment whose ``sh -c`` script is a literal block of N blank lines, then an engine command of N
    words (each word's position skipped the blank lines again)."""
    script = "\n" * n + f"vllm serve {MODEL}" + " --x y" * n
    block = "\n".join("          " + line if line else "" for line in script.split("\n"))
    return (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n      containers:\n"
        f"      - name: vllm\n        image: {VLLM}\n        command: [sh, -c]\n        args:\n        - |\n"
        f"{block}\n        resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )


def _fn_check_file(make_text: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    """The check of a file on disk (positions in a script are looked up in the file's lines)."""

    def make(n: int) -> Callable[[], object]:
        from kvlint.checkrun import run_paths
        from kvlint.options import Options

        fd, path = tempfile.mkstemp(suffix=".yaml")
        with os.fdopen(fd, "w") as fh:
            fh.write(make_text(n))
        opts = Options(allow_hub=False)
        return lambda: run_paths([path], opts, no_config=True, keep_records=False, keep_json=False)

    return make


def _annotated(n: int) -> str:
    """A Deployment with ``n // 100`` ``kvlint.io/`` annotations of ``n`` characters each (KV005 infos with a
    'did you mean' guess: its edit distance was length x length per key)."""
    obj = json.loads(_deployment({"args": ["--model", MODEL]}))
    obj["metadata"]["annotations"] = {f"kvlint.io/{i}" + "a" * n: "x" for i in range(max(1, n // 100))}
    import yaml

    return yaml.safe_dump(obj)  # block YAML: PyYAML refuses flow-style (JSON) keys over 1,024 characters


def _fn_image_placeholder(n: int) -> Callable[[], object]:
    from kvlint.engines.images import image_placeholder

    image = "${A:" * n
    return lambda: image_placeholder(image)


def _fn_pipeline(make_text: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    def make(n: int) -> Callable[[], object]:
        from kvlint.load import load_text
        from kvlint.pipeline import run_documents
        from kvlint.webhook.request_options import webhook_options

        text = make_text(n)
        name = "hostile.json" if text.startswith("{") else "hostile.yaml"
        return lambda: run_documents(load_text(text, name), webhook_options())

    return make


def _fn_gotemplate(n: int) -> Callable[[], object]:
    from kvlint.workloads.gotemplate import render, unresolved_actions

    text = "{{ " * n

    def run() -> object:
        return render(text, {}), unresolved_actions(text)

    return run


def _fn_parse_template(n: int) -> Callable[[], object]:
    from kvlint.template_lines import parse_template

    text = "a: " + "{{ " * n + "\n"

    def run() -> object:
        re.purge()  # each call compiles its line patterns, as a first call does (no re-module cache hit)
        return parse_template(text)

    return run


def _fn_parse_log(make_text: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    def make(n: int) -> Callable[[], object]:
        from kvlint.verify.logparse import parse_log

        text = make_text(n)
        return lambda: parse_log(text)

    return make


#: start-up log lines (``kvlint verify``) that made the parser's regexes quadratic, N units each
LOGS: dict[str, Callable[[int], str]] = {
    "log_free ('Free memory on device' x N)": lambda n: "Free memory on device" * n + "\n",
    "log_box ('x' + N blanks + 'x')": lambda n: "x" + " " * (4 * n) + "x\n",
    "log_rust ('Args { ' + N word chars)": lambda n: "Args { " + "a" * (4 * n) + "\n",
    "log_v0_table ('] total_gpu_memory 1' + N blanks)": lambda n: (
        "] total_gpu_memory 1" + " " * (4 * n) + "x\n"
    ),
    "log_kv_size (N capitals)": lambda n: "A" * (4 * n) + "\n",
    "log_warmup ('warmup{max_input_length=' x N)": lambda n: "warmup{max_input_length=" * n + "\n",
    "log_server_args ('server_args=ServerArgs(' x N)": lambda n: "server_args=ServerArgs(" * n + "\n",
    "log_load_weight ('Load weight end.' x N)": lambda n: "Load weight end." * n + "\n",
    "log_kv_alloc ('KV Cache is allocated.' x N)": lambda n: "KV Cache is allocated." * n + "\n",
}


def _fn_template_line_match(n: int) -> Callable[[], object]:
    """A chart line of 5 actions between dashes matched against a rendered line of N/50 dashes (the
    pattern's backtracking grew as (N/50)^5)."""
    from kvlint.template_lines import parse_template

    rendered = "x: " + "-" * (n // 50) + "y"

    def run() -> object:
        re.purge()
        pattern = parse_template("x: " + "{{ .a }}-" * 5 + "z\n")[0].pattern
        assert pattern is not None
        return pattern.fullmatch(rendered)

    return run


def _fn_values_refs(n: int) -> Callable[[], object]:
    from kvlint.origins import values_refs

    lines = ["a: " + "{{ if " * n, "b: {{ .Values.x }}"]
    return lambda: values_refs(lines, 2)


def _hf_path(n: int) -> str:
    return "/models--" + "a--" * n + "!"


def _fn_hf_path(n: int) -> Callable[[], object]:
    from kvlint.models.resolve import _path_named_model

    ref = _hf_path(n)
    return lambda: _path_named_model(ref)


def _mig(n: int) -> str:
    return "NVIDIA-A100-SXM4-40GB" + "-MIG-" * n + "\nx"


def _fn_gfd_product(n: int) -> Callable[[], object]:
    from kvlint.accelerators.registry import gfd_product, gfd_product_candidates

    value = _mig(n)
    return lambda: (gfd_product(value), gfd_product_candidates(value))


def _fn_suppress_blanks(n: int) -> Callable[[], object]:
    from kvlint.suppress import _ANY_SPELLING_RE

    line = "# kvlint" + " " * n + "x"
    return lambda: _ANY_SPELLING_RE.search(line)


def _affinity_pod(n: int) -> str:
    """A Deployment of 20 serving containers whose pod has N/20 required ``nodeSelectorTerms`` on GFD's GPU count:
    each container read the pod's terms again (placement, KV410 twice), containers x terms."""
    obj = json.loads(_deployment({"args": ["--model", MODEL]}))
    spec = obj["spec"]["template"]["spec"]
    c0 = spec["containers"][0]
    spec["containers"] = [dict(c0, name=f"c{i}") for i in range(20)]
    terms = [
        {"matchExpressions": [{"key": "nvidia.com/gpu.count", "operator": "In", "values": [str(i % 8 + 1)]}]}
        for i in range(max(n // 20, 1))
    ]
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    return json.dumps(obj)


def _affinity_pod_40(n: int) -> str:
    """As :func:`_affinity_pod` with 40 containers and N/40 terms: each container evaluated every term for its
    placement (the GPU the terms allow), containers x terms (perf52)."""
    obj = json.loads(_affinity_pod(n // 2))
    spec = obj["spec"]["template"]["spec"]
    spec["containers"] = [dict(spec["containers"][0], name=f"c{i}") for i in range(40)]
    return json.dumps(obj)


def _undecided_pod(n: int) -> str:
    """A Deployment of 40 serving containers, no nodeSelector, and N/10 required ``nodeSelectorTerms`` each on an
    instance type not in the catalogue: no GPU decided, and each container's KV501 read every term's values
    again for why (containers x terms; break52)."""
    obj = json.loads(_deployment({"args": ["--model", MODEL]}))
    spec = obj["spec"]["template"]["spec"]
    del spec["nodeSelector"]
    spec["containers"] = [dict(spec["containers"][0], name=f"c{i}") for i in range(40)]
    terms = [
        {
            "matchExpressions": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [f"zz{i}.x"]}
            ]
        }
        for i in range(max(n // 10, 1))
    ]
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    }
    return json.dumps(obj)


def _ignore_lines(n: int) -> str:
    """A Deployment, then N ``# kvlint: ignore KV999=x`` comment lines (no such rule): N KV003 findings."""
    return _deployment({"args": ["--model", MODEL]}) + "\n" + "# kvlint: ignore KV999=x\n" * n


def _containers_pod(n: int) -> str:
    """A Deployment of N/10 identical serving containers (the webhook refuses more than 256; the CLI reads each)."""
    obj = json.loads(_deployment({"args": ["--model", MODEL]}))
    spec = obj["spec"]["template"]["spec"]
    spec["containers"] = [dict(spec["containers"][0], name=f"c{i}") for i in range(max(n // 10, 1))]
    return json.dumps(obj)


# name -> (in-process function maker, CLI input maker (text, file suffix) or None)
def _templates(n: int) -> str:
    """``n // 100`` OpenShift Templates, each a ConfigMap of 64 strings of 16 references to its 4,000-character
    parameter (4 MiB added by each Template before the budget became the file's, kvlint.template_params)."""
    docs = []
    for t in range(max(1, n // 100)):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{t}"}}
        cm["data"] = {f"k{i}": "${A}" * 16 for i in range(64)}
        tmpl = {"apiVersion": "template.openshift.io/v1", "kind": "Template", "metadata": {"name": f"t{t}"}}
        tmpl.update({"parameters": [{"name": "A", "value": "a" * 4000}], "objects": [cm]})
        docs.append(json.dumps(tmpl))
    return "\n---\n".join(docs)


def _fn_load(make_text: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    def make(n: int) -> Callable[[], object]:
        from kvlint.load import load_text

        text = make_text(n)
        return lambda: load_text(text, "hostile.yaml")

    return make


CASES: dict[str, tuple[Callable[[int], Callable[[], object]], Callable[[int], tuple[str, str]] | None]] = {
    "load_tmpl ({{ x N, one line)": (_fn_template_actions, lambda n: ("a: " + "{{" * n + "\n", ".yaml")),
    "sh_tmpl_open ({{ x N in sh -c)": (_fn_commands("{{"), lambda n: (_sh("{{" * n), ".yaml")),
    "sh_tmpl_space ('{{ ' x N in sh -c)": (_fn_commands("{{ "), lambda n: (_sh("{{ " * n), ".yaml")),
    "sh_tmpl_nl ('{{\\n' x N in sh -c)": (_fn_commands("{{\n"), lambda n: (_sh("{{\n" * n), ".yaml")),
    # the shell reader (issue 19): a word of N unresolved $A (each searched the word), N leading assignments
    # or wrappers (the rest of the command copied for each), a word of N redirections (its text grown by
    # concatenation)
    "sh_vars ('$A' x N, one word)": (_fn_commands("$A"), lambda n: (_sh("$A" * n), ".yaml")),
    "sh_assign ('a=$B ' x N, leading)": (
        _fn_commands("a=$B ", lead=True),
        lambda n: (_sh_lead("a=$B " * n), ".yaml"),
    ),
    "sh_wrappers ('exec ' x N, leading)": (
        _fn_commands("exec ", lead=True),
        lambda n: (_sh_lead("exec " * n), ".yaml"),
    ),
    "sh_nested_vars ('export aI=1; sh -c :' x N, leading)": (
        _fn_nested_after_vars,
        lambda n: (_sh_lead(_nested_after_vars(n)), ".yaml"),
    ),
    "sh_function_calls ('f' x N, f calling itself)": (
        _fn_function_calls,
        lambda n: (_sh_lead("f() { f; f; :; }\n" + "f\n" * n), ".yaml"),
    ),
    "sh_shifts ('set -- a x N; shift' x N, leading)": (
        _fn_shifts,
        lambda n: (_sh_lead(_shifts(n)), ".yaml"),
    ),
    "sh_subshells ('export aI=1; ( bI=2 )' x N, leading)": (
        _fn_subshells,
        lambda n: (_sh_lead(_subshells(n)), ".yaml"),
    ),
    "sh_source_heredocs ('. /dev/stdin <<E;' x N, one line)": (
        _fn_source_heredocs,
        lambda n: (_sh_lead(_source_heredocs(n)), ".yaml"),
    ),
    "sh_dollar_at ('set --' 4,000 words, ': $@;' x N)": (
        _fn_dollar_at,
        lambda n: (_sh_lead(_dollar_at(n)), ".yaml"),
    ),
    "sh_shifted_params ('set --' 40,000 words, 'shift; : \"$@\" ...' x N)": (
        _fn_shifted_params,
        lambda n: (_sh_lead(_shifted_params(n)), ".yaml"),
    ),
    "sh_array_appends ('A+=(--x 1)' x N, '\"${A[@]}\"' x N)": (
        _fn_array_appends,
        lambda n: (_sh_lead(_array_appends(n)), ".yaml"),
    ),
    "env_split ('${A}' x N, one env -S word)": (
        _fn_env_split,
        lambda n: (_deployment({"command": ["env", "-S", f"vllm serve {MODEL} " + "${A}" * n]}), ".yaml"),
    ),
    "sh_ifs_fields ('IFS=,' 100,000 commas, ': $A;' x N)": (
        _fn_ifs_commas,
        lambda n: (_sh_lead(_ifs_commas(n)), ".yaml"),
    ),
    "sh_substrings ('IFS=,' 100,000 commas, ': ${A:1} \"${A: -99999}\";' x N)": (
        _fn_substrings,
        lambda n: (_sh_lead(_substrings(n)), ".yaml"),
    ),
    "sh_compounds ('if :; then A=1; fi | cat; { B=2; } && C=3 &' x N)": (
        _fn_compounds,
        lambda n: (_sh_lead(_compounds(n)), ".yaml"),
    ),
    "sh_braces (N words of 'x' * 10,000 + '{a,...}' of 1,001 items)": (
        _fn_braces,
        lambda n: (_sh_lead(_braces(n)), ".yaml"),
    ),
    "pip_no_binary (--no-binary=':all:,' x N + ':none:')": (
        _fn_no_binary,
        lambda n: (_sh_lead(_no_binary(n)), ".yaml"),
    ),
    "sh_redirs ('>&1' x N, one word)": (_fn_commands(">&1"), lambda n: (_sh(">&1" * n), ".yaml")),
    "sh_heredocs ('cat <<E' + quoted body x N, leading)": (
        _fn_commands("cat <<E\n'\nE\n", lead=True),
        lambda n: (_sh_lead("cat <<E\n'\nE\n" * n), ".yaml"),
    ),
    "sh_block_positions (N blank lines, N words)": (
        _fn_check_file(_blank_lines_block),
        lambda n: (_blank_lines_block(n), ".yaml"),
    ),
    "image_envsubst ('${A:' x N image)": (
        _fn_image_placeholder,
        lambda n: (_deployment({"image": "${A:" * n, "args": ["--model", MODEL]}), ".yaml"),
    ),
    "env_envsubst ('${A:' x N env value)": (
        _fn_pipeline(
            lambda n: _deployment({"args": ["--model", MODEL], "env": [{"name": "X", "value": "${A:" * n}]})
        ),
        lambda n: (
            _deployment({"args": ["--model", MODEL], "env": [{"name": "X", "value": "${A:" * n}]}),
            ".yaml",
        ),
    ),
    # a finding for every argument (kvlint.findcap): N `--$(X)` of an undefined X, each a KV503 info, reported one
    # by one up to 50 a rule in a container, the rest as one finding
    "var_args ('--$(X)' x N args)": (
        _fn_pipeline(lambda n: _deployment({"args": ["--model", MODEL] + ["--$(X)"] * n})),
        lambda n: (_deployment({"args": ["--model", MODEL] + ["--$(X)"] * n}), ".yaml"),
    ),
    "kserve_gotmpl ('{{ ' x N runtime arg)": (_fn_gotemplate, lambda n: (_kserve("{{ " * n), ".yaml")),
    # Ray Serve LLM (kvlint.workloads.rayserve): N/20 llm_configs entries, each a vLLM engine to build and plan
    "rayservice_llm_configs (N/20 llm_configs)": (
        _fn_pipeline(_rayservice),
        lambda n: (_rayservice(n), ".yaml"),
    ),
    "kv005_annotations (N/100 kvlint.io/ keys of N chars)": (
        _fn_pipeline(_annotated),
        lambda n: (_annotated(n), ".yaml"),
    ),
    "template_lines ('{{ ' x N chart line)": (_fn_parse_template, None),
    "template_line_match (5 actions, N/50 dashes)": (_fn_template_line_match, None),
    "origins_blocks ('{{ if ' x N chart line)": (_fn_values_refs, None),
    "hf_cache ('/models--' + 'a--' x N --model)": (
        _fn_hf_path,
        lambda n: (_deployment({"args": ["--model", _hf_path(n)]}), ".yaml"),
    ),
    "gfd_mig ('-MIG-' x N gpu.product label)": (
        _fn_gfd_product,
        lambda n: (
            _deployment({"args": ["--model", MODEL]}).replace(
                '"nvidia-l4"}', '"nvidia-l4", "nvidia.com/gpu.product": ' + json.dumps(_mig(n)) + "}"
            ),
            ".yaml",
        ),
    ),
    "affinity_terms (20 containers, N/20 nodeSelectorTerms)": (
        _fn_pipeline(_affinity_pod),
        lambda n: (_affinity_pod(n), ".yaml"),
    ),
    "affinity_terms_40 (40 containers, N/40 nodeSelectorTerms)": (
        _fn_pipeline(_affinity_pod_40),
        lambda n: (_affinity_pod_40(n), ".yaml"),
    ),
    "undecided_terms (40 containers, N/10 nodeSelectorTerms naming no GPU)": (
        _fn_pipeline(_undecided_pod),
        lambda n: (_undecided_pod(n), ".yaml"),
    ),
    "ignore_lines (N '# kvlint: ignore KV999=x' lines)": (
        _fn_check_file(_ignore_lines),
        lambda n: (_ignore_lines(n), ".yaml"),
    ),
    "containers (a pod of N/10 identical containers)": (
        _fn_check_file(_containers_pod),
        lambda n: (_containers_pod(n), ".yaml"),
    ),
    # OpenShift Template parameters (kvlint.template_params): the characters added are the file's budget
    "templates (N/100 Templates, each 1,024 references to a 4,000-character parameter)": (
        _fn_load(_templates),
        lambda n: (_templates(n), ".yaml"),
    ),
    # the comment pass (kvlint.suppress): a comment line '# kvlint' and N blanks, read for another spelling
    "suppress_blanks ('# kvlint' + N blanks, one comment line)": (
        _fn_suppress_blanks,
        lambda n: ("# kvlint" + " " * n + "x\n" + _deployment({"args": ["--model", MODEL]}), ".yaml"),
    ),
}
CASES.update({name: (_fn_parse_log(text), lambda n, t=text: (t(n), ".log")) for name, text in LOGS.items()})


def _measure_fn(case: str, n: int) -> float:
    run = CASES[case][0](n)
    reps, t0 = 0, time.process_time()
    while True:
        run()
        reps += 1
        dt = time.process_time() - t0
        if dt >= 0.2:
            return dt / reps


def _measure_cli(case: str, n: int, timeout: float) -> float | None:
    maker = CASES[case][1]
    assert maker is not None
    text, suffix = maker(n)
    # this tree's kvlint (``python -m kvlint`` with the tree first on the path), so a copy of this script in
    # an older checkout measures that checkout
    kvlint = [sys.executable, "-m", "kvlint"]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "hostile" + suffix)
        Path(path).write_text(text)
        if suffix == ".log":
            args = ["verify", "--offline", "--model", MODEL, "--accelerator", "l4", path]
        else:
            args = ["check", "--offline", "--no-config", "--exit-zero", "-j", "1", path]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            subprocess.run(
                kvlint + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired:
            return None
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _child(case: str, n: int, timeout: float) -> float | None:
    """CPU seconds of one in-process measurement, run in a child process stopped after ``timeout``."""
    cmd = [sys.executable, __file__, "--child", case, str(n)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True).stdout
    except subprocess.TimeoutExpired:
        return None
    return float(out.strip())


def _fmt(t: float | None, timeout: float) -> str:
    return f">{timeout:.0f}s TIMEOUT" if t is None else f"{t:.4f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=5000, help="repetitions of the hostile unit at the small size")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a measurement is stopped")
    ap.add_argument("--only", nargs="*", default=None, help="case name prefixes to run")
    ap.add_argument("--no-cli", action="store_true", help="skip the kvlint check/verify subprocess runs")
    ap.add_argument("--child", nargs=2, metavar=("CASE", "N"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(_measure_fn(a.child[0], int(a.child[1])))
        return 0
    n = a.n
    print(f"{'case':42} {'how':4} {'t(N) s':>16} {'t(4N) s':>16} {'ratio':>7}   (N={n})")
    for case, (_, cli) in CASES.items():
        if a.only and not any(case.startswith(p) for p in a.only):
            continue
        rows = [("fn", lambda k, c=case: _child(c, k, a.timeout))]
        if cli is not None and not a.no_cli:
            rows.append(("cli", lambda k, c=case: _measure_cli(c, k, a.timeout)))
        for how, measure in rows:
            t1 = measure(n)
            t4 = measure(4 * n) if t1 is not None else None
            ratio = f"{t4 / t1:7.1f}" if t1 and t4 else "      -"
            print(
                f"{case:42} {how:4} {_fmt(t1, a.timeout):>16} {_fmt(t4, a.timeout):>16} {ratio}", flush=True
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
