"""JUnit XML from a GradeReport, one test case per check, for CI systems."""

from __future__ import annotations

from xml.etree import ElementTree

from autograder.reports.results import NOT_IMPLEMENTED, GradeReport


def render_junit(report: GradeReport) -> str:
    """JUnit XML with one testcase per check, grouped in one testsuite per task."""
    root = ElementTree.Element("testsuites", name=report.assignment, tests=str(sum(len(t.checks) for t in report.tasks)))
    for task in report.tasks:
        failures = sum(1 for c in task.checks if not c.passed)
        suite = ElementTree.SubElement(root, "testsuite", name=task.id, tests=str(len(task.checks)),
                                       failures=str(failures))
        for check in task.checks:
            case = ElementTree.SubElement(suite, "testcase", classname=task.id, name=check.name,
                                          time=f"{check.seconds:.3f}")
            if not check.passed:
                tag = "skipped" if check.status == NOT_IMPLEMENTED else "failure"
                element = ElementTree.SubElement(case, tag, message=f"{check.status}: {check.message}"[:500])
                element.text = check.hint or check.description
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
