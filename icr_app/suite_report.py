"""A suite's summary: per task and method the accuracy with its interval, per method its record over the tasks,
and two figures. Read from the per-task eval JSONs (`SeedsReport.to_json`), so it can be redrawn at any time.

A win is a task on which the method has the best mean accuracy (tied best counts for each); a task is below
zero-shot when the method's accuracy is lower there, and significantly so when the paired McNemar test on
those items says p < 0.05. Latency ratio and build seconds are medians over the tasks.

Pooled: every task's and seed's items in one list per method, so an ordering between two methods over the whole
suite gets one paired test (per-task tests at n = 100 miss differences of a few points). An item drawn by two
seeds' splits is one item to the test and the interval (`stats.paired`); the pooled accuracy's Wilson interval
counts it each time.
"""

from __future__ import annotations

import csv
import importlib.util
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from icr_app.core.taskspecs import Reported
from icr_app.stats import paired, significant, wilson

if TYPE_CHECKING:  # plotly comes with the app's extra; a library install writes the tables without figures
    import plotly.graph_objects as go

BASE = "zero-shot"


def vs_base(rep: dict[str, Any], method: str) -> dict[str, Any] | None:
    return next((c for c in rep["paired"] if c["a"] == method and c["b"] == BASE), None)


def cell_rows(reports: dict[str, dict], methods: list[str]) -> list[dict[str, Any]]:
    """One row per task and method (summary.csv)."""
    rows = []
    for task, rep in reports.items():
        for m in methods:
            r, c = rep["methods"][m], vs_base(rep, m)
            ci = r.get("ci95") or [None, None]
            rows.append({"task": task, "kind": rep["kind"], "method": m, "accuracy": r["accuracy"],
                         "ci95_low": ci[0], "ci95_high": ci[1], "accuracy_sd": r.get("accuracy_sd"),
                         "first_token_accuracy": r["first_token_accuracy"],
                         "diff_vs_zero_shot": c and c["diff"], "p_mcnemar_vs_zero_shot": c and c["p_mcnemar"],
                         "significant_vs_zero_shot": c is not None and significant(c),
                         "latency_ratio_to_zero_shot": r["latency_ratio_to_zero_shot"], "build_s": r["build_s"],
                         "error": r["error"]})
    return rows


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def method_rows(reports: dict[str, dict], methods: list[str]) -> list[dict[str, Any]]:
    """One row per method over the tasks (methods.csv)."""
    best = {task: max((r["accuracy"] for r in rep["methods"].values() if r["error"] is None), default=None)
            for task, rep in reports.items()}
    rows = []
    for m in methods:
        ok = {task: rep for task, rep in reports.items() if rep["methods"][m]["error"] is None}
        below = [c for c in (vs_base(rep, m) for rep in ok.values()) if c is not None and c["diff"] < 0]
        accs = [rep["methods"][m]["accuracy"] for rep in ok.values()]
        rows.append({"method": m, "tasks": len(ok), "mean_accuracy": statistics.fmean(accs) if accs else None,
                     "wins": sum(rep["methods"][m]["accuracy"] == best[t] for t, rep in ok.items()),
                     "below_zero_shot": len(below), "significantly_below_zero_shot": sum(map(significant, below)),
                     "latency_ratio_median": _median([rep["methods"][m]["latency_ratio_to_zero_shot"]
                                                      for rep in ok.values()]),
                     "build_s_median": _median([rep["methods"][m]["build_s"] for rep in ok.values()]),
                     "failed": len(reports) - len(ok)})
    return rows


def _items(reports: dict[str, dict], method: str, tasks: list[str]) -> list[bool]:
    return [c for t in tasks for c in reports[t]["methods"][method]["correct"]]


def item_names(reports: dict[str, dict], tasks: list[str]) -> list[tuple[str, str]] | None:
    """(task, item) behind each pooled answer; None when a report predates item names (each pair then counts)."""
    if not all(reports[t].get("items") for t in tasks):
        return None
    return [(t, key) for t in tasks for key in reports[t]["items"]]


