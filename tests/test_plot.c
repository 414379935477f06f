/* plot: the figures end to end through the kvsim binary: `run --plot` and `kvsim plot`
 * on a run, the sweep and plan fixtures (tests/data/plot, made by make_fixtures.py from
 * real runs), the missing-gnuplot path, and every error path with its exit code and
 * message.
 *
 * A figure is checked as a file, not as a picture: a PNG's signature and IHDR size, an
 * SVG's XML header and declared size.  Every directory is also checked for leftover
 * temporary files, since figures are written under temp names and renamed. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvsim/plot.h"
#include "plot_internal.h" /* the thinning, tested directly */
#include "support.h"

static const char *const run_figures[] = {"blocks", "pressure", "latency_cdf", NULL};
static const char note_line[] =
    "kvsim: note: gnuplot not found; figures skipped (install gnuplot-nox)\n";

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* dir/name.png is a PNG of 1200×700 and dir/name.svg an SVG declaring 1200×700. */
static void assert_figure(const char *dir, const char *name)
{
    char file[256];
    snprintf(file, sizeof file, "%s.png", name);
    char *png = join(dir, file);
    size_t len = 0;
    unsigned char *b = (unsigned char *)read_file(png, &len);
    cr_assert(b, "%s missing", png);
    cr_assert_geq(len, 33, "%s too short", png);
    cr_assert(memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: no PNG signature", png);
    cr_assert(be32(b + 8) == 13 && memcmp(b + 12, "IHDR", 4) == 0, "%s: no IHDR first", png);
    cr_assert_eq(be32(b + 16), 1200, "%s: width %u", png, be32(b + 16));
    cr_assert_eq(be32(b + 20), 700, "%s: height %u", png, be32(b + 20));
    free(b);
    free(png);

    snprintf(file, sizeof file, "%s.svg", name);
    char *svg = join(dir, file);
    char *t = read_file(svg, &len);
    cr_assert(t, "%s missing", svg);
    cr_assert(strncmp(t, "<?xml", 5) == 0, "%s: no XML declaration", svg);
    char *root = strstr(t, "<svg");
    cr_assert(root, "%s: no <svg> element", svg);
    char *end = strchr(root, '>');
    cr_assert(end);
    *end = '\0';
    cr_assert(strstr(root, "width=\"1200\"") && strstr(root, "height=\"700\""),
              "%s: <svg> does not declare 1200x700: %s", svg, root);
    free(t);
    free(svg);
}

static bool has_file(const char *dir, const char *name)
{
    char *p = join(dir, name);
    bool ok = file_exists(p);
    free(p);
    return ok;
}

/* No "*.tmp*" file left in dir, and no PNG/SVG at all when expect_none. */
static void assert_clean(const char *dir, bool expect_no_figures)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        cr_assert(!strstr(e->d_name, ".tmp"), "temporary file left: %s/%s", dir, e->d_name);
        if (expect_no_figures)
            cr_assert(!strstr(e->d_name, ".png") && !strstr(e->d_name, ".svg"),
                      "unexpected figure %s/%s", dir, e->d_name);
    }
    closedir(d);
}

static void copy_file(const char *from, const char *dir, const char *name)
{
    char *text = read_file(from, NULL);
    cr_assert(text, "cannot read %s", from);
    free(write_file(dir, name, text));
    free(text);
}

/* ---- a run --------------------------------------------------------------------------- */

Test(plot, run_plot_writes_every_figure)
{
    char *dir = make_temp_dir();
    /* A pool small enough to preempt, and a watermark so deferrals happen too. */
    run_result r =
        run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "80",
                  "--num-blocks", "1500", "--watermark", "0.02", "--out", dir, "--plot", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.err);
    cr_assert(strstr(r.out, "figures in "), "stdout: %s", r.out);
    cr_assert(strstr(r.out, "blocks, pressure, latency_cdf (.png, .svg)"), "stdout: %s", r.out);
    for (int i = 0; run_figures[i]; i++)
        assert_figure(dir, run_figures[i]);
    assert_clean(dir, false);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, run_plot_quiet_and_json_keep_stdout_clean)
{
    char *dir = make_temp_dir();
    run_result r =
        run_kvsim("run", src_path("traces/tiny.csv"), "--out", dir, "--plot", "--json", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(r.out[0], '{', "stdout is not just the JSON: %s", r.out);
    cr_assert(!strstr(r.out, "figures in"));
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--out", dir, "--plot", "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.out);
    cr_assert_str_empty(r.err);
    for (int i = 0; run_figures[i]; i++)
        assert_figure(dir, run_figures[i]);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* Every request rejected: no step, an empty timeseries, no finished request.  The figures
 * still come out (saying so) instead of gnuplot failing on empty data. */
Test(plot, run_with_nothing_simulated_still_plots)
{
    char *dir = make_temp_dir();
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--num-blocks", "4", "--out", dir,
                             "--plot", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.err);
    for (int i = 0; run_figures[i]; i++)
        assert_figure(dir, run_figures[i]);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, plot_command_redraws_a_run)
{
    char *dir = make_temp_dir();
    run_result r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), "--out", dir, "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_clean(dir, true);
    run_result_free(&r);
    r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.err);
    for (int i = 0; run_figures[i]; i++)
        assert_figure(dir, run_figures[i]);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* ---- sweeps and plans ---------------------------------------------------------------- */

Test(plot, sweep_fixture_gives_both_charts)
{
    char *dir = make_temp_dir();
    copy_file(src_path("tests/data/plot/sweep/sweep.csv"), dir, "sweep.csv");
    run_result r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.err);
    cr_assert(strstr(r.out, "sweep_block_size, sweep_watermark (.png, .svg)"), "%s", r.out);
    assert_figure(dir, "sweep_block_size");
    assert_figure(dir, "sweep_watermark");
    assert_clean(dir, false);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* Only the rows of one watermark: block size is swept, the watermark is not, so only
 * the block-size chart is drawn.  The config column is quoted with a comma inside. */
