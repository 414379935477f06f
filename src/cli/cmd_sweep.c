/* kvsim sweep TRACE --out DIR: replay one trace under the cartesian product of comma lists
 * of any of `kvsim run`'s options, one `kvsim run` per configuration, and collect
 * sweep.csv.
 *
 * Flow: parse (every list value and every passed-through option is validated by the very
 * handler `kvsim run` uses; the run options seen are recorded, in order, by the seen hook)
 * → resolve every configuration's setup and engine config and load the trace (so a bad
 * trace or model is one error before anything starts) and decide the pool size of every
 * configuration (the constant-budget rule below) → build one `kvsim run` argv per
 * configuration (src/cli/sweep_configs.c) → either
 * write them as shell command lines (--emit-jobs) or run them as child processes, at most
 * -j at once → sweep.csv from the finished directories (the same rows as `kvsim merge`,
 * src/report_sweep.c) → the human table.
 *
 * Nothing is simulated here: each configuration is `kvsim run TRACE … --out DIR/NAME
 * --quiet` in its own process, so a sweep row is exactly what `kvsim run` with the same
 * options writes, and a configuration can be rerun by hand from its line.  Run here
 * (not --emit-jobs), each is a fork of this process running run's code on that argv
 * (cli_child_entry, kv_job.fn); one whose trace options are those the trace was read
 * with for validation takes that copy (cli_run_preload) and hashes through one chain
 * store in shared memory, so the trace is parsed once and each chain hashed once per
 * sweep, not per configuration (docs/design.md §9 "Shared work").  Otherwise (a test
 * driving the tables registers no child entry) each is `/proc/self/exe` with that argv,
 * spawned without a shell.
 *
 * The lists, their order, the directory names and the pool rule are src/sweep_space.c's;
 * running the children is src/proc.c's (kv_proc_run).
 *
 * Constant budget: with several block sizes and no pool size, the KV budget is resolved
 * once from the model, GPU, --gpu-util and --reserve (once per setup when setup lists
 * vary them) and passed to every configuration as
 * --kv-budget BYTES, so num_blocks = floor(budget / block bytes) per block size: the
 * comparison is at equal memory.  --num-blocks with several block sizes compares equal
 * block counts (the budget then differs, and the header says so).
 *
 * Failures: a configuration that exits non-zero is reported with its exit code and first
 * stderr line after all others finished (its stderr reaches sweep through a pipe, so the
 * message survives a full disk; sweep keeps it in NAME/stderr.txt when it can); the others
 * still make sweep.csv; sweep exits 1.
 *
 * DIR: new or empty, so one sweep never lands beside another (--force removes an earlier
 * sweep first, kv_sweep_clear).  A trace that cannot be read twice (a pipe, /dev/stdin)
 * is copied once into DIR/trace, which every configuration reads: each is its own process
 * and could not read the pipe again, and the copy keeps every line rerunnable.
 *
 * Out of scope: retries, resuming a partial sweep (rerun it with --force, or run the
 * missing lines of --emit-jobs and `kvsim merge`).
 */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "cli/sweep.h"
#include "cli/sweep_internal.h"
#include "kvsim/mem.h"
#include "kvsim/afile.h"
#include "kvsim/path.h"
#include "kvsim/proc.h"
#include "kvsim/report.h"
#include "kvsim/text.h"

enum { OPT_JOBS = 1, OPT_SAMPLE_EVERY, OPT_LIST };

/* The list options: their names are the single-valued options' they replace. */
static const cli_opt list_opts[] = {
    {"block-size", 0, "B,...", CLI_ID(OPT_LIST), "tokens per KV block (default 16)"},
    {"num-blocks", 0, "N,...", CLI_ID(OPT_LIST), "pool sizes (not with --kv-budget)"},
    {"kv-budget", 0, "SIZE,...", CLI_ID(OPT_LIST), "KV memory per rank (not with --num-blocks)"},
    {"watermark", 0, "F,...", CLI_ID(OPT_LIST), "admission watermark (default 0.01)"},
    {"free-order", 0, "O,...", CLI_ID(OPT_LIST), "split, append (default split)"},
    {"max-seqs", 0, "N,...", CLI_ID(OPT_LIST), "running requests cap (default 256)"},
    {"preempt", 0, "P,...", CLI_ID(OPT_LIST), "fcfs, priority (default fcfs)"},
    {"replicas", 0, "R,...", CLI_ID(OPT_LIST), "replicas behind the router (default 1)"},
    {"router", 0, "POLICY,...", CLI_ID(OPT_LIST),
     "routing policies (default round-robin); a weighted\n"
     "policy's weights continue it: --router\n"
     "prefix,weighted:prefix=3,kv=1,kv-cost is three policies"},
    {0},
};

