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

/* The items of a --router list: cut at commas, where an item with a '=' and no ':'
 * continues the weighted policy before it ("prefix,weighted:prefix=3,kv=1" is two
 * policies).  Items are written into out, NUL-separated; returns their count, or -1 for an
 * empty item. */
static int router_items(const char *list, kv_buf *out)
{
    int n = 0;
    bool weighted = false;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return -1;
        bool cont = weighted && memchr(p, '=', len) && !memchr(p, ':', len);
        if (cont) {
            out->len--; /* drop the NUL that ended the weighted item */
            kv_buf_putc(out, ',');
        } else {
            weighted = strncmp(p, "weighted:", 9) == 0;
            n++;
        }
        for (size_t i = 0; i < len; i++)
            kv_buf_putc(out, p[i]);
        kv_buf_putc(out, '\0');
        if (p[len] == '\0')
            return n;
        p += len + 1;
    }
}

static int router_list(kv_sweep_space *sp, const kv_sweep_list *l, const char *list,
                       kv_setup_options *mo, kv_sim_options *so)
{
    const cli_opt *o = cli_group_find(&cli_sim_group, "router");
    kv_buf items = {0};
    int n = router_items(list, &items), rc = CLI_OK;
    if (n < 0)
        rc = cli_error(CLI_USAGE, "--router: empty item in the list '%s'", list);
    kv_sweep_value *v = kv_xcalloc(n > 0 ? (size_t)n : 1, sizeof *v);
    const char *it = items.s;
    for (int i = 0; rc == CLI_OK && i < n; i++, it += strlen(it) + 1)
        if ((rc = cli_apply(&cli_sim_group, so, o, it)) == CLI_OK)
            kv_sweep_value_of(l, mo, so, &v[i]);
    kv_diag d;
    if (rc == CLI_OK && kv_sweep_space_set(sp, l, v, (size_t)n, list, &d) != 0)
        rc = cli_diag(CLI_USAGE, &d);
    free(v);
    kv_buf_release(&items);
    return rc;
}

int cli_sweep_list(kv_sweep_space *sp, const char *opt, const char *list, kv_setup_options *mo,
                   kv_sim_options *so)
{
    const kv_sweep_list *l = kv_sweep_list_find(opt);
    if (!l)
        return cli_error(CLI_USAGE, "internal: --%s is not a sweep list", opt);
    if (strcmp(opt, "router") == 0)
        return router_list(sp, l, list, mo, so);
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
    bool cost = false; /* the cost column only when some run was given --gpu-cost-per-hour */
    for (size_t i = 0; i < n; i++) {
        if ((int)strlen(rows[i].config) > w)
            w = (int)strlen(rows[i].config);
        cost |= rows[i].ok && rows[i].summary.throughput.cost_per_million_output_tokens > 0;
    }
    fprintf(f, "  %-*s %10s %8s %8s %10s %7s %6s %10s %8s %8s %9s %9s %9s %9s%s\n", w, "config",
            "num_blocks", "finished", "rejected", "peak_phys", "sharing", "hit%", "evictions",
            "preempt", "wm_defer", "ttft_p99", "tpot_p99", "tok/s", "tok/s/GPU",
            cost ? "  cost/Mtok" : "");
    for (size_t i = 0; i < n; i++) {
        const kv_summary *s = &rows[i].summary;
        if (!rows[i].ok) {
            fprintf(f, "  %-*s FAILED: %s\n", w, rows[i].config, rows[i].failure);
            continue;
        }
        fprintf(f,
                "  %-*s %10llu %8llu %8llu %10llu %7.3f %6.2f %10llu %8llu %8llu %9.3f %9.4f "
                "%9.1f %9.1f",
                w, rows[i].config, (unsigned long long)s->config.num_blocks,
                (unsigned long long)s->requests.finished, (unsigned long long)s->requests.rejected,
                (unsigned long long)s->blocks.peak_physical, s->blocks.sharing_ratio,
                100.0 * s->prefix.hit_rate, (unsigned long long)s->evictions,
                (unsigned long long)s->preemptions, (unsigned long long)s->watermark.deferrals,
                s->latency_s.ttft.p99, s->latency_s.tpot.p99, s->throughput.output_tok_per_s,
                s->throughput.output_tok_per_s_per_gpu);
        double c = s->throughput.cost_per_million_output_tokens;
        if (cost && c > 0)
            fprintf(f, " %10.4g", c);
        else if (cost)
            fprintf(f, " %10s", "-");
        fputc('\n', f);
    }
}
