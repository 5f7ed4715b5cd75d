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
* ``kvs``: ``type=nullable_kvs`` alone (``--limit-mm-per-prompt`` 0.6.x - 0.7.3): a JSON object is refused; an
  empty value is unset (``if len(val) == 0: return None``).
* ``kvs_plain``: 0.5.5's ``nullable_kvs``: ``key, value = item.split("=")`` and ``int(value)``, whose
  ``ValueError`` argparse reports as "invalid nullable_kvs value: '...'"; keys neither lower-cased nor stripped,
  a key given twice not refused (``image=2,image=3`` starts).
* ``dict_or_str`` (0.9.2, regex ``^{.*}$``) / ``dict_or_str_dotall`` (0.10.1 on, ``(?s)^\\s*{.*}\\s*$``):
  ``union_dict_and_str``, get_kwargs's type for a ``dict | str`` or ``dict | Callable`` field (``--hf-overrides``,
  ``--model-loader-extra-config``, ``--additional-config``): a value matching the regex is read as
  ``optional_type(json.loads)``, anything else is kept as a string (not checked here).
* ``dataclass:<Cls>``: get_kwargs's ``parse_dataclass`` for a config-dataclass field (``--compilation-config``,
  ``--kv-transfer-config``, ``--pooler-config`` ... 0.9.2 on): ``TypeAdapter(Cls).validate_json`` (0.9.2: the
  class's ``from_cli`` when it has one, itself ``validate_json``), whose ``ValidationError`` argparse prints as
  "1 validation error for Cls / Invalid JSON: ...". **[assumed]** pydantic's JSON parser refuses the text
  Python's ``json`` refuses (both follow RFC 8259); kvlint checks it with ``json``.
* ``dataclass_hr:<Cls>`` (0.20.0 on among the sampled releases): the same after
  ``_expand_json_human_readable_numbers``, which replaces each bare ``\\d+(\\.\\d+)?[kKmMgGtT]`` outside JSON
  strings with ``human_readable_int`` of it (``{"cpu_bytes_to_use": 80G}`` is read as 85899345920); a decimal
  with a binary suffix (``1.5G``) stops vLLM with "Decimals are not allowed with binary suffixes like G. Did you
  mean to use 1.5g instead?".

Whether a release wraps an option's parser in ``optional_type`` (an ``Optional`` config field, from 0.8.5) is
:data:`kvlint.engines.vllm_json_data.OPTIONAL_TYPE`, generated with the kinds: there ``""`` and ``"None"`` leave the
option unset (:func:`unset_by`); elsewhere the parser sees them and ``json.loads``/``validate_json`` refuse them
(``--compilation-config ""``: 1 validation error for CompilationConfig).

Only text the parser cannot read is reported (kvlint's KV206); a value that is valid JSON of another shape (a
list, a number) is left to the checks that read the parsed value.
"""

from __future__ import annotations

import json
import re

from kvlint.engines.options import human_readable_int
from kvlint.engines.vllm_json_data import JSON_PARSERS, OPTIONAL_TYPE

__all__ = ["JSON_PARSERS", "OPTIONAL_TYPE", "expand_human_readable", "refusal", "unset_by"]

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


def _nullable_kvs_plain_error(raw: str) -> str | None:
    """0.5.5's ``nullable_kvs`` (``vllm@0.5.5:vllm/engine/arg_utils.py``): why it raises ``ValueError`` on
    ``raw`` (an item without exactly one ``=``, or a value ``int`` refuses), else None."""
    for item in raw.split(","):
        parts = item.split("=")
        if len(parts) != 2:
            return "each item should be KEY=VALUE"
        try:
            int(parts[1])
        except ValueError:
            return f"{parts[1]!r} is not an integer"
    return None


#: ``_expand_json_human_readable_numbers`` (``vllm@0.20.0`` - ``0.34.0:vllm/engine/arg_utils.py``): the JSON strings
#: it leaves alone, and the bare numbers with a suffix it replaces.
_JSON_STRING_SPLIT = re.compile(r'("(?:[^"\\]|\\.)*")')
_HR_NUMBER = re.compile(r"\b\d+(?:\.\d+)?[kKmMgGtT]\b")


def expand_human_readable(raw: str) -> tuple[str | None, str | None]:
    """``raw`` as ``_expand_json_human_readable_numbers`` rewrites it, and None; or ``(None, vLLM's message)``
    when ``human_readable_int`` refuses a number (a decimal with a binary suffix); ``(None, None)`` when a number is
    too long for kvlint to convert (then nothing is reported)."""
    parts = _JSON_STRING_SPLIT.split(raw)
    for i in range(0, len(parts), 2):  # even indices: outside strings
        out = []
        last = 0
        for m in _HR_NUMBER.finditer(parts[i]):
            text = m.group()
            try:
                value = human_readable_int(text)
            except ValueError:
                if len(text) > 40:
                    return None, None
                number, suffix = text[:-1], text[-1]
                return None, (
                    f"Decimals are not allowed with binary suffixes like {suffix}. Did you mean to use "
                    f"{number}{suffix.lower()} instead?"
                )
            out.append(parts[i][last : m.start()] + str(value))
            last = m.end()
        parts[i] = "".join(out) + parts[i][last:]
    return "".join(parts), None


def refusal(kind: str, option: str, raw: str, optional: bool = False) -> tuple[str, str] | None:
    """``(engine message, reason)`` when the release's parser of ``kind`` refuses ``raw`` for ``option``,
    else None. The message is argparse's, after "vllm serve: error: ". ``optional``: the release wraps the parser
    in ``optional_type`` (:data:`kvlint.engines.vllm_json_data.OPTIONAL_TYPE`), which reads ``""`` and ``"None"``
    as unset before the parser sees them; without it ``json.loads``/``validate_json`` refuse both (a non-``Optional``
    field such as ``CompilationConfig``'s or ``--override-generation-config``'s ``dict``)."""
    if optional and raw in ("", "None"):
        return None
    if kind.startswith("dataclass_hr:"):
        expanded, refused = expand_human_readable(raw)
        if refused is not None:
            return f"argument {option}: {refused}", "a decimal number with a binary suffix"
        if expanded is None:
            return None
        raw, kind = expanded, "dataclass:" + kind.split(":", 1)[1]
    if kind in ("kvs", "kvs_plain") and raw == "":
        return None  # nullable_kvs: len(val) == 0 is unset (0.5.5 - 0.7.3)
    if kind == "kvs_plain":
        why = _nullable_kvs_plain_error(raw)
        return (f"argument {option}: invalid nullable_kvs value: {raw!r}", why) if why else None
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


def unset_by(kind: str | None, raw: str, optional: bool = False) -> bool:
    """Whether a release whose parser of the option is ``kind`` (wrapped in ``optional_type`` when ``optional``)
    reads ``raw`` as "not given" (None): ``""`` or ``"None"`` under ``optional_type`` (``if val == "" or val ==
    "None": return None``, ``vllm@0.8.5`` - ``0.34.0:vllm/engine/arg_utils.py``), ``""`` for ``nullable_kvs``
    (``if len(val) == 0: return None``, 0.5.5 - 0.7.3)."""
    if kind is None:
        return False
    if optional and raw in ("", "None"):
        return True
    return kind in ("kvs", "kvs_plain") and raw == ""
