#!/usr/bin/env python3
"""The memory soak's figures, plot and rule, from bench/soak.sh's CSV.

Usage: bench/soak-report.py PSS.CSV OUT.SVG [--minutes N]

Prints the PSS of the app's process tree (the app and its WebKit
processes) at the start, after the warm-up (the first tenth of the run, a
minute at least), half-way and at the end, the growth over the last half,
which process grew, and what the driver had done. Draws the samples as an
SVG (minutes across, MiB up). The rule: the run reached its last minute,
and over its last half the tree grew by less than 5%, both from the
median of the three samples around half-way to that of the last three and
along a straight line fitted to the last half's samples. Exits 1 when the
rule is broken, 2 when the CSV cannot be read. Python 3 standard library
only.
"""

import csv
import statistics
import sys
from xml.sax.saxutils import escape

LIMIT = 5.0  # percent, over the last half
PROCESSES = [("app_mib", "the app"), ("web_mib", "web process"), ("network_mib", "network process")]


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for row in rows:
        out.append({k: (float(v) if v not in ("", None) else 0.0) for k, v in row.items() if k is not None})
    return out


def at(rows, minute, field="pss_mib"):
    """The sample at `minute` (the nearest one there is)."""
    return min(rows, key=lambda r: abs(r["minute"] - minute))[field]


def around(rows, minute, field="pss_mib"):
    """The median of the samples within a minute of `minute`."""
    near = [r[field] for r in rows if abs(r["minute"] - minute) <= 1]
    return statistics.median(near) if near else at(rows, minute, field)


def fitted_growth(rows, start, field="pss_mib"):
    """Growth in percent along the least-squares line through the samples from `start` on."""
    part = [(r["minute"], r[field]) for r in rows if r["minute"] >= start]
    if len(part) < 2:
        return 0.0
    mx = sum(x for x, _ in part) / len(part)
    my = sum(y for _, y in part) / len(part)
    sxx = sum((x - mx) ** 2 for x, _ in part)
    slope = sum((x - mx) * (y - my) for x, y in part) / sxx if sxx else 0.0
    first = my + slope * (part[0][0] - mx)
    return 100.0 * slope * (part[-1][0] - part[0][0]) / first if first else 0.0


def percent(a, b):
    return 100.0 * (b - a) / a if a else 0.0


def nice_step(span, ticks):
    raw = span / max(1, ticks)
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if step >= raw:
            return step
    return 1000 * (int(raw / 1000) + 1)