def pooled_rows(reports: dict[str, dict], methods: list[str]) -> tuple[list[dict], list[dict]]:
    """Per method its pooled accuracy over the tasks it served; then, in that order from the best, each method
    against the next below it and against zero-shot, on the tasks both served (pooled.csv)."""
    served = {m: [t for t, rep in reports.items() if rep["methods"][m]["error"] is None] for m in methods}
    accuracy: list[dict[str, Any]] = []
    for m in methods:
        items = _items(reports, m, served[m])
        low, high = wilson(sum(items), len(items)) or (None, None)
        accuracy.append({"method": m, "n": len(items), "accuracy": sum(items) / len(items) if items else None,
                         "ci95_low": low, "ci95_high": high})
    ranked = [r["method"] for r in sorted(accuracy, key=lambda r: -(r["accuracy"] or 0.0)) if r["n"]]
    pairs = list(zip(ranked, ranked[1:]))
    pairs += [(m, BASE) for m in ranked if BASE in ranked and m != BASE and {m, BASE} not in map(set, pairs)]
    comparisons = []
    for a, b in pairs:
        both = [t for t in served[a] if t in served[b]]
        items_a, names = _items(reports, a, both), item_names(reports, both)
        c = paired(items_a, _items(reports, b, both), names)
        comparisons.append({"a": a, "b": b, "tasks": len(both), "n": len(items_a),
                            "distinct": len(set(names)) if names else len(items_a), "diff": c["diff"],
                            "ci95_low": c["ci95"][0], "ci95_high": c["ci95"][1], "p_mcnemar": c["p_mcnemar"]})
    return accuracy, comparisons


def pooled_markdown(accuracy: list[dict], comparisons: list[dict]) -> str:
    lines = ["", "Pooled over every task and seed: accuracy [95% Wilson interval]; each method against the next "
             "below it and against zero-shot on the items both scored, difference in points [95% interval] and the "
             "exact McNemar p (* p < 0.05), where an item drawn by several seeds counts once.", "",
             "| method | items | pooled accuracy |", "|---|---:|---|"]
    for r in sorted((r for r in accuracy if r["n"]), key=lambda r: -r["accuracy"]):
        lines.append(f"| {r['method']} | {r['n']} | {r['accuracy']:.3f} [{r['ci95_low']:.3f}, {r['ci95_high']:.3f}] |")
    lines += ["", "| a − b | items (distinct) | difference (points) | McNemar p |", "|---|---:|---:|---:|"]
    for c in comparisons:
        star = "*" if significant(c) else ""
        p = f"{c['p_mcnemar']:.2g}" if c["p_mcnemar"] > 0 else "< 1e-300"  # below a float's range, not zero
        lines.append(f"| {c['a']} − {c['b']} | {c['n']} ({c['distinct']}) | {100 * c['diff']:+.1f} "
                     f"[{100 * c['ci95_low']:+.1f}, {100 * c['ci95_high']:+.1f}] | {p}{star} |")
    return "\n".join(lines) + "\n"


def group_rows(reports: dict[str, dict], methods: list[str], parts: dict[str, list[str]]) -> list[dict[str, Any]]:
    """A paper's layout (group.csv): per method its mean accuracy over each part's tasks and over all of them,
    and its collapses, the tasks where it is below zero-shot ("*" where significantly)."""
    # a set in two groups (or in a part and its group's "all") counts once in the overall
    members = list(dict.fromkeys(t for names in parts.values() for t in names if t in reports))
    rows = []
    for m in methods:
        ok = {t: reports[t]["methods"][m] for t in members if reports[t]["methods"][m]["error"] is None}
        row: dict[str, Any] = {"method": m}
        for part, names in [*parts.items(), ("overall", members)]:
            accs = [ok[t]["accuracy"] for t in names if t in ok]
            row[part] = statistics.fmean(accs) if accs else None
        below = {t: c for t in ok if (c := vs_base(reports[t], m)) is not None and c["diff"] < 0}
        row["collapses"] = " ".join(t + ("*" if significant(c) else "") for t, c in below.items())
        row["failed"] = " ".join(t for t in members if t not in ok)
        rows.append(row)
    return rows


