/* report_plan: plan.json and plan.csv, the files `kvsim plan --out DIR` writes (README
 * "Capacity planning" documents both).  Everything is derived from the recorded probes and
 * the search result (planner.h); nothing here replays.
 *
 * Both files are kv_afiles in a kv_outdir (a temporary directory beside DIR), which takes
 * DIR's place only when both were written and closed without error (outdir.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/outdir.h"
#include "kvsim/path.h"
#include "kvsim/plot.h"
#include "kvsim/planner.h"
#include "kvsim/report.h"

/* ---- plan.json ---------------------------------------------------------------------- */

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *value_json(const kv_plan *p, double v)
{
    return p->over == KV_PLAN_LOAD ? json_real(v) : json_integer((json_int_t)v);
}

static json_t *probe_json(const kv_plan *p, const kv_plan_probe *pr)
{
    char key[40];
    json_t *o = json_object();
    json_object_set_new(o, "value", value_json(p, pr->value));
    json_object_set_new(o, "load", json_real(pr->load));
    json_object_set_new(o, "arrival_rate_req_s", real_or_null(pr->rate));
    json_object_set_new(o, "time_scale", json_real(pr->time_scale));
    json_object_set_new(o, "num_blocks", json_integer(pr->num_blocks));
    json_object_set_new(o, "kv_budget_bytes", json_integer((json_int_t)pr->kv_budget));
    json_object_set_new(o, "replicas", json_integer(pr->replicas));
    json_object_set_new(o, "gpus", json_integer((json_int_t)pr->gpus));
    json_object_set_new(o, "meets_slo", json_boolean(pr->meets));
    json_t *viol = json_array(), *slo = json_object();
    for (size_t i = 0; i < p->slos.n; i++) {
        const kv_slo *s = &p->slos.slo[i];
        kv_slo_key(s, key, sizeof key);
        json_object_set_new(slo, key, real_or_null(pr->slo[i]));
        if (!kv_slo_met(s, pr->slo[i]))
            json_array_append_new(viol, json_string(s->name));
    }
    json_object_set_new(o, "violated", viol);
    json_object_set_new(o, "slo", slo);
    json_object_set_new(o, "ttft_p99_s", real_or_null(pr->ttft_p99));
    json_object_set_new(o, "tpot_p99_s", real_or_null(pr->tpot_p99));
    json_object_set_new(o, "preemption_rate", real_or_null(pr->preemption_rate));
    json_object_set_new(o, "reject_rate", real_or_null(pr->reject_rate));
    json_object_set_new(o, "preemptions", json_integer((json_int_t)pr->preemptions));
    json_object_set_new(o, "finished", json_integer((json_int_t)pr->finished));
    json_object_set_new(o, "rejected", json_integer((json_int_t)pr->rejected));
    json_object_set_new(o, "unfinished", json_integer((json_int_t)pr->unfinished));
    json_object_set_new(o, "output_tok_per_s", json_real(pr->output_tok_per_s));
    json_object_set_new(o, "output_tok_per_s_per_gpu", json_real(pr->output_tok_per_s_per_gpu));
    json_object_set_new(o, "cost_per_million_output_tokens", real_or_null(pr->cost_per_million));
    return o;
}

/* A search bound in value units (bytes for kv_budget). */
static json_t *bound_json(const kv_plan *p, double blocks_or_load)
{
    if (p->over == KV_PLAN_KV_BUDGET)
        return json_integer((json_int_t)((uint64_t)blocks_or_load * p->block_bytes));
    return value_json(p, blocks_or_load);
}

/* The plan's "base": the trace's own load, the target and the per-replica GPUs. */
static json_t *base_json(const kv_plan *p)
{
    json_t *base = json_object();
    json_object_set_new(base, "time_scale", json_real(p->base_time_scale));
    json_object_set_new(base, "arrival_rate_req_s", real_or_null(p->base_rate));
    json_object_set_new(base, "load", json_real(p->over == KV_PLAN_LOAD ? 1.0 : p->fixed_load));
    json_object_set_new(base, "target_rate_req_s",
                        p->target_rate > 0 ? json_real(p->target_rate) : json_null());
    if (p->over != KV_PLAN_LOAD)
        json_object_set_new(base, "block_bytes", json_integer((json_int_t)p->block_bytes));
    json_object_set_new(base, "gpus_per_replica", json_integer(p->gpus_per_replica));
    return base;
}

