/* sweep_space: the configurations of a sweep — the comma lists, their canonical values,
 * and the cartesian product with its directory names (see sweep.h).
 *
 * Every list item is validated by the handler `kvsim run` uses for the single-valued
 * option of the same name (cli_model_opts_handle / cli_sim_opts_handle), so a sweep
 * accepts exactly what run accepts, with run's messages, and the value is then read back
 * from the option struct and printed canonically: integers in decimal, --kv-budget in
 * bytes, --watermark as the shortest decimal that reads back as the same double, names
 * as run spells them.  Equal values written differently ("0.01" and "0.010", "1GiB" and
 * "1024MiB") are therefore one value, and a repeat is an error.
 *
 * Each list is sorted (numbers ascending, names alphabetically), so the configuration
 * order and the names depend only on the set of values given.  Axes, outermost first:
 * block size, pool size (--num-blocks or --kv-budget), watermark, free order, max seqs,
 * preempt — the order sweep.csv rows are sorted in (sweep_rows.c), so a sweep's rows
 * come out in configuration order.
 *
 * Names: the labels of every axis joined by '_': b<B>, then n<N> or kv<SIZE> when a pool
 * size was listed, wm<F>, the free order, s<N>, the preempt policy, e.g.
 * b16_wm0.01_split_s256_fcfs or b8_kv24GiB_wm0_append_s64_priority.  Labels are
 * injective on values, so names are unique within a sweep, and stable across sweeps.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "cli/sweep.h"
#include "kvsim/mem.h"

typedef enum kind { K_COUNT, K_SIZE, K_REAL, K_NAME } kind;

/* The lists, by run's option name. */
static const struct list_def {
    const char *opt;
    int axis;
    bool model; /* handled by the model group (else the simulation group) */
    kind k;
    const char *prefix; /* of the label */
} lists[] = {
    {"block-size", SWEEP_AX_BLOCK, true, K_COUNT, "b"},
    {"num-blocks", SWEEP_AX_POOL, true, K_COUNT, "n"},
    {"kv-budget", SWEEP_AX_POOL, true, K_SIZE, "kv"},
    {"watermark", SWEEP_AX_WATERMARK, false, K_REAL, "wm"},
    {"free-order", SWEEP_AX_FREE, false, K_NAME, ""},
    {"max-seqs", SWEEP_AX_SEQS, false, K_COUNT, "s"},
    {"preempt", SWEEP_AX_PREEMPT, false, K_NAME, ""},
};
enum { N_LISTS = sizeof lists / sizeof lists[0] };

static const struct list_def *find_list(const char *opt)
{
    for (size_t i = 0; i < N_LISTS; i++)
        if (strcmp(lists[i].opt, opt) == 0)
            return &lists[i];
    return NULL;
}

bool sweep_space_is_list(const char *opt)
{
    return find_list(opt) != NULL;
}

/* Shortest "%g" text that reads back as exactly d. */
static void shortest_double(char *buf, size_t n, double d)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

void sweep_size_label(char *buf, size_t n, uint64_t bytes)
{
    static const char *const units[] = {"PiB", "TiB", "GiB", "MiB", "KiB"};
    for (int i = 0; i < 5; i++) {
        uint64_t unit = 1ull << (10 * (5 - i));
        if (bytes % unit == 0) {
            snprintf(buf, n, "%llu%s", (unsigned long long)(bytes / unit), units[i]);
            return;
        }
    }
    snprintf(buf, n, "%llu", (unsigned long long)bytes);
}

/* The value the options now hold for list l (after its handler accepted an item, or the
 * default when the list was not given). */
static void describe(const struct list_def *l, const cli_model_opts *mo, const cli_sim_opts *so,
                     sweep_value *v)
{
    memset(v, 0, sizeof *v);
    char text[32];
    if (strcmp(l->opt, "block-size") == 0)
        v->u = mo->block_size;
    else if (strcmp(l->opt, "num-blocks") == 0)
        v->u = mo->num_blocks;
    else if (strcmp(l->opt, "kv-budget") == 0)
        v->u = mo->kv_budget;
    else if (strcmp(l->opt, "max-seqs") == 0)
        v->u = so->sched.max_seqs;
    else if (strcmp(l->opt, "watermark") == 0)
        v->d = so->sched.watermark == 0 ? 0.0 : so->sched.watermark; /* never "-0" */
    else if (strcmp(l->opt, "free-order") == 0)
        snprintf(v->arg, sizeof v->arg, "%s", kv_free_order_name(so->free_order));
    else
        snprintf(v->arg, sizeof v->arg, "%s", kv_preempt_name(so->sched.preempt));
    if (l->k == K_COUNT || l->k == K_SIZE)
        snprintf(v->arg, sizeof v->arg, "%llu", (unsigned long long)v->u);
    else if (l->k == K_REAL)
        shortest_double(v->arg, sizeof v->arg, v->d);
    if (l->k == K_SIZE)
        sweep_size_label(text, sizeof text, v->u);
    else
        snprintf(text, sizeof text, "%s", v->arg);
    snprintf(v->label, sizeof v->label, "%s%s", l->prefix, text);
}