/* Every other option of `kvsim run` (but --hash-algo) is a list too: named after the
 * classic axes only with two or more values. */
static const cli_opt more_lists[] = {
    {"model", 0, "M,...", CLI_ID(OPT_LIST), "models: presets or config.json files"},
    {"gpu", 0, "G,...", CLI_ID(OPT_LIST), "GPU presets"},
    {"gpu-util", 0, "F,...", CLI_ID(OPT_LIST), "fractions of GPU memory"},
    {"reserve", 0, "SIZE,...", CLI_ID(OPT_LIST), "memory held back besides weights"},
    {"tp", 0, "N,...", CLI_ID(OPT_LIST), "tensor-parallel degrees"},
    {"pp", 0, "N,...", CLI_ID(OPT_LIST), "pipeline-parallel degrees"},
    {"kv-dtype", 0, "D,...", CLI_ID(OPT_LIST), "KV cache dtypes"},
    {"weight-dtype", 0, "D,...", CLI_ID(OPT_LIST), "weight dtypes"},
    {"kv-scale-group", 0, "G,...", CLI_ID(OPT_LIST), "quantisation scale groups"},
    {"kv-scale-bytes", 0, "S,...", CLI_ID(OPT_LIST), "bytes per quantisation scale"},
    {"layers", 0, "N,...", CLI_ID(OPT_LIST), "layer counts"},
    {"kv-heads", 0, "N,...", CLI_ID(OPT_LIST), "KV head counts"},
    {"head-dim", 0, "N,...", CLI_ID(OPT_LIST), "head dimensions"},
    {"format", 0, "F,...", CLI_ID(OPT_LIST), "trace formats"},
    {"trace-block-size", 0, "N,...", CLI_ID(OPT_LIST), "tokens per hash_ids entry"},
    {"limit", 0, "N,...", CLI_ID(OPT_LIST), "first N rows of the trace"},
    {"time-scale", 0, "F,...", CLI_ID(OPT_LIST), "arrival-time multipliers"},
    {"rate", 0, "R,...", CLI_ID(OPT_LIST), "requests/s of length-stats traces"},
    {"shared-prefix", 0, "N,...", CLI_ID(OPT_LIST), "shared prompt prefixes, tokens"},
    {"seed", 0, "N,...", CLI_ID(OPT_LIST), "random seeds"},
    {"watermark-rule", 0, "R,...", CLI_ID(OPT_LIST), "vllm, v0"},
    {"max-batched-tokens", 0, "N,...", CLI_ID(OPT_LIST), "token budgets per step"},
    {"chunked-prefill", 0, "on|off,...", CLI_ID(OPT_LIST),
     "on, off or on,off (a flag in run; here a list)"},
    {"prefix-caching", 0, "on|off,...", CLI_ID(OPT_LIST), "on, off or on,off"},
    {"admit-full-prompt", 0, "on|off,...", CLI_ID(OPT_LIST), "on, off or on,off"},
    {"policy", 0, "P,...", CLI_ID(OPT_LIST), "fcfs, priority"},
    {"async-scheduling", 0, "on|off,...", CLI_ID(OPT_LIST), "on, off or on,off"},
    {"time-model", 0, "M,...", CLI_ID(OPT_LIST),
     "time models; a model's parameters continue it:\n"
     "fixed:0.01,linear:0.002,2e-5,1e-7 is two models"},
    {"gpu-cost-per-hour", 0, "C,...", CLI_ID(OPT_LIST), "costs of one GPU-hour"},
    {"router-view", 0, "V,...", CLI_ID(OPT_LIST), "exact, approx"},
    {"router-refresh", 0, "D,...", CLI_ID(OPT_LIST), "load-signal refresh intervals, s"},
    {"router-overlap-weight", 0, "W,...", CLI_ID(OPT_LIST), "kv-cost's overlap weights"},
    {0},
};