Test(plot, sweep_of_one_knob_gives_one_chart)
{
    char *text = read_file(src_path("tests/data/plot/sweep/sweep.csv"), NULL);
    cr_assert(text);
    char *out = calloc(strlen(text) + 64, 1);
    char *line = strtok(text, "\n");
    strcat(out, line);
    strcat(out, "\n");
    int kept = 0;
    while ((line = strtok(NULL, "\n"))) {
        if (!strstr(line, "-wm0.05,"))
            continue;
        strcat(out, "\"a, quoted\"");
        strcat(out, strchr(line, ','));
        strcat(out, "\n");
        kept++;
    }
    cr_assert_eq(kept, 5);
    char *dir = make_temp_dir();
    free(write_file(dir, "sweep.csv", out));
    run_result r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_figure(dir, "sweep_block_size");
    cr_assert(!has_file(dir, "sweep_watermark.png"));
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
    free(out);
    free(text);
}

Test(plot, sweep_without_a_swept_knob_is_a_note)
{
    char *text = read_file(src_path("tests/data/plot/sweep/sweep.csv"), NULL);
    cr_assert(text);
    char *second_row_end = strchr(strchr(text, '\n') + 1, '\n');
    second_row_end[1] = '\0'; /* header + one configuration */
    char *dir = make_temp_dir();
    free(write_file(dir, "sweep.csv", text));
    run_result r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char want[512];
    snprintf(want, sizeof want,
             "kvsim: note: %s/sweep.csv varies neither block size, watermark nor router: no sweep "
             "chart\n",
             dir);
    cr_assert_str_eq(r.err, want);
    cr_assert_str_empty(r.out);
    assert_clean(dir, true);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
    free(text);
}

Test(plot, plan_fixture_gives_the_plan_curve)
{
    char *dir = make_temp_dir();
    copy_file(src_path("tests/data/plot/plan/plan.csv"), dir, "plan.csv");
    copy_file(src_path("tests/data/plot/plan/plan.json"), dir, "plan.json");
    run_result r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.err);
    assert_figure(dir, "plan_curve");
    assert_clean(dir, false);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, plan_without_json_or_any_load_meeting_the_slo)
{
    char *dir = make_temp_dir();
    free(write_file(dir, "plan.csv",
                    "load,arrival_rate_req_s,ttft_p99_s,tpot_p99_s,preemption_rate,meets_slo\n"
                    "1,4.6,3.5,0.02,0.1,false\n"
                    "2,9.2,20.4,0.03,0.2,false\n"));
    run_result r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_figure(dir, "plan_curve");
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, several_directories_at_once)
{
    char *a = make_temp_dir(), *b = make_temp_dir();
    copy_file(src_path("tests/data/plot/sweep/sweep.csv"), a, "sweep.csv");
    copy_file(src_path("tests/data/plot/plan/plan.csv"), b, "plan.csv");
    run_result r = run_kvsim("plot", a, b, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_figure(a, "sweep_watermark");
    assert_figure(b, "plan_curve");
    run_result_free(&r);
    rm_rf(a);
    rm_rf(b);
    free(a);
    free(b);
}

/* ---- without gnuplot ----------------------------------------------------------------- */

Test(plot, missing_gnuplot_is_a_note_and_the_run_succeeds)
{
    char *dir = make_temp_dir();
    const char *env[] = {"KVSIM_GNUPLOT=/nonexistent/gnuplot", NULL};
    const char *args[] = {"run", src_path("traces/tiny.csv"), "--out", dir, "--plot", NULL};
    run_result r = run_kvsim_env(env, args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.err, note_line);
    cr_assert(strstr(r.out, "kvsim run:"), "the human summary is still printed: %s", r.out);
    const char *outputs[] = {"summary.json", "perf.json", "timeseries.csv", "requests.csv"};
    for (int i = 0; i < 4; i++)
        cr_assert(has_file(dir, outputs[i]), "%s not written", outputs[i]);
    assert_clean(dir, true);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, gnuplot_not_in_an_empty_path)
{
    char *dir = make_temp_dir();
    copy_file(src_path("tests/data/plot/plan/plan.csv"), dir, "plan.csv");
    const char *env[] = {"KVSIM_GNUPLOT", "PATH=", NULL};
    const char *args[] = {"plot", dir, NULL};
    run_result r = run_kvsim_env(env, args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.err, note_line);
    cr_assert_str_empty(r.out);
    assert_clean(dir, true);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* ---- errors -------------------------------------------------------------------------- */

Test(plot, missing_directory)
{
    run_result r = run_kvsim("plot", "/nonexistent/kvsim-out", NULL);
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "kvsim: error: cannot open directory '/nonexistent/kvsim-out': No "
                            "such file or directory\n");
    run_result_free(&r);
}

Test(plot, directory_with_nothing_plottable)
{
    char *dir = make_temp_dir();
    free(write_file(dir, "summary.json", "{}\n")); /* a run needs its CSVs too */
    run_result r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 1);
    char want[512];
    snprintf(want, sizeof want,
             "kvsim: error: nothing to plot in '%s' (no timeseries.csv + requests.csv + "
             "summary.json of a run, no sweep.csv, no plan.csv)\n",
             dir);
    cr_assert_str_eq(r.err, want);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, not_a_directory)
{
    run_result r = run_kvsim("plot", src_path("traces/tiny.csv"), NULL);
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "' is not a directory\n"), "%s", r.err);
    cr_assert(strncmp(r.err, "kvsim: error: '", 15) == 0, "%s", r.err);
    run_result_free(&r);
}

Test(plot, usage_errors)
{
    run_result r = run_kvsim("plot", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "kvsim: error: kvsim plot needs an output DIR (see 'kvsim plot "
                            "--help')\n");
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--plot", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "kvsim: error: --plot needs --out DIR (the figures are drawn from "
                            "the files written there)\n");
    cr_assert_str_empty(r.out);
    run_result_free(&r);
    r = run_kvsim("plot", "--bogus", "/tmp", NULL);
    cr_assert_eq(r.status, 2);
    run_result_free(&r);
}

Test(plot, help)
{
    run_result r = run_kvsim("plot", "--help", NULL);
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "usage: kvsim plot DIR...", 24) == 0, "%s", r.out);
    cr_assert_str_empty(r.err);
    run_result_free(&r);
}

