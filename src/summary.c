/* summary: the typed run summary and its schema (include/kvsim/summary.h).
 *
 * The field table is KV_SUMMARY_SCHEMA expanded once: each entry's path is its member
 * designator stringified, so a field cannot be renamed in the struct without its JSON key
 * following.  The writer builds nested objects by path segment in table order, which is
 * summary.json's key order; the reader walks the same table.  Reals go through jansson
 * with KV_JSON_FLAGS (15 significant digits), as every JSON output.
 */
#include "kvsim/summary.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/report.h"

static const kv_field fields[] = {
#define X(type, member) {#member, KV_FIELD_##type, offsetof(kv_summary, member)},
    KV_SUMMARY_SCHEMA(X)
#undef X
};
enum { N_FIELDS = sizeof fields / sizeof fields[0] };

/* A KV_FIELD_STRV member is a char ** with its size_t count right after it. */
_Static_assert(offsetof(kv_summary_config, n_notes) ==
                   offsetof(kv_summary_config, notes) + sizeof(char **),
               "notes and n_notes must be adjacent");

static size_t *strv_count_at(kv_summary *s, const kv_field *f)
{
    return (size_t *)((char *)s + f->offset + sizeof(char **));
}

const kv_field *kv_summary_fields(size_t *n)
{
    *n = N_FIELDS;
    return fields;
}

const kv_field *kv_summary_field(const char *path)
{
    for (size_t i = 0; i < N_FIELDS; i++)
        if (strcmp(fields[i].path, path) == 0)
            return &fields[i];
    return NULL;
}

typedef char **strv_t;
typedef char *str_t;
#define AT(s, f, type)  ((type *)((char *)(s) + (f)->offset))
#define CAT(s, f, type) ((const type *)((const char *)(s) + (f)->offset))

double kv_summary_number(const kv_summary *s, const kv_field *f)
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
    s->steps = st->steps;
    s->sim_time_s = t;
    s->livelock_guard_fired = r->stop == -KV_ELIVELOCK;
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
    c->tp = setup->shard.tp;
    c->pp = setup->shard.pp;
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
    bool has_ids = false;
    for (size_t i = 0; i < t->n && !has_ids; i++)
        has_ids = t->reqs[i].content == KV_CONTENT_HASH_IDS;
    if (has_ids && setup->block_size > t->trace_block_size)
        add_note(c, "block size %u > trace block size %u: hash_ids sharing is only approximate",
                 setup->block_size, t->trace_block_size);
    if (setup->shard.kv_replicated)
        add_note(c, "TP %u > %u KV heads: each rank holds a replicated KV head", setup->shard.tp,
                 setup->model.num_kv_heads);
}

void kv_summary_release(kv_summary *s)
{
    for (size_t i = 0; i < N_FIELDS; i++) {
        const kv_field *f = &fields[i];
        if (f->type == KV_FIELD_STR)
            free(*AT(s, f, char *));
        else if (f->type == KV_FIELD_STRV) {
            char **v = *AT(s, f, char **);
            size_t n = *strv_count_at(s, f);
            for (size_t k = 0; k < n; k++)
                free(v[k]);
            free(v);
        }
    }
    memset(s, 0, sizeof *s);
}

/* ---- JSON --------------------------------------------------------------------------- */

static size_t strv_count(const kv_summary *s, const kv_field *f)
{
    return *(const size_t *)((const char *)s + f->offset + sizeof(char **));
}

static json_t *value_json(const kv_summary *s, const kv_field *f)
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
        return json_string(*CAT(s, f, str_t) ? *CAT(s, f, str_t) : "");
    case KV_FIELD_STRV: {
        json_t *a = json_array();
        char *const *v = *CAT(s, f, strv_t);
        for (size_t k = 0; k < strv_count(s, f); k++)
            json_array_append_new(a, json_string(v[k]));
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

json_t *kv_summary_to_json(const kv_summary *s)
{
    json_t *root = json_object();
    for (size_t i = 0; i < N_FIELDS; i++) {
        const char *leaf;
        json_t *parent = parent_of(root, fields[i].path, &leaf);
        json_object_set_new(parent, leaf, value_json(s, &fields[i]));
    }
    return root;
}

json_t *kv_summary_config_json(const kv_summary *s)
{
    json_t *all = kv_summary_to_json(s);
    json_t *c = json_incref(json_object_get(all, "config"));
    json_decref(all);
    return c;
}

static bool read_value(const json_t *v, kv_summary *s, const kv_field *f)
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
    case KV_FIELD_STR:
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
        *strv_count_at(s, f) = n;
        for (size_t k = 0; k < n; k++) {
            const json_t *e = json_array_get(v, k);
            out[k] = kv_xstrdup(json_is_string(e) ? json_string_value(e) : "");
        }
        return true;
    }
    }
    return false;
}

int kv_summary_from_json(const json_t *j, const char *what, kv_summary *s, kv_diag *diag)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < N_FIELDS; i++) {
        const json_t *v = kv_json_at(j, fields[i].path);
        if (!v || !read_value(v, s, &fields[i])) {
            kv_summary_release(s);
            return kv_diag_set(diag, -KV_EPARSE, "'%s' is not a kvsim run summary: no '%s'", what,
                               fields[i].path);
        }
    }
    return 0;
}