static const cli_opt output_opts[] = {
    {"out", 'o', "DIR", CLI_FILE(sweep, out),
     "required; DIR/NAME per configuration, NAME =\n"
     "b<B>[_n<N>|_kv<SIZE>]_wm<F>_<free-order>_s<N>_<preempt>\n"
     "[_r<R>][_<router>][_<more lists>] (e.g.\n"
     "b16_wm0.01_split_s256_fcfs),\n"
     "plus DIR/sweep.csv; DIR must be new or empty (see\n"
     "--force)"},
    {"force", 0, NULL, CLI_SET(sweep, force),
     "DIR holds an earlier sweep: remove its files first\n"
     "(sweep.csv, figures, configuration directories;\n"
     "refused if DIR holds anything else)"},
    {"jobs", 'j', "N", CLI_ID(OPT_JOBS), "configurations at once (default: online cores)"},
    {"emit-jobs", 0, "FILE", CLI_FILE(sweep, emit),
     "write one 'kvsim run' command line per configuration to\n"
     "FILE ('-' = stdout), absolute paths, and run nothing;\n"
     "afterwards 'kvsim merge DIR' writes sweep.csv"},
    {"sample-every", 0, "N", CLI_ID(OPT_SAMPLE_EVERY),
     "passed to every run (timeseries.csv every N steps)"},
    {"quiet", 'q', NULL, CLI_SET(sweep, quiet),
     "print nothing on success (errors still go to stderr)"},
    {"plot", 0, NULL, CLI_SET(sweep, plot),
     "draw sweep_block_size / sweep_watermark (.png, .svg)\n"
     "into DIR when that knob has two or more values"},
    {0},
};

static const cli_section sections[] = {
    {"lists (comma-separated; each is sorted, a value given twice is an error; a list\n"
     "replaces the single-valued option of the same name listed further below)",
     list_opts,
     "configurations: the product of the lists, block size outermost, router innermost;\n"
     "runs, the table and sweep.csv rows all follow that order.\n"
     "constant budget: with several block sizes and neither --num-blocks nor --kv-budget,\n"
     "the KV budget is derived once (model, GPU, --gpu-util, --reserve) and passed to\n"
     "every configuration as --kv-budget BYTES: num_blocks = floor(budget / block bytes)\n"
     "for each block size (once per setup when model, GPU, TP ... lists vary it).\n"
     "--num-blocks with several block sizes holds the block count instead (the budget\n"
     "then differs; the header says so).\n"},
    {"more lists: every other option of 'kvsim run' (the same values; the on/off pairs\n"
     "take on and off)",
     more_lists,
     "These axes come after the router, in this order; each one listed with two or more\n"
     "values adds its label to NAME: tp2, pp2, kv-fp8, nopc / pc, tm-fixed-0.01 ...;\n"
     "one value is given to every run and leaves NAME as it is.  sweep.csv has a column\n"
     "for every option, swept or not.\n"},
    {"output", output_opts,
     "A failed configuration keeps its stderr in DIR/NAME/stderr.txt, is reported after\n"
     "the others finish and makes sweep exit 1; the others are still in sweep.csv.\n"
     "A TRACE that cannot be read twice (a pipe, /dev/stdin, <(...)) is copied to\n"
     "DIR/trace first, and the configurations read the copy.\n"
     "Every other option below is passed unchanged to every configuration.\n"},
    {0},
};

static const cli_dep deps[] = {
    {CLI_REQUIRED, "out", NULL,
     "kvsim sweep needs --out DIR (each configuration writes DIR/NAME, and sweep.csv goes "
     "to DIR)",
     NULL},
    {CLI_EXCLUDES, "plot", "emit-jobs",
     "--plot needs a finished sweep: with --emit-jobs, run the jobs, then 'kvsim merge DIR' "
     "and 'kvsim plot DIR'",
     NULL},
    {0},
};

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    sweep *s = target;
    switch (opt->id) {
    case OPT_JOBS:
        return cli_parse_u32(opt->name, arg, 1, 1024, &s->jobs);
    case OPT_SAMPLE_EVERY:
        return cli_parse_u32(opt->name, arg, 1, UINT32_MAX, &s->sample_every);
    default: /* OPT_LIST */
        return cli_sweep_list(&s->space, opt->name, arg, &s->mo, &s->so);
    }
}

static const cli_group group = {sections, handle, deps};

/* Every run option (the simulation and model groups, already validated into so/mo by
 * their handlers) is passed as given to every configuration. */
static int seen(void *state, int g, const cli_opt *opt, const char *arg)
{
    sweep *s = state;
    if (g > 0) {
        kv_grow((void **)&s->pass, &s->cap_pass, s->n_pass + 1, sizeof *s->pass);
        s->pass[s->n_pass++] = (pass_opt){opt->name, arg};
    }
    return CLI_OK;
}

/* ---- outputs --------------------------------------------------------------------------- */

