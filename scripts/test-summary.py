#!/usr/bin/env python3
"""Sum Criterion's per-test results over every meson test of the given build dirs.

    scripts/test-summary.py BUILD...

Prints one block per meson test that did not pass, then one line "N passed, N failed" on
stdout.  Exit 1 on any failure.

Counting: a Criterion binary's "Synthesis:" line gives its passed, failed and crashed
tests.  The binaries run with --verbose (tests/meson.build), so each test's "[RUN ]" and
"[PASS]"/"[FAIL]" lines are in the log even when the binary never reached its synthesis:
  - meson's timeout (result TIMEOUT): the tests that passed before it count as passed, and
    the timeout is one failure, named as a timeout with the test that was running;
  - a crash or a sanitizer report after the last test (no synthesis, or a non-zero exit
    after a clean synthesis): the passed tests count, plus one failure for the binary;
  - a sanitizer report in the log of a binary that passed (LeakSanitizer in a Criterion
    worker does not change the worker's verdict): one failure for the binary.
A plain (non-Criterion) meson test counts as one test.

A failure block always says something: the result, the duration, the test that was
running, the failed assertions and sanitizer reports found in the log, then the log's
tail — or "(no output captured)".
"""
import json
import re
import sys

SYN = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")
RUN = re.compile(r"^\[RUN \] (\S+)", re.M)
DONE = re.compile(r"^\[(PASS|FAIL|SKIP)\] (\S+): ", re.M)
# Lines worth lifting out of a long log: assertion failures, crashes, Criterion timeouts,
# sanitizer reports (ASan, LSan, UBSan).
# Criterion writes an assertion's location and message on "[----]" lines.
NOTABLE = re.compile(r"(\[FAIL\]|^\[----\] (?!Criterion v)|"
                     r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: )")
TAIL = 30
REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")


def running_at_end(text):
    """The Criterion tests that started but never finished (verbose log)."""
    done = {m.group(2) for m in DONE.finditer(text)}
    return [t for t in RUN.findall(text) if t not in done]


def block(build, t, text, why):
    name = t.get("name")
    status = "" if t.get("result") == "TIMEOUT" else f", exit {t.get('returncode')}"
    lines = [f"--- {why} {build}: {name} ({t.get('duration', 0):.1f} s{status})"]
    stuck = running_at_end(text)
    if t.get("result") == "TIMEOUT":
        lines.append(f"    meson's timeout killed it; running then: {', '.join(stuck) or 'unknown'}"
                     " (scripts/test: KVSIM_TEST_TIMEOUT_MULTIPLIER scales every timeout)")
    elif stuck:
        lines.append(f"    started but never finished: {', '.join(stuck)}")
    notable = [l for l in text.splitlines() if NOTABLE.search(l)]
    if notable:
        lines.append("    notable lines:")
        lines += ["      " + l for l in notable[:40]]
    tail = [l for l in text.splitlines() if l.strip()][-TAIL:]
    if tail:
        lines.append(f"    last {len(tail)} lines of its log:")
        lines += ["      " + l for l in tail]
    else:
        lines.append("    (no output captured)")
    return "\n".join(lines) + "\n"


def main(builds):
    passed = failed = 0
    for build in builds:
        try:
            with open(f"{build}/meson-logs/testlog.json") as f:
                entries = [json.loads(l) for l in f if l.strip()]
        except OSError as e:
            print(f"scripts/test: no test log in {build}: {e}", file=sys.stderr)
            failed += 1
            continue
        for t in entries:
            text = (t.get("stdout") or "") + (t.get("stderr") or "")
            result = t.get("result")
            ok = result in ("OK", "EXPECTEDFAIL", "SKIP")
            syn = SYN.findall(text)
            why = None
            if syn:
                _, p, f, c = map(int, syn[-1])
                passed += p
                failed += f + c
                if not ok:
                    why = "FAILED" if f + c else "FAILED AFTER ITS TESTS PASSED"
                    if f + c == 0:
                        failed += 1  # e.g. a leak report or a crash at exit
            elif RUN.search(text):  # a Criterion binary that never reached its synthesis
                passed += sum(1 for m in DONE.finditer(text) if m.group(1) == "PASS")
                failed += sum(1 for m in DONE.finditer(text) if m.group(1) == "FAIL")
                if not ok:
                    failed += 1
                    why = "TIMEOUT" if result == "TIMEOUT" else "CRASHED"
            else:
                passed += 1 if ok else 0
                failed += 0 if ok else 1
                if not ok:
                    why = "TIMEOUT" if result == "TIMEOUT" else "FAILED"
            if not why and REPORT.search(text):
                failed += 1
                why = "SANITIZER REPORT"
            if why:
                print(block(build, t, text, why), file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
