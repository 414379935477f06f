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
    run_result r = run_kvsim("plan", src_path("traces/sharegpt_lengths_1000.csv"), "--rate", "2",
                             "--limit", "60", "--num-blocks", "600", "--slo", "ttft_p99=2s",
                             "--time-model", "linear:0.002,0.00002,0.00000001", "--out", dir,
                             "--plot", "-q", NULL);
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
    run_result r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "120",
                             "--num-blocks", "1500", "--replicas", "3", "--router", "prefix",
                             "--out", dir, "--plot", NULL);
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
    r = run_kvsim("run", src_path("traces/mooncake_conv_500.jsonl"), "--limit", "120",
                  "--num-blocks", "1500", "--replicas", "17", "--out", dir, "--plot", "-q", NULL);
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
                             "120", "--num-blocks", "1500", "--replicas", "2,3", "--router",
                             "round-robin,prefix,kv-cost", "--time-model", "fixed:0.01",
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
