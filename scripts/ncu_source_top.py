#!/usr/bin/env python3
"""Summarizes an ncu report's warp-state samples, for a latency-bound kernel: where its warps wait.
  ncu -i REP --page raw --csv | ncu_source_top.py reasons     the longest result's stall reasons
  ncu -i REP --page source --csv --print-source sass | ncu_source_top.py lines [N]
                                                            the N lines with the most samples, per result"""
import csv
import sys


def number(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


def reasons(records):
    header = records[0]
    results = [r for r in records[2:] if len(r) == len(header)]
    duration = header.index("gpu__time_duration.sum")
    longest = max(results, key=lambda r: number(r[duration]))
    print(f"longest result: {number(longest[duration]):.0f} ns")
    stalls = [(number(longest[i]), name) for i, name in enumerate(header)
              if name.startswith("smsp__pcsamp_warps_issue_stalled_") and not name.endswith("_not_issued")]
    total = sum(v for v, _ in stalls)
    for v, name in sorted(stalls, reverse=True)[:14]:
        if v > 0:
            print(f"{100 * v / total:5.1f}%  {name.removeprefix('smsp__pcsamp_warps_issue_stalled_')}")


def lines(records, top):
    tables, header, rows = [], None, []
    for rec in records:
        if any("Warp Stall Sampling (All" in c for c in rec):
            if header and rows:
                tables.append((header, rows))
            header, rows = rec, []
        elif header and len(rec) == len(header):
            rows.append(rec)
    if header and rows:
        tables.append((header, rows))
    for header, rows in tables:
        col = next(i for i, c in enumerate(header) if "Warp Stall Sampling (All" in c)
        src = next((i for i, c in enumerate(header) if c.strip("# ") == "Source"), 1)
        total = sum(number(r[col]) for r in rows)
        if total < 1000:
            continue
        print(f"--- {len(rows)} lines, {total:.0f} samples")
        for r in sorted(rows, key=lambda r: number(r[col]), reverse=True)[:top]:
            print(f"{100 * number(r[col]) / total:5.1f}%  {r[0]:>8}  {r[src].strip()[:140]}")


records = [r for r in csv.reader(sys.stdin) if r]
if not records:
    sys.exit("ncu_source_top: no CSV on stdin")
if sys.argv[1:2] == ["reasons"]:
    reasons(records)
else:
    lines(records, int(sys.argv[2]) if len(sys.argv) > 2 else 25)
