"""The report for people: a text table for the terminal, a Markdown table for a pull request
comment. Both render the JSON report (bot/eval/report.py), so the three formats cannot disagree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DELTA_FIGURES = ("recall", "precision", "quiet", "findings", "minorShare", "calls", "toolRounds",
                 "promptTokens", "answerTokens", "money", "seconds")


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _number(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}" if digits else f"{round(value):,}"


def _money(value: float | None) -> str:
    return "–" if value is None else f"{value:,.4f}"


def _fraction(part: int, whole: int) -> str:
    return f"{part}/{whole}" if whole else "–"


def _figure(name: str, value: float | None) -> str:
    if name in ("recall", "precision", "quiet", "minorShare"):
        return _ratio(value)
    if name == "money":
        return _money(value)
    if name == "seconds":
        return _number(value, 1)
    return _number(value)


def _signed(name: str, value: float | None) -> str:
    if value is None:
        return "–"
    text = _figure(name, abs(value))
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def _figures_of(overall: Mapping[str, Any]) -> dict[str, float | None]:
    return {"recall": overall["recall"], "precision": overall["precision"], "quiet": overall["quiet"],
            "findings": overall["findings"], "minorShare": overall["noise"]["minorShare"],
            "calls": overall["calls"], "toolRounds": overall["toolRounds"],
            "promptTokens": overall["tokens"]["prompt"], "answerTokens": overall["tokens"]["answer"],
            "money": overall["money"], "seconds": overall["seconds"]}


def _case_cells(case: Mapping[str, Any]) -> list[str]:
    if case["status"] == "unavailable":
        return [case["id"], "unavailable", "", "", "", "", "", "", ""]
    t = case["tally"]
    return [case["id"], case["status"], _fraction(t["found"], t["items"]), _fraction(t["matched"], t["findings"]),
            _fraction(t["quiet"], t["places"]), str(t["findings"]), str(t["calls"]),
            f"{t['prompt_tokens']:,}/{t['answer_tokens']:,}", f"{case['seconds']:.1f}"]


HEADERS = ["case", "status", "recall", "precision", "quiet", "findings", "calls", "tokens in/out", "seconds"]


def _overall_line(overall: Mapping[str, Any]) -> str:
    noise = overall["noise"]
    share = "–" if noise["minorShare"] is None else f"{noise['minorShare']:.0%}"
    money = "" if overall["money"] is None else f", money {_money(overall['money'])}"
    return (f"recall {_ratio(overall['recall'])} ({_fraction(overall['found'], overall['items'])}), "
            f"precision {_ratio(overall['precision'])} ({_fraction(overall['matched'], overall['findings'])}), "
            f"quiet {_ratio(overall['quiet'])} ({_fraction(overall['quietPlaces'], overall['places'])}); "
            f"{overall['findings']} findings ({noise['blocking']} blocking, {noise['important']} important, "
            f"{noise['minor']} minor, {noise['nit']} nit; {share} minor or nit); {overall['calls']} model calls, "
            f"{overall['toolRounds']} tool rounds, {overall['tokens']['prompt']:,} prompt + "
            f"{overall['tokens']['answer']:,} answer tokens{money}; {overall['seconds']:.1f} s")


def _verification_line(v: Mapping[str, Any]) -> str:
    """The figures with and without the second look at each finding (verify: true)."""
    def figures(f: Mapping[str, Any]) -> str:
        return (f"recall {_ratio(f['recall'])}, precision {_ratio(f['precision'])} "
                f"({_fraction(f['matched'], f['findings'])}), quiet {_ratio(f['quiet'])}")
    return (f"verification ({v['cases']} case(s)): {v['refuted']} finding(s) refuted and not posted, "
            f"{v['refutedMatched']} of them matching a must-find item; without it: {figures(v['without'])}; "
            f"with it: {figures(v['with'])}")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _difference_rows(report: Mapping[str, Any], key: str) -> list[list[str]]:
    diffs = report[key]["differences"]
    first = _figures_of(report["overall"])
    second = _figures_of(report["compare"]["overall"]) if key == "compare" else None
    rows = []
    for name in DELTA_FIGURES:
        d = diffs[name]
        interval = "–" if d["low"] is None else f"{_signed(name, d['low'])} to {_signed(name, d['high'])}"
        cells = [name, _figure(name, first[name])]
        if second is not None:
            cells.append(_figure(name, second[name]))
        rows.append([*cells, _signed(name, d["delta"]), interval])
    return rows


TAG_HEADERS = ["tag", "cases", "recall", "precision", "quiet"]


def _tag_rows(by_tag: Mapping[str, Any]) -> list[list[str]]:
    """One row a tag: its cases, and recall, precision and quiet as value (part/whole)."""
    def cell(value: float | None, part: int, whole: int) -> str:
        return "–" if value is None else f"{_ratio(value)} ({part}/{whole})"
    return [[tag, str(s["cases"]), cell(s["recall"], s["found"], s["items"]),
             cell(s["precision"], s["matched"], s["findings"]), cell(s["quiet"], s["quietPlaces"], s["places"])]
            for tag, s in by_tag.items()]


def _reasons(cases: list[Mapping[str, Any]], shown: int = 3) -> list[str]:
    """Why cases failed, were skipped or are unavailable: a reason many cases share, once."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for case in cases:
        if case["reason"]:
            grouped.setdefault((case["status"], case["reason"]), []).append(case["id"])
    lines = []
    for (status, reason), ids in grouped.items():
        if len(ids) == 1:
            lines.append(f"  {ids[0]}: {status}: {reason}")
            continue
        more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
        lines.append(f"  {len(ids)} cases {status} ({', '.join(ids[:shown])}{more}): {reason}")
    return lines


