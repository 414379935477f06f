/* plot: check the gnuplot scripts and gnuplot the caller names, run one gnuplot per
 * figure, and move the finished files into place (see include/kvsim/plot.h for what is
 * drawn from what).
 *
 * Process.  gnuplot runs through the one child-process runner (kv_proc_run), never a
 * shell: argv is
 *     gnuplot -e "dir = '…'; outdir = '…'; plots = '…'; suffix = '…'; <figure's vars>" SCRIPT
 * with stdin and stdout on /dev/null and stderr on a pipe kv_proc_run reads.  The
 * figures of a directory are independent, so their gnuplots run at once (at most
 * KV_PLOT_MAX_FIGURES processes: a long run's figures each make one pass over
 * timeseries.csv, seconds for 300,000 rows).  gnuplot prints warnings on stderr even when
 * it succeeds, so stderr only matters when the exit status is not 0: then its last
 * meaningful line (gnuplot ends with '"script" line N: what went wrong') becomes the
 * one-line diagnostic.
 *
 * Completeness.  gnuplot exits 0 when it could not write its output (a full file system,
 * a file size limit): the error goes unchecked inside its terminal drivers.  So a figure
 * is moved into place only when each file is complete: a PNG starts with the PNG signature
 * and ends with an IEND chunk, an SVG ends with its closing </svg> tag.  Anything else is
 * an error naming the file, and nothing is listed as written that was not.
 *
 * Atomicity.  Each script writes NAME.png<suffix> and NAME.svg<suffix> with suffix
 * ".tmp-<pid>"; after gnuplot exits 0 both are renamed to NAME.png and NAME.svg (rename(2)
 * in one directory is atomic).  On any failure the temporaries are unlinked, so a reader
 * never sees a half-drawn figure under its final name.  They are in afile's temp table
 * while they exist, so a signal removes them too.
 *
 * Data.  A run's long CSVs are reduced in C first (plot_series.c) into data files named
 * NAME.dat.tmp-<pid> in the directory, which the scripts read; they are tracked like the
 * figures' temporaries and removed when every gnuplot has exited.
 *
 * Out of scope: parsing the inputs (plot_run.c, plot_series.c, plot_sweep.c, plot_vars.c),
 * printing (progress goes to the caller's callback), and choosing where the scripts and
 * gnuplot are (src/cli/cmd_plot.c: the core reads no environment).
 */
#include "kvsim/plot.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/proc.h"
#include "plot_internal.h"

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool has_file(const char *dir, const char *name)
{
    char *p = kv_path_join(dir, name);
    bool ok = is_file(p);
    free(p);
    return ok;
}

const char *const *kv_plot_figure_names(unsigned kind)
{
    static const char *const run[] = {"blocks",         "pressure",         "latency_cdf",
                                      "cluster_blocks", "cluster_replicas", NULL};
    static const char *const sweep[] = {"sweep_block_size", "sweep_watermark", "sweep_router",
                                        NULL};
    static const char *const plan[] = {"plan_curve", NULL};
    static const char *const none[] = {NULL};
    return kind == KV_PLOT_RUN     ? run
           : kind == KV_PLOT_SWEEP ? sweep
           : kind == KV_PLOT_PLAN  ? plan
                                   : none;
}

unsigned kv_plot_detect(const char *dir)
{
    if (!is_dir(dir))
        return 0;
    unsigned m = 0;
    if (has_file(dir, "timeseries.csv") && has_file(dir, "requests.csv") &&
        has_file(dir, "summary.json"))
        m |= KV_PLOT_RUN;
    if (has_file(dir, "sweep.csv"))
        m |= KV_PLOT_SWEEP;
    if (has_file(dir, "plan.csv"))
        m |= KV_PLOT_PLAN;
    return m;
}

/* ---- finding things ------------------------------------------------------------------ */

/* A scripts directory is one holding common.gp. */
bool kv_plot_is_scripts_dir(const char *dir)
{
    return dir && *dir && has_file(dir, "common.gp");
}

