"""KV502 on a pod whose ``kvlint.io/model`` annotation names a model kvlint cannot read (branch rr54).

With exemptions allowed the annotation is the model kvlint looks up (``pipeline.model_reference``), so when no
config is found for it, it is the annotation's model that has none. KV502 named the engine command's model
instead: beside review54W's KV005 warning ("... meta-llama/Llama-3.1-8B-Instruct, which kvlint can read, but
kvlint cannot read nobody/no-such-model"), the same report said "no config.json for model
'meta-llama/Llama-3.1-8B-Instruct'", contradicting it; and a command whose model is a ``$(MODEL)`` kvlint cannot
resolve was told to "annotate the workload with kvlint.io/model", which it is. The expected texts are built from
the inputs, not copied from a run.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

ANN = Path(__file__).resolve().parents[1] / "fixtures" / "config" / "annotations"
ALLOWED = Options(allow_hub=False)
CLOSED = Options(allow_hub=False, exemptions_allowed=False)
TYPO = "nobody/no-such-model"
SERVED = "meta-llama/Llama-3.1-8B-Instruct"


def _variant(tmp_path: Path, name: str, *swaps: tuple[str, str]) -> Path:
    text = (ANN / "model-vs-command.yaml").read_text()
    for old, new in swaps:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def _kv502(path: Path, options: Options) -> list[str]:
    return [d.message for d in run_check([str(path)], options).diagnostics if d.rule == "KV502"]


def test_kv502_names_the_annotated_model_it_has_no_config_for(tmp_path: Path) -> None:
    path = _variant(tmp_path, "model-typo.yaml", ("Qwen/Qwen2.5-0.5B-Instruct", TYPO))
    (kv502,) = _kv502(path, ALLOWED)
    assert kv502.startswith(f"no config.json for model '{TYPO}'"), kv502
    assert f"'{SERVED}'" not in kv502, kv502  # kvlint reads the command's model: it is not the one missing
    # under --no-exemptions the command's model decides and is read: no KV502 at all
    assert _kv502(path, CLOSED) == []


def test_a_runtime_model_argument_does_not_ask_for_the_annotation_it_has(tmp_path: Path) -> None:
    path = _variant(
        tmp_path,
        "model-env-typo.yaml",
        ("Qwen/Qwen2.5-0.5B-Instruct", TYPO),
        (f"- {SERVED}", "- $(MODEL_ID)"),
        (
            "          ports:",
            "          env:\n"
            "            - name: MODEL_ID\n"
            "              valueFrom: {configMapKeyRef: {name: model-config, key: model}}\n"
            "          ports:",
        ),
    )
    (kv502,) = _kv502(path, ALLOWED)
    assert kv502.startswith(f"no config.json for model '{TYPO}'"), kv502
    assert "which kvlint could not read" not in kv502, kv502  # the env's model is not the one looked up
