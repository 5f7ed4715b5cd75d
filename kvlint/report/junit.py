"""JUnit XML report (``kvlint check --format junit``) for CI systems that display test results.

Layout: ``<testsuites name="kvlint" tests= failures= skipped=>`` with one ``<testsuite>`` per linted
file that has a workload or a diagnostic. In it, one ``<testcase>`` per reported diagnostic
(``classname`` = file, ``name`` = ``RULE object [container] line:col``) holding a ``<failure>`` whose
``type`` is the severity (info findings are passing testcases with ``<system-out>``), one passing
testcase per serving container with no diagnostic, and one ``<skipped>`` testcase per suppressed
diagnostic with its reason. Text from the inputs goes through :func:`kvlint.report.escape.xml_text`, so
the document is well-formed whatever it quotes (NUL bytes, control characters, non-UTF-8 file names), and
each message, fix, reason, file name and testcase name through :func:`kvlint.report.escape.printable` first, as
the text report writes them (an object named with a bidirectional override was quoted raw in testcase names,
which CI systems list): a line break or a bidirectional override a manifest value carries into a message (a ``kvlint.io/model``
annotation is quoted as written) is shown escaped, so a report printed in a CI log cannot start a line of its
own (a GitHub workflow command, ``::error file=...::``) nor reorder what is shown. The only line breaks in an
element's text are kvlint's own, before ``fix:``.

Counts: ``tests``, ``failures`` and ``skipped`` count ``<testcase>`` elements, as the JUnit schema defines them
and as its consumers recount them (the Jenkins JUnit plugin, GitLab's test reports and Azure DevOps total the
testcases they read; totals above them would disagree with the consumer's own). They are the findings the summary
line says are *listed*: past :data:`kvlint.findcap.MAX_PER_RULE` findings of a rule in a container one testcase
stands for the rest, and its name ends with how many findings it is (``KV206 Deployment/default/x [vllm] 61:5
(70 findings)``), so the failing testcases' findings add up to the summary's errors and warnings: 51 failures
named for 120 errors, where the name alone read as one.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from kvlint.report.escape import printable, xml_text
from kvlint.types import Diagnostic, findings_stood_for

if TYPE_CHECKING:
    from kvlint.types import CheckResult


def _name(d: Diagnostic) -> str:
    where = f" {d.loc.line}:{d.loc.column}" if d.loc else ""
    obj = f" {d.object}" + (f" [{d.container}]" if d.container else "") if d.object else ""
    n = findings_stood_for(d)
    weight = f" ({n:,} findings)" if n > 1 else ""
    return xml_text(printable(f"{d.rule}{obj}{where}{weight}"))


def _file(d: Diagnostic) -> str:
    return xml_text(printable(d.loc.file)) if d.loc else "<input>"


def render_junit(result: CheckResult) -> str:
    """The JUnit XML document as text (UTF-8 declaration, trailing newline)."""
    suites: dict[str, ET.Element] = {}

    def suite(f: str) -> ET.Element:
        if f not in suites:
            suites[f] = ET.Element("testsuite", name=f)
        return suites[f]

    flagged: set[tuple[str, str]] = set()
    for d in result.diagnostics:
        s = suite(_file(d))
        tc = ET.SubElement(s, "testcase", classname=_file(d), name=_name(d))
        flagged.add((d.object, d.container))
        message = printable(d.message)
        text = xml_text(message + (f"\nfix: {printable(d.fix)}" if d.fix else ""))
        if d.severity == "info":
            ET.SubElement(tc, "system-out").text = text
        else:
            fail = ET.SubElement(tc, "failure", type=d.severity, message=xml_text(f"{d.rule}: {message}"))
            fail.text = text
    for sd in result.suppressed_diagnostics:
        d = sd.diagnostic
        tc = ET.SubElement(suite(_file(d)), "testcase", classname=_file(d), name=_name(d))
        ET.SubElement(tc, "skipped", message=xml_text(f"suppressed by {sd.by}: {printable(sd.reason)}"))
    for c in result.containers:
        if (c.object_ref, c.container_name) in flagged:
            continue
        loc = c.serving.command_loc or c.workload.loc
        f = xml_text(printable(loc.file if loc else c.workload.doc.path))
        ET.SubElement(
            suite(f),
            "testcase",
            classname=f,
            name=xml_text(printable(f"{c.object_ref} [{c.container_name}] ok")),
        )
    root = ET.Element("testsuites", name="kvlint")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for s in suites.values():
        cases = list(s)
        n_fail = sum(1 for tc in cases if tc.find("failure") is not None)
        n_skip = sum(1 for tc in cases if tc.find("skipped") is not None)
        s.set("tests", str(len(cases)))
        s.set("failures", str(n_fail))
        s.set("errors", "0")
        s.set("skipped", str(n_skip))
        totals["tests"] += len(cases)
        totals["failures"] += n_fail
        totals["skipped"] += n_skip
        root.append(s)
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