/* The scripts of *opts: 0, or -KV_ENOENT with the diag set (the caller's words when it
 * gave them). */
static int check_scripts(const kv_plot_options *opts, kv_diag *diag)
{
    if (kv_plot_is_scripts_dir(opts->scripts))
        return 0;
    if (opts->scripts_error)
        return kv_diag_set(diag, -KV_ENOENT, "%s", opts->scripts_error);
    if (!opts->scripts)
        return kv_diag_set(diag, -KV_ENOENT, "cannot find the gnuplot scripts (plots/common.gp)");
    return kv_diag_set(diag, -KV_ENOENT, "'%s' is not a kvsim plots directory (no common.gp)",
                       opts->scripts);
}

static char *search_path(const char *name, const char *path)
{
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    const char *p = path;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            char *dir = kv_xmalloc(len + 1);
            memcpy(dir, p, len);
            dir[len] = '\0';
            char *cand = kv_path_join(dir, name);
            free(dir);
            if (is_file(cand) && access(cand, X_OK) == 0)
                return cand;
            free(cand);
        }
        p += len;
        if (*p == ':')
            p++;
    }
    return NULL;
}

char *kv_plot_find_gnuplot(const char *name, const char *path_list)
{
    if (strchr(name, '/'))
        return is_file(name) && access(name, X_OK) == 0 ? kv_xstrdup(name) : NULL;
    return search_path(name, path_list);
}

/* ---- running gnuplot ----------------------------------------------------------------- */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The last line of gnuplot's stderr that says something (not blank, not the caret line
 * under the failing command), trimmed, into msg. */
static void summarise_stderr(const char *buf, size_t len, char *msg, size_t n)
{
    msg[0] = '\0';
    size_t end = len;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && buf[start - 1] != '\n')
            start--;
        size_t a = start, b = end;
        while (a < b && is_blank(buf[a]))
            a++;
        while (b > a && is_blank(buf[b - 1]))
            b--;
        bool caret_only = true;
        for (size_t i = a; i < b; i++)
            caret_only &= buf[i] == '^' || buf[i] == ' ';
        if (b > a && !caret_only) {
            size_t k = b - a < n - 1 ? b - a : n - 1;
            memcpy(msg, buf + a, k);
            msg[k] = '\0';
            return;
        }
        end = start > 0 ? start - 1 : 0;
    }
}

/* One gnuplot process drawing one figure. */
typedef struct child {
    const kv__fig *fig;
    char *argv[5]; /* gnuplot -e VARS SCRIPT NULL; VARS and SCRIPT owned */
    char *tmp[2];  /* NAME.png / NAME.svg with the temp suffix (tracked: afile.h) */
    char *final[2];
} child;

static const char *const exts[] = {"png", "svg"};

/* dir/NAME.EXT + suffix, malloc'd. */
static char *figure_path(const char *dir, const char *name, const char *ext, const char *suffix)
{
    char base[128];
    snprintf(base, sizeof base, "%s.%s%s", name, ext, suffix);
    return kv_path_join(dir, base);
}

static void child_release(child *c)
{
    for (int i = 0; i < 2; i++) {
        if (c->tmp[i]) {
            unlink(c->tmp[i]); /* no-op after a successful rename */
            kv_afile_untrack(c->tmp[i]);
        }
        free(c->tmp[i]);
        free(c->final[i]);
    }
    free(c->argv[2]);
    free(c->argv[3]);
    memset(c, 0, sizeof *c);
}

/* The job that draws c's figure: gnuplot on plots/<fig>.gp with the common and the
 * figure's variables.  0, or -KV_ENOENT with the diag set (c released). */
