/* summary: the typed run summary and its schema (include/kvsim/summary.h).
 *
 * The field table is KV_SUMMARY_SCHEMA then KV_SUMMARY_CLUSTER_SCHEMA expanded once:
 * each entry's path is its member designator stringified, so a field cannot be renamed in
 * the struct without its JSON key following.  The writer builds nested objects by path
 * segment in table order, which is summary.json's key order; the reader walks the same
 * table.  The cluster block is one optional group (written, and required on reading, when
 * its first key is there); cluster.per_replica is a KV_FIELD_RECS field whose records go
 * through their own table (KV_SUMMARY_REPLICA_SCHEMA) with the same writer and reader, so
 * a record type is one more macro list, not more code.  Reals go through jansson with
 * KV_JSON_FLAGS (15 significant digits), as every JSON output.
 */
#include "kvsim/summary.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/cluster.h"
#include "kvsim/mem.h"
#include "kvsim/report.h"

static const kv_field replica_fields[] = {
#define X(type, member) {#member, KV_FIELD_##type, offsetof(kv_replica_summary, member), 0, 0, 0},
    KV_SUMMARY_REPLICA_SCHEMA(X)
#undef X
};
static const kv_schema replica_schema = {replica_fields,
                                         sizeof replica_fields / sizeof replica_fields[0],
                                         sizeof(kv_replica_summary)};

static const kv_field fields[] = {
#define X(type, member) {#member, KV_FIELD_##type, offsetof(kv_summary, member), 0, 0, 0},
    KV_SUMMARY_SCHEMA(X)
#undef X
#define X(type, member, always)                                                                    \
    {#member, KV_FIELD_##type, offsetof(kv_summary, member), 1, always,                           \
     KV_FIELD_##type == KV_FIELD_RECS ? &replica_schema : NULL},
        KV_SUMMARY_CLUSTER_SCHEMA(X)
#undef X
};
enum { N_FIELDS = sizeof fields / sizeof fields[0] };

/* KV_FIELD_STRV and KV_FIELD_RECS members are a pointer with its size_t count right after
 * it. */
_Static_assert(offsetof(kv_summary_config, n_notes) ==
                   offsetof(kv_summary_config, notes) + sizeof(char **),
               "notes and n_notes must be adjacent");
_Static_assert(offsetof(kv_summary_cluster, n_per_replica) ==
                   offsetof(kv_summary_cluster, per_replica) + sizeof(void *),
               "per_replica and n_per_replica must be adjacent");

static size_t *count_at(void *base, const kv_field *f)
{
    return (size_t *)((char *)base + f->offset + sizeof(void *));
}

static size_t count_of(const void *base, const kv_field *f)
{
    return *(const size_t *)((const char *)base + f->offset + sizeof(void *));
}

const kv_field *kv_summary_fields(size_t *n)
{
    *n = N_FIELDS;
    return fields;
}

const kv_schema *kv_summary_replica_schema(void)
{
    return &replica_schema;
}

const kv_field *kv_summary_field(const char *path)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (strcmp(fields[i].path, path) == 0)
            return &fields[i];
    return NULL;
}

bool kv_summary_has(const kv_summary *s, const kv_field *f)
{
    return !f->in_cluster || f->always || s->has_cluster;
}

/* The index of the cluster block's first field. */
static size_t first_cluster_field(void)
{
    size_t n = 0;
    while (n < N_FIELDS && !fields[n].in_cluster)
        n++;
    return n;
}

static void release_fields(void *base, const kv_field *fl, size_t n);

typedef char **strv_t;
typedef char *str_t;
#define AT(s, f, type)  ((type *)((char *)(s) + (f)->offset))
#define CAT(s, f, type) ((const type *)((const char *)(s) + (f)->offset))

static double number_at(const void *s, const kv_field *f);

double kv_summary_number(const kv_summary *s, const kv_field *f)
{
    return kv_summary_has(s, f) ? number_at(s, f) : NAN;
}

double kv_summary_record_number(const void *record, const kv_field *f)
{
    return number_at(record, f);
}

