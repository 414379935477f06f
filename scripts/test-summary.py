#!/usr/bin/env python3
"""Sum Criterion's per-test results over every meson test of the given build dirs.

Prints each failing test's log tail, then one line "N passed, N failed".  A meson test
whose binary failed without a Criterion synthesis (crash, sanitizer report at exit) counts
as one failure; a plain (non-Criterion) test counts as one test.  Exit 1 on any failure.
"""
import json
import re
import sys

SYN = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")
passed = failed = 0
for build in sys.argv[1:]:
    try:
        lines = open(f"{build}/meson-logs/testlog.json").read().splitlines()
    except OSError as e:
        print(f"scripts/test: no test log in {build}: {e}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        t = json.loads(line)
        text = (t.get("stdout") or "") + (t.get("stderr") or "")
        ok = t.get("result") in ("OK", "EXPECTEDFAIL", "SKIP")
        m = SYN.findall(text)
        if m:
            _, p, f, c = map(int, m[-1])
            passed += p
            failed += f + c
            if ok or f + c:
                pass
            else:
                failed += 1  # the binary failed after all tests passed (e.g. leak report)
        else:
            passed += 1 if ok else 0
            failed += 0 if ok else 1
        if not ok:
            tail = "\n".join(text.splitlines()[-40:])
            print(f"--- FAILED {build}: {t.get('name')}\n{tail}\n", file=sys.stderr)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
