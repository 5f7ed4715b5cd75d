"""Write kvlint/engines/sglang_flags_data.py from the JSON of extract_sglang.py.

Usage: ``python gen_sglang_module.py sglang_opts.json ../../kvlint/engines/sglang_flags_data.py``
"""

import json
import sys

HEADER = '''"""SGLang server options per release, generated from the SGLang wheels (do not edit by hand).

SOURCE: the option strings of ``ServerArgs.add_cli_args`` in ``sglang/srt/server_args.py`` (``add_argument`` calls,
and from 0.5.16 the annotated ``ServerArgs``/``sglang/srt/arg_groups/fields`` dataclass fields the parser is built
from) of the PyPI wheels ``sglang==V`` for each V in :data:`VERSIONS`, read with Python's ``ast`` (no SGLang
import). Generator: ``tools/flag_tables/extract_sglang.py`` + ``gen_sglang_module.py``. Used to tell a typo or an
option of another release from a real option.
"""

from __future__ import annotations

'''


def main(src, dst):
    d = json.load(open(src))
    versions = d["versions"]
    opts = d["options"]
    lines = [HEADER]
    lines.append(
        "#: Sampled SGLang releases, oldest first; bit i of an option's mask means present in VERSIONS[i].\n"
    )
    lines.append("VERSIONS: tuple[str, ...] = (\n" + "".join(f'    "{v}",\n' for v in versions) + ")\n\n")
    lines.append("#: option string -> release mask (bit i = VERSIONS[i]).\n")
    lines.append("OPTION_MASKS: dict[str, int] = {\n")
    for opt in sorted(opts):
        mask = sum(1 << versions.index(v) for v in opts[opt])
        lines.append(f'    "{opt}": 0x{mask:X},\n')
    lines.append("}\n\n")
    lines.append("#: every option of any sampled release (the table for an unknown version).\n")
    lines.append("SGLANG_OPTIONS: frozenset[str] = frozenset(OPTION_MASKS)\n")
    open(dst, "w").write("".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