/* DIR must be a writable directory (created if missing); before anything runs. */
static int make_out_dir(const sweep *s)
{
    kv_diag d;
    if (kv_mkdir_p(s->out, &d) != 0)
        return cli_diag(CLI_RUNTIME, &d);
    if (access(s->out, W_OK | X_OK) != 0)
        return cli_error(CLI_RUNTIME, "cannot write into '%s': %s", s->out, strerror(errno));
    return CLI_OK;
}

/* The first entry of dir (in name order) other than "." and "..", into name; false when
 * there is none (or dir cannot be read: mkdir and the writes will say why). */
static bool first_entry(const char *dir, char *name, size_t n)
{
    char **names;
    size_t count;
    kv_diag ignored;
    if (kv_path_list(dir, &names, &count, &ignored) != 0)
        return false;
    if (count > 0)
        snprintf(name, n, "%s", names[0]);
    kv_path_list_free(names, count);
    return count > 0;
}

/* A second sweep never lands beside a first: DIR must be missing or empty, or (--force)
 * hold only an earlier sweep, whose files are then removed.  Checked before anything is
 * written; the removal itself happens in clear_out_dir, once the sweep is known to run. */
static int check_out_dir(const sweep *s)
{
    char name[256];
    if (!first_entry(s->out, name, sizeof name))
        return CLI_OK;
    if (!s->force)
        return cli_error(CLI_RUNTIME,
                         "'%s' is not empty (it holds '%s'; an earlier sweep?): give a new "
                         "directory, or --force to remove the earlier sweep first",
                         s->out, name);
    char real_trace[PATH_MAX], real_out[PATH_MAX];
    size_t n;
    if (realpath(s->given_trace, real_trace) && realpath(s->out, real_out) &&
        strncmp(real_trace, real_out, n = strlen(real_out)) == 0 && real_trace[n] == '/')
        return cli_error(CLI_RUNTIME, "--force would remove '%s' with the earlier sweep in '%s'",
                         s->given_trace, s->out);
    return CLI_OK;
}

static int clear_out_dir(const sweep *s)
{
    kv_diag d;
    return s->force && kv_sweep_clear(s->out, &d) != 0 ? cli_diag(CLI_RUNTIME, &d) : CLI_OK;
}

/* Whether the configurations could read the trace again by its name: a regular file, not
 * reached through a descriptor of this process (/dev/stdin, /dev/fd/N, /proc/…/fd/N —
 * the children have other descriptors). */
static bool rereadable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return true; /* missing: loading it says so */
    return S_ISREG(st.st_mode) && strncmp(path, "/dev/", 5) != 0 && strncmp(path, "/proc/", 6) != 0;
}

/* Read a trace that cannot be read twice into DIR/trace (atomically) once, so every
 * configuration reads the same bytes.  Sets s->trace to the copy. */
static int copy_trace(sweep *s)
{
    kv_diag d;
    FILE *in = fopen(s->given_trace, "rb");
    if (!in)
        return cli_error(CLI_RUNTIME, "cannot open '%s': %s", s->given_trace, strerror(errno));
    char *path = kv_path_join(s->out, KV_SWEEP_TRACE_COPY);
    kv_afile o;
    int rc = kv_afile_open(&o, path, &d) == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);
    char buf[1 << 16];
    size_t n;
    while (rc == CLI_OK && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, o.f) != n)
            break; /* kv_afile_commit reports it */
    if (rc == CLI_OK && ferror(in))
        rc = cli_error(CLI_RUNTIME, "cannot read '%s': %s", s->given_trace, strerror(errno));
    fclose(in);
    if (rc == CLI_OK)
        rc = kv_afile_commit(&o, &d) == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);
    kv_afile_abort(&o);
    if (rc == CLI_OK) {
        s->trace_copy = path;
        s->trace = path;
    } else {
        free(path);
    }
    return rc;
}

/* --emit-jobs: one shell command line per configuration, in configuration order. */
static void write_jobs(const sweep *s, FILE *f)
{
    kv_buf line = {0};
    for (size_t i = 0; i < s->n_cfg; i++) {
        kv_buf_reset(&line);
        for (char **w = s->cfg[i].argv; *w; w++) {
            if (w != s->cfg[i].argv)
                kv_buf_putc(&line, ' ');
            kv_shell_word(&line, *w);
        }
        kv_buf_putc(&line, '\n');
        fputs(line.s, f);
    }
    kv_buf_release(&line);
}

typedef struct progress {
    bool on;
} progress;

