"""Rule families: one module per catalogue category (``category:`` in ``rules/KVnnn.yaml``).

Each module registers the checks of its rules with :func:`kvlint.rules.registry.check`; the registry imports
every module here, so a new family module needs no list to be updated.

| module | category | rules |
|---|---|---|
| :mod:`.parse` | parse | KV001-KV005 (KV001-KV004 found by the loader and the suppression pass) |
| :mod:`.capacity` | capacity | KV101-KV108 |
| :mod:`.limits` | limits | KV201-KV209 (KV201-KV204 and KV209; KV205-KV208 are flags) |
| :mod:`.flags` | flags | KV205-KV208 (KV205-KV207 found by the engine parsers) |
| :mod:`.hardware` | hardware | KV301-KV305 |
| :mod:`.parallelism` | parallelism | KV401-KV411 |
| :mod:`.resolution` | resolution | KV501-KV506 (KV504 and KV506 found by the workload and engine readers) |
| :mod:`.tgi` | tgi | KV601-KV604 |
| :mod:`.sglang` | sglang | KV701-KV703 |
"""
