/* plot: find the gnuplot scripts and gnuplot, run one gnuplot per figure, and move the
 * finished files into place (see include/kvsim/plot.h for what is drawn from what).
 *
 * Process.  gnuplot runs through fork + execv, never a shell: argv is
 *     gnuplot -e "dir = '…'; outdir = '…'; plots = '…'; suffix = '…'; <figure's vars>" SCRIPT
 * with stdin and stdout on /dev/null and stderr on a pipe.  gnuplot prints warnings on
 * stderr even when it succeeds, so stderr only matters when the exit status is not 0:
 * then its last meaningful line (gnuplot ends with '"script" line N: what went wrong')
 * becomes the one-line diagnostic.  Only the last STDERR_KEEP bytes are kept.
 *
 * Atomicity.  Each script writes NAME.png<suffix> and NAME.svg<suffix> with suffix
 * ".tmp-<pid>"; after gnuplot exits 0 both are renamed to NAME.png and NAME.svg (rename(2)
 * in one directory is atomic).  On any failure the temporaries are unlinked, so a reader
 * never sees a half-drawn figure under its final name.
 *
 * Out of scope: parsing the inputs (plot_vars.c), printing (src/cli).
 */
#include "kvsim/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvsim/mem.h"
#include "plot_internal.h"

#ifndef KVSIM_DATADIR
#define KVSIM_DATADIR ""
#endif

enum { STDERR_KEEP = 8192 }; /* > the 4096-byte read chunk */

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

