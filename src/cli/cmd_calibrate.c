/* kvsim calibrate RUN...: fit the roofline time model to the user's own benchmark runs
 * (issue 11 item 4; core in src/calibrate.c, readers in src/benchfile.c).  Flow: options
 * (the framework: this command's rows, then the same simulation and model groups `kvsim
 * run` takes) → setup and engine config (usage errors before any file is read) → every
 * run file read and its send times rebuilt → the fit → the table and, last, the
 * `--time-model` line `kvsim run` accepts verbatim (and --json FILE, atomically). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "kvsim/calibrate.h"
#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"

typedef struct cal_cmd {
    const char *json; /* --json FILE, or NULL */
    kv_cal_options co;
    kv_bench_rule rule;
    kv_sim_options so;
    kv_setup_options mo;
} cal_cmd;

enum { OPT_FIT = 1, OPT_HOLDOUT, OPT_WARM, OPT_MAX_REPLAYS, OPT_ARRIVALS, OPT_SEED };

static const cli_opt options[] = {
    {"fit", 0, "KEYS", CLI_ID(OPT_FIT),
     "roofline keys to fit (default overhead,mbu): overhead,\n"
     "seq_overhead, layer_lat (seconds), mfu, mbu (factors on\n"
     "the GPU preset's values)"},
    {"holdout", 0, "H", CLI_ID(OPT_HOLDOUT),
     "none (default: fit every run) or alternate (fit runs 1,\n"
     "3, 5, ...; report runs 2, 4, ... as held out)"},
    {"warm", 0, "W", CLI_ID(OPT_WARM),
     "the prefix cache at each run's start: none (default:\n"
     "cold), first (after the client's single-prompt test,\n"
     "request 0) or previous (the runs ran in this order on\n"
     "one server with the same prompts: each after the last)"},
    {"max-replays", 0, "N", CLI_ID(OPT_MAX_REPLAYS),
     "most run replays the search may spend (default 2000)"},
    {"arrivals", 0, "R", CLI_ID(OPT_ARRIVALS),
     "how a JSON run's sends are rebuilt: serve (default:\n"
     "vllm bench serve, delays normalised to n / rate) or\n"
     "legacy (benchmark_serving.py: first at 0, raw gaps)"},
    {"seed", 0, "N", CLI_ID(OPT_SEED),
     "seed of the rebuilt send times (default 0, vllm bench\n"
     "serve's)"},
    {"json", 0, "FILE", CLI_FILE(cal_cmd, json),
     "also write the result as JSON to FILE (atomically)"},
    {0},
};

static const cli_section sections[] = {
    {"calibration", options,
     "Each RUN is a `vllm bench serve --save-result --save-detailed` JSON or a CSV\n"
     "with the header send_s,prompt_len,output_len,ttft_s,e2e_s.  The model, GPU and\n"
     "scheduler options are kvsim run's; --time-model is the starting point (a\n"
     "roofline).\n"},
    {0},
};

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    cal_cmd *c = target;
    switch (opt->id) {
    case OPT_FIT: {
        int keys[KV_CAL_N_KEYS];
        size_t n;
        kv_diag d;
        if (kv_cal_keys_parse(arg, keys, &n, &d) != 0)
            return cli_diag(CLI_USAGE, &d);
        c->co.fit = arg;
        return CLI_OK;
    }
    case OPT_HOLDOUT:
        if (strcmp(arg, "none") == 0 || strcmp(arg, "alternate") == 0) {
            c->co.holdout = arg[0] == 'a' ? KV_CAL_HOLDOUT_ALTERNATE : KV_CAL_HOLDOUT_NONE;
            return CLI_OK;
        }
        return cli_error(CLI_USAGE, "--holdout: '%s' is not none or alternate", arg);
    case OPT_WARM:
        if (kv_cal_warm_parse(arg, &c->co.warm) == 0)
            return CLI_OK;
        return cli_error(CLI_USAGE, "--warm: '%s' is not none, first or previous", arg);
    case OPT_MAX_REPLAYS:
        return cli_parse_u32(opt->name, arg, 1, 10000000, &c->co.max_replays);
    case OPT_SEED:
        return cli_parse_u64(opt->name, arg, 0, UINT64_MAX, &c->so.trace.seed);
    default: /* OPT_ARRIVALS */
        if (strcmp(arg, "serve") == 0 || strcmp(arg, "legacy") == 0) {
            c->rule = arg[0] == 's' ? KV_BENCH_RULE_SERVE : KV_BENCH_RULE_LEGACY;
            return CLI_OK;
        }
        return cli_error(CLI_USAGE, "--arrivals: '%s' is not serve or legacy", arg);
    }
}

