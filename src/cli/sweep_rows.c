/* sweep_rows: the CLI half of sweeps — list options parsed into the core's space, and the
 * human table of finished configurations (see cli/sweep.h).
 *
 * A list is split at commas (empty items are errors; a router's weights and a time
 * model's parameters continue their item); every item goes through the very option of the
 * simulation or model group that `kvsim run` would parse it with, so an item is valid
 * exactly when `kvsim run` would accept it, and its message is run's.  A flag pair
 * (--prefix-caching and --no-prefix-caching) is one list of "on" and "off". */
#include <stdlib.h>
#include <string.h>

#include "cli/sweep.h"
#include "kvsim/mem.h"
#include "kvsim/text.h"

/* Whether an item continues the one before it (its first byte at head) rather than
 * starting one: the weights of a weighted router ("prefix,weighted:prefix=3,kv=1" is two
 * policies), the parameters of a time model ("fixed:0.01,linear:0.002,2e-5,1e-7" is two
 * models). */
typedef bool (*continues_fn)(const char *item, size_t len, const char *head);

static bool router_continues(const char *p, size_t len, const char *head)
{
    return strncmp(head, "weighted:", 9) == 0 && memchr(p, '=', len) && !memchr(p, ':', len);
}

static bool time_model_continues(const char *p, size_t len, const char *head)
{
    static const char *const models[] = {"roofline", "linear", "fixed"};
    for (size_t i = 0; i < 3; i++) {
        size_t m = strlen(models[i]);
        if (len >= m && strncmp(p, models[i], m) == 0 && (len == m || p[m] == ':'))
            return false;
    }
    return true;
}

/* The items of a list cut at commas where cont says an item starts, written into out
 * NUL-separated; returns their count, or -1 for an empty item. */
static int split_items(const char *list, continues_fn cont, kv_buf *out)
{
    int n = 0;
    const char *head = list;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return -1;
        if (n > 0 && cont(p, len, head)) {
            out->len--; /* drop the NUL that ended the item before */
            kv_buf_putc(out, ',');
        } else {
            head = p;
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

/* The items of any other list (kv_kvlist: an empty item is an error), as split_items. */
static int plain_items(const char *list, kv_buf *out)
{
    kv_kvlist items;
    kv_kvlist_init(&items, list, 0, NULL);
    kv_kvitem it;
    int n = 0, got;
    while ((got = kv_kvlist_next(&items, &it, NULL)) > 0) {
        kv_buf_puts(out, it.text);
        kv_buf_putc(out, '\0');
        n++;
    }
    kv_kvlist_release(&items);
    return got < 0 ? -1 : n;
}

static const cli_group *group_of(const kv_sweep_list *l)
{
    return kv_sweep_list_is_setup(l) ? &cli_model_group : &cli_sim_group;
}

/* One item of a flag pair's list: "on" or "off", applied as run's flag would be. */
static int apply_flag(const kv_sweep_list *l, const char *item, kv_sim_options *so)
{
    bool on = strcmp(item, "on") == 0;
    if (!on && strcmp(item, "off") != 0)
        return cli_error(CLI_USAGE, "--%s: '%s' is not on or off (a sweep lists on, off or on,off)",
                         kv_sweep_list_opt(l), item);
    const char *name = on ? kv_sweep_list_opt(l) : kv_sweep_list_off(l);
    return cli_apply(&cli_sim_group, so, cli_group_find(&cli_sim_group, name), NULL);
}

int cli_sweep_apply(const kv_sweep_list *l, const kv_sweep_value *v, kv_setup_options *mo,
                    kv_sim_options *so)
{
    if (kv_sweep_list_off(l))
        return apply_flag(l, v->arg, so);
    const cli_group *g = group_of(l);
    return cli_apply(g, g == &cli_model_group ? (void *)mo : (void *)so,
                     cli_group_find(g, kv_sweep_list_opt(l)), v->arg);
}

int cli_sweep_list(kv_sweep_space *sp, const char *opt, const char *list, kv_setup_options *mo,
                   kv_sim_options *so)
{
    const kv_sweep_list *l = kv_sweep_list_find(opt);
    if (!l)
        return cli_error(CLI_USAGE, "internal: --%s is not a sweep list", opt);
    const cli_group *g = group_of(l);
    void *target = g == &cli_model_group ? (void *)mo : (void *)so;
    const cli_opt *o = cli_group_find(g, opt);
    kv_buf items = {0};
    int n = !strcmp(opt, "router")       ? split_items(list, router_continues, &items)
            : !strcmp(opt, "time-model") ? split_items(list, time_model_continues, &items)
                                         : plain_items(list, &items);
    int rc = n <= 0 ? cli_error(CLI_USAGE, "--%s: empty item in the list '%s'", opt, list) : CLI_OK;
    kv_sweep_value *v = kv_xcalloc(n > 0 ? (size_t)n : 1, sizeof *v);
    const char *it = items.s;
    for (int i = 0; rc == CLI_OK && i < n; i++, it += strlen(it) + 1) {
        if (strlen(it) >= 128)
            rc = cli_error(CLI_USAGE, "--%s: item '%.40s…' is too long", opt, it);
        else if (kv_sweep_list_off(l))
            rc = apply_flag(l, it, so);
        else
            rc = cli_apply(g, target, o, it);
        if (rc == CLI_OK)
            kv_sweep_value_of(l, mo, so, &v[i]);
    }
    kv_diag d;
    if (rc == CLI_OK && kv_sweep_space_set(sp, l, v, (size_t)n, list, &d) != 0)
        rc = cli_diag(CLI_USAGE, &d);
    /* The options held pointers into the items (a model, a time model): point them at the
     * space's copy of a value, which lives as long as the sweep. */
    if (rc == CLI_OK)
        rc = cli_sweep_apply(l, &sp->ax[kv_sweep_axis_of(l)].v[n - 1], mo, so);
    free(v);
    kv_buf_release(&items);
    return rc;
}

int cli_sweep_config_options(const kv_sweep_space *sp, const size_t at[KV_SWEEP_N_AXES],
                             kv_setup_options *mo, kv_sim_options *so)
{
    int rc = CLI_OK;
    for (int x = 0; rc == CLI_OK && x < KV_SWEEP_N_AXES; x++)
        if (sp->ax[x].n)
            rc = cli_sweep_apply(kv_sweep_list_find(sp->ax[x].opt), &sp->ax[x].v[at[x]], mo, so);
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
