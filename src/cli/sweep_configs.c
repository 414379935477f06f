/* sweep_configs: the configurations of `kvsim sweep` (sweep_internal.h) — each one's
 * options (the options as given, every axis's value applied with run's own handlers), its
 * `kvsim run` argv, the checks made before anything runs (every setup resolves, every
 * engine config is valid, the trace reads with each value of a trace list), the
 * constant-budget rule applied once per setup, and the header that says so.
 */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/sweep_internal.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/report.h"
#include "kvsim/text.h"

/* ---- strings --------------------------------------------------------------------------- */

typedef struct strv {
    char **v; /* NULL-terminated once strv_end ran */
    size_t n, cap;
} strv;

/* Append one printf-formatted argument. */
static void strv_pushf(strv *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void strv_pushf(strv *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *str = kv_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(str, (size_t)n + 1, fmt, ap);
    va_end(ap);
    kv_grow((void **)&a->v, &a->cap, a->n + 2, sizeof *a->v);
    a->v[a->n++] = str;
    a->v[a->n] = NULL;
}

static void argv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* ---- configurations --------------------------------------------------------------------- */

/* The `kvsim run` argv of one configuration.  absolute (for --emit-jobs): the program is
 * this binary's absolute path, and the trace, output and --model file paths are absolute,
 * so the line runs from any directory on any host that shares the file system. */
static char **config_argv(const sweep *s, const config *c, bool absolute)
{
    strv a = {0};
    char buf[PATH_MAX + 2];
    ssize_t n = absolute ? readlink("/proc/self/exe", buf, sizeof buf - 1) : -1;
    buf[n > 0 ? n : 0] = '\0';
    strv_pushf(&a, "%s", n > 0 ? buf : "kvsim");
    strv_pushf(&a, "run");
    if (absolute && realpath(s->trace, buf))
        strv_pushf(&a, "%s", buf);
    else /* "./-x" is the file "-x", never an option */
        strv_pushf(&a, "%s%s", s->trace[0] == '-' ? "./" : "", s->trace);
    for (int x = 0; x < KV_SWEEP_N_AXES; x++) {
        const kv_sweep_axis *ax = &s->space.ax[x];
        const char *off = ax->n ? kv_sweep_list_off(kv_sweep_list_find(ax->opt)) : NULL;
        const char *v = ax->n ? ax->v[c->at[x]].arg : NULL;
        if (off) { /* a flag pair: run's flag for on or off */
            strv_pushf(&a, "--%s", ax->v[c->at[x]].u ? ax->opt : off);
        } else if (ax->n) {
            if (absolute && x == KV_SWEEP_MODEL && kv_setup_model_is_path(v) && realpath(v, buf))
                v = buf;
            strv_pushf(&a, "--%s", ax->opt);
            strv_pushf(&a, "%s", v);
        } else if (x == KV_SWEEP_POOL && s->mode == KV_SWEEP_POOL_CONST) {
            strv_pushf(&a, "--kv-budget");
            strv_pushf(&a, "%llu", (unsigned long long)c->budget);
        }
    }
    for (size_t i = 0; i < s->n_pass; i++) {
        const char *v = s->pass[i].value;
        strv_pushf(&a, "--%s", s->pass[i].name);
        if (v)
            strv_pushf(&a, "%s", v);
    }
    if (s->sample_every) {
        strv_pushf(&a, "--sample-every");
        strv_pushf(&a, "%u", s->sample_every);
    }
    strv_pushf(&a, "--out");
    if (absolute && realpath(s->out, buf))
        strv_pushf(&a, "%s/%s", buf, c->name);
    else
        strv_pushf(&a, "%s", c->dir);
    strv_pushf(&a, "--quiet");
    return a.v;
}

/* The cartesian product, last axis fastest: configuration order = sweep.csv row order. */
void cli_sweep_build_configs(sweep *s, size_t n, bool absolute)
{
    s->cfg = kv_xcalloc(n, sizeof *s->cfg);
    s->n_cfg = n;
    for (size_t i = 0; i < n; i++) {
        config *c = &s->cfg[i];
        char name[KV_SWEEP_N_AXES * 72];
        kv_sweep_space_at(&s->space, i, c->at, name, sizeof name);
        c->name = kv_xstrdup(name);
        c->dir = kv_path_join(s->out, name);
        c->budget = s->budgets ? s->budgets[i] : s->budget;
        c->argv = config_argv(s, c, absolute);
    }
}

/* ---- validation and the pool-size rule -------------------------------------------------- */

/* The setup and engine config of every configuration (each setup's budget into
 * s->budgets when they differ), before the trace is read: the first that fails is one
 * error naming its configuration. */
static int check_configs(sweep *s, size_t n)
{
    kv_diag d;
    char name[KV_SWEEP_N_AXES * 72];
    s->setups = kv_sweep_varies_setup(&s->space);
    if (s->setups)
        s->budgets = kv_xcalloc(n, sizeof *s->budgets);
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        size_t at[KV_SWEEP_N_AXES];
        kv_sweep_space_at(&s->space, i, at, name, sizeof name);
        kv_setup_options mo = s->mo;
        kv_sim_options so = s->so;
        kv_setup setup;
        rc = cli_sweep_config_options(&s->space, at, &mo, &so);
        int lrc = rc == CLI_OK ? kv_sweep_pool(&s->space, &mo, &s->mode, &setup,
                                               s->budgets ? &s->budgets[i] : &s->budget, &d)
                               : 0;
        if (lrc != 0 && s->setups) { /* which of the setups */
            kv_diag named;
            kv_diag_set(&named, lrc, "configuration '%s': %s", name, d.msg);
            return cli_diag(cli_code(lrc), &named);
        }
        if (lrc != 0)
            return cli_diag(cli_code(lrc), &d);
        if (rc == CLI_OK && i == 0)
            s->setup = setup;
        kv_engine_config check; /* the time model and the router, before the trace is read */
        if (rc == CLI_OK)
            rc = cli_engine_config(&so, &setup, &check);
    }
    return rc;
}

