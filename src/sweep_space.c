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

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"

/* K_NAME: an enumeration or text read back by name_of; K_FLAG: a flag pair's bool. */
typedef enum kind { K_COUNT, K_SIZE, K_REAL, K_NAME, K_FLAG } kind;

/* The lists, by run's option name. */
struct kv_sweep_list {
    const char *opt;
    int axis;
    bool setup; /* set through kv_setup_options (else kv_sim_options) */
    kind k;
    const char *prefix;   /* of the label */
    const char *quantity; /* the option's name in library messages */
    size_t off;           /* axes after the router: the field in the options (K_NAME: 0) */
    unsigned width;       /* a K_COUNT field's bytes: 4 or 8 */
    const char *no;       /* K_FLAG: the option that turns it off */
};

#define MO(f) offsetof(kv_setup_options, f)
#define SO(f) offsetof(kv_sim_options, f)

static const kv_sweep_list lists[] = {
    {"block-size", KV_SWEEP_BLOCK, true, K_COUNT, "b", "{block_size}", 0, 0, 0},
    {"num-blocks", KV_SWEEP_POOL, true, K_COUNT, "n", "{num_blocks}", 0, 0, 0},
    {"kv-budget", KV_SWEEP_POOL, true, K_SIZE, "kv", "{kv_budget}", 0, 0, 0},
    {"watermark", KV_SWEEP_WATERMARK, false, K_REAL, "wm", "{watermark}", 0, 0, 0},
    {"free-order", KV_SWEEP_FREE, false, K_NAME, "", "{free_order}", 0, 0, 0},
    {"max-seqs", KV_SWEEP_SEQS, false, K_COUNT, "s", "{max_seqs}", 0, 0, 0},
    {"preempt", KV_SWEEP_PREEMPT, false, K_NAME, "", "{preempt}", 0, 0, 0},
    {"replicas", KV_SWEEP_REPLICAS, false, K_COUNT, "r", "{replicas}", 0, 0, 0},
    {"router", KV_SWEEP_ROUTER, false, K_NAME, "", "{router}", 0, 0, 0},
    {"model", KV_SWEEP_MODEL, true, K_NAME, "", "{model}", 0, 0, 0},
    {"gpu", KV_SWEEP_GPU, true, K_NAME, "", "{gpu}", 0, 0, 0},
    {"gpu-util", KV_SWEEP_GPU_UTIL, true, K_REAL, "util", "{gpu_util}", MO(gpu_util), 0, 0},
    {"reserve", KV_SWEEP_RESERVE, true, K_SIZE, "res", "{reserve}", MO(reserve), 0, 0},
    {"tp", KV_SWEEP_TP, true, K_COUNT, "tp", "{tp}", MO(tp), 4, 0},
    {"pp", KV_SWEEP_PP, true, K_COUNT, "pp", "{pp}", MO(pp), 4, 0},
    {"kv-dtype", KV_SWEEP_KV_DTYPE, true, K_NAME, "kv-", "{kv_dtype}", 0, 0, 0},
    {"weight-dtype", KV_SWEEP_WEIGHT_DTYPE, true, K_NAME, "w-", "{weight_dtype}", 0, 0, 0},
    {"kv-scale-group", KV_SWEEP_SCALE_GROUP, true, K_COUNT, "sg", "{kv_scale_group}",
     MO(kv_scale_group), 4, 0},
    {"kv-scale-bytes", KV_SWEEP_SCALE_BYTES, true, K_COUNT, "sb", "{kv_scale_bytes}",
     MO(kv_scale_bytes), 4, 0},
    {"layers", KV_SWEEP_LAYERS, true, K_COUNT, "l", "{layers}", MO(layers), 4, 0},
    {"kv-heads", KV_SWEEP_KV_HEADS, true, K_COUNT, "h", "{kv_heads}", MO(kv_heads), 4, 0},
    {"head-dim", KV_SWEEP_HEAD_DIM, true, K_COUNT, "hd", "{head_dim}", MO(head_dim), 4, 0},
    {"format", KV_SWEEP_FORMAT, false, K_NAME, "", "{format}", 0, 0, 0},
    {"trace-block-size", KV_SWEEP_TRACE_BLOCK, false, K_COUNT, "tb", "{trace_block_size}",
     SO(trace.trace_block_size), 4, 0},
    {"limit", KV_SWEEP_LIMIT, false, K_COUNT, "lim", "{limit}", SO(trace.limit), 8, 0},
    {"time-scale", KV_SWEEP_TIME_SCALE, false, K_REAL, "ts", "{time_scale}", SO(trace.time_scale),
     0, 0},
    {"rate", KV_SWEEP_RATE, false, K_REAL, "rate", "{rate}", SO(trace.rate), 0, 0},
    {"shared-prefix", KV_SWEEP_SHARED_PREFIX, false, K_COUNT, "sp", "{shared_prefix}",
     SO(shared_prefix), 4, 0},
    {"seed", KV_SWEEP_SEED, false, K_COUNT, "seed", "{seed}", SO(trace.seed), 8, 0},
    {"watermark-rule", KV_SWEEP_WATERMARK_RULE, false, K_NAME, "wr-", "{watermark_rule}", 0, 0, 0},
    {"max-batched-tokens", KV_SWEEP_MAX_BATCHED, false, K_COUNT, "mbt", "{max_batched_tokens}",
     SO(sched.max_batched_tokens), 4, 0},
    {"chunked-prefill", KV_SWEEP_CHUNKED, false, K_FLAG, "cp", "{chunked_prefill}",
     SO(sched.chunked_prefill), 0, "no-chunked-prefill"},
    {"prefix-caching", KV_SWEEP_PREFIX, false, K_FLAG, "pc", "{prefix_caching}", SO(prefix_caching),
     0, "no-prefix-caching"},
    {"admit-full-prompt", KV_SWEEP_ADMIT_FULL, false, K_FLAG, "afp", "{admit_full_prompt}",
     SO(sched.admit_full_prompt), 0, "no-admit-full-prompt"},
    {"policy", KV_SWEEP_POLICY, false, K_NAME, "pol-", "{policy}", 0, 0, 0},
    {"async-scheduling", KV_SWEEP_ASYNC, false, K_FLAG, "async", "{async_scheduling}",
     SO(sched.async_scheduling), 0, "no-async-scheduling"},
    {"time-model", KV_SWEEP_TIME_MODEL, false, K_NAME, "tm-", "{time_model}", 0, 0, 0},
    {"gpu-cost-per-hour", KV_SWEEP_GPU_COST, false, K_REAL, "cost", "{gpu_cost_per_hour}",
     SO(gpu_cost_per_hour), 0, 0},
    {"router-view", KV_SWEEP_ROUTER_VIEW, false, K_NAME, "view-", "{router_view}", 0, 0, 0},
    {"router-refresh", KV_SWEEP_ROUTER_REFRESH, false, K_REAL, "refresh", "{router_refresh}",
     SO(router.refresh_s), 0, 0},
    {"router-overlap-weight", KV_SWEEP_ROUTER_OVERLAP, false, K_NAME, "ow",
     "{router_overlap_weight}", 0, 0, 0},
};
enum { N_LISTS = sizeof lists / sizeof lists[0] };
_Static_assert(N_LISTS == KV_SWEEP_N_AXES + 1, "one list per axis (two for the pool)");

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

