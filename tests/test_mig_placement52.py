"""A ``nvidia.com/mig-<profile>`` resource narrows where the pod may land to the GPUs offering that profile (branch
mig52). NVIDIA's device plugin advertises the resource (mixed strategy) only on nodes whose GPUs are partitioned
into such slices, and a board's profiles are fixed by its model (NVIDIA MIG User Guide, "Supported MIG Profiles":
the H100 80GB has 3g.40gb, the L4 no MIG at all). A pod whose required node affinity allows an H100 or an L4 was
placed on the L4 (the smaller) with the A100's 40,192 MiB slice, more than the L4 has, because
``registry.mig_profile('nvidia-l4', '3g.40gb')`` fell back silently to another board's table."""

from __future__ import annotations

from kvlint.accelerators import registry as cat
from kvlint.accelerators.site import Site
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: m}}
spec:
  template:
    spec:
{place}
      containers:
      - name: c
        image: vllm/vllm-openai:v0.10.0
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
        resources: {{limits: {{{resource}: 1}}}}
"""


def _affinity(*products: str) -> str:
    return f"""\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {{key: nvidia.com/gpu.product, operator: In, values: [{", ".join(products)}]}}"""


def _run(place: str, resource: str = "nvidia.com/mig-3g.40gb", options: Options | None = None):  # type: ignore[no-untyped-def]
    text = _POD.format(place=place, resource=resource)
    return run_documents(load_text(text, "m.yaml"), options or Options(allow_hub=False))


def test_the_catalogue_says_which_gpus_offer_the_profile() -> None:
    assert "nvidia-h100-sxm5-80gb" in cat.mig_gpus("3g.40gb")
    assert "nvidia-l4" not in cat.mig_gpus("3g.40gb")
    # no other board's slice for a GPU the catalogue knows without it
    prof, note = cat.mig_profile("nvidia-l4", "3g.40gb")
    assert prof is None and "nvidia-l4 has no MIG" in note
    prof, note = cat.mig_profile("nvidia-a30", "3g.40gb")
    assert prof is None and "nvidia-a30 offers no MIG 3g.40gb" in note and "4g.24gb" in note


def test_l4_or_h100_affinity_lands_on_the_h100_slice() -> None:
    result = _run(_affinity("NVIDIA-L4", "NVIDIA-H100-80GB-HBM3"))
    (c,) = result.containers
    p = c.placement
    assert p is not None and p.accelerator is not None
    assert p.accelerator.id == "nvidia-h100-sxm5-80gb"
    h100 = cat.mig_profile("nvidia-h100-sxm5-80gb", "3g.40gb")[0]
    assert h100 is not None and p.memory_bytes == h100.memory_bytes
    assert p.mig_profile == "3g.40gb" and not p.mig_unoffered
    assert all(a.id != "nvidia-l4" for a in p.candidates)
    assert "only nvidia-h100-sxm5-80gb offers MIG 3g.40gb" in p.how
    assert c.plan is not None


def test_candidates_keep_every_gpu_offering_the_profile() -> None:
    (c,) = _run(_affinity("NVIDIA-L4", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3")).containers
    p = c.placement
    assert p is not None and p.accelerator is not None
    ids = {p.accelerator.id, *(a.id for a in p.candidates)}
    assert ids == {"nvidia-a100-sxm4-80gb", "nvidia-h100-sxm5-80gb"}


def test_a_pod_naming_only_an_l4_is_not_sized() -> None:
    result = _run("      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}")
    (c,) = result.containers
    p = c.placement
    assert p is not None and p.accelerator is None and p.mig_unoffered
    assert p.memory_bytes_override is None
    assert c.plan is None and not c.fleet  # not planned on boards the pod cannot land on either
    (d,) = [d for d in result.diagnostics if d.rule == "KV501"]
    assert "not sized" in d.message and "nvidia-l4 has no MIG" in d.message
    assert "nvidia.com/gpu" in (d.fix or "")


def test_no_candidate_offers_the_profile_names_them() -> None:
    (c,) = _run(_affinity("NVIDIA-L4", "NVIDIA-A10G")).containers
    p = c.placement
    assert p is not None and p.accelerator is None and p.mig_unoffered
    assert "none of the GPUs it may land on (nvidia-l4, nvidia-a10g) offers MIG 3g.40gb" in "; ".join(
        p.undecided
    )


def test_fleet_plans_only_on_gpus_offering_the_profile() -> None:
    options = Options(allow_hub=False, site=Site(fleet=("l4", "h100")))
    (c,) = _run("      nodeSelector: {}", options=options).containers
    assert c.placement is not None and c.placement.accelerator is None
    assert [e.accelerator.id for e in c.fleet] == ["nvidia-h100-sxm5-80gb"]
    assert all(e.mig_profile == "3g.40gb" for e in c.fleet)
    # a fleet with no such GPU: the catalogue's boards that offer it, never the L4
    (c,) = _run(
        "      nodeSelector: {}", options=Options(allow_hub=False, site=Site(fleet=("l4",)))
    ).containers
    ids = {e.accelerator.id for e in c.fleet}
    assert ids and ids <= set(cat.mig_gpus("3g.40gb"))


def test_the_placement_says_which_gpu_was_decided_not_the_labels_worst_case() -> None:
    """The labels' worst case (the L4, the smallest) is not where a MIG 3g.40gb slice can be: the placement text
    says the H100 was chosen, and no longer that the L4 was."""
    (c,) = _run(_affinity("NVIDIA-L4", "NVIDIA-H100-80GB-HBM3")).containers
    p = c.placement
    assert p is not None and p.accelerator is not None and p.accelerator.id == "nvidia-h100-sxm5-80gb"
    assert "chose nvidia-l4" not in p.how and "chose the smallest, nvidia-l4" not in p.how
    assert "chose nvidia-h100-sxm5-80gb" in p.how
