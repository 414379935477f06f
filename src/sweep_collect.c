/* sweep_collect: the rows of finished configuration directories, as `kvsim merge` reads
 * them (include/kvsim/sweep.h), for sweeps whose configurations ran elsewhere (--emit-jobs
 * on a cluster, several sweeps into one table, a sweep rerun in parts).
 *
 * A directory holding summary.json is one configuration; any other is searched one level
 * deep, in name order, for subdirectories holding summary.json.  Duplicates are found by
 * realpath (a directory listed twice, or found as a sweep directory and as one of its
 * configurations), so each gives one row: O(rows²) comparisons, fine for a row per
 * configuration.  Subdirectories with a stderr.txt but no summary.json are configurations
 * sweep saw fail: they are reported through a callback and left out.
 *
 * Any finished directories go into one table: sweep.csv carries every option of the run
 * as a column (the trace, model, GPU, TP, time model…, swept or not), so rows of
 * different workloads or setups stay apart by their cells.
 *
 * Clearing (kv_sweep_clear) checks the whole directory before removing anything, so a
 * refusal leaves it as it was.
 */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvsim/mem.h"
#include "kvsim/outdir.h"
#include "kvsim/path.h"
#include "kvsim/plot.h"
#include "kvsim/report.h"
#include "kvsim/sweep.h"

typedef struct collect {
    kv_sweep_row *rows;
    char **real; /* realpath of each row's directory */
    size_t n, cap, cap_real;
    kv_sweep_left_out left_out;
    void *ctx;
} collect;

static bool has_file(const char *dir, const char *name)
{
    char *path = kv_path_join(dir, name);
    struct stat st;
    bool yes = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return yes;
}

bool kv_sweep_is_config_dir(const char *dir)
{
    return has_file(dir, "summary.json");
}

static int add_config(collect *m, const char *dir, kv_diag *diag)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        snprintf(real, sizeof real, "%s", dir);
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->real[i], real) == 0)
            return 0;
    kv_grow((void **)&m->rows, &m->cap, m->n + 1, sizeof *m->rows);
    kv_grow((void **)&m->real, &m->cap_real, m->n + 1, sizeof *m->real);
    int rc = kv_sweep_row_load(&m->rows[m->n], dir, diag);
    if (rc == 0)
        m->real[m->n++] = kv_xstrdup(real);
    return rc;
}

/* A sweep directory: every subdirectory with summary.json, in name order. */
static int add_tree(collect *m, const char *dir, kv_diag *diag)
{
    char **names;
    size_t n;
    int rc = kv_path_list(dir, &names, &n, diag);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        /* Hidden names are never configurations: the temporary directory of a run in
         * progress or killed (outdir.h) may hold a summary.json already. */
        if (names[i][0] == '.')
            continue;
        char *sub = kv_path_join(dir, names[i]);
        struct stat st;
        if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (has_file(sub, "summary.json"))
                rc = add_config(m, sub, diag);
            else if (has_file(sub, "stderr.txt") && m->left_out)
                m->left_out(m->ctx, sub);
        }
        free(sub);
    }
    kv_path_list_free(names, n);
    return rc;
}

int kv_sweep_collect(const char *const *dirs, size_t n_dirs, kv_sweep_left_out left_out, void *ctx,
                     kv_sweep_row **rows, size_t *n, kv_diag *diag)
{
    collect m = {.left_out = left_out, .ctx = ctx};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n_dirs; i++)
        rc = has_file(dirs[i], "summary.json") ? add_config(&m, dirs[i], diag)
                                               : add_tree(&m, dirs[i], diag);
    for (size_t i = 0; i < m.n; i++)
        free(m.real[i]);
    free(m.real);
    kv_sweep_rows_sort(m.rows, m.n);
    *rows = m.rows;
    *n = m.n;
    return rc;
}

/* ---- clearing an earlier sweep (sweep --force) --------------------------------------- */

/* Whether name (an entry of a sweep directory) is a file a sweep writes there. */
static bool is_sweep_file(const char *name)
{
    if (strcmp(name, "sweep.csv") == 0 || strcmp(name, KV_SWEEP_TRACE_COPY) == 0 ||
        kv_outdir_is_temp_name(name))
        return true;
    return kv_outdir_is_figure_name(name, kv_plot_figure_names(KV_PLOT_SWEEP));
}

/* Whether name (an entry of a configuration directory) is a file a run writes there. */
static bool is_run_file(const char *name)
{
    for (const char *const *f = kv_out_file_names(); *f; f++)
        if (strcmp(*f, name) == 0)
            return true;
    if (kv_outdir_is_temp_name(name))
        return true;
    return kv_outdir_is_figure_name(name, kv_plot_figure_names(KV_PLOT_RUN));
}

/* Walk dir (depth 0: the sweep directory, 1: a configuration directory): check every
 * entry (remove false) or remove them (remove true), in name order.  0, or -KV_EIO naming
 * the first that is not a sweep's. */
static int clear_walk(const char *dir, int depth, bool remove, kv_diag *diag)
{
    char **names;
    size_t n;
    int rc = kv_path_list(dir, &names, &n, diag);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *p = kv_path_join(dir, names[i]);
        struct stat st;
        bool ok = lstat(p, &st) == 0;
        if (ok && S_ISDIR(st.st_mode) && depth == 0) {
            rc = clear_walk(p, 1, remove, diag);
            if (rc == 0 && remove && rmdir(p) != 0)
                rc = kv_diag_set(diag, -KV_EIO, "cannot remove '%s': %s", p, strerror(errno));
        } else if (ok && S_ISREG(st.st_mode) &&
                   (depth == 0 ? is_sweep_file(names[i]) : is_run_file(names[i]))) {
            if (remove && unlink(p) != 0)
                rc = kv_diag_set(diag, -KV_EIO, "cannot remove '%s': %s", p, strerror(errno));
        } else {
            rc = kv_diag_set(diag, -KV_EIO,
                             "'%s' was not written by kvsim sweep; not removing the earlier "
                             "sweep in '%s'",
                             p, dir);
        }
        free(p);
    }
    kv_path_list_free(names, n);
    return rc;
}

int kv_sweep_clear(const char *dir, kv_diag *diag)
{
    struct stat st;
    if (stat(dir, &st) != 0 && errno == ENOENT)
        return 0;
    int rc = clear_walk(dir, 0, false, diag);
    return rc == 0 ? clear_walk(dir, 0, true, diag) : rc;
}