def group_markdown(rows: list[dict], parts: dict[str, list[str]], reports: dict[str, dict]) -> str:
    heads = [f"{part} ({sum(t in reports for t in names)}/{len(names)})" for part, names in parts.items()]
    lines = ["", "The groups' layout: mean accuracy over each part's tasks (tasks run / in the part), then over all "
             "of them; collapses are the tasks where the method is below zero-shot (* significantly, p < 0.05). "
             "Each dataset's test items are a seeded sample of n_test per seed from its test split.", "",
             "| method | " + " | ".join(heads) + " | overall | collapses | failed |",
             "|---|" + "---:|" * (len(parts) + 1) + "---|---|"]
    for r in rows:
        cells = [_num(r[part], ".3f") for part in [*parts, "overall"]]
        lines.append(f"| {r['method']} | " + " | ".join(cells) + f" | {r['collapses'] or '-'} | {r['failed'] or '-'} |")
    return "\n".join(lines) + "\n"


def reported_markdown(reported: list[tuple[str, Reported]]) -> str:
    lines = ["", "The papers' own numbers for their models, in points: references only, not like-for-like (other "
             "models, other sizes); collapses as each paper counts them.", "",
             "| group | model | method | overall | collapses | source |", "|---|---|---|---:|---:|---|"]
    for group, r in reported:
        collapses = "-" if r.collapses is None else str(r.collapses)
        lines.append(f"| {group} | {r.model} | {r.method} | {r.overall:.1f} | {collapses} | {r.source} |")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _num(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def markdown(reports: dict[str, dict], methods: list[str], seeds: list[int], cells: list[dict],
             per_method: list[dict]) -> str:
    """The two tables: accuracy [95% interval] per task and method (* differs from zero-shot, p < 0.05), then
    the per-method record."""
    n_test = sorted({rep["n_test"] for rep in reports.values()})
    # a test split smaller than --n-test gives fewer items; "56,100" would read as one number
    items = str(n_test[0]) if len(n_test) == 1 else f"{n_test[0]} to {n_test[-1]}"
    lines = [f"Seeds {', '.join(map(str, seeds))}; {items} test items per task and seed. Cells: mean accuracy "
             "over seeds [95% Wilson interval of the pooled items]; * the paired exact McNemar test against "
             "zero-shot (an item drawn by several seeds counts once) gives p < 0.05.", "",
             "| task | kind | " + " | ".join(methods) + " |",
             "|---|---|" + "---:|" * len(methods)]
    by_task: dict[str, list[dict]] = {}
    for row in cells:
        by_task.setdefault(row["task"], []).append(row)
    for task, rows in by_task.items():
        out = []
        for row in rows:
            if row["error"] is not None:
                out.append("error")
                continue
            star = "*" if row["significant_vs_zero_shot"] else ""
            out.append(f"{row['accuracy']:.2f}{star} [{row['ci95_low']:.2f}, {row['ci95_high']:.2f}]")
        lines.append(f"| {task} | {rows[0]['kind']} | " + " | ".join(out) + " |")
    lines += ["", "| method | tasks | mean accuracy | wins | below zero-shot (significant) | latency / zero-shot "
              "(median) | build s (median) | failed |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in per_method:
        lines.append(f"| {r['method']} | {r['tasks']} | {_num(r['mean_accuracy'], '.3f')} | {r['wins']} | "
                     f"{r['below_zero_shot']} ({r['significantly_below_zero_shot']}) | "
                     f"{_num(r['latency_ratio_median'], '.2f')} | {_num(r['build_s_median'], '.1f')} | {r['failed']} |")
    return "\n".join(lines) + "\n"


def heatmap(cells: list[dict], methods: list[str]) -> go.Figure:
    import plotly.graph_objects as go

    tasks = list(dict.fromkeys(r["task"] for r in cells))
    acc = {(r["task"], r["method"]): r for r in cells}
    z = [[acc[t, m]["accuracy"] for m in methods] for t in tasks]
    text = [["error" if acc[t, m]["error"] else f"{acc[t, m]['accuracy']:.2f}<br>[{acc[t, m]['ci95_low']:.2f}, "
             f"{acc[t, m]['ci95_high']:.2f}]" for m in methods] for t in tasks]
    fig = go.Figure(go.Heatmap(z=z, x=methods, y=tasks, text=text, texttemplate="%{text}", zmin=0, zmax=1,
                               colorscale="Viridis", colorbar=dict(title="accuracy")))
    fig.update_layout(title="accuracy per task and method (mean over seeds, 95% interval)",
                      height=160 + 40 * len(tasks), yaxis=dict(autorange="reversed"))
    return fig


def accuracy_vs_latency(cells: list[dict], methods: list[str]) -> go.Figure:
    """One point per task and method: accuracy with its interval against the latency ratio to zero-shot."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for m in methods:
        rows = [r for r in cells if r["method"] == m and r["error"] is None]
        fig.add_scatter(x=[r["latency_ratio_to_zero_shot"] for r in rows], y=[r["accuracy"] for r in rows],
                        mode="markers", name=m, text=[r["task"] for r in rows],
                        error_y=dict(type="data", symmetric=False,
                                     array=[r["ci95_high"] - r["accuracy"] for r in rows],
                                     arrayminus=[r["accuracy"] - r["ci95_low"] for r in rows]),
                        hovertemplate="%{text}: accuracy %{y:.3f}, %{x:.2f}× zero-shot time<extra>" + m + "</extra>")
    fig.update_layout(title="accuracy (95% interval) against latency per query / zero-shot's",
                      xaxis=dict(title="latency ratio to zero-shot", type="log"),
                      yaxis=dict(title="accuracy", range=[-0.03, 1.03]))  # points at 0 or 1 stay whole
    return fig


def write_png(fig: go.Figure, path: Path) -> str | None:
    """The figure as a PNG through kaleido, which drives a Chrome or Chromium on the machine; None when written,
    else why not."""
    if importlib.util.find_spec("kaleido") is None:
        return "kaleido is not installed"
    try:
        fig.write_image(path, scale=2)
    except Exception as err:  # kaleido raises its own error types when no browser is found or it cannot start
        return f"kaleido could not export it ({type(err).__name__}: {err}); it needs Chrome or Chromium installed"
    return None


def write_figures(out: Path, cells: list[dict], methods: list[str]) -> tuple[list[str], str | None]:
    """Each figure as HTML, and as PNG where it can be; returns the files written and, when some could not be,
    a sentence saying why (no figures at all without plotly, HTML only where kaleido cannot export PNG)."""
    if importlib.util.find_spec("plotly") is None:
        return [], "No figures: plotly is not installed (`pip install \"icl-lab[app]\"` adds it)"
    written, png_error = [], None
    figures = {"heatmap": heatmap(cells, methods), "accuracy-vs-latency": accuracy_vs_latency(cells, methods)}
    for name, fig in figures.items():
        # one plotly.min.js written beside them, so the pages open offline
        fig.write_html(out / f"{name}.html", include_plotlyjs="directory")
        written.append(f"{name}.html")
        png_error = png_error or write_png(fig, out / f"{name}.png")
        if png_error is None:
            written.append(f"{name}.png")
    return written, png_error and f"Figures as HTML only: {png_error}"


def write_summary(out: Path, reports: dict[str, dict], methods: list[str], seeds: list[int],
                  parts: dict[str, list[str]] | None = None, unavailable: dict[str, str] | None = None,
                  reported: list[tuple[str, Reported]] | None = None) -> str:
    """summary.md, summary.csv, methods.csv, pooled.csv, group.csv (when the tasks came in groups: `parts`) and
    the figures; returns the markdown. `unavailable` names the groups' tasks left out, with why; `reported`
    holds the groups' papers' own numbers, printed after the groups' table."""
    cells, per_method = cell_rows(reports, methods), method_rows(reports, methods)
    accuracy, comparisons = pooled_rows(reports, methods)
    text = markdown(reports, methods, seeds, cells, per_method) + pooled_markdown(accuracy, comparisons)
    if parts:
        rows = group_rows(reports, methods, parts)
        text += group_markdown(rows, parts, reports)
        write_csv(out / "group.csv", rows)
    if reported:
        text += reported_markdown(reported)
    if unavailable:
        text += "\nNot run, their data could not be had:\n"
        text += "".join(f"- {task}: {why}\n" for task, why in unavailable.items())
    _, missing = write_figures(out, cells, methods)
    if missing:
        text += f"\n{missing}.\n"
    (out / "summary.md").write_text(text)
    write_csv(out / "summary.csv", cells)
    write_csv(out / "methods.csv", per_method)
    if comparisons:
        write_csv(out / "pooled.csv", comparisons)
    return text