/* Read the trace with the options as given, or with value i of trace list a applied;
 * keep: into s->preload. */
static int load_once(sweep *s, const kv_sweep_axis *a, size_t i, bool keep)
{
    kv_diag d;
    kv_setup_options mo = s->mo;
    kv_sim_options so = s->so;
    if (a && cli_sweep_apply(kv_sweep_list_find(a->opt), &a->v[i], &mo, &so) != CLI_OK)
        return CLI_USAGE;
    kv_trace *t = NULL;
    if (kv_trace_load(&t, s->trace, &so.trace, &d) != 0)
        return cli_diag(CLI_RUNTIME, &d);
    s->n_requests = t->n < s->n_requests ? t->n : s->n_requests;
    s->max_requests = t->n > s->max_requests ? t->n : s->max_requests;
    if (keep) {
        s->preload.path = s->trace;
        s->preload.opt = so.trace;
        s->preload.trace = t;
    } else {
        kv_trace_free(t);
    }
    return CLI_OK;
}

/* Whether the trace as read with the options given is kept for the configurations
 * (cmd_sweep.c): when they run here and spell TRACE as given (not "./-x").  A
 * configuration takes it only if its own trace options are these (cmd_run.c), so with
 * lists of trace-reading options only those with the values read take it. */
static bool keep_trace(const sweep *s)
{
    return !s->emit && s->trace[0] != '-';
}

/* The trace, read once, and once more per value of each trace list of several (the
 * combinations of values are each configuration's own to read). */
static int load_trace(sweep *s)
{
    s->n_requests = SIZE_MAX;
    s->max_requests = 0;
    int rc = load_once(s, NULL, 0, keep_trace(s));
    for (int x = KV_SWEEP_FORMAT; rc == CLI_OK && x <= KV_SWEEP_SEED; x++)
        for (size_t i = 0; rc == CLI_OK && s->space.ax[x].n > 1 && i < s->space.ax[x].n; i++)
            rc = load_once(s, &s->space.ax[x], i, false);
    return rc;
}

/* One line over the block sizes: num_blocks at a budget, or (num_blocks given) the budget
 * each block size then gets.  A size whose pool does not fit says so; its run will fail. */
static void print_sizes(FILE *f, const sweep *s, uint64_t budget, uint32_t num_blocks)
{
    kv_capacity cap;
    kv_diag d;
    char a[64];
    fputs(num_blocks ? "  budgets    num_blocks x block bytes:"
                     : "  num_blocks floor(budget / block bytes):",
          f);
    for (size_t i = 0; i < s->space.ax[KV_SWEEP_BLOCK].n; i++) {
        uint32_t b = (uint32_t)s->space.ax[KV_SWEEP_BLOCK].v[i].u;
        int rc = num_blocks ? kv_capacity_from_blocks(&s->setup.shard, num_blocks, b, &cap, &d)
                            : kv_capacity_from_budget(&s->setup.shard, budget, b, &cap, &d);
        if (rc != 0)
            snprintf(a, sizeof a, "too small");
        else if (num_blocks)
            kv_size_label(a, sizeof a, cap.kv_budget_bytes);
        else
            snprintf(a, sizeof a, "%u", cap.num_blocks);
        fprintf(f, "%sb%u %s", i ? ", " : " ", b, a);
    }
    fputc('\n', f);
}