/* gnuplot exiting non-zero: one error line with its last message, no temporary left. */
Test(plot, gnuplot_failure_is_one_error_line)
{
    char *dir = make_temp_dir();
    copy_file(src_path("tests/data/plot/plan/plan.csv"), dir, "plan.csv");
    char *fake = write_file(dir, "fake-gnuplot",
                            "#!/bin/sh\n"
                            "echo 'plot x' >&2\n"
                            "echo '     ^' >&2\n"
                            "echo '\"plan_curve.gp\" line 7: something broke' >&2\n"
                            "exit 1\n");
    chmod(fake, 0755);
    char var[600];
    snprintf(var, sizeof var, "KVSIM_GNUPLOT=%s", fake);
    const char *env[] = {var, NULL};
    const char *args[] = {"plot", dir, NULL};
    run_result r = run_kvsim_env(env, args);
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "kvsim: error: gnuplot failed drawing 'plan_curve' (exit 1): "
                            "\"plan_curve.gp\" line 7: something broke\n");
    assert_clean(dir, true);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
    free(fake);
}

Test(plot, malformed_inputs)
{
    char *dir = make_temp_dir();
    char *csv = write_file(dir, "sweep.csv", "config,block_size,watermark\nx,16,0.01\n");
    run_result r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 1);
    char want[512];
    snprintf(want, sizeof want, "kvsim: error: %s: no column 'num_blocks'\n", csv);
    cr_assert_str_eq(r.err, want);
    run_result_free(&r);
    free(csv);

    csv = write_file(dir, "sweep.csv", "block_size,watermark\n16,0.01\n32\n");
    r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 1);
    snprintf(want, sizeof want, "kvsim: error: %s:3: 1 field, the header has 2\n", csv);
    cr_assert_str_eq(r.err, want);
    run_result_free(&r);
    free(csv);
    rm_rf(dir);
    free(dir);

    dir = make_temp_dir();
    csv = write_file(dir, "plan.csv",
                     "load,ttft_p99_s,tpot_p99_s,preemption_rate,meets_slo\n1,0.2,0.01,0,maybe\n");
    r = run_kvsim("plot", dir, NULL);
    cr_assert_eq(r.status, 1);
    snprintf(want, sizeof want, "kvsim: error: %s: meets_slo 'maybe' is not true or false\n", csv);
    cr_assert_str_eq(r.err, want);
    run_result_free(&r);
    free(csv);
    rm_rf(dir);
    free(dir);
}

Test(plot, wrong_scripts_override)
{
    char *dir = make_temp_dir();
    copy_file(src_path("tests/data/plot/plan/plan.csv"), dir, "plan.csv");
    const char *env[] = {"KVSIM_PLOTS=/nonexistent/plots", NULL};
    const char *args[] = {"plot", dir, NULL};
    run_result r = run_kvsim_env(env, args);
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "kvsim: error: KVSIM_PLOTS='/nonexistent/plots' is not a kvsim plots "
                            "directory (no common.gp)\n");
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* ---- the library directly ------------------------------------------------------------ */

Test(plot, detect)
{
    char *dir = make_temp_dir();
    cr_assert_eq(kv_plot_detect(dir), 0);
    cr_assert_eq(kv_plot_detect("/nonexistent"), 0);
    free(write_file(dir, "timeseries.csv", ""));
    free(write_file(dir, "requests.csv", ""));
    cr_assert_eq(kv_plot_detect(dir), 0);
    free(write_file(dir, "summary.json", "{}"));
    cr_assert_eq(kv_plot_detect(dir), KV_PLOT_RUN);
    free(write_file(dir, "sweep.csv", ""));
    free(write_file(dir, "plan.csv", ""));
    cr_assert_eq(kv_plot_detect(dir), KV_PLOT_RUN | KV_PLOT_SWEEP | KV_PLOT_PLAN);
    rm_rf(dir);
    free(dir);
}

/* ---- sweep --plot and plan --plot ----------------------------------------------------- */