static int prepare(child *c, kv_job *job, const char *gnuplot, const char *plots, const char *dir,
                   kv_diag *diag)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".tmp-%ld", (long)getpid());
    for (int i = 0; i < 2; i++) {
        c->tmp[i] = figure_path(dir, c->fig->name, exts[i], suffix);
        kv_afile_track(c->tmp[i]);
        c->final[i] = figure_path(dir, c->fig->name, exts[i], "");
    }
    char script_name[64];
    snprintf(script_name, sizeof script_name, "%s.gp", c->fig->name);
    c->argv[3] = kv_path_join(plots, script_name);
    if (!is_file(c->argv[3])) {
        int rc = kv_diag_set(diag, -KV_ENOENT, "no gnuplot script '%s'", c->argv[3]);
        child_release(c);
        return rc;
    }
    kv_buf vars = {0};
    kv__gpvars_str(&vars, "dir", dir);
    kv__gpvars_str(&vars, "outdir", dir);
    kv__gpvars_str(&vars, "plots", plots);
    kv__gpvars_str(&vars, "suffix", suffix);
    if (c->fig->vars.s)
        kv_buf_puts(&vars, c->fig->vars.s);
    c->argv[0] = (char *)"gnuplot";
    c->argv[1] = (char *)"-e";
    c->argv[2] = vars.s;
    *job = (kv_job){.program = gnuplot, .argv = c->argv};
    return 0;
}

/* Whether the figure file at path is complete: 0, or -KV_EIO with a diag naming final. */
static int check_complete(const char *path, const char *final, bool png, kv_diag *diag)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    unsigned char head[8], tail[64];
    size_t nh = 0, nt = 0;
    long size = -1;
    FILE *f = fopen(path, "rb");
    if (f) {
        nh = fread(head, 1, sizeof head, f);
        if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0) {
            long back = size < (long)sizeof tail ? size : (long)sizeof tail;
            if (fseek(f, -back, SEEK_END) == 0)
                nt = fread(tail, 1, (size_t)back, f);
        }
        fclose(f);
    }
    const char *why = NULL;
    if (!f)
        why = "missing";
    else if (size <= 0)
        why = "empty";
    else if (png && (nh < sizeof sig || memcmp(head, sig, sizeof sig) != 0))
        why = "no PNG signature";
    else if (png && (nt < sizeof iend || memcmp(tail + nt - sizeof iend, iend, sizeof iend) != 0))
        why = "truncated: no PNG end chunk";
    else if (!png) {
        while (nt > 0 && is_blank((char)tail[nt - 1]))
            nt--;
        if (nt < 6 || memcmp(tail + nt - 6, "</svg>", 6) != 0)
            why = "truncated: no closing </svg> tag";
    }
    if (!why)
        return 0;
    return kv_diag_set(diag, -KV_EIO,
                       "gnuplot did not write '%s' completely (%s; is the file system full?)",
                       final, why);
}

/* Move a finished job's figure into place (or remove its temporaries).  Returns 0, or
 * -KV_EIO with the diag naming the figure and gnuplot's complaint. */
static int finish(child *c, const kv_job *job, kv_diag *diag)
{
    int rc = 0;
    if (job->exit_code < 0) { /* exec failed: said as shells say it, exit status 127 */
        rc = kv_diag_set(diag, -KV_EIO,
                         "gnuplot failed drawing '%s' (exit 127): cannot execute gnuplot",
                         c->fig->name);
    } else if (job->signal) {
        rc = kv_diag_set(diag, -KV_EIO, "gnuplot was killed by signal %d drawing '%s'", job->signal,
                         c->fig->name);
    } else if (job->exit_code != 0) {
        char msg[300];
        summarise_stderr(job->err ? job->err : "", job->err_len, msg, sizeof msg);
        rc = kv_diag_set(diag, -KV_EIO, "gnuplot failed drawing '%s' (exit %d): %s", c->fig->name,
                         job->exit_code, *msg ? msg : "no message");
    }
    for (int i = 0; rc == 0 && i < 2; i++)
        if (!is_file(c->tmp[i]))
            rc = kv_diag_set(diag, -KV_EIO, "gnuplot did not write '%s'", c->final[i]);
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = check_complete(c->tmp[i], c->final[i], i == 0, diag);
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = kv_afile_check_target(c->final[i], diag); /* replace only a regular file */
    for (int i = 0; rc == 0 && i < 2; i++)
        if (rename(c->tmp[i], c->final[i]) != 0)
            rc = kv_diag_set(diag, -KV_EIO, "cannot rename '%s': %s", c->tmp[i], strerror(errno));
    child_release(c);
    return rc;
}