def render_text(report: Mapping[str, Any]) -> str:
    out = [f"reviewer eval: {len(report['cases'])} case(s) of {report['corpus']}, admin file "
           f"{report['adminConfig']}" + (f", judge {report['judge']['model']}" if report["judge"] else "")]
    out += _table([HEADERS, *(_case_cells(c) for c in report["cases"])])
    out += _reasons(report["cases"])
    out.append("overall: " + _overall_line(report["overall"]))
    if report.get("verification"):
        out.append(_verification_line(report["verification"]))
    if report["judge"]:
        j = report["judge"]
        out.append(f"judge {j['model']}: {j['confirmed']} confirmed, {j['rejected']} rejected, "
                   f"{j['unjudged']} unjudged (matched by place), {j['calls']} calls")
    if report.get("byTag"):
        out += ["", "by tag:", *_table([TAG_HEADERS, *_tag_rows(report["byTag"])])]
    if "compare" in report:
        out += ["", f"compared with {report['compare']['adminConfig']}: "
                    + _overall_line(report["compare"]["overall"]),
                *_table([["figure", "first", "second", "difference", "95% interval"],
                         *_difference_rows(report, "compare")])]
    if "baseline" in report:
        out += ["", f"against the baseline {report['baseline']['path']} ({len(report['baseline']['cases'])} "
                    f"paired case(s)):",
                *_table([["figure", "now", "difference", "95% interval"], *_difference_rows(report, "baseline")])]
    if "gate" in report:
        gate = report["gate"]
        out.append("gate: passed" if gate["passed"] else "gate: FAILED: " + "; ".join(gate["failures"]))
    return "\n".join(out) + "\n"


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    return [_md_row(headers), "|" + "|".join("---" for _ in headers) + "|", *(_md_row(r) for r in rows)]


def render_markdown(report: Mapping[str, Any]) -> str:
    """A table fit for a pull request comment: the overall figures (and differences), then the cases."""
    out = [f"### Review evaluation: {len(report['cases'])} case(s)", "", _overall_line(report["overall"]), ""]
    if report.get("verification"):
        out += [_verification_line(report["verification"]), ""]
    if "compare" in report:
        out += [f"Compared with `{report['compare']['adminConfig']}` (95% intervals, paired bootstrap over "
                "cases):", "", *_md_table(["figure", "first", "second", "difference", "95% interval"],
                                          _difference_rows(report, "compare")), ""]
    if "baseline" in report:
        out += [f"Against the baseline `{report['baseline']['path']}`:", "",
                *_md_table(["figure", "now", "difference", "95% interval"], _difference_rows(report, "baseline")),
                ""]
    if "gate" in report:
        gate = report["gate"]
        out += ["**Gate: passed**" if gate["passed"] else "**Gate: failed** — " + "; ".join(gate["failures"]), ""]
    if report.get("byTag"):
        out += ["<details><summary>By tag</summary>", "", *_md_table(TAG_HEADERS, _tag_rows(report["byTag"])), "",
                "</details>", ""]
    out += ["<details><summary>Cases</summary>", "", *_md_table(HEADERS, [_case_cells(c) for c in report["cases"]]),
            "", "</details>"]
    return "\n".join(out) + "\n"