static void show_progress(void *ctx, size_t done, size_t n, size_t running)
{
    if (((progress *)ctx)->on)
        fprintf(stderr, "\rkvsim sweep: %zu of %zu configurations done, %zu running   ", done, n,
                running);
}

/* Keep a failed configuration's stderr in DIR/NAME/stderr.txt.  What the child said is
 * already in memory (proc.h), so a file that cannot be written costs only the copy:
 * where it went, or why it is not there, goes into *where. */
static void save_stderr(const config *c, const kv_job *j, char *where, size_t n)
{
    kv_diag d;
    char *path = kv_path_join(c->dir, "stderr.txt");
    kv_afile f;
    int rc = kv_mkdir_p(c->dir, &d);
    if (rc == 0)
        rc = kv_afile_open(&f, path, &d);
    if (rc == 0) {
        if (j->err)
            fwrite(j->err, 1, j->err_len, f.f);
        rc = kv_afile_commit(&f, &d);
    }
    if (rc == 0)
        snprintf(where, n, "stderr in '%s'", path);
    else
        snprintf(where, n, "its stderr not kept: %s", d.msg);
    free(path);
}

/* Run every configuration, then sweep.csv and the table.  CLI_RUNTIME if any failed. */
static int run_all(sweep *s)
{
    kv_job *jobs = kv_xcalloc(s->n_cfg, sizeof *jobs);
    cli_child_fn child = s->preload.trace ? cli_child_entry() : NULL;
    if (child) { /* forked, not exec'd: the trace read once, the digests hashed once */
        s->preload.chains = kv_chain_store_create_shared(SWEEP_CHAIN_BYTES, s->preload.trace->n);
        cli_run_preload_set(&s->preload);
    }
    for (size_t i = 0; i < s->n_cfg; i++) {
        jobs[i].argv = s->cfg[i].argv;
        jobs[i].fn = child;
    }
    double t0 = cli_wall_now();
    progress pg = {!s->quiet && isatty(2)};
    kv_proc_run(jobs, s->n_cfg, s->jobs, show_progress, &pg);
    cli_run_preload_set(NULL);
    if (pg.on)
        fputs("\r\033[K", stderr);
    double wall = cli_wall_now() - t0;

    kv_sweep_row *rows = kv_xcalloc(s->n_cfg, sizeof *rows);
    char(*where)[sizeof(kv_diag) + 32] = kv_xcalloc(s->n_cfg, sizeof *where);
    size_t failed = 0;
    for (size_t i = 0; i < s->n_cfg; i++) {
        kv_diag d;
        if (jobs[i].failure)
            save_stderr(&s->cfg[i], &jobs[i], where[i], sizeof where[i]);
        if (jobs[i].exit_code == 0 && kv_sweep_row_load(&rows[i], s->cfg[i].dir, &d) == 0)
            continue;
        if (jobs[i].exit_code == 0) /* exited 0 without a readable summary */
            cli_diag(CLI_RUNTIME, &d);
        kv_sweep_row_failed(&rows[i], s->cfg[i].dir,
                            jobs[i].failure ? jobs[i].failure
                                            : "exit 0 but no readable summary.json");
        failed++;
    }
    char *csv = kv_path_join(s->out, "sweep.csv");
    kv_diag d;
    int rc = kv_sweep_csv_write(csv, rows, s->n_cfg, &d) == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);

    if (!s->quiet) {
        cli_sweep_print_table(stdout, rows, s->n_cfg);
        printf("kvsim sweep: %zu of %zu configurations finished in %.2f s wall (-j %u)",
               s->n_cfg - failed, s->n_cfg, wall, s->jobs);
        if (rc == CLI_OK)
            printf("; wrote %s", csv);
        fputc('\n', stdout);
        if (rc == CLI_OK)
            rc = cli_flush_stdout();
    }
    if (rc == CLI_OK && s->plot)
        rc = cli_plot_dir(s->out, s->quiet);
    for (size_t i = 0; i < s->n_cfg; i++) {
        if (jobs[i].failure)
            cli_error(CLI_RUNTIME, "configuration '%s' failed, %s (%s)", s->cfg[i].name,
                      jobs[i].failure, where[i]);
        kv_sweep_row_release(&rows[i]);
        kv_job_release(&jobs[i]);
    }
    free(where);
    free(rows);
    free(jobs);
    free(csv);
    return rc != CLI_OK ? rc : failed ? CLI_RUNTIME : CLI_OK;
}