static const cli_group group = {sections, handle, NULL};

static void init(void *state)
{
    cal_cmd *c = state;
    kv_cal_options_init(&c->co);
    c->rule = KV_BENCH_RULE_SERVE;
    kv_sim_options_init(&c->so);
    c->so.trace.seed = 0; /* vllm bench serve's default --seed */
    kv_setup_options_init(&c->mo);
}

/* The trace-reading options of the shared group have no meaning here; --seed is this
 * command's own (default 0). */
static const char *const omit[] = {"format", "trace-block-size", "limit", "time-scale",
                                   "rate",   "shared-prefix",    "seed", NULL};

/* ---- the report ------------------------------------------------------------------------ */

static double shown(int k, double v)
{
    return v * kv_cal_metric_infos[k].scale;
}

static void print_run(const kv_cal_run *r, size_t i)
{
    printf("\nrun %zu: %s (%s): %zu requests replayed, %zu failed skipped", i + 1, r->bench->path,
           r->held_out ? "held out" : "fitted", r->n_replayed, r->bench->n_failed);
    if (r->n_warm)
        printf(", after %zu warm-up prompt%s", r->n_warm, r->n_warm == 1 ? "" : "s");
    printf("\n");
    printf("  %-18s %11s %11s %11s %11s %10s\n", "metric", "measured", "before", "after",
           "err before", "err after");
    for (int k = 0; k < KV_CAL_N_METRICS; k++) {
        const kv_cal_metric_info *m = &kv_cal_metric_infos[k];
        char label[40];
        snprintf(label, sizeof label, "%s%s%s", m->label, strcmp(m->unit, "ms") ? "" : " ",
                 strcmp(m->unit, "ms") ? "" : "ms");
        double meas = r->measured.v[k];
        if (!isfinite(meas)) { /* TPOT, ITL of single-token outputs */
            printf("  %-18s %11s\n", label, "-");
            continue;
        }
        printf("  %-18s %11.2f %11.2f %11.2f %9.1f %% %8.1f %%\n", label, shown(k, meas),
               shown(k, r->before.v[k]), shown(k, r->after.v[k]), (r->before.v[k] / meas - 1) * 100,
               (r->after.v[k] / meas - 1) * 100);
    }
}

/* Mean absolute percentage error per metric over the runs held out (or not). */
static void print_mape(const kv_cal_result *res, bool held_out, bool after, const char *name)
{
    double sum[KV_CAL_N_METRICS] = {0};
    size_t n[KV_CAL_N_METRICS] = {0};
    for (size_t i = 0; i < res->n_runs; i++) {
        const kv_cal_run *r = &res->runs[i];
        if (r->held_out != held_out)
            continue;
        for (int k = 0; k < KV_CAL_N_METRICS; k++) {
            double p = after ? r->after.v[k] : r->before.v[k], m = r->measured.v[k];
            if (isfinite(p) && isfinite(m) && m > 0) {
                sum[k] += fabs(p / m - 1) * 100;
                n[k]++;
            }
        }
    }
    printf("  %-18s", name);
    for (int k = 0; k < KV_CAL_N_METRICS; k++)
        if (n[k])
            printf(" %11.1f", sum[k] / (double)n[k]);
        else
            printf(" %11s", "-");
    printf("\n");
}