/* ---- kv_plot_dir --------------------------------------------------------------------- */

/* kv_proc_run's progress as the caller's. */
static void drawing(void *ctx, size_t done, size_t n, size_t running)
{
    (void)running;
    const kv__progress *pg = ctx;
    kv_plot_progress p = {pg->dir, KV_PLOT_DRAWING, NULL, (double)done, (double)n};
    pg->fn(pg->ctx, &p);
}

int kv_plot_dir(const char *dir, const kv_plot_options *opts, kv_plot_report *rep, kv_diag *diag)
{
    assert(opts);
    memset(rep, 0, sizeof *rep);
    struct stat st;
    if (stat(dir, &st) != 0)
        return kv_diag_set(diag, -KV_ENOENT, "cannot open directory '%s': %s", dir,
                           strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return kv_diag_set(diag, -KV_ENOENT, "'%s' is not a directory", dir);
    rep->kinds = kv_plot_detect(dir);
    if (!rep->kinds)
        return kv_diag_set(diag, -KV_ENOENT,
                           "nothing to plot in '%s' (no timeseries.csv + requests.csv + "
                           "summary.json of a run, no sweep.csv, no plan.csv)",
                           dir);
    if (!opts->gnuplot)
        return kv_diag_set(diag, -KV_ENOPROG, "gnuplot not found");
    const char *gnuplot = opts->gnuplot, *plots = opts->scripts;
    int rc = check_scripts(opts, diag);

    kv__figlist figs;
    memset(&figs, 0, sizeof figs);
    kv__progress pg = {opts->progress, opts->progress_ctx, dir};
    char note[2][sizeof rep->note / 2 - 1] = {"", ""}; /* both and "; " fit rep->note */
    if (rc == 0 && (rep->kinds & KV_PLOT_RUN))
        rc = kv__plot_run_figs(dir, &pg, &figs, diag);
    if (rc == 0 && (rep->kinds & KV_PLOT_SWEEP))
        rc = kv__plot_sweep_figs(dir, &figs, note[0], sizeof note[0], diag);
    if (rc == 0 && (rep->kinds & KV_PLOT_PLAN))
        rc = kv__plot_plan_figs(dir, &figs, note[1], sizeof note[1], diag);
    snprintf(rep->note, sizeof rep->note, "%s%s%s", note[0], *note[0] && *note[1] ? "; " : "",
             note[1]);

    /* Every figure's gnuplot runs at once (each reads its own inputs and writes its own
     * files); the first failure in figure order is the one reported. */
    child cs[KV_PLOT_MAX_FIGURES];
    kv_job jobs[KV_PLOT_MAX_FIGURES];
    memset(cs, 0, sizeof cs);
    int ready = 0;
    for (; rc == 0 && ready < figs.n; ready++) {
        cs[ready].fig = &figs.f[ready];
        if ((rc = prepare(&cs[ready], &jobs[ready], gnuplot, plots, dir, diag)) != 0)
            break;
    }
    kv_proc_run(jobs, (size_t)ready, (unsigned)ready, pg.fn ? drawing : NULL, &pg);
    for (int i = 0; i < ready; i++) {
        kv_diag d;
        int r = finish(&cs[i], &jobs[i], &d);
        kv_job_release(&jobs[i]);
        if (r == 0)
            rep->figures[rep->n_figures++] = figs.f[i].name;
        else if (r != 0 && rc == 0) {
            rc = r;
            if (diag)
                *diag = d;
        }
    }
    kv__figlist_release(&figs);
    return rc;
}