static double number_at(const void *s, const kv_field *f)
{
    switch (f->type) {
    case KV_FIELD_U64:
        return (double)*CAT(s, f, uint64_t);
    case KV_FIELD_U64Z:
        return *CAT(s, f, uint64_t) ? (double)*CAT(s, f, uint64_t) : NAN;
    case KV_FIELD_F64:
        return *CAT(s, f, double);
    case KV_FIELD_F64P:
        return *CAT(s, f, double) > 0 ? *CAT(s, f, double) : NAN;
    case KV_FIELD_BOOL:
        return *CAT(s, f, bool) ? 1.0 : 0.0;
    default:
        return NAN;
    }
}

/* ---- from a run --------------------------------------------------------------------- */

/* The cluster block and the C8 block totals (summary.h at kv_summary_from_run). */
static void cluster_from_run(kv_summary *s, const kv_cluster_result *cl)
{
    kv_summary_cluster *c = &s->cluster;
    const kv_router_config *rc = &cl->router;
    uint32_t R = cl->replicas;
    release_fields(s, fields + first_cluster_field(), N_FIELDS - first_cluster_field());
    memset(c, 0, sizeof *c);
    c->replicas = R;
    c->router = kv_xstrdup(kv_router_policy_name(rc->policy));
    c->router_view = kv_xstrdup(kv_router_view_name(rc->view));
    c->router_refresh_s = rc->refresh_s;
    c->router_weights.prefix = (double)rc->w_prefix / KV_ROUTER_UNIT;
    c->router_weights.queue = (double)rc->w_queue / KV_ROUTER_UNIT;
    c->router_weights.kv = (double)rc->w_kv / KV_ROUTER_UNIT;
    c->router_overlap_weight = (double)rc->overlap_weight / KV_ROUTER_UNIT;
    c->gpus = (uint64_t)R * (s->config.tp ? s->config.tp : 1) * (s->config.pp ? s->config.pp : 1);
    c->session_rows = cl->session_rows;
    c->router_accuracy.predicted_hit_tokens = cl->predicted_hit_tokens;
    c->router_accuracy.granted_hit_tokens = cl->granted_hit_tokens;
    c->router_accuracy.overpredicted = cl->overpredicted;
    c->router_accuracy.underpredicted = cl->underpredicted;
    c->per_replica = kv_xcalloc(R, sizeof *c->per_replica);
    c->n_per_replica = R;
    double *routed = kv_xmalloc(R * sizeof *routed), *used = kv_xmalloc(R * sizeof *used);
    uint64_t num_blocks = 0;
    double mean_phys = 0, mean_log = 0;
    for (uint32_t i = 0; i < R; i++) {
        const kv_replica_result *x = &cl->replica[i];
        const kv_engine_stats *st = &x->stats;
        kv_replica_summary *p = &c->per_replica[i];
        p->replica = i;
        p->requests = x->routed;
        p->finished = st->sched.finished;
        p->rejected = x->rejected;
        p->preemptions = st->sched.preemptions;
        p->evictions = st->evictions;
        p->prefix.queries = st->prefix.queries;
        p->prefix.hits = st->prefix.hits;
        p->prefix.hit_rate =
            st->prefix.queries ? (double)st->prefix.hits / (double)st->prefix.queries : 0.0;
        p->blocks.peak_physical = st->metrics.peak_physical;
        p->blocks.mean_physical = kv_metrics_mean_physical(&st->metrics);
        p->blocks.mean_logical = kv_metrics_mean_logical(&st->metrics);
        p->steps = st->steps;
        routed[i] = (double)x->routed;
        used[i] = p->blocks.mean_physical;
        num_blocks += (uint64_t)st->usable_blocks + 1;
        mean_phys += p->blocks.mean_physical;
        mean_log += p->blocks.mean_logical;
    }
    c->imbalance.requests_max_over_mean = kv_max_over_mean(routed, R);
    c->imbalance.requests_gini = kv_gini(routed, R);
    c->imbalance.blocks_max_over_mean = kv_max_over_mean(used, R);
    c->imbalance.blocks_gini = kv_gini(used, R);
    free(routed);
    free(used);
    s->blocks.num_blocks = num_blocks;
    s->blocks.peak_physical = cl->peak_physical;
    s->blocks.peak_logical = cl->peak_logical;
    s->blocks.mean_physical = mean_phys;
    s->blocks.mean_logical = mean_log;
    s->blocks.sharing_ratio = mean_phys > 0 ? mean_log / mean_phys : 0.0;
}

