"""Whether vLLM's argparse accepts the value of a JSON-valued option, restating each release's parser.

Which parser an option has in a release is :data:`kvlint.engines.vllm_json_data.JSON_PARSERS`, generated from
the wheels (``tools/flag_tables/extract_json.py``). The kinds, as ``vllm/engine/arg_utils.py`` defines them:

* ``loads``: ``add_argument(..., type=json.loads)`` (``--rope-scaling`` 0.4.3 - 0.8.5, ``--hf-overrides`` 0.6.6 -
  0.8.5, ``--override-generation-config`` 0.7.3 - 0.8.5 ...). ``json.loads`` raises ``JSONDecodeError`` (a
  ``ValueError``), which argparse reports as "argument --X: invalid loads value: '...'".
* ``from_json`` / ``from_cli``: ``type=PoolerConfig.from_json`` (``--override-pooler-config`` 0.6.6 - 0.8.5),
  ``type=KVTransferConfig.from_cli`` (``--kv-transfer-config`` 0.6.6 - 0.8.5: ``model_validate_json``): the same
  argparse wording with that function's name.
* ``parse_type``: ``parse_type(json.loads)`` / ``optional_type(json.loads)``, get_kwargs's type for a ``dict``
  field from 0.10.1 (``--limit-mm-per-prompt``, ``--mm-processor-kwargs``, ``--override-generation-config``,
  ``--speculative-config`` ...): ``ArgumentTypeError("Value {val} cannot be converted to {json.loads}.")``;
  ``optional_type`` leaves ``""`` and ``"None"`` unset.
* ``parse_type_kvs``: the same in 0.8.5 (``optional_type``) and 0.9.2 (``parse_type``), where a value not
  matching ``^{.*}$`` goes to ``nullable_kvs`` (comma-separated ``KEY=VALUE`` with integer values, else
  "Each item should be in the form KEY=VALUE" / "Failed to parse value of item K=V").
* ``kvs``: ``type=nullable_kvs`` alone (``--limit-mm-per-prompt`` 0.5.5 - 0.7.3): a JSON object is refused.
* ``dict_or_str`` (0.9.2, regex ``^{.*}$``) / ``dict_or_str_dotall`` (0.10.1 on, ``(?s)^\\s*{.*}\\s*$``):
  ``union_dict_and_str``, get_kwargs's type for a ``dict | str`` or ``dict | Callable`` field (``--hf-overrides``,
  ``--model-loader-extra-config``, ``--additional-config``): a value matching the regex is read as
  ``optional_type(json.loads)``, anything else is kept as a string (not checked here).
* ``dataclass:<Cls>``: get_kwargs's ``parse_dataclass`` for a config-dataclass field (``--compilation-config``,
  ``--kv-transfer-config``, ``--pooler-config`` ... 0.9.2 on): ``TypeAdapter(Cls).validate_json`` (0.9.2: the
  class's ``from_cli`` when it has one, itself ``validate_json``), whose ``ValidationError`` argparse prints as
  "1 validation error for Cls / Invalid JSON: ...". **[assumed]** pydantic's JSON parser refuses the text
  Python's ``json`` refuses (both follow RFC 8259); kvlint checks it with ``json``.

Only text the parser cannot read is reported (kvlint's KV206); a value that is valid JSON of another shape (a
list, a number) is left to the checks that read the parsed value.
"""

from __future__ import annotations

import json
import re

from kvlint.engines.vllm_json_data import JSON_PARSERS

__all__ = ["JSON_PARSERS", "refusal"]

#: ``re.match`` patterns of ``optional_type``/``parse_type`` (0.8.5, 0.9.2) and ``union_dict_and_str``.
_BRACED = re.compile(r"^{.*}$")
_BRACED_DOTALL = re.compile(r"(?s)^\s*{.*}\s*$")
_LOADS_REPR = "<function loads at 0x…>"


def _json_error(raw: str) -> str | None:
    """Python's ``json.loads`` reason for refusing ``raw`` (without the position), or None when it reads it."""
    try:
        json.loads(raw)
    except RecursionError:
        return "nested too deeply for Python's json module"
    except ValueError as exc:
        return str(exc).split(":", 1)[0][:80]
    return None


def _nullable_kvs_error(raw: str) -> str | None:
    """``nullable_kvs`` (``vllm@0.5.5`` - ``0.9.2:vllm/engine/arg_utils.py``): comma-separated ``KEY=VALUE``
    items, each value an ``int``, a key given twice with the same value; its ``ArgumentTypeError`` text."""
    out: dict[str, int] = {}
    for item in raw.split(","):
        parts = [p.lower().strip() for p in item.split("=")]
        if len(parts) != 2:
            return "Each item should be in the form KEY=VALUE"
        key, value = parts
        try:
            parsed = int(value)
        except ValueError:
            return f"Failed to parse value of item {key}={value}"
        if key in out and out[key] != parsed:
            return f"Conflicting values specified for key: {key}"
        out[key] = parsed
    return None


def refusal(kind: str, option: str, raw: str) -> tuple[str, str] | None:
    """``(engine message, reason)`` when the release's parser of ``kind`` refuses ``raw`` for ``option``,
    else None. The message is argparse's, after "vllm serve: error: "."""
    if kind in ("parse_type", "parse_type_kvs", "dataclass") or kind.startswith("dataclass:"):
        if raw in ("", "None"):
            return None  # optional_type: unset (a required dataclass field is left to vLLM)
    if kind == "kvs" or (kind == "parse_type_kvs" and not _BRACED.match(raw)):
        why = _nullable_kvs_error(raw)
        return (f"argument {option}: {why}", "it is read as comma-separated KEY=VALUE pairs") if why else None
    if kind == "dict_or_str" and not _BRACED.match(raw):
        return None
    if kind == "dict_or_str_dotall" and not _BRACED_DOTALL.match(raw):
        return None
    why = _json_error(raw)
    if why is None:
        return None
    shown = raw if len(raw) <= 24 else raw[:21] + "..."  # the finding quotes the value itself
    if kind in ("loads", "from_json", "from_cli"):
        return f"argument {option}: invalid {kind} value: {shown!r}", why
    if kind.startswith("dataclass:"):
        return f"argument {option}: 1 validation error for {kind.split(':', 1)[1]} … Invalid JSON", why
    return f"argument {option}: Value {shown} cannot be converted to {_LOADS_REPR}.", why