int kv_sweep_axis_of(const kv_sweep_list *l)
{
    return l->axis;
}

const char *kv_sweep_list_opt(const kv_sweep_list *l)
{
    return l->opt;
}

const char *kv_sweep_list_off(const kv_sweep_list *l)
{
    return l->no;
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

/* A name of the axes after the router, as the options hold it now (K_NAME). */
static void name_of(const kv_sweep_list *l, const kv_setup_options *mo, const kv_sim_options *so,
                    char *buf, size_t n)
{
    kv_dtype dt = KV_DTYPE_BF16;
    switch (l->axis) {
    case KV_SWEEP_MODEL:
        snprintf(buf, n, "%s", mo->model);
        return;
    case KV_SWEEP_GPU:
        snprintf(buf, n, "%s", mo->gpu);
        return;
    case KV_SWEEP_KV_DTYPE:
    case KV_SWEEP_WEIGHT_DTYPE: /* by its name: "fp8_e4m3" and "fp8" are one value */
        kv_dtype_parse(l->axis == KV_SWEEP_KV_DTYPE ? mo->kv_dtype : mo->weight_dtype, &dt);
        snprintf(buf, n, "%s", kv_dtype_name(dt));
        return;
    case KV_SWEEP_FORMAT:
        snprintf(buf, n, "%s", kv_trace_format_name(so->trace.format));
        return;
    case KV_SWEEP_WATERMARK_RULE:
        snprintf(buf, n, "%s", kv_watermark_rule_name(so->sched.watermark_rule));
        return;
    case KV_SWEEP_POLICY:
        snprintf(buf, n, "%s", kv_sched_policy_name(so->sched.policy));
        return;
    case KV_SWEEP_TIME_MODEL:
        snprintf(buf, n, "%s", so->time_model);
        return;
    case KV_SWEEP_ROUTER_VIEW:
        snprintf(buf, n, "%s", kv_router_view_name(so->router.view));
        return;
    default: /* KV_SWEEP_ROUTER_OVERLAP */
        kv_router_micro_text(so->router.overlap_weight, buf, n);
        return;
    }
}

/* A name in a directory name: a model file by its base name without ".json", and every
 * byte but letters, digits, '.', '+' and '-' as '-' ("fixed:0.01" is "fixed-0.01"). */
static void name_label(const kv_sweep_list *l, const char *name, char *buf, size_t n)
{
    const char *base = name;
    size_t len = strlen(name);
    if (l->axis == KV_SWEEP_MODEL && kv_setup_model_is_path(name)) {
        const char *slash = strrchr(name, '/');
        base = slash ? slash + 1 : name;
        len = strlen(base);
        if (len > 5 && strcmp(base + len - 5, ".json") == 0)
            len -= 5;
    }
    size_t i = 0;
    for (; i < len && i + 1 < n; i++) {
        char c = base[i];
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '+' || c == '-';
        buf[i] = keep ? c : '-';
    }
    buf[i] = '\0';
}

/* The value of an axis after the router, read at l->off (K_NAME: name_of). */
static void later_value_of(const kv_sweep_list *l, const kv_setup_options *mo,
                           const kv_sim_options *so, kv_sweep_value *v)
{
    const char *base = l->setup ? (const char *)mo : (const char *)so;
    if (l->k == K_NAME)
        name_of(l, mo, so, v->arg, sizeof v->arg);
    else if (l->k == K_FLAG)
        v->u = *(const bool *)(base + l->off);
    else if (l->k == K_REAL)
        v->d = *(const double *)(base + l->off);
    else if (l->width == 4)
        v->u = *(const uint32_t *)(base + l->off);
    else
        v->u = *(const uint64_t *)(base + l->off);
    if (l->k == K_REAL && v->d == 0)
        v->d = 0.0; /* never "-0" */
}

/* The value the options now hold for list l (after its handler accepted an item, or the
 * default when the list was not given). */
void kv_sweep_value_of(const kv_sweep_list *l, const kv_setup_options *mo, const kv_sim_options *so,
                       kv_sweep_value *v)
{
    memset(v, 0, sizeof *v);
    char text[64];
    if (l->axis > KV_SWEEP_ROUTER)
        later_value_of(l, mo, so, v);
    else if (strcmp(l->opt, "block-size") == 0)
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
    else if (l->k == K_FLAG)
        snprintf(v->arg, sizeof v->arg, "%s", v->u ? "on" : "off");
    if (l->k == K_SIZE)
        kv_size_label(text, sizeof text, v->u);
    else if (strcmp(l->opt, "router") == 0)
        router_label(&so->router, text, sizeof text);
    else if (l->k == K_NAME && l->axis > KV_SWEEP_ROUTER)
        name_label(l, v->arg, text, sizeof text - 8);
    else if (l->k == K_FLAG)
        snprintf(text, sizeof text, "%s", v->u ? "" : "no");
    else
        snprintf(text, sizeof text, "%.60s", v->arg);
    if (l->k == K_FLAG) /* "pc" on, "nopc" off */
        snprintf(v->label, sizeof v->label, "%s%s", text, l->prefix);
    else
        snprintf(v->label, sizeof v->label, "%s%.56s", l->prefix, text);
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
                                                              : cmp_count; /* flags: off, on */
    qsort(a->v, a->n, sizeof *a->v, cmp);
    for (size_t i = 1; i < a->n; i++)
        if (cmp(&a->v[i - 1], &a->v[i]) == 0)
            return kv_diag_set(diag, -KV_EINVAL, "%s: %s appears twice in the list '%s'",
                               l->quantity, a->v[i].arg, text);
    for (size_t i = 0; i < a->n; i++) /* names can collide in a directory name */
        for (size_t j = 0; j < i; j++)
            if (strcmp(a->v[i].label, a->v[j].label) == 0)
                return kv_diag_set(diag, -KV_EINVAL,
                                   "%s: '%s' and '%s' would both be named '%s' in the directory "
                                   "names",
                                   l->quantity, a->v[j].arg, a->v[i].arg, a->v[i].label);
    return 0;
}

size_t kv_sweep_space_complete(kv_sweep_space *sp, const kv_setup_options *mo,
                               const kv_sim_options *so)
{
    size_t n = 1;
    for (int x = 0; x < KV_SWEEP_N_AXES; x++) {
        kv_sweep_axis *a = &sp->ax[x];
        bool optional = x == KV_SWEEP_POOL || x >= KV_SWEEP_REPLICAS;
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
        if (sp->ax[x].n == 0 || (x > KV_SWEEP_ROUTER && sp->ax[x].n < 2))
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

bool kv_sweep_varies_setup(const kv_sweep_space *sp)
{
    for (int x = KV_SWEEP_MODEL; x <= KV_SWEEP_HEAD_DIM; x++)
        if (sp->ax[x].n > 1)
            return true;
    return false;
}