void kv_summary_from_run(kv_summary *s, const kv_run_result *r)
{
    const kv_engine_stats *st = &r->stats;
    const kv_sched_counters *sc = &st->sched;
    s->requests.total = r->n;
    s->requests.finished = sc->finished;
    s->requests.rejected = r->rejected;
    s->requests.unfinished = r->unfinished;
    s->rejections.exceeds_capacity = sc->rejected[KV_REJECT_CAPACITY];
    s->rejections.exceeds_watermark = sc->rejected[KV_REJECT_WATERMARK];
    s->rejections.exceeds_batch = sc->rejected[KV_REJECT_BATCH];
    s->preemptions = sc->preemptions;
    s->evictions = st->evictions;
    s->prefix.queries = st->prefix.queries;
    s->prefix.hits = st->prefix.hits;
    s->prefix.hit_rate =
        st->prefix.queries ? (double)st->prefix.hits / (double)st->prefix.queries : 0.0;
    s->prefix.preempted_queries = st->prefix.preempted_queries;
    s->prefix.preempted_hits = st->prefix.preempted_hits;
    s->blocks.num_blocks = (uint64_t)st->usable_blocks + 1;
    s->blocks.usable = st->usable_blocks;
    s->blocks.peak_physical = st->metrics.peak_physical;
    s->blocks.peak_logical = st->metrics.peak_logical;
    s->blocks.mean_physical = kv_metrics_mean_physical(&st->metrics);
    s->blocks.mean_logical = kv_metrics_mean_logical(&st->metrics);
    s->blocks.sharing_ratio = kv_metrics_sharing_ratio(&st->metrics);
    s->watermark.watermark = s->config.watermark;
    s->watermark.blocks = st->watermark_blocks;
    s->watermark.deferrals = sc->deferrals;
    s->watermark.deferral_steps = sc->deferral_steps;
    s->watermark.deferred_requests = sc->deferred_requests;
    kv_latency lat;
    kv_latency_compute(r->reqs, r->n, &lat);
    s->latency_s.ttft = lat.ttft;
    s->latency_s.tpot = lat.tpot;
    s->latency_s.e2e = lat.e2e;
    s->latency_s.queue = lat.queue;
    double t = (double)r->sim_time_ns / 1e9;
    s->throughput.output_tok_per_s = t > 0 ? (double)sc->output_tokens / t : 0;
    s->throughput.requests_per_s = t > 0 ? (double)sc->finished / t : 0;
    /* Every rank of every replica's TP × PP group is a GPU the throughput costs. */
    double gpus = (double)(s->config.tp ? s->config.tp : 1) *
                  (double)(s->config.pp ? s->config.pp : 1) *
                  (double)(r->cluster ? r->cluster->replicas : 1);
    s->throughput.output_tok_per_s_per_gpu = s->throughput.output_tok_per_s / gpus;
    s->throughput.cost_per_million_output_tokens =
        s->config.gpu_cost_per_hour > 0 && s->throughput.output_tok_per_s > 0
            ? s->config.gpu_cost_per_hour * gpus / 3600.0 / s->throughput.output_tok_per_s * 1e6
            : 0;
    if (!s->kvsim_version)
        s->kvsim_version = kv_xstrdup(kv_version());
    s->steps = st->steps;
    s->sim_time_s = t;
    s->livelock_guard_fired = r->stop == -KV_ELIVELOCK;
    s->has_cluster = r->cluster != NULL;
    if (r->cluster)
        cluster_from_run(s, r->cluster);
    else
        s->cluster.replicas = 1;
}

