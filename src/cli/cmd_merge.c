/* kvsim merge DIR… [--out FILE]: rebuild sweep.csv from finished configuration directories,
 * for sweeps whose configurations ran elsewhere (--emit-jobs on a cluster, several sweeps
 * into one table, a sweep rerun in parts).
 *
 * A DIR holding summary.json is one configuration; any other DIR is searched one level
 * deep for subdirectories holding summary.json.  Rows are built and ordered by the same
 * code as `kvsim sweep` (src/report_sweep.c), so merging a sweep's own directory
 * reproduces its sweep.csv byte for byte.  A directory listed twice (or found twice, as a
 * sweep directory and as one of its configurations) gives one row.  Subdirectories with a
 * stderr.txt but no summary.json are configurations sweep saw fail: they are named on
 * stderr and left out.
 */
#define _XOPEN_SOURCE 700 /* realpath(3) */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/sweep.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"

typedef struct merge_cmd {
    const char *out; /* --out FILE, or NULL: DIR/sweep.csv */
    bool quiet;
} merge_cmd;

static const cli_opt options[] = {
    {"out", 'o', "FILE", CLI_TEXT(merge_cmd, out),
     "where sweep.csv goes ('-' = stdout); default DIR/sweep.csv\n"
     "when one sweep directory is given (required otherwise)"},
    {"quiet", 'q', NULL, CLI_SET(merge_cmd, quiet), "print no table"},
    {0},
};

static const cli_section sections[] = {{"options", options, NULL}, {0}};

static const cli_group group = {sections, NULL, NULL};

typedef struct merge {
    kv_sweep_row *rows;
    char **real; /* realpath of each row's directory, to drop duplicates */
    size_t n, cap, cap_real;
    bool quiet;
} merge;

static bool has_file(const char *dir, const char *name)
{
    char *path = kv_path_join(dir, name);
    struct stat st;
    bool yes = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return yes;
}

static int add_config(merge *m, const char *dir)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        snprintf(real, sizeof real, "%s", dir);
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->real[i], real) == 0)
            return CLI_OK;
    kv_grow((void **)&m->rows, &m->cap, m->n + 1, sizeof *m->rows);
    kv_grow((void **)&m->real, &m->cap_real, m->n + 1, sizeof *m->real);
    kv_diag d;
    if (kv_sweep_row_load(&m->rows[m->n], dir, &d) != 0)
        return cli_diag(CLI_RUNTIME, &d);
    m->real[m->n++] = kv_xstrdup(real);
    return CLI_OK;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A sweep directory: every subdirectory with summary.json, in name order. */
static int add_tree(merge *m, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error(CLI_RUNTIME, "cannot open directory '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        kv_grow((void **)&names, &cap, n + 1, sizeof *names);
        names[n++] = kv_xstrdup(e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);
    int rc = CLI_OK;
    for (size_t i = 0; i < n; i++) {
        char *sub = kv_path_join(dir, names[i]);
        struct stat st;
        if (rc == CLI_OK && stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (has_file(sub, "summary.json"))
                rc = add_config(m, sub);
            else if (has_file(sub, "stderr.txt") && !m->quiet)
                fprintf(stderr,
                        "kvsim merge: left out '%s': no summary.json (the configuration "
                        "failed; see its stderr.txt)\n",
                        sub);
        }
        free(sub);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int exec(void *state, int argc, char **argv)
{
    const char *out = ((merge_cmd *)state)->out;
    merge m;
    memset(&m, 0, sizeof m);
    m.quiet = ((merge_cmd *)state)->quiet;
    int rc = CLI_OK;
    bool one_tree = argc == 1 && !has_file(argv[0], "summary.json");
    if (!out && !one_tree)
        rc = cli_error(CLI_USAGE, "kvsim merge writes DIR/sweep.csv only for one sweep "
                                  "directory; give --out FILE");
    for (int i = 0; rc == CLI_OK && i < argc; i++) {
        const char *dir = argv[i];
        rc = has_file(dir, "summary.json") ? add_config(&m, dir) : add_tree(&m, dir);
    }
    if (rc == CLI_OK && m.n == 0)
        rc = cli_error(CLI_RUNTIME,
                       "no finished configuration (a directory with summary.json) "
                       "in '%s'%s",
                       argv[0], argc > 1 ? " or the other directories" : "");
    char *path = NULL;
    if (rc == CLI_OK) {
        path = out ? kv_xstrdup(out) : kv_path_join(argv[0], "sweep.csv");
        kv_sweep_rows_sort(m.rows, m.n);
        kv_diag d;
        if (kv_sweep_csv_write(path, m.rows, m.n, &d) != 0)
            rc = cli_diag(CLI_RUNTIME, &d);
    }
    if (rc == CLI_OK && !m.quiet && strcmp(path, "-") != 0) {
        cli_sweep_print_table(stdout, m.rows, m.n);
        printf("kvsim merge: %zu configuration%s into %s\n", m.n, m.n == 1 ? "" : "s", path);
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = cli_error(CLI_RUNTIME, "cannot write to standard output");
    }
    for (size_t i = 0; i < m.n; i++) {
        kv_sweep_row_release(&m.rows[i]);
        free(m.real[i]);
    }
    free(m.rows);
    free(m.real);
    free(path);
    return rc;
}

const cli_cmd cli_cmd_merge = {
    .name = "merge",
    .summary = "rebuild sweep.csv from finished configuration directories",
    .synopsis = "DIR... [--out FILE] [--quiet]",
    .description =
        "Rebuild sweep.csv from finished 'kvsim run --out' directories: a DIR holding\n"
        "summary.json is one configuration, any other DIR is searched one level deep (a\n"
        "'kvsim sweep --out' directory).  Rows are ordered by block_size, num_blocks,\n"
        "kv_budget_bytes, watermark, free_order, max_seqs, preempt, then directory - the\n"
        "order kvsim sweep writes - so merging a sweep's directory reproduces its sweep.csv.\n"
        "Configurations without summary.json are left out; those sweep saw fail (a\n"
        "stderr.txt) are named on stderr.\n",
    .uses = {{&group, 0}},
    .args = {1, -1, "kvsim merge needs at least one DIR", NULL},
    .state_size = sizeof(merge_cmd),
    .exec = exec,
};
