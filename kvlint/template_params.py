"""An OpenShift ``Template``'s parameters, substituted into its objects as ``oc process`` substitutes them.

``oc process`` (openshift/library-go ``pkg/template/templateprocessing/template.go``, ``Processor.Process``)
first gives each parameter whose ``value`` is empty a generated value (``generate: expression``), then fails
("parameter NAME is required and must be specified") for a ``required`` one still empty, and then replaces, in
every string of every object (``SubstituteParameters``, ``EvaluateParameterSubstitution``):

* a string that is wholly ``${{NAME}}`` (``nonStringParameterExp``, ``^\\$\\{\\{([a-zA-Z0-9\\_]+)\\}\\}$``) by the
  parameter's value as a non-string JSON value (``2``, ``true``);
* else each ``${NAME}`` (``stringParameterExp``, ``\\$\\{([a-zA-Z0-9\\_]+?)\\}``) by the parameter's value, text
  around it kept (``0.${UTIL}``).

A reference to a name the Template does not declare is left as written (the engine then receives it literally).

kvlint reads a Template's objects as ``oc process`` with no ``-p`` writes them: a parameter with a ``value`` is
that value (the default ``-p NAME=VALUE`` overrides). A parameter with no value (required, generated, or one
``oc process`` would make empty) is not substituted: its words stay ``${NAME}``, whose value is unknown
(:func:`unresolved_parameters`; a whole word of them is a KV503 info, not an unknown option:
:func:`kvlint.engines.options.template_words`). Done when the document is loaded (:func:`kvlint.load._flatten`),
so every stage reads the processed objects; positions are those of the strings as written.

Bounded: a substitution that would make a string longer than :data:`MAX_SUBSTITUTED_CHARS`, or add more than
:data:`MAX_ADDED_CHARS` characters to one file's Templates in all, is not made (the string stays as written), and at most
:data:`MAX_PARAMETERS` parameters are read.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "MAX_ADDED_CHARS",
    "MAX_PARAMETERS",
    "MAX_SUBSTITUTED_CHARS",
    "process_template",
    "unresolved_parameters",
]

#: ``oc process``'s references (openshift/library-go ``template.go``): a whole-string non-string one, and a
#: string one (group 1: the name).
_NON_STRING = re.compile(r"^\$\{\{([a-zA-Z0-9_]+)\}\}$")
_STRING = re.compile(r"\$\{([a-zA-Z0-9_]+?)\}")
#: The longest string a substitution may make (a longer result is left as written).
MAX_SUBSTITUTED_CHARS = 64 * 1024
#: The characters substitutions may add to the Templates of one loaded file in all.
MAX_ADDED_CHARS = 4 * 1024 * 1024
#: The parameters of one Template read (far above any real Template's few dozen).
MAX_PARAMETERS = 4096


def _parameters(data: Any) -> tuple[dict[str, str], set[str]]:
    """``(name -> value, names without a value)`` of a Template's ``parameters`` (the first
    :data:`MAX_PARAMETERS`): a value is a non-empty string ``value`` (a number or boolean written unquoted read as
    its text); a parameter with none is left unresolved."""
    values: dict[str, str] = {}
    unset: set[str] = set()
    params = data.get("parameters") if isinstance(data, dict) else None
    for p in params[:MAX_PARAMETERS] if isinstance(params, list) else []:
        name = p.get("name") if isinstance(p, dict) else None
        if not isinstance(name, str) or not re.fullmatch(r"[a-zA-Z0-9_]+", name):
            continue
        value = p.get("value")
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (int, float)):
            value = str(value)
        if isinstance(value, str) and value:
            values[name] = value
            unset.discard(name)
        else:
            values.pop(name, None)
            unset.add(name)
    return values, unset


def unresolved_parameters(data: Any) -> frozenset[str]:
    """The names of the parameters of the Template ``data`` that have no value (:func:`_parameters`), whose
    references :func:`process_template` leaves as written; empty for any other document."""
    if not isinstance(data, dict) or data.get("kind") != "Template":
        return frozenset()
    return frozenset(_parameters(data)[1])


def process_template(data: Any, budget: list[int] | None = None) -> None:
    """Substitute, in place, the parameters with a value of the OpenShift Template ``data`` into the strings of
    its ``objects`` (module docstring); nothing for any other document or a Template without such parameters.

    ``budget``: ``[characters substitutions may still add]``, drawn down in place, so that the Templates of one
    file share it (:func:`kvlint.load._flatten`): each with its own :data:`MAX_ADDED_CHARS`, a file of many small
    Templates grew without bound (160 Templates of 9 KB, each adding 4 MiB: 690 MB held for a 1.4 MB file).
    None: a fresh :data:`MAX_ADDED_CHARS`."""
    if not isinstance(data, dict) or data.get("kind") != "Template":
        return
    objects = data.get("objects")
    values = _parameters(data)[0]
    if not values or not isinstance(objects, list):
        return
    if budget is None:
        budget = [MAX_ADDED_CHARS]
    seen: set[int] = set()
    stack: list[Any] = [objects]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue  # (a YAML alias: one node, processed once)
        seen.add(id(node))
        keys: Any = node.keys() if isinstance(node, dict) else range(len(node))
        for key in list(keys):
            value = node[key]
            if isinstance(value, (dict, list)):
                stack.append(value)
            elif isinstance(value, str) and "${" in value:
                new = _substitute(value, values, budget)
                if new is not value:
                    node[key] = new  # (an LDict's or LList's positions are keyed by key or index)


def _substitute(text: str, values: dict[str, str], budget: list[int]) -> Any:
    """``text`` with ``oc process``'s substitution of ``values`` (module docstring), or ``text`` itself when no
    reference names a parameter with a value or the result would pass the bounds."""
    m = _NON_STRING.match(text)
    if m is not None and m.group(1) in values:
        value = values[m.group(1)]
        try:
            parsed = json.loads(value)
        except ValueError:
            return text  # oc process writes it unquoted into the object's JSON, which then fails to decode
        return (
            parsed if isinstance(parsed, (int, float, bool, str)) and not isinstance(parsed, dict) else text
        )
    parts: list[str] = []
    size = 0
    last = 0
    changed = False
    for ref in _STRING.finditer(text):
        name = ref.group(1)
        if name not in values:
            continue
        parts.append(text[last : ref.start()])
        parts.append(values[name])
        size += ref.start() - last + len(values[name])
        last = ref.end()
        changed = True
        if size > MAX_SUBSTITUTED_CHARS:
            return text
    if not changed:
        return text
    parts.append(text[last:])
    out = "".join(parts)
    added = len(out) - len(text)
    if len(out) > MAX_SUBSTITUTED_CHARS or added > budget[0]:
        return text
    budget[0] -= max(added, 0)
    return out