static void add_note(kv_summary_config *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void add_note(kv_summary_config *c, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->notes = kv_xrealloc(c->notes, (c->n_notes + 1) * sizeof *c->notes);
    c->notes[c->n_notes++] = kv_xstrdup(buf);
}

void kv_summary_set_config(kv_summary *s, const kv_sim_options *o, const kv_setup *setup,
                           const kv_trace *t, const kv_engine_config *ec)
{
    kv_summary_config *c = &s->config;
    char buf[KV_TIMING_DESCRIBE_MAX];
    c->trace = kv_xstrdup(t->path);
    c->format = kv_xstrdup(kv_trace_format_name(t->format));
    c->trace_block_size = t->trace_block_size;
    c->limit = o->trace.limit;
    c->time_scale = o->trace.time_scale;
    c->rate = o->trace.rate;
    c->shared_prefix = o->shared_prefix;
    c->seed = o->trace.seed;
    c->model = kv_xstrdup(setup->model.name);
    c->gpu = kv_xstrdup(setup->gpu.name);
    c->gpu_util = setup->gpu_util;
    c->reserve_bytes = setup->reserve;
    c->tp = setup->shard.tp;
    c->pp = setup->shard.pp;
    c->weight_bytes = setup->model.weight_bytes;
    c->layers = setup->model.num_layers;
    c->kv_heads = setup->model.num_kv_heads;
    c->head_dim = setup->model.head_dim;
    c->kv_dtype = kv_xstrdup(kv_dtype_name(setup->model.kv_dtype));
    c->bytes_per_token_rank = setup->shard.bytes_per_token_rank;
    c->block_size = setup->block_size;
    c->block_bytes = setup->cap.block_bytes;
    c->kv_budget_bytes = setup->cap.kv_budget_bytes;
    c->num_blocks = setup->cap.num_blocks;
    c->num_blocks_from = kv_xstrdup(setup->budget_source);
    c->watermark = o->sched.watermark;
    c->watermark_rule = kv_xstrdup(kv_watermark_rule_name(o->sched.watermark_rule));
    c->max_seqs = o->sched.max_seqs;
    c->max_batched_tokens = o->sched.max_batched_tokens;
    c->chunked_prefill = o->sched.chunked_prefill;
    c->prefix_caching = o->prefix_caching;
    c->admit_full_prompt = o->sched.admit_full_prompt;
    c->free_order = kv_xstrdup(kv_free_order_name(o->free_order));
    c->preempt = kv_xstrdup(kv_preempt_name(kv_sched_victim_rule(&o->sched)));
    c->policy = kv_xstrdup(kv_sched_policy_name(o->sched.policy));
    c->async_scheduling = o->sched.async_scheduling;
    kv_timing_describe(&ec->timing, buf, sizeof buf);
    c->time_model = kv_xstrdup(buf);
    if (!kv_frontend_is_none(&ec->frontend)) {
        kv_frontend_describe(&ec->frontend, buf, sizeof buf);
        c->frontend = kv_xstrdup(buf);
    }
    c->gpu_cost_per_hour = o->gpu_cost_per_hour;
    bool has_ids = false;
    for (size_t i = 0; i < t->n && !has_ids; i++)
        has_ids = t->reqs[i].content == KV_CONTENT_HASH_IDS;
    if (has_ids && setup->block_size > t->trace_block_size)
        add_note(c, "block size %u > trace block size %u: hash_ids sharing is only approximate",
                 setup->block_size, t->trace_block_size);
    if (o->hash_algo != KV_HASH_SHA256)
        add_note(c, "block identity by %s (--hash-algo), not SHA-256",
                 kv_hash_algo_name(o->hash_algo));
    if (setup->shard.kv_replicated)
        add_note(c, "TP %u > %u KV heads: each rank holds a replicated KV head", setup->shard.tp,
                 setup->model.num_kv_heads);
    /* As estimate says it: simulated anyway, per rank rounded up, never silently divided. */
    if (setup->shard.kv_indivisible)
        add_note(c,
                 "%u KV heads do not split evenly over TP %u: %u per rank, rounded up (vLLM "
                 "refuses this TP)",
                 setup->model.num_kv_heads, setup->shard.tp, setup->shard.kv_heads_per_rank);
    if (setup->model.num_layers % setup->shard.pp != 0)
        add_note(c, "%u layers over PP %u: the largest stage holds %u", setup->model.num_layers,
                 setup->shard.pp, setup->shard.layers_per_rank);
}

/* Free the owned members of one record of fields[0..n). */
static void release_fields(void *base, const kv_field *fl, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const kv_field *f = &fl[i];
        if (f->type == KV_FIELD_STR || f->type == KV_FIELD_STRN || f->type == KV_FIELD_STRO) {
            free(*AT(base, f, char *));
        } else if (f->type == KV_FIELD_STRV) {
            char **v = *AT(base, f, char **);
            for (size_t k = 0; k < count_of(base, f); k++)
                free(v[k]);
            free(v);
        } else if (f->type == KV_FIELD_RECS) {
            char *v = *AT(base, f, char *);
            for (size_t k = 0; k < count_of(base, f); k++)
                release_fields(v + k * f->records->size, f->records->fields, f->records->n);
            free(v);
        }
    }
}