/* The plan's "search": its bounds and settings, and how many probes it ran. */
static json_t *search_json(const kv_plan *p)
{
    const kv_search_config *c = &p->search.cfg;
    json_t *s = json_object();
    json_object_set_new(s, "min", bound_json(p, c->min));
    json_object_set_new(s, "max", bound_json(p, c->max));
    json_object_set_new(s, "start", bound_json(p, c->start));
    if (p->over == KV_PLAN_NUM_BLOCKS || p->over == KV_PLAN_KV_BUDGET)
        json_object_set_new(s, "max_holds_whole_trace", json_boolean(p->whole_trace_max));
    json_object_set_new(s, "factor", json_real(c->factor));
    json_object_set_new(s, "tolerance", json_real(c->tolerance));
    json_object_set_new(s, "confirm", json_real(c->confirm));
    json_object_set_new(s, "max_probes", json_integer(c->max_probes));
    json_object_set_new(s, "probes", json_integer((json_int_t)p->search.n));
    return s;
}

json_t *kv_plan_json(const kv_plan *p)
{
    char key[40];
    const kv_search_result *r = &p->result;
    kv_plan_binding b;
    kv_plan_get_binding(p, &b);
    json_t *j = kv_json_stamped(json_object(), p->command);
    json_object_set_new(j, "trace", kv_json_text(p->trace_path));
    json_object_set_new(j, "requests", json_integer((json_int_t)p->n_requests));
    json_object_set_new(j, "over", json_string(kv_plan_over_name(p->over)));
    json_t *slo = json_object(), *implied = json_array();
    for (size_t i = 0; i < p->slos.n; i++) {
        kv_slo_key(&p->slos.slo[i], key, sizeof key);
        json_object_set_new(slo, key, json_real(p->slos.slo[i].limit));
        if (p->slos.slo[i].implicit)
            json_array_append_new(implied, json_string(p->slos.slo[i].name));
    }
    json_object_set_new(j, "slo", slo);
    json_object_set_new(j, "slo_implied", implied);
    json_object_set_new(j, "status", json_string(kv_search_status_name(r->status)));
    const kv_plan_probe *a = b.answer;
    json_object_set_new(j, "answer", a ? value_json(p, a->value) : json_null());
    json_object_set_new(j, "answer_load", a ? json_real(a->load) : json_null());
    json_object_set_new(j, "answer_arrival_rate_req_s", a ? real_or_null(a->rate) : json_null());
    json_object_set_new(j, "answer_time_scale", a ? json_real(a->time_scale) : json_null());
    json_object_set_new(j, "answer_num_blocks", a ? json_integer(a->num_blocks) : json_null());
    json_object_set_new(j, "answer_kv_budget_bytes",
                        a ? json_integer((json_int_t)a->kv_budget) : json_null());
    json_object_set_new(j, "answer_replicas", a ? json_integer(a->replicas) : json_null());
    json_object_set_new(j, "answer_gpus", a ? json_integer((json_int_t)a->gpus) : json_null());
    json_object_set_new(j, "answer_output_tok_per_s_per_gpu",
                        a ? json_real(a->output_tok_per_s_per_gpu) : json_null());
    json_object_set_new(j, "answer_cost_per_million_output_tokens",
                        a ? real_or_null(a->cost_per_million) : json_null());
    const kv_slo *bs = b.slo >= 0 ? &p->slos.slo[b.slo] : NULL;
    json_object_set_new(j, "binding", bs && b.binds ? json_string(bs->name) : json_null());
    json_object_set_new(j, "closest", bs && !b.binds ? json_string(bs->name) : json_null());
    json_object_set_new(j, "binding_limit", bs ? json_real(bs->limit) : json_null());
    json_object_set_new(j, "binding_at_answer",
                        bs && a ? real_or_null(a->slo[b.slo]) : json_null());
    json_object_set_new(j, "binding_at_next",
                        bs && b.next ? real_or_null(b.next->slo[b.slo]) : json_null());
    json_object_set_new(j, "next", b.next ? value_json(p, b.next->value) : json_null());
    json_object_set_new(j, "confirm",
                        r->confirm >= 0 ? value_json(p, p->probes[r->confirm].value) : json_null());
    json_object_set_new(j, "non_monotone", json_boolean(r->non_monotone));
    json_object_set_new(j, "base", base_json(p));
    json_object_set_new(j, "search", search_json(p));
    json_object_set_new(j, "at_answer", a ? probe_json(p, a) : json_null());
    json_object_set_new(j, "at_next", b.next ? probe_json(p, b.next) : json_null());
    const kv_plan_probe *cfg_from = a ? a : b.next;
    json_object_set_new(j, "config",
                        cfg_from ? kv_summary_config_json(&cfg_from->summary) : json_null());
    json_t *probes = json_array();
    size_t *idx = kv_xmalloc((p->search.n + 1) * sizeof *idx);
    kv_plan_sorted(p, idx);
    for (size_t k = 0; k < p->search.n; k++)
        json_array_append_new(probes, probe_json(p, &p->probes[idx[k]]));
    free(idx);
    json_object_set_new(j, "probes", probes);
    return j;
}