def svg(rows, minutes, warmup, half, growth, path):
    width, height = 760, 420
    left, right, top, bottom = 64, 24, 52, 56
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(r["pss_mib"] for r in rows)
    y_step = nice_step(peak * 1.3, 6)
    y_max = y_step * (int(peak * 1.3 / y_step) + 1)
    x_step = nice_step(minutes, 6)

    def x(m):
        return left + plot_w * m / minutes

    def y(v):
        return top + plot_h * (1 - v / y_max)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">Corral memory soak: PSS of the app and its WebKit processes</text>',
        f'<text x="{left}" y="40" fill="#555">{escape(f"{minutes} minutes driven, one sample a minute; last half {growth:+.1f}% (rule: under {LIMIT:g}%)")}</text>',
        # The last half, shaded.
        f'<rect x="{x(half):.1f}" y="{top}" width="{x(minutes) - x(half):.1f}" height="{plot_h}" fill="#eef3fb"/>',
        f'<text x="{x(half) + 6:.1f}" y="{top + 16}" fill="#3a5a8c">last half</text>',
    ]
    v = 0
    while v <= y_max:
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" y2="{y(v):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
        v += y_step
    m = 0
    while m <= minutes:
        parts.append(f'<line x1="{x(m):.1f}" y1="{top + plot_h}" x2="{x(m):.1f}" y2="{top + plot_h + 5}" stroke="#333"/>')
        parts.append(f'<text x="{x(m):.1f}" y="{top + plot_h + 19}" text-anchor="middle">{m:g}</text>')
        m += x_step
    parts += [
        f'<line x1="{x(warmup):.1f}" y1="{top}" x2="{x(warmup):.1f}" y2="{top + plot_h}" stroke="#999" stroke-dasharray="4 3"/>',
        f'<text x="{x(warmup) + 4:.1f}" y="{top + plot_h - 6}" fill="#777">warm-up</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>',
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 14}" text-anchor="middle">minutes</text>',
        f'<text transform="translate(18 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">MiB (PSS)</text>',
    ]
    lines = [("pss_mib", "the tree (rule)", "#1f5fbf", 2.5)] + [
        (field, name, colour, 1.5) for (field, name), colour in zip(PROCESSES, ["#2a9d5c", "#d9822b", "#8e44ad"])
    ]
    for i, (field, name, colour, stroke) in enumerate(lines):
        points = " ".join(f"{x(r['minute']):.1f},{y(r[field]):.1f}" for r in rows)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="{stroke}" stroke-linejoin="round"/>')
        if field == "pss_mib":
            parts += [f'<circle cx="{x(r["minute"]):.1f}" cy="{y(r[field]):.1f}" r="2.2" fill="{colour}"/>' for r in rows]
        lx, ly = left + plot_w - 170, top + 14 + 16 * i
        parts.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" stroke="{colour}" stroke-width="{stroke}"/>')
        parts.append(f'<text x="{lx + 28}" y="{ly}">{escape(name)}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main(argv):
    args = argv[1:]
    minutes = None
    if "--minutes" in args:
        i = args.index("--minutes")
        minutes = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    csv_path, svg_path = args
    try:
        rows = read(csv_path)
    except (OSError, ValueError) as error:
        print(f"soak: cannot read {csv_path}: {error}", file=sys.stderr)
        return 2
    if len(rows) < 2:
        print(f"soak: {csv_path} holds {len(rows)} sample(s); nothing to judge", file=sys.stderr)
        return 2
    last = rows[-1]
    minutes = minutes or int(last["minute"])
    reached = int(last["minute"]) >= minutes
    span = int(last["minute"])
    warmup = max(1, round(span / 10))
    half = span / 2
    start, warm, middle, end = rows[0]["pss_mib"], at(rows, warmup), around(rows, half), around(rows, span)
    by_points = percent(middle, end)
    by_line = fitted_growth(rows, half)
    growth = max(by_points, by_line)
    peak = max(rows, key=lambda r: r["pss_mib"])
    svg(rows, span, warmup, half, growth, svg_path)

    print(f"soak: {span} of {minutes} minutes sampled, {len(rows)} samples")
    print(f"soak: PSS at the start          {start:7.1f} MiB")
    print(f"soak: PSS after the warm-up     {warm:7.1f} MiB (minute {warmup})")
    print(f"soak: PSS half-way              {middle:7.1f} MiB (minute {half:g}, median of 3)")
    print(f"soak: PSS at the end            {end:7.1f} MiB (minute {span}, median of the last 3; last sample {last['pss_mib']:.1f})")
    print(f"soak: peak                      {peak['pss_mib']:7.1f} MiB (minute {int(peak['minute'])})")
    print(f"soak: growth over the last half {by_points:+6.1f}% (half-way to end), {by_line:+.1f}% (fitted line)")
    print(f"soak: growth after the warm-up  {percent(warm, end):+6.1f}% (minute {warmup} to the end)")
    for field, name in PROCESSES:
        print(f"soak:   {name:16} {rows[0][field]:6.1f} -> {at(rows, warmup, field):6.1f} -> {around(rows, half, field):6.1f} -> {around(rows, span, field):6.1f} MiB, last half {percent(around(rows, half, field), around(rows, span, field)):+.1f}%")
    print(f"soak: RSS of the tree {rows[0]['rss_mib']:.1f} -> {last['rss_mib']:.1f} MiB; commands running at the samples: up to {max(r['other_mib'] for r in rows):.1f} MiB (not counted)")
    counts = ["tool_calls", "tool_results", "approvals", "messages", "summaries", "conversations", "switches", "tasks", "over_window"]
    if all(k in last for k in counts):
        print(
            "soak: done: {:.0f} tool calls ({:.0f} results back), {:.0f} approvals, {:.0f} messages, {:.0f} summaries, "
            "{:.0f} conversations, {:.0f} switches, {:.0f} tasks; {:.0f} requests over the window; {:.0f} DOM nodes at the end".format(
                *(last[k] for k in counts), last.get("dom_nodes", 0)
            )
        )
    held = reached and growth < LIMIT
    if not reached:
        print(f"soak: RULE BROKEN: the run ended at minute {span} of {minutes}")
    elif not held:
        print(f"soak: RULE BROKEN: the tree grew {growth:.1f}% over the last half (under {LIMIT:g}% wanted)")
    else:
        print(f"soak: rule held: {growth:+.1f}% over the last half (under {LIMIT:g}%)")
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
