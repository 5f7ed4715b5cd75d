"""Work of mapping a rendered chart back to its template and values lines, at 10, 100 and 1,000 documents written
by one template, as a ratio to the smallest size measured in the same run.

Three charts, each a file of ``helm template`` output kvlint reads with the chart beside it (no helm needed):

* ``range``: a ``range`` over N models in ``values.yaml``, one Deployment each (KubeAI's catalogue, llm-d,
  production-stack with many modelSpecs): every finding's line lies in the range, whose values are all N models'.
* ``literal``: one template of N Deployments written one after the other (N regions between ``---``).
* ``named``: the same, each Deployment's name written by an action (``{{ .Release.Name }}-model-I``): N distinct
  patterns with actions, each tried against the rendered lines (kvlint.template_lines.RegionIndex).

The figure is a count, not a time (the machine is shared): the calls (Python functions and C built-ins,
``sys.setprofile``) made in kvlint.template_lines and kvlint.origins during ``kvlint check`` of the file and the
listing of its findings, and the same for the whole check. The ratio to the smallest size is about N/10 for work
linear in the documents and (N/10)^2 for work growing with documents x documents. The script measures the kvlint
of the tree it sits in: a copy of an older commit (``git archive``) gives the figures before a change (there, 1,000
documents took minutes).

Usage::

    python bench/chart_map.py [--sizes 10 100 1000] [--cases range literal named]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvlint import origins, render, template_lines  # noqa: E402
from kvlint.checkrun import run_paths  # noqa: E402
from kvlint.options import Options  # noqa: E402

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
IMAGE = "vllm/vllm-openai:v0.11.0"

_RANGE = """\
{{- range $i, $m := .Values.models }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
spec:
  replicas: 1
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: IMAGE
          args:
            - --model
            - {{ $m.model }}
            {{- with $m.extraArgs }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          resources:
            limits:
              nvidia.com/gpu: 1
{{- end }}
"""


def range_template(name: str = "{{ $m.name }}", image: str = "{{ $.Values.image }}") -> str:
    """A chart template that ``range``s over ``.Values.models`` and writes one vLLM Deployment per item (its
    ``model`` and ``extraArgs``), named ``name`` and on ``image`` (each a template action or a literal): the ``range``
    case here, and the chart tests/test_chart_map_scale.py and tests/test_range_sources.py map (they import it)."""
    return _RANGE.replace("NAME", name).replace("IMAGE", image)


RANGE_TEMPLATE = range_template()


def _deployment(name: str, image: str, extra: str = "") -> str:
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  template:\n"
        "    spec:\n      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        f"        - name: vllm\n          image: {image}\n          args:\n            - --model\n"
        f"            - {MODEL}\n{extra}          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )


def write_case(root: Path, case: str, n: int) -> Path:
    """The chart ``many`` of ``case`` with N documents under ``root``, and its rendered file (returned)."""
    chart = root / "many"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: many\nversion: 0.1.0\n")
    values = f"image: {IMAGE}\nmodels:\n" + "".join(
        f"  - name: m{i}\n    model: {MODEL}\n    extraArgs:\n      - --max-num-seqs=64\n" for i in range(n)
    )
    (chart / "values.yaml").write_text(values)
    if case == "range":
        (chart / "templates" / "t.yaml").write_text(RANGE_TEMPLATE)
        docs = [_deployment(f"m{i}", IMAGE, "            - --max-num-seqs=64\n") for i in range(n)]
    elif case == "literal":
        (chart / "templates" / "t.yaml").write_text(
            "".join("---\n" + _deployment(f"model-{i}", "{{ .Values.image }}") for i in range(n))
        )
        docs = [_deployment(f"model-{i}", IMAGE) for i in range(n)]
    elif case == "named":
        (chart / "templates" / "t.yaml").write_text(
            "".join(
                "---\n" + _deployment(f"{{{{ .Release.Name }}}}-model-{i}", "{{ .Values.image }}")
                for i in range(n)
            )
        )
        docs = [_deployment(f"x-model-{i}", IMAGE) for i in range(n)]
    else:
        raise ValueError(case)
    out = root / "rendered.yaml"
    out.write_text("".join(f"---\n# Source: many/templates/t.yaml\n{d}" for d in docs))
    return out


MAPPING = {os.path.abspath(m.__file__ or "") for m in (template_lines, origins)}


def measure(path: Path) -> tuple[int, int, int]:
    """``(calls in the mapping modules, calls in all, findings)`` of ``kvlint check --offline PATH``."""
    mapping = total = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal mapping, total
        if event in ("call", "c_call"):
            total += 1
            if frame.f_code.co_filename in MAPPING:
                mapping += 1

    render.clear_file_cache()
    sys.setprofile(profile)
    try:
        run = run_paths([str(path)], Options(allow_hub=False), no_config=True)
        findings = len(list(run.result.diagnostics))
    finally:
        sys.setprofile(None)
    return mapping, total, findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--cases", nargs="+", default=["range", "literal", "named"])
    args = parser.parse_args()
    sizes = sorted(args.sizes)
    with tempfile.TemporaryDirectory() as tmp:  # imports and first-use caches, so that no size pays for them
        measure(write_case(Path(tmp), "range", 2))
    print(
        f"{'case':8} {'documents':>9} {'findings':>8} {'mapping calls':>14} {'ratio':>7} {'all calls':>12} {'ratio':>7}"
    )
    for case in args.cases:
        base: tuple[int, int] | None = None
        for n in sizes:
            with tempfile.TemporaryDirectory() as tmp:
                mapping, total, findings = measure(write_case(Path(tmp), case, n))
            if base is None:
                base = (mapping, total)
            print(
                f"{case:8} {n:>9,} {findings:>8,} {mapping:>14,} {mapping / base[0]:>7.1f} {total:>12,}"
                f" {total / base[1]:>7.1f}"
            )
        print(f"{'':8} (documents x{sizes[-1] / sizes[0]:g}: linear work x{sizes[-1] / sizes[0]:g})")


if __name__ == "__main__":
    main()