static int cmp_count(const void *a, const void *b)
{
    uint64_t x = ((const sweep_value *)a)->u, y = ((const sweep_value *)b)->u;
    return (x > y) - (x < y);
}

static int cmp_real(const void *a, const void *b)
{
    double x = ((const sweep_value *)a)->d, y = ((const sweep_value *)b)->d;
    return (x > y) - (x < y);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const sweep_value *)a)->arg, ((const sweep_value *)b)->arg);
}

int sweep_space_parse(sweep_space *sp, const char *opt, const char *list, cli_model_opts *mo,
                      cli_sim_opts *so)
{
    const struct list_def *l = find_list(opt);
    if (!l)
        return cli_error(CLI_USAGE, "internal: --%s is not a sweep list", opt);
    const cli_opt *group = l->model ? cli_model_options : cli_sim_options;
    int id = 0;
    for (const cli_opt *t = group; t->name && !id; t++)
        if (strcmp(t->name, opt) == 0)
            id = t->id;
    sweep_axis *a = &sp->ax[l->axis];
    free(a->v);
    a->v = NULL;
    a->n = 0;
    a->opt = l->opt;
    size_t cap = 0;
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        char item[128];
        if (len == 0)
            return cli_error(CLI_USAGE, "--%s: empty item in the list '%s'", opt, list);
        if (len >= sizeof item)
            return cli_error(CLI_USAGE, "--%s: item '%.40s…' is too long", opt, p);
        memcpy(item, p, len);
        item[len] = '\0';
        int rc = l->model ? cli_model_opts_handle(mo, id, item) : cli_sim_opts_handle(so, id, item);
        if (rc != CLI_OK)
            return rc;
        kv_grow((void **)&a->v, &cap, a->n + 1, sizeof *a->v);
        describe(l, mo, so, &a->v[a->n++]);
        p += len;
        if (*p == '\0')
            break;
    }
    int (*cmp)(const void *, const void *) = l->k == K_REAL   ? cmp_real
                                             : l->k == K_NAME ? cmp_name
                                                              : cmp_count;
    qsort(a->v, a->n, sizeof *a->v, cmp);
    for (size_t i = 1; i < a->n; i++)
        if (cmp(&a->v[i - 1], &a->v[i]) == 0)
            return cli_error(CLI_USAGE, "--%s: %s appears twice in the list '%s'", opt, a->v[i].arg,
                             list);
    return CLI_OK;
}

size_t sweep_space_complete(sweep_space *sp, const cli_model_opts *mo, const cli_sim_opts *so)
{
    size_t n = 1;
    for (int x = 0; x < SWEEP_N_AXES; x++) {
        sweep_axis *a = &sp->ax[x];
        if (a->n == 0 && x != SWEEP_AX_POOL) {
            for (size_t i = 0; i < N_LISTS && a->n == 0; i++) {
                if (lists[i].axis != x)
                    continue;
                a->v = kv_xcalloc(1, sizeof *a->v);
                a->n = 1;
                a->opt = lists[i].opt;
                describe(&lists[i], mo, so, &a->v[0]);
            }
        }
        if (a->n) /* saturate: the caller only compares with a small limit */
            n = n > SIZE_MAX / a->n ? SIZE_MAX : n * a->n;
    }
    return n;
}

void sweep_space_at(const sweep_space *sp, size_t i, size_t at[SWEEP_N_AXES], char *name, size_t n)
{
    for (int x = SWEEP_N_AXES - 1; x >= 0; x--) { /* the last axis varies fastest */
        size_t dim = sp->ax[x].n ? sp->ax[x].n : 1;
        at[x] = i % dim;
        i /= dim;
    }
    size_t len = 0;
    name[0] = '\0';
    for (int x = 0; x < SWEEP_N_AXES; x++) {
        if (sp->ax[x].n == 0)
            continue;
        snprintf(name + len, n - len, "%s%s", len ? "_" : "", sp->ax[x].v[at[x]].label);
        len = strlen(name);
    }
}

void sweep_space_release(sweep_space *sp)
{
    for (int x = 0; x < SWEEP_N_AXES; x++)
        free(sp->ax[x].v);
    memset(sp, 0, sizeof *sp);
}