void kv_summary_release(kv_summary *s)
{
    release_fields(s, fields, N_FIELDS);
    memset(s, 0, sizeof *s);
}

/* ---- JSON --------------------------------------------------------------------------- */

static json_t *record_json(const void *base, const kv_field *fl, size_t n);

static json_t *value_json(const void *s, const kv_field *f)
{
    switch (f->type) {
    case KV_FIELD_U64:
        return json_integer((json_int_t)*CAT(s, f, uint64_t));
    case KV_FIELD_U64Z:
        return *CAT(s, f, uint64_t) ? json_integer((json_int_t)*CAT(s, f, uint64_t)) : json_null();
    case KV_FIELD_F64:
        return json_real(*CAT(s, f, double));
    case KV_FIELD_F64P:
        return *CAT(s, f, double) > 0 ? json_real(*CAT(s, f, double)) : json_null();
    case KV_FIELD_BOOL:
        return json_boolean(*CAT(s, f, bool));
    case KV_FIELD_STR:
        return kv_json_text(*CAT(s, f, str_t)); /* never dropped, even not UTF-8 */
    case KV_FIELD_STRN:
    case KV_FIELD_STRO: /* record_json leaves an STRO key out when NULL */
        return *CAT(s, f, str_t) ? kv_json_text(*CAT(s, f, str_t)) : json_null();
    case KV_FIELD_STRV: {
        json_t *a = json_array();
        char *const *v = *CAT(s, f, strv_t);
        for (size_t k = 0; k < count_of(s, f); k++)
            json_array_append_new(a, kv_json_text(v[k]));
        return a;
    }
    case KV_FIELD_RECS: {
        json_t *a = json_array();
        const char *v = *CAT(s, f, str_t);
        for (size_t k = 0; k < count_of(s, f); k++)
            json_array_append_new(a, record_json(v + k * f->records->size, f->records->fields,
                                                 f->records->n));
        return a;
    }
    }
    return json_null();
}

/* The object that holds path's last segment, created along the way; *leaf is that
 * segment (a pointer into path). */
static json_t *parent_of(json_t *root, const char *path, const char **leaf)
{
    char key[64];
    json_t *o = root;
    const char *dot;
    while ((dot = strchr(path, '.')) != NULL) {
        size_t n = (size_t)(dot - path);
        memcpy(key, path, n);
        key[n] = '\0';
        json_t *child = json_object_get(o, key);
        if (!child) {
            child = json_object();
            json_object_set_new(o, key, child);
        }
        o = child;
        path = dot + 1;
    }
    *leaf = path;
    return o;
}

/* One object from a record of fields[0..n), nested by path; the cluster block's fields
 * only when the summary has one (the caller skips them otherwise). */
static json_t *record_json(const void *base, const kv_field *fl, size_t n)
{
    json_t *root = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *leaf;
        if (fl[i].type == KV_FIELD_STRO && !*CAT(base, &fl[i], str_t))
            continue;
        json_t *parent = parent_of(root, fl[i].path, &leaf);
        json_object_set_new(parent, leaf, value_json(base, &fl[i]));
    }
    return root;
}

json_t *kv_summary_to_json(const kv_summary *s)
{
    return record_json(s, fields, s->has_cluster ? N_FIELDS : first_cluster_field());
}

json_t *kv_summary_config_json(const kv_summary *s)
{
    json_t *all = kv_summary_to_json(s);
    json_t *c = json_incref(json_object_get(all, "config"));
    json_decref(all);
    return c;
}

static int read_fields(const json_t *j, void *base, const kv_field *fl, size_t n);

