/* sweep_space: the configurations of a sweep — lists, canonical values, their product and
 * directory names, and the constant-budget rule (include/kvsim/sweep.h).
 *
 * Values reach this module already validated (the CLI parses each list item with the
 * handler `kvsim run` uses for the single-valued option, so a sweep accepts exactly what
 * run accepts); kv_sweep_value_of then reads the value back from the option structs and
 * prints it canonically.  Equal values written differently ("0.01" and "0.010", "1GiB" and
 * "1024MiB") are therefore one value, and a repeat is an error.
 */
#include "kvsim/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"

typedef enum kind { K_COUNT, K_SIZE, K_REAL, K_NAME } kind; /* a router is a K_NAME */

/* The lists, by run's option name. */
struct kv_sweep_list {
    const char *opt;
    int axis;
    bool setup; /* set through kv_setup_options (else kv_sim_options) */
    kind k;
    const char *prefix;   /* of the label */
    const char *quantity; /* the option's name in library messages */
};

static const kv_sweep_list lists[] = {
    {"block-size", KV_SWEEP_BLOCK, true, K_COUNT, "b", "{block_size}"},
    {"num-blocks", KV_SWEEP_POOL, true, K_COUNT, "n", "{num_blocks}"},
    {"kv-budget", KV_SWEEP_POOL, true, K_SIZE, "kv", "{kv_budget}"},
    {"watermark", KV_SWEEP_WATERMARK, false, K_REAL, "wm", "{watermark}"},
    {"free-order", KV_SWEEP_FREE, false, K_NAME, "", "{free_order}"},
    {"max-seqs", KV_SWEEP_SEQS, false, K_COUNT, "s", "{max_seqs}"},
    {"preempt", KV_SWEEP_PREEMPT, false, K_NAME, "", "{preempt}"},
    {"replicas", KV_SWEEP_REPLICAS, false, K_COUNT, "r", "{replicas}"},
    {"router", KV_SWEEP_ROUTER, false, K_NAME, "", "{router}"},
};
enum { N_LISTS = sizeof lists / sizeof lists[0] };

const kv_sweep_list *kv_sweep_list_find(const char *opt)
{
    for (size_t i = 0; i < N_LISTS; i++)
        if (strcmp(lists[i].opt, opt) == 0)
            return &lists[i];
    return NULL;
}

bool kv_sweep_list_is_setup(const kv_sweep_list *l)
{
    return l->setup;
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

void kv_size_label(char *buf, size_t n, uint64_t bytes)
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

/* A router in a directory name: its policy, and weighted's weights unless they are the
 * defaults ("weighted-p3-q1-k0.5"): no ':', ',' or '=' in a file name. */
static void router_label(const kv_router_config *c, char *buf, size_t n)
{
    kv_router_config d;
    kv_router_config_init(&d);
    if (c->policy != KV_ROUTER_WEIGHTED ||
        (c->w_prefix == d.w_prefix && c->w_queue == d.w_queue && c->w_kv == d.w_kv)) {
        snprintf(buf, n, "%s", kv_router_policy_name(c->policy));
        return;
    }
    char p[12], q[12], k[12]; /* weights ≤ 1000 with ≤ 6 decimals: "999.999999" */
    kv_router_micro_text(c->w_prefix, p, sizeof p);
    kv_router_micro_text(c->w_queue, q, sizeof q);
    kv_router_micro_text(c->w_kv, k, sizeof k);
    snprintf(buf, n, "weighted-p%s-q%s-k%s", p, q, k);
}

/* The value the options now hold for list l (after its handler accepted an item, or the
 * default when the list was not given). */
void kv_sweep_value_of(const kv_sweep_list *l, const kv_setup_options *mo, const kv_sim_options *so,
                       kv_sweep_value *v)
{
    memset(v, 0, sizeof *v);
    char text[64];
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
    else if (strcmp(l->opt, "replicas") == 0)
        v->u = so->replicas;
    else if (strcmp(l->opt, "router") == 0)
        kv_router_spec(&so->router, v->arg, sizeof v->arg);
    else
        snprintf(v->arg, sizeof v->arg, "%s", kv_preempt_name(so->sched.preempt));
    if (l->k == K_COUNT || l->k == K_SIZE)
        snprintf(v->arg, sizeof v->arg, "%llu", (unsigned long long)v->u);
    else if (l->k == K_REAL)
        shortest_double(v->arg, sizeof v->arg, v->d);
    if (l->k == K_SIZE)
        kv_size_label(text, sizeof text, v->u);
    else if (strcmp(l->opt, "router") == 0)
        router_label(&so->router, text, sizeof text);
    else
        snprintf(text, sizeof text, "%.60s", v->arg);
    snprintf(v->label, sizeof v->label, "%s%.60s", l->prefix, text);
}

static int cmp_count(const void *a, const void *b)
{
    uint64_t x = ((const kv_sweep_value *)a)->u, y = ((const kv_sweep_value *)b)->u;
    return (x > y) - (x < y);
}

static int cmp_real(const void *a, const void *b)
{
    double x = ((const kv_sweep_value *)a)->d, y = ((const kv_sweep_value *)b)->d;
    return (x > y) - (x < y);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const kv_sweep_value *)a)->arg, ((const kv_sweep_value *)b)->arg);
}

