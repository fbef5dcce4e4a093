"""The verdicts as JUnit XML for CI systems (Jenkins, GitLab, GitHub Actions test reports): one
testsuite, one testcase per figure; a regression is a <failure>, a figure that could not be
compared is <skipped>, the others pass. The schema followed is the one of Ant's JUnit task,
which those systems read (testsuite with tests/failures/skipped counts)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from perfatlas.common.text_file import write_text_file
from perfatlas.regression.table import ratio_text, row_words
from perfatlas.regression.verdicts import Row


def junit_xml(rows: Sequence[Row], name: str) -> str:
    """The XML document of a check named `name` (e.g. 'run 7 against baseline nightly')."""
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(rows)),
        failures=str(sum(r.verdict == "regression" for r in rows)),
        skipped=str(sum(r.verdict == "not comparable" for r in rows)),
        errors="0",
    )
    for row in rows:
        key = row.baseline.key
        case = ET.SubElement(suite, "testcase", classname=f"perfatlas.{key[1]}", name=row.label)
        words = row_words(row)
        text = f"{words['verdict']}: now {words['now']}, baseline {words['baseline']}, ratio " + (
            ratio_text(row)
        )
        if row.note:
            text += f" ({row.note})"
        if row.verdict == "regression":
            ET.SubElement(case, "failure", message=text, type="regression").text = text
        elif row.verdict == "not comparable":
            ET.SubElement(case, "skipped", message=text)
        else:
            ET.SubElement(case, "system-out").text = text
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, "unicode") + "\n"


def write_junit(rows: Sequence[Row], name: str, path: str) -> None:
    write_text_file(path, junit_xml(rows, name), "the JUnit XML (--junit)")