/* ---- plan.csv and the files --------------------------------------------------------- */

static bool is_fixed_column(const kv_slo *s)
{
    return strcmp(s->name, "ttft_p99") == 0 || strcmp(s->name, "tpot_p99") == 0 ||
           strcmp(s->name, "preemption_rate") == 0 || strcmp(s->name, "reject_rate") == 0;
}

static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.12g", v);
    else
        fputc(',', f);
}

static void write_csv(FILE *f, const kv_plan *p)
{
    char key[40];
    fputs("load,arrival_rate_req_s,ttft_p99_s,tpot_p99_s,preemption_rate,meets_slo,value,"
          "time_scale,num_blocks,kv_budget_bytes,reject_rate,preemptions,finished,rejected,"
          "unfinished,replicas,gpus,output_tok_per_s,output_tok_per_s_per_gpu,"
          "cost_per_million_output_tokens",
          f);
    for (size_t i = 0; i < p->slos.n; i++)
        if (!is_fixed_column(&p->slos.slo[i])) {
            kv_slo_key(&p->slos.slo[i], key, sizeof key);
            fprintf(f, ",%s", key);
        }
    fputc('\n', f);
    size_t *idx = kv_xmalloc((p->search.n + 1) * sizeof *idx);
    kv_plan_sorted(p, idx);
    for (size_t k = 0; k < p->search.n; k++) {
        const kv_plan_probe *pr = &p->probes[idx[k]];
        fprintf(f, "%.12g", pr->load);
        csv_num(f, pr->rate);
        csv_num(f, pr->ttft_p99);
        csv_num(f, pr->tpot_p99);
        csv_num(f, pr->preemption_rate);
        fprintf(f, ",%d", pr->meets ? 1 : 0);
        if (p->over == KV_PLAN_LOAD)
            fprintf(f, ",%.12g", pr->value);
        else
            fprintf(f, ",%.0f", pr->value);
        fprintf(f, ",%.12g,%u,%llu", pr->time_scale, pr->num_blocks,
                (unsigned long long)pr->kv_budget);
        csv_num(f, pr->reject_rate);
        fprintf(f, ",%llu,%llu,%llu,%llu,%u,%llu", (unsigned long long)pr->preemptions,
                (unsigned long long)pr->finished, (unsigned long long)pr->rejected,
                (unsigned long long)pr->unfinished, pr->replicas, (unsigned long long)pr->gpus);
        csv_num(f, pr->output_tok_per_s);
        csv_num(f, pr->output_tok_per_s_per_gpu);
        csv_num(f, pr->cost_per_million);
        for (size_t i = 0; i < p->slos.n; i++)
            if (!is_fixed_column(&p->slos.slo[i]))
                csv_num(f, pr->slo[i]);
        fputc('\n', f);
    }
    free(idx);
}

enum { F_CSV, F_JSON, F_COUNT };

static const char *const plan_files[] = {"plan.csv", "plan.json", NULL};

int kv_plan_out_open(kv_outdir *o, const char *dir, kv_diag *diag)
{
    return kv_outdir_open(o, dir, plan_files, kv_plot_figure_names(KV_PLOT_PLAN), diag);
}

int kv_plan_write_files(const kv_plan *p, kv_outdir *o, kv_diag *diag)
{
    kv_afile f[F_COUNT];
    memset(f, 0, sizeof f);
    int rc = 0;
    for (int i = 0; rc == 0 && i < F_COUNT; i++)
        rc = kv_afile_open(&f[i], kv_outdir_path(o, plan_files[i]), diag);
    if (rc == 0) {
        write_csv(f[F_CSV].f, p);
        json_t *j = kv_plan_json(p);
        if (json_dumpf(j, f[F_JSON].f, KV_JSON_FLAGS) != 0 || fputc('\n', f[F_JSON].f) == EOF)
            kv_afile_note_error(&f[F_JSON]); /* the commit reports it */
        json_decref(j);
    }
    /* Both complete in the temporary directory before it takes DIR's place. */
    for (int i = 0; rc == 0 && i < F_COUNT; i++)
        rc = kv_afile_commit(&f[i], diag);
    for (int i = 0; i < F_COUNT; i++)
        kv_afile_abort(&f[i]);
    rc = kv_outdir_diag(o, rc, diag);
    if (rc == 0)
        rc = kv_outdir_commit(o, diag);
    else
        kv_outdir_abort(o);
    return rc;
}