char *kv__path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = kv_xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static bool has_file(const char *dir, const char *name)
{
    char *p = kv__path_join(dir, name);
    bool ok = is_file(p);
    free(p);
    return ok;
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
static bool is_plots_dir(const char *dir)
{
    return dir && *dir && has_file(dir, "common.gp");
}

/* The plots directory as a malloc'd path: 0, or -KV_ENOENT with the diag set. */
static int find_scripts(char **out, kv_diag *diag)
{
    *out = NULL;
    const char *env = getenv("KVSIM_PLOTS");
    if (env && *env) {
        if (!is_plots_dir(env))
            return kv_diag_set(diag, -KV_ENOENT,
                               "KVSIM_PLOTS='%s' is not a kvsim plots directory (no common.gp)",
                               env);
        *out = kv_xstrdup(env);
        return 0;
    }
    if (*KVSIM_DATADIR) {
        char *p = kv__path_join(KVSIM_DATADIR, "plots");
        if (is_plots_dir(p)) {
            *out = p;
            return 0;
        }
        free(p);
    }
    /* Next to the executable: a relocated build tree, or an install prefix. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        static const char *const rel[] = {"plots", "../plots", "../share/kvsim/plots"};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char *p = kv__path_join(exe, rel[i]);
            if (is_plots_dir(p)) {
                *out = p;
                return 0;
            }
            free(p);
        }
    }
    return kv_diag_set(diag, -KV_ENOENT,
                       "cannot find the gnuplot scripts (plots/common.gp); set KVSIM_PLOTS to "
                       "the plots directory");
}

static char *search_path(const char *name)
{
    const char *path = getenv("PATH");
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
            char *cand = kv__path_join(dir, name);
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

char *kv_plot_find_gnuplot(void)
{
    const char *env = getenv("KVSIM_GNUPLOT");
    const char *name = env && *env ? env : "gnuplot";
    if (strchr(name, '/'))
        return is_file(name) && access(name, X_OK) == 0 ? kv_xstrdup(name) : NULL;
    return search_path(name);
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

/* Run gnuplot on script with the -e assignments vars.  0, or -KV_EIO with the diag
 * naming the figure and gnuplot's complaint. */
static int run_gnuplot(const char *gnuplot, const char *script, const char *vars,
                       const char *figure, kv_diag *diag)
{
    int err_pipe[2];
    if (pipe(err_pipe) != 0)
        return kv_diag_set(diag, -KV_EIO, "cannot run gnuplot: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(err_pipe[0]);
        close(err_pipe[1]);
        return kv_diag_set(diag, -KV_EIO, "cannot run gnuplot: fork: %s", strerror(e));
    }
    if (pid == 0) {
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd >= 0) {
            dup2(null_fd, 0);
            dup2(null_fd, 1);
        }
        dup2(err_pipe[1], 2);
        close(err_pipe[0]);
        close(err_pipe[1]);
        char *argv[] = {(char *)"gnuplot", (char *)"-e", (char *)vars, (char *)script, NULL};
        execv(gnuplot, argv);
        /* Only async-signal-safe calls after a failed exec in the child. */
        static const char msg[] = "cannot execute gnuplot\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    close(err_pipe[1]);
    char *buf = kv_xmalloc(STDERR_KEEP);
    size_t len = 0;
    char chunk[4096];
    for (;;) {
        ssize_t r = read(err_pipe[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t k = (size_t)r; /* ≤ sizeof chunk < STDERR_KEEP: keep the tail */
        if (len + k > STDERR_KEEP) {
            size_t drop = len + k - STDERR_KEEP;
            memmove(buf, buf + drop, len - drop);
            len -= drop;
        }
        memcpy(buf + len, chunk, k);
        len += k;
    }
    close(err_pipe[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int rc = 0;
    if (WIFSIGNALED(status)) {
        rc = kv_diag_set(diag, -KV_EIO, "gnuplot was killed by signal %d drawing '%s'",
                         WTERMSIG(status), figure);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char msg[300];
        summarise_stderr(buf, len, msg, sizeof msg);
        rc = kv_diag_set(diag, -KV_EIO, "gnuplot failed drawing '%s' (exit %d): %s", figure,
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1, *msg ? msg : "no message");
    }
    free(buf);
    return rc;
}

/* ---- one figure ---------------------------------------------------------------------- */

static const char *const exts[] = {"png", "svg"};

/* dir/NAME.EXT + suffix, malloc'd. */
static char *figure_path(const char *dir, const char *name, const char *ext, const char *suffix)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + strlen(suffix) + 3;
    char *p = kv_xmalloc(n);
    snprintf(p, n, "%s/%s.%s%s", dir, name, ext, suffix);
    return p;
}

static int draw(const char *gnuplot, const char *plots, const char *dir, kv__fig *fig,
                kv_diag *diag)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".tmp-%ld", (long)getpid());
    kv__gpvars all = {NULL, 0, 0};
    kv__gpvars_str(&all, "dir", dir);
    kv__gpvars_str(&all, "outdir", dir);
    kv__gpvars_str(&all, "plots", plots);
    kv__gpvars_str(&all, "suffix", suffix);
    char *vars = all.s;
    size_t n = all.len + (fig->vars.s ? fig->vars.len : 0) + 1;
    all.s = kv_xmalloc(n);
    snprintf(all.s, n, "%s%s", vars, fig->vars.s ? fig->vars.s : "");
    free(vars);

    char script_name[64];
    snprintf(script_name, sizeof script_name, "%s.gp", fig->name);
    char *script = kv__path_join(plots, script_name);
    int rc = 0;
    if (!is_file(script))
        rc = kv_diag_set(diag, -KV_ENOENT, "no gnuplot script '%s'", script);
    if (rc == 0)
        rc = run_gnuplot(gnuplot, script, all.s, fig->name, diag);

    char *tmp[2], *final[2];
    for (int i = 0; i < 2; i++) {
        tmp[i] = figure_path(dir, fig->name, exts[i], suffix);
        final[i] = figure_path(dir, fig->name, exts[i], "");
        if (rc == 0 && !is_file(tmp[i]))
            rc = kv_diag_set(diag, -KV_EIO, "gnuplot did not write '%s'", tmp[i]);
    }
    for (int i = 0; i < 2 && rc == 0; i++)
        if (rename(tmp[i], final[i]) != 0)
            rc = kv_diag_set(diag, -KV_EIO, "cannot rename '%s': %s", tmp[i], strerror(errno));
    for (int i = 0; i < 2; i++) {
        unlink(tmp[i]); /* no-op after a successful rename */
        free(tmp[i]);
        free(final[i]);
    }
    free(script);
    kv__gpvars_release(&all);
    return rc;
}

/* ---- kv_plot_dir --------------------------------------------------------------------- */

int kv_plot_dir(const char *dir, kv_plot_report *rep, kv_diag *diag)
{
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
    char *gnuplot = kv_plot_find_gnuplot();
    if (!gnuplot)
        return KV_PLOT_NO_GNUPLOT;
    char *plots = NULL;
    int rc = find_scripts(&plots, diag);

    kv__figlist figs;
    memset(&figs, 0, sizeof figs);
    char note[2][128] = {"", ""};
    if (rc == 0 && (rep->kinds & KV_PLOT_RUN))
        rc = kv__plot_run_figs(dir, &figs, diag);
    if (rc == 0 && (rep->kinds & KV_PLOT_SWEEP))
        rc = kv__plot_sweep_figs(dir, &figs, note[0], sizeof note[0], diag);
    if (rc == 0 && (rep->kinds & KV_PLOT_PLAN))
        rc = kv__plot_plan_figs(dir, &figs, note[1], sizeof note[1], diag);
    snprintf(rep->note, sizeof rep->note, "%s%s%s", note[0], *note[0] && *note[1] ? "; " : "",
             note[1]);

    for (int i = 0; rc == 0 && i < figs.n; i++) {
        rc = draw(gnuplot, plots, dir, &figs.f[i], diag);
        if (rc == 0)
            rep->figures[rep->n_figures++] = figs.f[i].name;
    }
    kv__figlist_release(&figs);
    free(plots);
    free(gnuplot);
    return rc;
}
