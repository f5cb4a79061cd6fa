"""Counts a ctest run from its JUnit file (ctest --output-junit FILE), skipped tests apart.

    python3 scripts/ctest_summary.py build/Testing/test-sh.junit.xml

ctest's own last line counts a skipped test as passed ("100% tests passed, 0 tests failed out of
1088" where half of them skipped: the GPU tests without a GPU). This prints, for scripts/test.sh:

    N passed, M skipped (need a GPU or an optional tool), F failed out of T
      skipped: 480 no usable CUDA device: ...; 12 ...
      python_tests, one of them, is the pytest suite: 156 passed, 31 skipped in 287.0s

A test is skipped when ctest says so (SKIP_REGULAR_EXPRESSION: GoogleTest's "[  SKIPPED ]");
the reason is GoogleTest's message after its "file:line: Skipped" line. A test ctest could not
run (a missing executable) counts as failed, as ctest counts it."""

import collections
import re
import sys
import xml.etree.ElementTree as ET


def skip_reason(output):
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines) and not lines[i + 1].startswith("[  SKIPPED ]"):
            return lines[i + 1].strip()
    return "no reason given"


def main(path):
    cases = ET.parse(path).getroot().iter("testcase")
    passed, skipped, disabled, failed = 0, [], 0, []
    pytest_line = None
    for case in cases:
        name, status = case.get("name"), case.get("status")
        out = case.findtext("system-out") or ""
        skip = case.find("skipped")
        if status == "run":
            passed += 1
        elif status == "disabled":
            disabled += 1
        elif skip is not None and (skip.get("message") or "").startswith("SKIP_"):
            skipped.append(skip_reason(out))
        else:
            failed.append(name)
        if name == "python_tests":
            counts = [l for l in out.splitlines() if re.search(r"\d+ (passed|failed|skipped|errors?)\b", l)]
            if counts:
                pytest_line = counts[-1].strip(" =")
    total = passed + len(skipped) + disabled + len(failed)
    print(f"{passed} passed, {len(skipped)} skipped (need a GPU or an optional tool), {len(failed)} failed "
          f"out of {total}" + (f" ({disabled} disabled)" if disabled else ""))
    if skipped:
        reasons = collections.Counter(skipped).most_common()
        shown = "; ".join(f"{n} {why}" for why, n in reasons[:4])
        more = sum(n for _, n in reasons[4:])
        print(f"  skipped: {shown}" + (f"; {more} for {len(reasons) - 4} other reasons" if more else ""))
    if pytest_line:
        print(f"  python_tests, one of them, is the pytest suite: {pytest_line}")
    if failed:
        print("  failed: " + ", ".join(failed[:20]) + (f" and {len(failed) - 20} more" if len(failed) > 20 else ""))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ctest_summary.py JUNIT_FILE")
    main(sys.argv[1])