int kv_sweep_space_set(kv_sweep_space *sp, const kv_sweep_list *l, const kv_sweep_value *values,
                       size_t n, const char *text, kv_diag *diag)
{
    kv_sweep_axis *a = &sp->ax[l->axis];
    free(a->v);
    a->v = kv_xcalloc(n ? n : 1, sizeof *a->v);
    memcpy(a->v, values, n * sizeof *values);
    a->n = n;
    a->opt = l->opt;
    int (*cmp)(const void *, const void *) = l->k == K_REAL   ? cmp_real
                                             : l->k == K_NAME ? cmp_name
                                                              : cmp_count;
    qsort(a->v, a->n, sizeof *a->v, cmp);
    for (size_t i = 1; i < a->n; i++)
        if (cmp(&a->v[i - 1], &a->v[i]) == 0)
            return kv_diag_set(diag, -KV_EINVAL, "%s: %s appears twice in the list '%s'",
                               l->quantity, a->v[i].arg, text);
    return 0;
}

size_t kv_sweep_space_complete(kv_sweep_space *sp, const kv_setup_options *mo,
                               const kv_sim_options *so)
{
    size_t n = 1;
    for (int x = 0; x < KV_SWEEP_N_AXES; x++) {
        kv_sweep_axis *a = &sp->ax[x];
        bool optional = x == KV_SWEEP_POOL || x == KV_SWEEP_REPLICAS || x == KV_SWEEP_ROUTER;
        if (a->n == 0 && !optional) {
            for (size_t i = 0; i < N_LISTS && a->n == 0; i++) {
                if (lists[i].axis != x)
                    continue;
                a->v = kv_xcalloc(1, sizeof *a->v);
                a->n = 1;
                a->opt = lists[i].opt;
                kv_sweep_value_of(&lists[i], mo, so, &a->v[0]);
            }
        }
        if (a->n) /* saturate: the caller only compares with a small limit */
            n = n > SIZE_MAX / a->n ? SIZE_MAX : n * a->n;
    }
    return n;
}

void kv_sweep_space_at(const kv_sweep_space *sp, size_t i, size_t at[KV_SWEEP_N_AXES], char *name,
                       size_t n)
{
    for (int x = KV_SWEEP_N_AXES - 1; x >= 0; x--) { /* the last axis varies fastest */
        size_t dim = sp->ax[x].n ? sp->ax[x].n : 1;
        at[x] = i % dim;
        i /= dim;
    }
    size_t len = 0;
    name[0] = '\0';
    for (int x = 0; x < KV_SWEEP_N_AXES; x++) {
        if (sp->ax[x].n == 0)
            continue;
        snprintf(name + len, n - len, "%s%s", len ? "_" : "", sp->ax[x].v[at[x]].label);
        len = strlen(name);
    }
}

void kv_sweep_space_release(kv_sweep_space *sp)
{
    for (int x = 0; x < KV_SWEEP_N_AXES; x++)
        free(sp->ax[x].v);
    memset(sp, 0, sizeof *sp);
}

int kv_sweep_pool(const kv_sweep_space *sp, const kv_setup_options *mo, kv_sweep_pool_mode *mode,
                  kv_setup *setup, uint64_t *budget, kv_diag *diag)
{
    /* Model, GPU and sharding, checked once with a pool that always fits. */
    kv_setup_options m = *mo;
    m.block_size = (uint32_t)sp->ax[KV_SWEEP_BLOCK].v[0].u;
    m.num_blocks = 2;
    m.kv_budget = 0;
    int rc = kv_setup_resolve(&m, setup, diag);
    if (rc != 0)
        return rc;
    const char *pool = sp->ax[KV_SWEEP_POOL].opt;
    *mode = !pool ? (sp->ax[KV_SWEEP_BLOCK].n > 1 ? KV_SWEEP_POOL_CONST : KV_SWEEP_POOL_GPU)
            : !strcmp(pool, "kv-budget") ? KV_SWEEP_POOL_BUDGET
                                         : KV_SWEEP_POOL_BLOCKS;
    *budget = 0;
    if (*mode == KV_SWEEP_POOL_CONST || *mode == KV_SWEEP_POOL_GPU) {
        /* The budget does not depend on the block size (DESIGN §2); resolving it at the
         * smallest block size fails only if every block size would. */
        m.num_blocks = 0;
        kv_setup gpu;
        if ((rc = kv_setup_resolve(&m, &gpu, diag)) != 0)
            return rc;
        *budget = gpu.cap.kv_budget_bytes;
    }
    return 0;
}