void cli_sweep_print_header(FILE *f, const sweep *s)
{
    const kv_setup *u = &s->setup;
    char a[64];
    char req[64];
    if (s->max_requests > s->n_requests)
        snprintf(req, sizeof req, "%zu to %zu requests", s->n_requests, s->max_requests);
    else
        snprintf(req, sizeof req, "%zu requests", s->n_requests);
    fprintf(f, "kvsim sweep: %zu configuration%s of %s (%s) into %s\n", s->n_cfg,
            s->n_cfg == 1 ? "" : "s", s->given_trace, req, s->out);
    if (s->trace_copy)
        fprintf(f, "  trace      read once into %s (it cannot be read twice)\n", s->trace_copy);
    if (s->setups) {
        fputs("  setup      several (model, GPU, sharding or KV lists): each row of sweep.csv\n"
              "             names its own\n",
              f);
        if (s->mode == KV_SWEEP_POOL_CONST)
            fputs("  budget     constant per setup: derived once for each setup from the GPU and\n"
                  "             passed to its block sizes as --kv-budget\n",
                  f);
        else if (s->mode == KV_SWEEP_POOL_GPU)
            fputs("  budget     derived from the GPU by each run as kvsim run does\n", f);
        if (s->mode == KV_SWEEP_POOL_CONST || s->mode == KV_SWEEP_POOL_GPU)
            return;
    } else {
        fprintf(f, "  setup      %s on %s, TP%u PP%u, %s KV, %.0f B/token per rank\n",
                u->model.name, u->gpu.name, u->shard.tp, u->shard.pp,
                kv_dtype_name(u->model.kv_dtype), u->shard.bytes_per_token_rank);
    }
    size_t nb = s->space.ax[KV_SWEEP_BLOCK].n, np = s->space.ax[KV_SWEEP_POOL].n;
    switch (s->mode) {
    case KV_SWEEP_POOL_GPU:
        kv_format_size(a, sizeof a, (double)s->budget);
        fprintf(f, "  budget     %s per rank, derived from the GPU by each run as kvsim run does\n",
                a);
        break;
    case KV_SWEEP_POOL_CONST:
        kv_format_size(a, sizeof a, (double)s->budget);
        fprintf(f,
                "  budget     constant: %s per rank for every block size, derived once\n"
                "             from the GPU and passed to every run as --kv-budget %llu\n",
                a, (unsigned long long)s->budget);
        print_sizes(f, s, s->budget, 0);
        break;
    case KV_SWEEP_POOL_BUDGET:
        if (np == 1) {
            kv_format_size(a, sizeof a, (double)s->space.ax[KV_SWEEP_POOL].v[0].u);
            fprintf(f, "  budget     constant: --kv-budget %s per rank for every configuration\n",
                    a);
            if (nb > 1)
                print_sizes(f, s, s->space.ax[KV_SWEEP_POOL].v[0].u, 0);
        } else {
            fprintf(f,
                    "  budget     swept: --kv-budget over %zu values, num_blocks = floor(budget / "
                    "block bytes)\n",
                    np);
        }
        break;
    case KV_SWEEP_POOL_BLOCKS:
        if (nb > 1 && np == 1) {
            fprintf(f,
                    "  budget     NOT constant: --num-blocks %s for every block size, so the KV "
                    "budget\n"
                    "             (num_blocks x block bytes) differs; for an equal-memory\n"
                    "             comparison give --kv-budget, or no pool size\n",
                    s->space.ax[KV_SWEEP_POOL].v[0].arg);
            print_sizes(f, s, 0, (uint32_t)s->space.ax[KV_SWEEP_POOL].v[0].u);
        } else if (nb > 1) {
            fprintf(f,
                    "  budget     NOT constant: fixed block counts (--num-blocks), the KV budget "
                    "is\n"
                    "             num_blocks x block bytes and differs between block sizes\n");
        } else {
            fprintf(f, "  budget     fixed block counts (--num-blocks): budget = num_blocks x "
                       "block bytes\n");
        }
        break;
    }
}

/* The configurations, validated: their number, the trace and the model resolved. */
/* A flag pair's "no-" flag given beside its list would turn every configuration off. */
static int check_flags(const sweep *s)
{
    for (size_t i = 0; i < s->n_pass; i++)
        for (int x = KV_SWEEP_ROUTER + 1; x < KV_SWEEP_N_AXES; x++) {
            const char *opt = s->space.ax[x].opt;
            const char *off = opt ? kv_sweep_list_off(kv_sweep_list_find(opt)) : NULL;
            if (off && strcmp(off, s->pass[i].name) == 0)
                return cli_error(CLI_USAGE,
                                 "--%s and the list --%s: give the list only (with "
                                 "off in it)",
                                 off, opt);
        }
    return CLI_OK;
}

int cli_sweep_plan_configs(sweep *s, size_t *n_cfg)
{
    if (check_flags(s) != CLI_OK)
        return CLI_USAGE;
    *n_cfg = kv_sweep_space_complete(&s->space, &s->mo, &s->so);
    if (*n_cfg == SIZE_MAX)
        return cli_error(CLI_USAGE, "the lists make more than %d configurations", MAX_CONFIGS);
    if (*n_cfg > MAX_CONFIGS)
        return cli_error(CLI_USAGE, "the lists make %zu configurations, more than %d", *n_cfg,
                         MAX_CONFIGS);
    int rc = check_configs(s, *n_cfg);
    return rc == CLI_OK ? load_trace(s) : rc;
}

void cli_sweep_configs_release(sweep *s)
{
    for (size_t i = 0; i < s->n_cfg; i++) {
        free(s->cfg[i].name);
        free(s->cfg[i].dir);
        argv_free(s->cfg[i].argv);
    }
    free(s->cfg);
    free(s->budgets);
}