static bool read_value(const json_t *v, void *s, const kv_field *f)
{
    switch (f->type) {
    case KV_FIELD_U64:
    case KV_FIELD_U64Z:
        if (f->type == KV_FIELD_U64Z && json_is_null(v)) {
            *AT(s, f, uint64_t) = 0;
            return true;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return false;
        *AT(s, f, uint64_t) = (uint64_t)json_integer_value(v);
        return true;
    case KV_FIELD_F64:
    case KV_FIELD_F64P:
        if (f->type == KV_FIELD_F64P && json_is_null(v)) {
            *AT(s, f, double) = 0;
            return true;
        }
        if (!json_is_number(v))
            return false;
        *AT(s, f, double) = json_number_value(v);
        return true;
    case KV_FIELD_BOOL:
        if (!json_is_boolean(v))
            return false;
        *AT(s, f, bool) = json_is_true(v);
        return true;
    case KV_FIELD_STRN:
        if (json_is_null(v))
            return true;
        /* fall through */
    case KV_FIELD_STR:
    case KV_FIELD_STRO:
        if (!json_is_string(v))
            return false;
        *AT(s, f, char *) = kv_xstrdup(json_string_value(v));
        return true;
    case KV_FIELD_STRV: {
        if (!json_is_array(v))
            return false;
        size_t n = json_array_size(v);
        char **out = kv_xcalloc(n ? n : 1, sizeof *out);
        *AT(s, f, char **) = out;
        *count_at(s, f) = n;
        for (size_t k = 0; k < n; k++) {
            const json_t *e = json_array_get(v, k);
            out[k] = kv_xstrdup(json_is_string(e) ? json_string_value(e) : "");
        }
        return true;
    }
    case KV_FIELD_RECS: {
        if (!json_is_array(v))
            return false;
        size_t n = json_array_size(v), sz = f->records->size;
        char *out = kv_xcalloc(n ? n : 1, sz);
        *AT(s, f, char *) = out;
        *count_at(s, f) = n;
        for (size_t k = 0; k < n; k++)
            if (read_fields(json_array_get(v, k), out + k * sz, f->records->fields,
                            f->records->n) >= 0)
                return false; /* the record's own fields are released with the summary */
        return true;
    }
    }
    return false;
}

/* Fields a summary.json of kvsim 0.1.0 does not have: absent, they read as 0 / NULL. */
static const char *const added_after_0_1[] = {
    "config.gpu_util",
    "config.reserve_bytes",
    "config.weight_bytes",
    "config.layers",
    "config.kv_heads",
    "config.head_dim",
    "config.gpu_cost_per_hour",
    "throughput.output_tok_per_s_per_gpu",
    "throughput.cost_per_million_output_tokens",
};

static bool may_be_absent(const kv_field *f)
{
    if (f->type == KV_FIELD_STRN || f->type == KV_FIELD_STRO)
        return true;
    for (size_t i = 0; i < sizeof added_after_0_1 / sizeof added_after_0_1[0]; i++)
        if (strcmp(f->path, added_after_0_1[i]) == 0)
            return true;
    return false;
}

/* Read fields[0..n) of one record: -1 when all were read, else the index of the first
 * missing (and not allowed to be) or ill-typed one. */
static int read_fields(const json_t *j, void *base, const kv_field *fl, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *v = kv_json_at(j, fl[i].path);
        if (!v && may_be_absent(&fl[i]))
            continue;
        if (!v || !read_value(v, base, &fl[i]))
            return (int)i;
    }
    return -1;
}

int kv_summary_from_json(const json_t *j, const char *what, kv_summary *s, kv_diag *diag)
{
    memset(s, 0, sizeof *s);
    s->has_cluster = kv_json_at(j, "cluster") != NULL;
    int bad = read_fields(j, s, fields, s->has_cluster ? N_FIELDS : first_cluster_field());
    if (bad >= 0) {
        kv_summary_release(s);
        return kv_diag_set(diag, -KV_EPARSE, "'%s' is not a kvsim run summary: no '%s'", what,
                           fields[bad].path);
    }
    if (!s->has_cluster)
        s->cluster.replicas = 1;
    return 0;
}