static void print_result(const kv_cal_result *res)
{
    size_t held = 0;
    for (size_t i = 0; i < res->n_runs; i++)
        held += res->runs[i].held_out;
    printf("calibrated on %zu of %zu runs (%zu held out), %u replays%s\n", res->n_runs - held,
           res->n_runs, held, (unsigned)res->replays,
           res->budget_spent ? " (stopped by --max-replays)" : "");
    printf("root mean square of ln(predicted / measured) on the fitted runs: %.4f before, "
           "%.4f after\n",
           res->loss_before, res->loss_after);
    for (size_t j = 0; j < res->n_keys; j++) {
        int k = res->keys[j];
        if (kv_cal_key_absolute(k))
            printf("  %-13s %.6g s (base %.6g s)\n", kv_cal_key_name(k), res->fitted[j],
                   res->base[j]);
        else
            printf("  %-13s %.6g x the base %.6g = %.6g\n", kv_cal_key_name(k), res->fitted[j],
                   res->base[j], fmin(1.0, res->fitted[j] * res->base[j]));
    }
    for (size_t i = 0; i < res->n_runs; i++)
        print_run(&res->runs[i], i);
    printf("\n  %-18s", "MAPE %");
    for (int k = 0; k < KV_CAL_N_METRICS; k++)
        printf(" %11s", kv_cal_metric_infos[k].name);
    printf("\n");
    print_mape(res, false, false, "fitted, before");
    print_mape(res, false, true, "fitted, after");
    if (held) {
        print_mape(res, true, false, "held out, before");
        print_mape(res, true, true, "held out, after");
    }
    printf("--time-model %s\n", res->after_model);
}

/* ---- running ---------------------------------------------------------------------------- */

static int load_runs(const cal_cmd *c, int argc, char **argv, kv_bench **b)
{
    kv_diag d;
    for (int i = 0; i < argc; i++) {
        int rc = kv_bench_load(&b[i], argv[i], &d);
        if (rc == 0)
            rc = kv_bench_sends(b[i], c->rule, (uint32_t)c->so.trace.seed, &d);
        if (rc != 0)
            return cli_diag(CLI_RUNTIME, &d);
    }
    return CLI_OK;
}

static int exec(void *state, int argc, char **argv)
{
    const cal_cmd *c = state;
    kv_setup setup;
    kv_engine_config check;
    if (c->so.trace.seed > UINT32_MAX)
        return cli_error(CLI_USAGE, "--seed: numpy's legacy seeding takes at most %u, got %llu",
                         (unsigned)UINT32_MAX, (unsigned long long)c->so.trace.seed);
    int rc = cli_model_resolve(&c->mo, &setup);
    if (rc == CLI_OK) /* option errors before any file is read */
        rc = cli_engine_config(&c->so, &setup, &check);
    if (rc == CLI_OK && c->co.holdout == KV_CAL_HOLDOUT_ALTERNATE && argc < 2)
        rc = cli_error(CLI_USAGE, "--holdout alternate needs at least two runs, got %d", argc);
    kv_diag d;
    if (rc == CLI_OK && c->json && kv_afile_check_target(c->json, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d); /* before the work */
    if (rc != CLI_OK)
        return rc;
    kv_bench **b = kv_xcalloc((size_t)argc, sizeof *b);
    rc = load_runs(c, argc, argv, b);
    kv_cal_result res;
    if (rc == CLI_OK) {
        int err = kv_calibrate(&c->so, &setup, b, (size_t)argc, &c->co, &res, &d);
        rc = err == 0 ? CLI_OK : cli_diag(cli_code(err), &d);
    }
    if (rc == CLI_OK) {
        if (c->json) {
            json_t *j =
                kv_json_stamped(kv_cal_result_to_json(&res, c->co.holdout), cli_command_line());
            if (kv_afile_write_json(c->json, j, &d) != 0)
                rc = cli_diag(CLI_RUNTIME, &d);
            json_decref(j);
        }
        if (rc == CLI_OK)
            print_result(&res);
        kv_cal_result_release(&res);
        if (rc == CLI_OK)
            rc = cli_flush_stdout();
    }
    for (int i = 0; i < argc; i++)
        kv_bench_free(b[i]);
    free(b);
    return rc;
}

const cli_cmd cli_cmd_calibrate = {
    .name = "calibrate",
    .summary = "fit the roofline time model to your own vllm bench serve runs",
    .synopsis = "RUN... [options]",
    .description =
        "Replay each benchmark run with kvsim's engine, fit the roofline's free parameters\n"
        "(--fit) to the measured TTFT mean and P99, TPOT mean, ITL mean and output\n"
        "throughput, and print the error per metric before and after.  The last line is\n"
        "the fitted --time-model, to paste into kvsim run.\n",
    .uses = {{&group, 0},
             {&cli_sim_group, offsetof(cal_cmd, so)},
             {&cli_model_group, offsetof(cal_cmd, mo)}},
    .args = {1, -1, "kvsim calibrate needs at least one RUN file", NULL},
    .state_size = sizeof(cal_cmd),
    .init = init,
    .exec = exec,
    .omit = omit,
    .omit_why = "the runs give lengths and send times",
};
