/* kvsim merge DIR… [--out FILE]: rebuild sweep.csv from finished configuration directories,
 * for sweeps whose configurations ran elsewhere (--emit-jobs on a cluster, several sweeps
 * into one table, a sweep rerun in parts).
 *
 * Finding the configurations is the core's kv_sweep_collect (src/sweep_collect.c); rows
 * are built and ordered by the same code as `kvsim sweep` (src/report_sweep.c), so merging
 * a sweep's own directory reproduces its sweep.csv byte for byte.  This file checks where
 * sweep.csv goes, names the configurations left out on stderr, and prints the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sweep.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"

typedef struct merge_cmd {
    const char *out; /* --out FILE, or NULL: DIR/sweep.csv */
    bool quiet;
} merge_cmd;

static const cli_opt options[] = {
    {"out", 'o', "FILE", CLI_FILE(merge_cmd, out),
     "where sweep.csv goes ('-' = stdout); default DIR/sweep.csv\n"
     "when one sweep directory is given (required otherwise)"},
    {"quiet", 'q', NULL, CLI_SET(merge_cmd, quiet), "print no table"},
    {0},
};

static const cli_section sections[] = {{"options", options, NULL}, {0}};

static const cli_group group = {sections, NULL, NULL};

static void left_out(void *ctx, const char *dir)
{
    fprintf(stderr,
            "kvsim merge: left out '%s': no summary.json (the configuration "
            "failed; see its stderr.txt)\n",
            dir);
}

static int exec(void *state, int argc, char **argv)
{
    const merge_cmd *m = state;
    if (!m->out && !(argc == 1 && !kv_sweep_is_config_dir(argv[0])))
        return cli_error(CLI_USAGE, "kvsim merge writes DIR/sweep.csv only for one sweep "
                                    "directory; give --out FILE");
    kv_sweep_row *rows = NULL;
    size_t n = 0;
    kv_diag d;
    int rc = CLI_OK;
    if (kv_sweep_collect((const char *const *)argv, (size_t)argc, m->quiet ? NULL : left_out, NULL,
                         &rows, &n, &d) != 0)
        rc = cli_diag(CLI_RUNTIME, &d);
    else if (n == 0)
        rc = cli_error(CLI_RUNTIME,
                       "no finished configuration (a directory with summary.json) "
                       "in '%s'%s",
                       argv[0], argc > 1 ? " or the other directories" : "");
    char *path = NULL;
    if (rc == CLI_OK) {
        path = m->out ? kv_xstrdup(m->out) : kv_path_join(argv[0], "sweep.csv");
        if (kv_sweep_csv_write(path, rows, n, &d) != 0)
            rc = cli_diag(CLI_RUNTIME, &d);
    }
    if (rc == CLI_OK && !m->quiet && strcmp(path, "-") != 0) {
        cli_sweep_print_table(stdout, rows, n);
        printf("kvsim merge: %zu configuration%s into %s\n", n, n == 1 ? "" : "s", path);
        if (rc == CLI_OK)
            rc = cli_flush_stdout();
    }
    for (size_t i = 0; i < n; i++)
        kv_sweep_row_release(&rows[i]);
    free(rows);
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
