#!/usr/bin/env python3
"""Tests of scripts/readme-check itself: its matching, its updates and its verdicts on
small READMEs whose commands are shell built-ins (so they need no kvsim), that is, proof
that the `readme` test can fail.  Run by meson (`meson test -C build readme_check`) or as
`python3 tests/test_readme_check.py`."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "readme-check")
loader = importlib.machinery.SourceFileLoader("readme_check", SCRIPT)
spec = importlib.util.spec_from_loader("readme_check", loader)
rc = importlib.util.module_from_spec(spec)
loader.exec_module(rc)

FENCE = "`" * 3


def run_check(readme_text, *args, files=None):
    """(exit status, stdout, README text afterwards) of readme-check on readme_text, in a
    directory of its own; files, if a list, receives the names in it afterwards."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "README.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(readme_text)
        # KVSIM_GNUPLOT: a program that exists, so figures are checked without gnuplot
        p = subprocess.run([sys.executable, SCRIPT, "--kvsim", "/bin/sh", path, *args],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, KVSIM_GNUPLOT="sh"))
        if files is not None:
            files += sorted(os.listdir(d))
        with open(path, encoding="utf-8") as f:
            return p.returncode, p.stdout, f.read()


def transcript(marker, *lines):
    return "\n".join([f"<!-- readme-check{marker} -->", FENCE, *lines, FENCE, ""])


class Matching(unittest.TestCase):
    def test_exact_output_must_be_whole(self):
        self.assertIsNotNone(rc.glob_match(["a", "b"], ["a", "b"], rc.text_equal))
        self.assertIsNone(rc.glob_match(["a"], ["a", "b"], rc.text_equal))
        self.assertIsNone(rc.glob_match(["b"], ["a", "b"], rc.text_equal))

    def test_ellipsis_frees_the_ends(self):
        out = ["head", "x 1", "x 2", "tail"]
        self.assertEqual(rc.glob_match(["…", "x 1", "x 2", "…"], out, rc.text_equal),
                         {1: 1, 2: 2})
        self.assertEqual(rc.glob_match(["head", "…", "tail"], out, rc.text_equal),
                         {0: 0, 2: 3})
        # lines between two `…` are consecutive in the output
        self.assertIsNone(rc.glob_match(["…", "x 1", "tail", "…"], out, rc.text_equal))

    def test_a_run_after_an_ellipsis_ends_the_output(self):
        # the last run is anchored at the end: with numbers ignored, "x 2" and not "x 1"
        where = rc.glob_match(["head", "…", "x 9"], ["head", "x 1", "x 2"], rc.skeleton_equal)
        self.assertEqual(where, {0: 0, 2: 2})

    def test_wall_time_is_volatile(self):
        self.assertTrue(rc.text_equal("done in 0.16 s wall (-j 2)", "done in 7.60 s wall (-j 2)"))
        self.assertFalse(rc.text_equal("done in 0.16 s wall (-j 2)", "done in 0.16 s wall (-j 3)"))

    def test_excerpt_update_keeps_its_shape(self):
        ok, new, _ = rc.compare(["…", "  rate 1.5 req/s", "…"],
                                ["kvsim x", "  rate 2.25 req/s", "end"], False)
        self.assertFalse(ok)
        self.assertEqual(new, ["…", "  rate 2.25 req/s", "…"])
        ok, new, _ = rc.compare(["…", "  rate 1.5 req/s", "…"], ["other text 3"], False)
        self.assertFalse(ok)
        self.assertIsNone(new)  # nothing matches even with numbers ignored: by hand

    def test_json_subset(self):
        ok, new, why = rc.compare(['{"a": 1, "c": {"d": 2}}'],
                                  ['{"a": 1, "b": 5, "c": {"d": 3, "e": 4}}'], True)
        self.assertFalse(ok)
        self.assertIn("$.c.d", why)
        self.assertEqual(new, ["{", '  "a": 1,', '  "c": {', '    "d": 3', "  }", "}"])
        ok, _, _ = rc.compare(['{"a": 1}'], ['{"a": 1, "b": 2}'], True)
        self.assertTrue(ok)
        ok, _, _ = rc.compare(['{"a": 1.0}'], ['{"a": 1}'], True)
        self.assertFalse(ok)  # 1.0 and 1 print differently


class Verdicts(unittest.TestCase):
    def test_a_stale_number_fails_and_update_fixes_it(self):
        text = "# t\n\n" + transcript("", "$ echo 3 blocks", "2 blocks")
        status, out, _ = run_check(text)
        self.assertEqual(status, 1, out)
        self.assertIn("prints something else", out)
        status, out, after = run_check(text, "--update")
        self.assertIn("$ echo 3 blocks\n3 blocks\n", after)
        status, out, _ = run_check(after)
        self.assertEqual(status, 0, out)

    def test_command_block_and_its_output_block(self):
        text = "\n".join(["<!-- readme-check -->", FENCE + "sh", "echo a; echo b >&2",
                          "echo c 1", FENCE, "", FENCE + "text", "…", "c 1", FENCE, ""])
        status, out, _ = run_check(text)
        self.assertEqual(status, 0, out)
        status, out, after = run_check(text.replace("\nc 1\n", "\nc 2\n"), "--update")
        self.assertEqual(status, 1, out)
        self.assertIn("…\nc 1\n", after)

    def test_a_failing_command_fails(self):
        status, out, _ = run_check(transcript("", "$ false", ""))
        self.assertEqual(status, 1)
        self.assertIn("'false' exited 1", out)

    def test_a_misspelt_marker_is_an_error(self):
        status, out, _ = run_check(transcript(" haevy", "$ echo 1", "1"))
        self.assertEqual(status, 1)
        self.assertIn("README.md:1: unknown marker word 'haevy'", out)

    def test_heavy_blocks_need_all(self):
        text = transcript(" heavy", "$ echo 1", "2")
        self.assertEqual(run_check(text)[0], 0)
        self.assertEqual(run_check(text, "--all")[0], 1)

    def test_unmarked_and_skipped_blocks_do_not_run(self):
        text = FENCE + "sh\nfalse\n" + FENCE + "\n\n" + transcript(" skip", "$ false", "")
        self.assertEqual(run_check(text)[0], 0)
        status, out, _ = run_check(text, "--strict")
        self.assertEqual(status, 1)
        self.assertIn("without a readme-check marker", out)

    def test_blocks_share_a_scratch_directory_outside_the_tree(self):
        text = (transcript("", "$ mkdir -p out && echo x > out/f") + "\n"
                + transcript("", "$ cat out/f", "x"))
        files = []
        status, out, _ = run_check(text, files=files)
        self.assertEqual(status, 0, out)
        self.assertEqual(files, ["README.md"])

    def test_figures_must_be_written_and_update_copies_them(self):
        text = transcript(" figure=out/f.png:fig.png", "$ mkdir -p out && echo png > out/f.png")
        files = []
        self.assertEqual(run_check(text, files=files)[0], 0)
        self.assertEqual(files, ["README.md"])
        run_check(text, "--update", files=files)
        self.assertIn("fig.png", files)
        status, out, _ = run_check(text.replace("> out/f.png", "> out/g.png"))
        self.assertEqual(status, 1)
        self.assertIn("did not write the figure 'out/f.png'", out)


if __name__ == "__main__":
    unittest.main()
