"""The Markdown report: the machine, the software, and every step's and test's result."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from gpu_check.machine import Machine
from gpu_check.steps import FAIL, PASS, SKIP, CaseResult, StepResult


@dataclass
class Software:
    """The test environment as seen from its own Python."""

    python: str = ""
    backend: str = ""
    packages: dict[str, str] = field(default_factory=dict)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _machine_rows(machine: Machine, software: Software) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for gpu in machine.gpus:
        rows.append(
            (
                f"GPU {gpu.index}",
                (
                    f"{gpu.name}, compute capability {gpu.compute_capability}, "
                    f"{gpu.memory_mib} MiB, {gpu.multiprocessors} multiprocessors"
                ),
            )
        )
    if machine.gpu_absent is not None:
        rows.append(("GPU", f"none usable: {machine.gpu_absent}"))
    rows += [
        ("NVIDIA driver", machine.driver_version),
        ("CUDA driver API", machine.cuda_driver_api),
        ("OS", f"{machine.os_name}, kernel {machine.kernel}, {machine.glibc}"),
        ("CPU", machine.cpu),
        ("Python (tests)", software.python or machine.python),
        ("TensorRT backend", software.backend or "not determined"),
    ]
    return rows


def _headline(machine: Machine) -> str:
    if not machine.gpus:
        return "no usable GPU"
    names = sorted(
        {
            f"{gpu.name} (compute capability {gpu.compute_capability})"
            for gpu in machine.gpus
        }
    )
    return ", ".join(names)


def _step_summary(step: StepResult) -> str:
    if not step.cases:
        return step.status
    counts = step.counts()
    parts = [
        f"{counts[status]} {word}"
        for status, word in ((PASS, "passed"), (FAIL, "failed"), (SKIP, "skipped"))
        if counts[status]
    ]
    return f"{step.status} ({', '.join(parts)})"


def _case_lines(cases: list[CaseResult]) -> list[str]:
    lines: list[str] = []
    failed = [case for case in cases if case.status == FAIL]
    if failed:
        lines.append("Failed:")
        lines += [f"- `{case.name}`: {_cell(case.reason)}" for case in failed]
        lines.append("")
    by_reason: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        if case.status == SKIP:
            by_reason[case.reason or "no reason given"].append(case.name)
    if by_reason:
        lines.append("Skipped, by reason:")
        for reason, names in sorted(by_reason.items(), key=lambda item: -len(item[1])):
            lines.append(f"- {len(names)} x {_cell(reason)}")
            lines += [f"  - `{name}`" for name in names]
        lines.append("")
    passed = [case.name for case in cases if case.status == PASS]
    if passed:
        lines.append(f"<details><summary>Passed ({len(passed)})</summary>")
        lines.append("")
        lines += [f"- `{name}`" for name in passed]
        lines.append("")
        lines.append("</details>")
        lines.append("")
    return lines


def render(
    machine: Machine,
    software: Software,
    steps: list[StepResult],
    *,
    generated: str,
    source: str,
    labels: dict[str, str] | None = None,
) -> str:
    """The whole report as Markdown, ready to paste into an issue.

    `labels` maps folders of this machine (the checkout, the work folder) to the short names the
    report shows instead, so that the report names no private path.
    """
    totals = {PASS: 0, FAIL: 0, SKIP: 0}
    for step in steps:
        totals[step.status] += 1
    lines = [
        f"# tensoracle GPU check: {_headline(machine)}",
        "",
        (
            f"**{totals[PASS]} steps passed, {totals[FAIL]} failed, {totals[SKIP]} skipped.** "
            f"Written by `tools/gpu-check` on {generated}; sources: {source}."
        ),
        "",
        "## Machine",
        "",
        "| item | value |",
        "| --- | --- |",
    ]
    lines += [
        f"| {name} | {_cell(value)} |"
        for name, value in _machine_rows(machine, software)
    ]
    if software.packages:
        lines += ["", "## Packages", "", "| package | version |", "| --- | --- |"]
        lines += [
            f"| {name} | {version} |"
            for name, version in sorted(software.packages.items())
        ]
    lines += [
        "",
        "## Results",
        "",
        "| step | result | time | why |",
        "| --- | --- | --- | --- |",
    ]
    for step in steps:
        lines.append(
            f"| {_cell(step.title)} | {_step_summary(step)} | {step.seconds:.1f} s | "
            f"{_cell(step.reason)} |"
        )
    for step in steps:
        if not (step.command or step.cases or step.output_tail):
            continue  # the table row says all there is
        lines += ["", f"### {step.title}", ""]
        if step.command:
            lines += [f"`{step.command}`", ""]
        lines.append(
            f"Result: **{step.status}**" + (f": {step.reason}" if step.reason else "")
        )
        lines.append("")
        lines += _case_lines(step.cases)
        if step.output_tail and (step.status == FAIL or step.show_output):
            lines += ["End of the output:", "", "```text", step.output_tail, "```", ""]
    text = "\n".join(lines).rstrip() + "\n"
    for folder, label in sorted((labels or {}).items(), key=lambda item: -len(item[0])):
        text = text.replace(folder, label)
    return text
