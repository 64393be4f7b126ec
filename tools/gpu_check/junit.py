"""Test cases from the JUnit XML that pytest (--junitxml) and CTest (--output-junit) write."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

from gpu_check.steps import FAIL, PASS, SKIP, CaseResult

CTEST_SKIP_STATES = {"notrun", "disabled", "skipped"}


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def _skip_line(output: str | None) -> str:
    """The line a skipped CTest test printed to say why (ours start with 'skipped:')."""
    for line in (output or "").splitlines():
        if line.strip().lower().startswith("skipped"):
            return line.strip()
    return _first_line(output)


def _module_skip_reason(text: str | None) -> str:
    """The reason of a module-level skip. pytest writes the skip's (file, line, "Skipped: reason")
    tuple as text; older versions wrote "FILE:LINE: reason"."""
    line = _first_line(text)
    try:
        location = ast.literal_eval(line)
    except (ValueError, SyntaxError):
        location = None
    if (
        isinstance(location, tuple)
        and len(location) == 3
        and isinstance(location[2], str)
    ):
        return location[2].removeprefix("Skipped: ").strip()
    place, separator, reason = line.partition(": ")
    if separator and place.rsplit(":", 1)[-1].isdigit():
        return reason.strip()
    return line


def _case_name(case: ET.Element) -> str:
    name = case.get("name", "?")
    classname = case.get("classname", "")
    if classname and classname != name:
        return f"{classname}::{name}"
    return name


def read_cases(path: Path) -> list[CaseResult]:
    """Every test case in the JUnit file at `path`, with its status and reason.

    Raises:
        ValueError: the file is not JUnit XML (names the file and the parser's message).
    """
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        raise ValueError(f"{path} is not readable JUnit XML: {error}") from error
    cases: list[CaseResult] = []
    for case in root.iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            reason = failure.get("message") or _first_line(failure.text)
            cases.append(CaseResult(_case_name(case), FAIL, reason))
        elif skipped is not None:
            reason = skipped.get("message") or _first_line(skipped.text)
            if (
                reason == "collection skipped"
            ):  # a whole module: pytest puts its reason in the text
                reason = _module_skip_reason(skipped.text) or reason
            if not reason or reason == "Skipped" or reason.startswith("SKIP_"):
                # CTest's message names only its rule (SKIP_RETURN_CODE=77); the test said why.
                reason = _skip_line(case.findtext("system-out")) or reason
            cases.append(CaseResult(_case_name(case), SKIP, reason))
        elif case.get("status", "").lower() in CTEST_SKIP_STATES:
            cases.append(
                CaseResult(
                    _case_name(case), SKIP, _skip_line(case.findtext("system-out"))
                )
            )
        else:
            cases.append(CaseResult(_case_name(case), PASS))
    return cases
