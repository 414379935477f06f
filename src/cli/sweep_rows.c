/* sweep_rows: the CLI half of sweeps — list options parsed into the core's space, and the
 * human table of finished configurations (see cli/sweep.h).
 *
 * A list is split by kv_kvlist (empty items are errors); every item goes through the very
 * option of the simulation or model group that `kvsim run` would parse it with, so an item
 * is valid exactly when `kvsim run` would accept it, and its message is run's. */
#include <stdlib.h>
#include <string.h>

#include "cli/sweep.h"
#include "kvsim/mem.h"
#include "kvsim/text.h"

int cli_sweep_list(kv_sweep_space *sp, const char *opt, const char *list, kv_setup_options *mo,
                   kv_sim_options *so)
{
    const kv_sweep_list *l = kv_sweep_list_find(opt);
    if (!l)
        return cli_error(CLI_USAGE, "internal: --%s is not a sweep list", opt);
    bool setup = kv_sweep_list_is_setup(l);
    const cli_group *g = setup ? &cli_model_group : &cli_sim_group;
    const cli_opt *o = cli_group_find(g, opt);
    kv_sweep_value *v = NULL;
    size_t n = 0, cap = 0;
    int rc = CLI_OK, got;
    kv_kvlist items;
    kv_kvlist_init(&items, list, 0, NULL);
    kv_kvitem it;
    while (rc == CLI_OK && (got = kv_kvlist_next(&items, &it, NULL)) != 0) {
        if (got < 0)
            rc = cli_error(CLI_USAGE, "--%s: empty item in the list '%s'", opt, list);
        else if (strlen(it.text) >= 128)
            rc = cli_error(CLI_USAGE, "--%s: item '%.40s…' is too long", opt, it.text);
        else if ((rc = cli_apply(g, setup ? (void *)mo : (void *)so, o, it.text)) == CLI_OK) {
            kv_grow((void **)&v, &cap, n + 1, sizeof *v);
            kv_sweep_value_of(l, mo, so, &v[n++]);
        }
    }
    kv_kvlist_release(&items);
    kv_diag d;
    if (rc == CLI_OK && kv_sweep_space_set(sp, l, v, n, list, &d) != 0)
        rc = cli_diag(CLI_USAGE, &d);
    free(v);
    return rc;
}

void cli_sweep_print_table(FILE *f, const kv_sweep_row *rows, size_t n)
{
    int w = 6;
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(rows[i].config) > w)
            w = (int)strlen(rows[i].config);
    fprintf(f, "  %-*s %10s %8s %8s %10s %7s %6s %10s %8s %8s %9s %9s %9s\n", w, "config",
            "num_blocks", "finished", "rejected", "peak_phys", "sharing", "hit%", "evictions",
            "preempt", "wm_defer", "ttft_p99", "tpot_p99", "tok/s");
    for (size_t i = 0; i < n; i++) {
        const kv_summary *s = &rows[i].summary;
        if (!rows[i].ok) {
            fprintf(f, "  %-*s FAILED: %s\n", w, rows[i].config, rows[i].failure);
            continue;
        }
        fprintf(f,
                "  %-*s %10llu %8llu %8llu %10llu %7.3f %6.2f %10llu %8llu %8llu %9.3f %9.4f "
                "%9.1f\n",
                w, rows[i].config, (unsigned long long)s->config.num_blocks,
                (unsigned long long)s->requests.finished, (unsigned long long)s->requests.rejected,
                (unsigned long long)s->blocks.peak_physical, s->blocks.sharing_ratio,
                100.0 * s->prefix.hit_rate, (unsigned long long)s->evictions,
                (unsigned long long)s->preemptions, (unsigned long long)s->watermark.deferrals,
                s->latency_s.ttft.p99, s->latency_s.tpot.p99, s->throughput.output_tok_per_s);
    }
}