static void sweep_release(void *state)
{
    sweep *s = state;
    kv_sweep_space_release(&s->space);
    cli_sweep_configs_release(s);
    free(s->pass);
    free(s->trace_copy);
    kv_trace_free(s->preload.trace);
    kv_chain_store_destroy(s->preload.chains);
}

static uint32_t online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (uint32_t)n;
}

static void init(void *state)
{
    sweep *s = state;
    kv_setup_options_init(&s->mo);
    kv_sim_options_init(&s->so);
    s->jobs = online_cores();
}

/* --emit-jobs: the command lines into the (already open) file, and what to do next. */
static int emit_jobs(const sweep *s, kv_afile *jobs, bool header)
{
    kv_diag d;
    write_jobs(s, jobs->f);
    int rc = kv_afile_commit(jobs, &d) == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);
    if (rc == CLI_OK && header)
        printf("kvsim sweep: wrote %zu commands to %s\n"
               "  next       run each line (GNU parallel or a Slurm array: see the README),\n"
               "             then: kvsim merge %s\n",
               s->n_cfg, s->emit, s->out);
    return rc;
}

static int exec(void *state, int argc, char **argv)
{
    sweep *s = state;
    s->trace = s->given_trace = argv[argc - 1];
    if (strcmp(s->trace, "-") == 0)
        return cli_error(CLI_USAGE, "kvsim sweep reads TRACE once per configuration, so it "
                                    "cannot be '-' (standard input): save it to a file first");
    size_t n_cfg = 0;
    kv_diag d;
    int rc = check_out_dir(s);
    bool made_dir = false; /* DIR made for a trace copy: removed again if validation fails */
    if (rc == CLI_OK && !rereadable(s->trace)) {
        made_dir = access(s->out, F_OK) != 0;
        rc = make_out_dir(s);
        if (rc == CLI_OK)
            rc = clear_out_dir(s);
        if (rc == CLI_OK)
            rc = copy_trace(s);
    }
    if (rc == CLI_OK)
        rc = cli_sweep_plan_configs(s, &n_cfg);
    if (rc != CLI_OK && s->trace_copy) {
        unlink(s->trace_copy);
        if (made_dir)
            rmdir(s->out);
    }
    if (rc == CLI_OK && !s->trace_copy)
        rc = clear_out_dir(s); /* before the jobs file, which may be in DIR */
    kv_afile jobs = {0};
    bool jobs_open = false; /* opened before DIR is created: a failure creates nothing */
    if (rc == CLI_OK && s->emit) {
        rc = kv_afile_open(&jobs, s->emit, &d) == 0 ? CLI_OK : cli_diag(CLI_RUNTIME, &d);
        jobs_open = rc == CLI_OK;
    }
    if (rc == CLI_OK)
        rc = make_out_dir(s);
    if (rc == CLI_OK)
        cli_sweep_build_configs(s, n_cfg, s->emit != NULL);
    bool header = rc == CLI_OK && !s->quiet && !(s->emit && strcmp(s->emit, "-") == 0);
    if (header) {
        cli_sweep_print_header(stdout, s);
        fflush(stdout);
    }
    if (rc == CLI_OK && s->emit) {
        jobs_open = false;
        rc = emit_jobs(s, &jobs, header);
    } else if (rc == CLI_OK) {
        if (!s->quiet)
            printf("  running    %zu at a time\n", s->jobs < s->n_cfg ? (size_t)s->jobs : s->n_cfg);
        rc = run_all(s);
    }
    if (jobs_open)
        kv_afile_abort(&jobs);
    return rc;
}

const cli_cmd cli_cmd_sweep = {
    .name = "sweep",
    .summary = "replay a trace under lists of knobs in parallel; write sweep.csv",
    .synopsis = "TRACE --out DIR [lists] [-j N] [--emit-jobs FILE] [run options]",
    .description =
        "Replay TRACE once per configuration of the cartesian product of the lists, each as\n"
        "'kvsim run TRACE ... --out DIR/NAME --quiet' in its own process, and write\n"
        "DIR/sweep.csv: one row per configuration, from its summary.json.\n",
    .uses = {{&group, 0},
             {&cli_sim_group, offsetof(sweep, so)},
             {&cli_model_group, offsetof(sweep, mo)}},
    .args = {1, 1, "kvsim sweep needs a TRACE file", "kvsim sweep takes one TRACE, got {n}"},
    .state_size = sizeof(sweep),
    .init = init,
    .exec = exec,
    .release = sweep_release,
    .seen = seen,
};