Test(plot, sweep_plot_draws_the_watermark_chart)
{
    char *dir = make_temp_dir();
    run_result r = run_kvsim("sweep", src_path("traces/sharegpt_lengths_1000.csv"), "--rate", "6",
                             "--limit", "200", "--num-blocks", "600", "--watermark", "0,0.05",
                             "--out", dir, "--plot", "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.out, "--quiet: nothing on stdout");
    assert_figure(dir, "sweep_watermark");
    cr_assert(!has_file(dir, "sweep_block_size.png"), "one block size: no block-size chart");
    run_result_free(&r);
    r = run_kvsim("sweep", src_path("traces/tiny.csv"), "--watermark", "0,0.05", "--out", dir,
                  "--emit-jobs", "-", "--plot", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "kvsim: error: --plot needs a finished sweep: with --emit-jobs, run "
                            "the jobs, then 'kvsim merge DIR' and 'kvsim plot DIR'\n");
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, plan_plot_draws_the_curve)
{
    char *dir = make_temp_dir();
    run_result r =
        run_kvsim("plan", src_path("traces/sharegpt_lengths_1000.csv"), "--rate", "2", "--limit",
                  "60", "--num-blocks", "600", "--slo", "ttft_p99=2s", "--time-model",
                  "linear:0.002,0.00002,0.00000001", "--out", dir, "--plot", "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_figure(dir, "plan_curve");
    run_result_free(&r);
    r = run_kvsim("plan", src_path("traces/tiny.csv"), "--slo", "ttft_p99=2s", "--plot", NULL);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "kvsim: error: --plot needs --out DIR to write the figure into\n");
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* A missing gnuplot is an error code like any other (negative), which the CLI turns into
 * a note and exit 0. */
Test(plot, missing_gnuplot_is_a_negative_code)
{
    char *d = make_temp_dir();
    free(write_file(d, "sweep.csv", "config\n"));
    kv_plot_options o = {.scripts = NULL, .scripts_error = NULL, .gnuplot = NULL};
    kv_plot_report rep;
    kv_diag diag;
    cr_assert_eq(kv_plot_dir(d, &o, &rep, &diag), -KV_ENOPROG);
    cr_assert_str_eq(diag.msg, "gnuplot not found");
    rm_rf(d);
    free(d);
}

/* ---- a cluster (DESIGN §10 "Figures") ------------------------------------------------- */

Test(plot, cluster_run_draws_per_replica_figures)
{
    char *dir = make_temp_dir();
    /* Under sanitizers (an O(pool) invariant walk after every step of every replica) on
     * fewer rows and blocks: the figures are the same kinds. */
    const char *rows = KV_TEST_SANITIZED ? "60" : "120";
    const char *pool = KV_TEST_SANITIZED ? KV_TEST_SMALL_BLOCKS : "1500";
    run_result r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", rows,
                             "--num-blocks", pool, "--replicas", "3", "--router", "prefix", "--out",
                             dir, "--plot", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_empty(r.err);
    cr_assert(strstr(r.out, "cluster_blocks, cluster_replicas, latency_cdf (.png, .svg)"),
              "stdout: %s", r.out);
    assert_figure(dir, "cluster_blocks");
    assert_figure(dir, "cluster_replicas");
    assert_figure(dir, "latency_cdf");
    cr_assert(!has_file(dir, "blocks.png") && !has_file(dir, "pressure.png"),
              "a cluster's interleaved rows are not one replica's time series");
    assert_clean(dir, false);
    run_result_free(&r);
    /* More than 16 replicas: quantile bands instead of lines. */
    r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", rows,
                  "--num-blocks", pool, "--replicas", "17", "--out", dir, "--plot", "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_figure(dir, "cluster_blocks");
    char *svg = join(dir, "cluster_blocks.svg");
    char *text = read_file(svg, NULL);
    cr_assert(strstr(text, "P10 - P90") && !strstr(text, "replica 16"), "bands, not lines");
    free(text);
    free(svg);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

Test(plot, router_sweep_draws_the_comparison)
{
    char *dir = make_temp_dir();
    run_result r = run_kvsim("sweep", src_path("traces/mooncake_conv_500.jsonl"), "--limit",
                             KV_TEST_SANITIZED ? "30" : "120", "--num-blocks",
                             KV_TEST_SANITIZED ? KV_TEST_SMALL_BLOCKS : "1500", "--replicas", "2,3",
                             "--router", "round-robin,prefix,kv-cost", "--time-model", "fixed:0.01",
                             "--out", dir, "--plot", "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_figure(dir, "sweep_router");
    char *svg = join(dir, "sweep_router.svg");
    char *text = read_file(svg, NULL);
    cr_assert(strstr(text, "kv-cost") && strstr(text, "replicas 3"), "categories and groups");
    free(text);
    free(svg);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* ---- issue 13: titles, thinning, progress, panels, the plan's axis -------------------- */

/* A gnuplot that records what kvsim gives it: each call appends "NAME<TAB>VARS" to
 * rec/gnuplot.log and copies out's data files (NAME.dat.tmp-*) into rec/, then runs the
 * real gnuplot.  Returns the KVSIM_GNUPLOT=… setting (malloc'd). */
static char *recording_gnuplot(const char *rec, const char *out)
{
    char script[2048];
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "printf '%%s\\t%%s\\n' \"$(basename \"$3\" .gp)\" \"$2\" >> '%s/gnuplot.log'\n"
             "for f in '%s'/*.dat.tmp-*; do if [ -f \"$f\" ]; then cp \"$f\" '%s/'; fi; done\n"
             "exec gnuplot \"$@\"\n",
             rec, out, rec);
    char *path = write_file(rec, "gnuplot.sh", script);
    chmod(path, 0755);
    size_t n = strlen(path) + 32;
    char *env = malloc(n);
    snprintf(env, n, "KVSIM_GNUPLOT=%s", path);
    free(path);
    return env;
}

/* The -e variables kvsim gave figure name (from rec/gnuplot.log), malloc'd. */
static char *vars_of(const char *rec, const char *name)
{
    char *log_path = join(rec, "gnuplot.log");
    char *text = read_file(log_path, NULL);
    free(log_path);
    cr_assert(text, "gnuplot was not run");
    char *line = text, *found = NULL;
    size_t n = strlen(name);
    while (line && *line && !found) {
        char *end = strchr(line, '\n');
        if (strncmp(line, name, n) == 0 && line[n] == '\t') {
            size_t len = end ? (size_t)(end - line - n - 1) : strlen(line + n + 1);
            found = strndup(line + n + 1, len);
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
    cr_assert(found, "no gnuplot call for %s", name);
    return found;
}

/* The recorded data file rec/NAME.dat.tmp-* (its text, malloc'd). */
static char *data_of(const char *rec, const char *name)
{
    DIR *d = opendir(rec);
    cr_assert(d);
    struct dirent *e;
    char *text = NULL;
    size_t n = strlen(name);
    while ((e = readdir(d)) && !text)
        if (strncmp(e->d_name, name, n) == 0 && strncmp(e->d_name + n, ".dat.tmp-", 9) == 0) {
            char *p = join(rec, e->d_name);
            text = read_file(p, NULL);
            free(p);
        }
    closedir(d);
    cr_assert(text, "no data file %s recorded", name);
    return text;
}

/* A recording directory and the output directory inside it (made when make_out). */
typedef struct recording {
    char *rec, *out;
} recording;

static recording recording_new(bool make_out)
{
    recording x = {make_temp_dir(), NULL};
    x.out = join(x.rec, "out");
    if (make_out)
        cr_assert_eq(mkdir(x.out, 0755), 0);
    return x;
}

static void recording_free(recording *x)
{
    rm_rf(x->rec);
    free(x->rec);
    free(x->out);
}

/* Run kvsim with the recording gnuplot; out = rec/out. */
static run_result run_recorded(const char *rec, const char *out, const char *const *args)
{
    char *env0 = recording_gnuplot(rec, out);
    const char *env[] = {env0, NULL};
    run_result r = run_kvsim_env(env, args);
    free(env0);
    return r;
}

static char *svg_text(const char *dir, const char *name)
{
    char file[128];
    snprintf(file, sizeof file, "%s.svg", name);
    char *p = join(dir, file);
    char *t = read_file(p, NULL);
    cr_assert(t, "%s missing", p);
    free(p);
    return t;
}

/* Every figure's title names model, GPU, TP/PP, KV dtype and block size (issue 13). */
Test(plot, every_run_figure_title_names_the_setup)
{
    recording x = recording_new(false);
    const char *rec = x.rec, *out = x.out;
    const char *args[] = {"run",
                          src_path("traces/mooncake_conv_500.jsonl"),
                          "--limit",
                          KV_TEST_SANITIZED ? "20" : "60", /* titles do not need more */
                          "--kv-dtype",
                          "fp8",
                          "--block-size",
                          "32",
                          "--out",
                          out,
                          "--plot",
                          "-q",
                          NULL};
    run_result r = run_recorded(rec, out, args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *want = "llama-3-8b on H100-SXM · TP1 PP1 · fp8 KV · block 32 tokens";
    for (int i = 0; run_figures[i]; i++) {
        char *svg = svg_text(out, run_figures[i]);
        cr_assert(strstr(svg, want), "%s.svg's title lacks '%s'", run_figures[i], want);
        free(svg);
    }
    assert_clean(out, false);
    run_result_free(&r);
    recording_free(&x);
}

Test(plot, cluster_figure_titles_name_the_setup)
{
    char *dir = make_temp_dir();
    run_result r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "60",
                             "--num-blocks", "1500", "--replicas", "2", "--tp", "2", "--out", dir,
                             "--plot", "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *figs[] = {"cluster_blocks", "cluster_replicas", "latency_cdf"};
    for (int i = 0; i < 3; i++) {
        char *svg = svg_text(dir, figs[i]);
        cr_assert(strstr(svg, "llama-3-8b on H100-SXM · TP2 PP1 · bf16 KV · block 16 tokens"),
                  "%s.svg", figs[i]);
        free(svg);
    }
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* A real sweep's sweep.csv without setup columns: the title comes from the
 * configurations' summary.json; and a metric that is 0 everywhere is left out. */
Test(plot, sweep_titles_from_summaries_and_no_empty_panels)
{
    recording x = recording_new(false);
    const char *rec = x.rec, *out = x.out;
    const char *args[] = {"sweep",
                          src_path("traces/sharegpt_lengths_1000.csv"),
                          "--rate",
                          "2",
                          "--limit",
                          "60",
                          "--block-size",
                          "16,32",
                          "--gpu",
                          "A100-80G",
                          "--out",
                          out,
                          "--plot",
                          "-q",
                          NULL};
    run_result r = run_recorded(rec, out, args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char *v = vars_of(rec, "sweep_block_size");
    cr_assert(strstr(v, "llama-3-8b on A100-80G · TP1 PP1 · bf16 KV"), "%s", v);
    cr_assert(!strstr(v, "block 16 tokens"), "block size is on x: %s", v);
    /* ShareGPT lengths carry no content: no hit; a roomy pool: no preemption. */
    cr_assert(strstr(v, "panels = '3 4 5 6';"), "%s", v);
    cr_assert(strstr(v, "not drawn, 0 in every configuration: prefix hit rate, preemptions"), "%s",
              v);
    char *svg = svg_text(out, "sweep_block_size");
    cr_assert(!strstr(svg, "preemptions (count)") && !strstr(svg, "hit rate (% of prompt"),
              "empty panels drawn");
    cr_assert(strstr(svg, "TTFT P99 (s)"));
    free(svg);
    free(v);
    run_result_free(&r);
    recording_free(&x);
}

/* sweep.csv's setup columns (the fixture has them) name the title; a setup column that
 * varies is a line group instead. */
Test(plot, sweep_titles_from_setup_columns)
{
    recording x = recording_new(true);
    const char *rec = x.rec, *out = x.out;
    copy_file(src_path("tests/data/plot/sweep/sweep.csv"), out, "sweep.csv");
    const char *args[] = {"plot", out, NULL};
    run_result r = run_recorded(rec, out, args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char *v = vars_of(rec, "sweep_watermark");
    cr_assert(strstr(v, "20 configurations · llama-3-8b on H100-SXM · TP1 PP1 · bf16 KV"), "%s", v);
    free(v);
    run_result_free(&r);
    /* Half the rows on another GPU: the GPU leaves the title and splits the groups. */
    char *text = read_file(src_path("tests/data/plot/sweep/sweep.csv"), NULL);
    char *o = calloc(strlen(text) + 64, 1);
    int row = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), row++) {
        char *gpu = strstr(line, ",H100-SXM,");
        if (gpu && row % 2) {
            strncat(o, line, (size_t)(gpu - line));
            strcat(o, ",A100-80G,");
            strcat(o, gpu + strlen(",H100-SXM,"));
        } else {
            strcat(o, line);
        }
        strcat(o, "\n");
    }
    rm_rf(rec); /* the log and data too; the dir again for the next run */
    cr_assert_eq(mkdir(rec, 0755), 0);
    cr_assert_eq(mkdir(out, 0755), 0);
    free(write_file(out, "sweep.csv", o));
    r = run_recorded(rec, out, args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    v = vars_of(rec, "sweep_block_size");
    cr_assert(!strstr(v, "on H100-SXM") && strstr(v, "llama-3-8b · TP1 PP1 · bf16 KV"), "%s", v);
    cr_assert(strstr(v, "A100-80G") && strstr(v, "H100-SXM"), "the GPU in the legend: %s", v);
    free(v);
    free(o);
    free(text);
    run_result_free(&r);
    recording_free(&x);
}

/* The plan: requests/s on x (the load multiple on top), the setup in the title. */
Test(plot, plan_axis_is_requests_per_second)
{
    recording x = recording_new(true);
    const char *rec = x.rec, *out = x.out;
    copy_file(src_path("tests/data/plot/plan/plan.csv"), out, "plan.csv");
    copy_file(src_path("tests/data/plot/plan/plan.json"), out, "plan.json");
    const char *args[] = {"plot", out, NULL};
    run_result r = run_recorded(rec, out, args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char *v = vars_of(rec, "plan_curve");
    cr_assert(strstr(v, "xcol = 'arrival_rate_req_s';"), "%s", v);
    cr_assert(strstr(v, "base_rate = 4.62"), "rate per unit of load: %s", v);
    char *svg = svg_text(out, "plan_curve");
    cr_assert(strstr(svg, "arrival rate (requests/s)"));
    cr_assert(strstr(svg, "load (multiple of the trace arrival rate)"), "the second axis");
    cr_assert(strstr(svg, "llama-3-8b on H100-SXM · TP1 PP1 · bf16 KV · block 16 tokens"));
    cr_assert(strstr(svg, "answer: 5.78 req/s (load 1.25×)"));
    free(svg);
    free(v);
    run_result_free(&r);
    recording_free(&x);
}

/* ---- the thinning (src/plot_series.c), through the library ----------------------------- */

/* A timeseries.csv of n rows, one every 10 ms: physical blocks 1000 except a spike to
 * 99999 at row spike and a dip to 3 at row dip; logical = 2 × physical; cumulative
 * preemptions +1 every 7th row, deferrals +2 every 11th. */
static void write_timeseries(const char *dir, size_t n, size_t spike, size_t dip)
{
    char *path = join(dir, "timeseries.csv");
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("time_s,step,running,waiting,physical_blocks,logical_blocks,cached_free_blocks,"
          "free_blocks,usage,effective_tokens,scheduled_tokens,preemptions,evictions,"
          "prefix_hits,prefix_queries,watermark_deferrals,admitted,finished\n",
          f);
    unsigned long pre = 0, def = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long phys = i == spike ? 99999 : i == dip ? 3 : 1000;
        pre += i % 7 == 0;
        def += i % 11 == 0 ? 2 : 0;
        fprintf(f, "%.9f,%zu,%zu,%zu,%lu,%lu,5,0,0.5,0,0,%lu,0,0,0,%lu,0,0\n", (double)i * 0.01,
                i + 1, i % 3, i % 5, phys, 2 * phys, pre, def);
    }
    cr_assert_eq(fclose(f), 0);
    free(path);
}

typedef struct series_data {
    size_t lines;
    double t_last, phys_min, phys_max, mean_min, mean_max, log_max, pre_sum, def_sum;
} series_data;

static series_data read_series_data(const kv__series_info *si)
{
    series_data d = {0, 0, 1e300, -1, 1e300, -1, -1, 0, 0};
    FILE *f = fopen(si->path[0], "r");
    cr_assert(f);
    double v[16];
    while (fscanf(f, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &v[0],
                  &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11],
                  &v[12], &v[13], &v[14], &v[15]) == 16) {
        d.lines++;
        d.t_last = v[0];
        d.phys_min = v[1] < d.phys_min ? v[1] : d.phys_min;
        d.phys_max = v[2] > d.phys_max ? v[2] : d.phys_max;
        d.mean_min = v[3] < d.mean_min ? v[3] : d.mean_min;
        d.mean_max = v[3] > d.mean_max ? v[3] : d.mean_max;
        d.log_max = v[5] > d.log_max ? v[5] : d.log_max;
    }
    fclose(f);
    f = fopen(si->path[1], "r");
    cr_assert(f);
    double t, p, q;
    while (fscanf(f, "%lf %lf %lf", &t, &p, &q) == 3) {
        d.pre_sum += p;
        d.def_sum += q;
    }
    fclose(f);
    return d;
}

/* 100,000 rows into 1000 pixel columns: the single-row spike and dip survive as the
 * columns' max and min, the mean line stays near 1000, and the bins count every increase
 * exactly. */
/* The CSV reader of plot's inputs: quoted fields ("" a quote, newlines kept, blanks around
 * dropped), blank lines skipped, and each malformed record named by file and line. */
Test(plot, table_reader_quotes_blanks_and_errors)
{
    char *dir = make_temp_dir();
    free(write_file(dir, "t.csv",
                    "a, \"b,c\" ,d\n\n 1 ,\"x\"\"y\",\"two\nlines\"\r\n\"\",,\"\"\n"));
    kv__table t;
    kv_diag d;
    cr_assert_eq(kv__table_load(&t, dir, "t.csv", &d), 0, "%s", d.msg);
    cr_assert_eq(t.n_cols, 3);
    cr_assert_eq(t.n_rows, 2);
    const char *want[] = {"a", "b,c", "d", "1", "x\"y", "two\nlines", "", "", ""};
    for (size_t k = 0; k < 9; k++)
        cr_assert_str_eq(t.cell[k], want[k], "cell %zu", k);
    kv__table_release(&t);
    const char *bad[][2] = {
        {"a,b\n1,\"open\n", "u.csv:2: unterminated quoted field"},
        {"a,b\n\"x\"y,1\n", "u.csv:2: text after a closing quote"},
        {"a,b\n1,2\n\"q\nq\",2,3\n", "u.csv:3: 3 fields, the header has 2"},
        {"\n\n", "u.csv: empty file (no header)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *path = write_file(dir, "u.csv", bad[i][0]);
        cr_assert_eq(kv__table_load(&t, dir, "u.csv", &d), -KV_EPARSE, "%s", bad[i][0]);
        kv__table_release(&t);
        char msg[512];
        snprintf(msg, sizeof msg, "%s/%s", dir, bad[i][1]);
        cr_assert_str_eq(d.msg, msg);
        free(path);
    }
    rm_rf(dir);
    free(dir);
}

Test(plot, thinning_keeps_the_peaks)
{
    char *dir = make_temp_dir();
    size_t n = 100000;
    write_timeseries(dir, n, 54321, 77777);
    kv__figlist figs;
    memset(&figs, 0, sizeof figs);
    kv__series_info si;
    kv_diag d;
    cr_assert_eq(kv__plot_series(dir, (double)(n - 1) * 0.01, NULL, &figs, &si, &d), 0, "%s",
                 d.msg);
    cr_assert(si.thinned);
    cr_assert_eq(si.rows, (double)n);
    series_data s = read_series_data(&si);
    cr_assert_eq(s.lines, KV__PIXEL_COLS, "one line per pixel column: %zu", s.lines);
    cr_assert_eq(s.phys_max, 99999, "the spike survives: %g", s.phys_max);
    cr_assert_eq(s.phys_min, 3, "the dip survives: %g", s.phys_min);
    cr_assert_eq(s.log_max, 2 * 99999);
    /* 100 rows a column: the spike's and the dip's columns average them in */
    cr_assert(s.mean_min > 989.9 && s.mean_min < 990.1, "mean line min %g", s.mean_min);
    cr_assert(s.mean_max > 1989.9 && s.mean_max < 1990.1, "mean line max %g", s.mean_max);
    cr_assert_eq(s.pre_sum, (double)((n + 6) / 7), "every preemption binned once");
    cr_assert_eq(s.def_sum, 2.0 * (double)((n + 10) / 11));
    cr_assert_eq(si.max[0], 99999);
    kv__figlist_release(&figs);
    assert_clean(dir, false); /* the data files are removed with the list */
    rm_rf(dir);
    free(dir);
}

/* A short series is written row by row: nothing thinned. */
Test(plot, short_series_is_not_thinned)
{
    char *dir = make_temp_dir();
    write_timeseries(dir, 1500, 10, 20);
    kv__figlist figs;
    memset(&figs, 0, sizeof figs);
    kv__series_info si;
    kv_diag d;
    cr_assert_eq(kv__plot_series(dir, 14.99, NULL, &figs, &si, &d), 0, "%s", d.msg);
    cr_assert(!si.thinned);
    series_data s = read_series_data(&si);
    cr_assert_eq(s.lines, 1500);
    cr_assert_eq(s.mean_max, 99999, "a row is its own mean");
    cr_assert_eq(s.t_last, 14.99);
    kv__figlist_release(&figs);
    rm_rf(dir);
    free(dir);
}

Test(plot, series_errors_name_file_and_line)
{
    char *dir = make_temp_dir();
    free(write_file(dir, "timeseries.csv", "time_s,running\n0.1,2\n"));
    kv__figlist figs;
    memset(&figs, 0, sizeof figs);
    kv__series_info si;
    kv_diag d;
    char want[512];
    cr_assert_eq(kv__plot_series(dir, 1, NULL, &figs, &si, &d), -KV_EPARSE);
    snprintf(want, sizeof want, "%s/timeseries.csv: no column 'physical_blocks'", dir);
    cr_assert_str_eq(d.msg, want);
    write_timeseries(dir, 3, 0, 0);
    char *p = join(dir, "timeseries.csv");
    FILE *f = fopen(p, "a");
    fputs("0.5,4,x,0,1,1,0,0,0,0,0,0,0,0,0,0,0,0\n", f);
    fclose(f);
    cr_assert_eq(kv__plot_series(dir, 1, NULL, &figs, &si, &d), -KV_EPARSE);
    snprintf(want, sizeof want, "%s:5: not a timeseries row", p);
    cr_assert_str_eq(d.msg, want);
    kv__figlist_release(&figs);
    free(p);
    rm_rf(dir);
    free(dir);
}

/* The CDFs: columns found by name (whatever columns requests.csv gained), finished rows
 * with a positive value only, thinned with the first and the largest value kept. */
Test(plot, latency_cdf_is_thinned_and_keeps_the_extremes)
{
    char *dir = make_temp_dir();
    char *path = join(dir, "requests.csv");
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("id,extra,status,ttft_s,tpot_s\n", f);
    size_t n = 200000;
    for (size_t i = 0; i < n; i++)
        fprintf(f, "\"r,%zu\",x,%s,%.6f,%s\n", i,
                i % 10 == 9   ? "unfinished"
                : i % 10 == 8 ? "rejected"
                              : "finished",
                0.001 * (double)(i + 1), i % 4 == 0 ? "" : "0.02");
    fclose(f);
    kv__figlist figs;
    memset(&figs, 0, sizeof figs);
    kv__latency_info li;
    kv_diag d;
    cr_assert_eq(kv__plot_latency(dir, NULL, &figs, &li, &d), 0, "%s", d.msg);
    cr_assert_eq(li.n[0], 160000, "finished rows only: %g", li.n[0]);
    cr_assert_eq(li.lo[0], 0.001);
    cr_assert_eq(li.hi[0], 0.001 * (double)(n - 2), "the largest finished TTFT");
    cr_assert_eq(li.n[1], 120000, "an empty TPOT is undefined: %g", li.n[1]);
    FILE *c = fopen(li.path[0], "r");
    double x, y, first = -1, last_x = 0, last_y = 0;
    size_t pts = 0;
    while (fscanf(c, "%lf %lf", &x, &y) == 2) {
        first = first < 0 ? x : first;
        last_x = x;
        last_y = y;
        pts++;
    }
    fclose(c);
    cr_assert(pts > 100 && pts < 4100, "thinned to the plot's resolution: %zu", pts);
    cr_assert_eq(first, 0.001);
    cr_assert_eq(last_x, li.hi[0]);
    cr_assert_eq(last_y, 1.0);
    c = fopen(li.path[1], "r");
    cr_assert_eq(fscanf(c, "%lf %lf", &x, &y), 2);
    cr_assert(x == 0.02 && y == 1.0, "one value: one step (%g, %g)", x, y);
    fclose(c);
    kv__figlist_release(&figs);
    free(path);
    rm_rf(dir);
    free(dir);
}

/* ---- what the run figures are given ----------------------------------------------------- */

/* A content-less trace never hits: no cached-free band.  Mooncake's hash_ids do. */
Test(plot, cached_band_only_when_something_can_hit)
{
    recording x = recording_new(false);
    const char *rec = x.rec, *out = x.out;
    const char *a1[] = {"run",
                        src_path("traces/sharegpt_lengths_1000.csv"),
                        "--rate",
                        "2",
                        "--limit",
                        "50",
                        "--out",
                        out,
                        "--plot",
                        "-q",
                        KV_TEST_SMALL_POOL_ARGS,
                        NULL};
    run_result r = run_recorded(rec, out, a1);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char *v = vars_of(rec, "blocks");
    cr_assert(strstr(v, "show_cached = 0;"), "%s", v);
    cr_assert(strstr(v, "shared = 0;"), "no block shared: %s", v);
    char *svg = svg_text(out, "blocks");
    cr_assert(!strstr(svg, "prefix still cached"), "no band for a content-less trace");
    free(svg);
    free(v);
    run_result_free(&r);
    rm_rf(rec);
    cr_assert_eq(mkdir(rec, 0755), 0);
    /* Under sanitizers 20 rows on the default pool (every one fits): cheaper walks. */
    const char *rows = KV_TEST_SANITIZED ? "20" : "60";
    const char *a2[] = {"run",     src_path("traces/mooncake_conv_500.jsonl"),
                        "--limit", rows,
                        "--out",   out,
                        "--plot",  "-q",
                        NULL};
    r = run_recorded(rec, out, a2);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    v = vars_of(rec, "blocks");
    cr_assert(strstr(v, "show_cached = 1;") && strstr(v, "shared = 1;"), "%s", v);
    svg = svg_text(out, "blocks");
    cr_assert(strstr(svg, "prefix still cached"));
    free(svg);
    free(v);
    /* requests.csv's columns are found by name: every finished request is drawn. */
    v = vars_of(rec, "latency_cdf");
    char fin[40], ttft[40];
    snprintf(fin, sizeof fin, "n_finished = %s;", rows);
    snprintf(ttft, sizeof ttft, "n_ttft = %s;", rows);
    cr_assert(strstr(v, fin) && strstr(v, ttft), "%s", v);
    free(v);
    char *cdf = data_of(rec, "cdf_ttft");
    cr_assert(strchr(cdf, '\n'), "a CDF was written");
    free(cdf);
    run_result_free(&r);
    recording_free(&x);
}

/* Queue tics with short labels (800k, not 800000, which pushed the y label off the
 * figure); latencies in human units, never an exponent ("2.47e+04 s"). */
Test(plot, long_latencies_in_human_units)
{
    char *dir = make_temp_dir();
    /* Under sanitizers the first 100 rows in 4,000 blocks: still TTFTs of minutes. */
    run_result r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--time-scale",
                             "0.05", "--limit", KV_TEST_SANITIZED ? "100" : "500", "--num-blocks",
                             KV_TEST_SANITIZED ? "4000" : "28181", "--out", dir, "--plot", "-q",
                             NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char *svg = svg_text(dir, "latency_cdf");
    cr_assert(!strstr(svg, "e+0"), "an exponent in the latency figure");
    cr_assert(strstr(svg, " min</") || strstr(svg, " h</"), "TTFT in minutes or hours");
    free(svg);
    svg = svg_text(dir, "pressure");
    cr_assert(!strstr(svg, "e+0"));
    free(svg);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* --progress: a line per file read and per figure drawn, on stderr; nothing without it
 * when stderr is not a terminal (the other tests check that stderr stays empty). */
Test(plot, progress_lines)
{
    char *dir = make_temp_dir();
    run_result r = run_kvsim("run", src_path("traces/tiny_shared.jsonl"), "--out", dir, "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    run_result_free(&r);
    r = run_kvsim("plot", "--progress", dir, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char want[600];
    const char *lines[] = {"reading timeseries.csv: 0% of ", "reading timeseries.csv: 100% of ",
                           "reading requests.csv: 0% of ", "reading requests.csv: 100% of ",
                           "drawing: 3 of 3 figures done\n"};
    for (int i = 0; i < 5; i++) {
        snprintf(want, sizeof want, "kvsim plot: %s: %s", dir, lines[i]);
        cr_assert(strstr(r.err, want), "no '%s' in: %s", want, r.err);
    }
    cr_assert(strstr(r.out, "figures in "), "%s", r.out);
    run_result_free(&r);
    r = run_kvsim("plot", "--progress", "-q", dir, NULL);
    cr_assert(strstr(r.err, "drawing: 3 of 3"), "--progress wins over -q for progress: %s", r.err);
    cr_assert_str_empty(r.out);
    run_result_free(&r);
    rm_rf(dir);
    free(dir);
}

/* A cluster's rows interleave replicas: each replica's line is its own rows' mean, and
 * the band holds the peak of any replica (DESIGN §10 "Figures", issue 13). */
Test(plot, replica_series_keep_each_replicas_peak)
{
    char *dir = make_temp_dir();
    char *path = join(dir, "timeseries.csv");
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("time_s,replica,step,running,waiting,physical_blocks\n", f);
    for (size_t i = 0; i < 40000; i++) /* replica i % 2: 100 or 200 blocks, one spike */
        fprintf(f, "%.6f,%zu,%zu,0,0,%d\n", (double)i * 0.001, i % 2, i / 2,
                i == 22223 ? 5000
                : i % 2    ? 200
                           : 100);
    fclose(f);
    kv__figlist figs;
    memset(&figs, 0, sizeof figs);
    kv__series_info si;
    kv_diag d;
    cr_assert_eq(kv__plot_replica_series(dir, 39.999, 2, NULL, &figs, &si, &d), 0, "%s", d.msg);
    FILE *c = fopen(si.path[0], "r");
    double t, lo, hi, m0, m1, top = 0, low = 1e9, m0max = 0, m1min = 1e9;
    size_t lines = 0;
    while (fscanf(c, "%lf %lf %lf %lf %lf", &t, &lo, &hi, &m0, &m1) == 5) {
        lines++;
        top = hi > top ? hi : top;
        low = lo < low ? lo : low;
        m0max = m0 > m0max ? m0 : m0max;
        m1min = m1 < m1min ? m1 : m1min;
    }
    fclose(c);
    cr_assert_eq(lines, KV__PIXEL_COLS);
    cr_assert_eq(top, 5000, "replica 1's spike survives: %g", top);
    cr_assert_eq(low, 100);
    cr_assert_eq(m0max, 100, "replica 0's line is its own: %g", m0max);
    cr_assert_eq(m1min, 200, "replica 1's line is its own: %g", m1min);
    cr_assert_eq(kv__plot_replica_series(dir, 39.999, 1, NULL, &figs, &si, &d), -KV_EPARSE);
    kv__figlist_release(&figs);
    free(path);
    rm_rf(dir);
    free(dir);
}
