/* plan_print: what `kvsim plan` says on stdout: the human answer with its binding SLO
 * (kv_plan_get_binding) and the probe table.  The files are report_plan.c's. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/plan_cli.h"
#include "kvsim/planner.h"
#include "kvsim/mem.h"
#include "kvsim/text.h"

/* ---- formatting --------------------------------------------------------------------- */

/* 1.97 → "1.97 s", 0.1 → "100 ms", 2.5e-4 → "250 us". */
static const char *fmt_seconds(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else if (v >= 1 || v == 0)
        snprintf(buf, n, "%.4g s", v);
    else if (v >= 1e-3)
        snprintf(buf, n, "%.4g ms", v * 1e3);
    else
        snprintf(buf, n, "%.4g us", v * 1e6);
    return buf;
}

static const char *fmt_slo(char *buf, size_t n, const kv_slo *s, double v)
{
    if (s->unit == KV_SLO_SECONDS)
        return fmt_seconds(buf, n, v);
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.4g", v);
    return buf;
}

static const char *fmt_bytes(char *buf, size_t n, uint64_t b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.2f %s" : "%.0f %s", v, units[u]);
    return buf;
}

/* A point of the search axis (a load, or a pool in blocks) as a reader wants it:
 * "3.46x", "2,345 blocks", "4.58 GiB (2,345 blocks)". */
static const char *fmt_axis(char *buf, size_t n, const kv_plan *p, double x)
{
    char g[32], b[32];
    if (p->over == KV_PLAN_LOAD)
        snprintf(buf, n, "%gx", x);
    else if (p->over == KV_PLAN_REPLICAS)
        snprintf(buf, n, "%.0f replica%s (%.0f GPU%s)", x, x == 1 ? "" : "s",
                 x * p->gpus_per_replica, x * p->gpus_per_replica == 1 ? "" : "s");
    else if (p->over == KV_PLAN_NUM_BLOCKS)
        snprintf(buf, n, "%s blocks", kv_grouped(g, sizeof g, (double)(uint64_t)x));
    else
        snprintf(buf, n, "%s (%s blocks)", fmt_bytes(b, sizeof b, (uint64_t)x * p->block_bytes),
                 kv_grouped(g, sizeof g, (double)(uint64_t)x));
    return buf;
}

static const char *fmt_value(char *buf, size_t n, const kv_plan *p, const kv_plan_probe *pr)
{
    return fmt_axis(buf, n, p,
                    p->over == KV_PLAN_LOAD       ? pr->load
                    : p->over == KV_PLAN_REPLICAS ? pr->replicas
                                                  : pr->num_blocks);
}

static const char *fmt_rate(char *buf, size_t n, double r)
{
    if (isnan(r))
        snprintf(buf, n, "all at once");
    else
        snprintf(buf, n, "%.4g req/s", r);
    return buf;
}

/* ---- human output ------------------------------------------------------------------- */

static void print_slos(FILE *f, const kv_plan *p)
{
    char v[32];
    fputs("  SLOs       ", f);
    for (size_t i = 0; i < p->slos.n; i++) {
        const kv_slo *s = &p->slos.slo[i];
        fprintf(f, "%s %s <= %s%s", i ? "," : "", s->name, fmt_slo(v, sizeof v, s, s->limit),
                s->implicit ? " (implied)" : "");
    }
    fputc('\n', f);
}

/* The SLO that binds at the answer, with its figure there and just beyond. */
static void print_binding(FILE *f, const kv_plan *p, const kv_plan_binding *b)
{
    char v[96], r[32], t[32];
    const kv_plan_probe *a = b->answer;
    if (b->slo < 0)
        return;
    const kv_slo *s = &p->slos.slo[b->slo];
    if (b->binds && a) {
        fprintf(f, "  binding     %s (%s <= %s)", s->name, fmt_slo(r, sizeof r, s, a->slo[b->slo]),
                fmt_slo(t, sizeof t, s, s->limit));
        fprintf(f, "; at %s: %s\n", fmt_value(v, sizeof v, p, b->next),
                fmt_slo(r, sizeof r, s, b->next->slo[b->slo]));
    } else if (b->binds) {
        fprintf(f, "  binding     %s (%s > %s at %s)\n", s->name,
                fmt_slo(r, sizeof r, s, b->next->slo[b->slo]), fmt_slo(t, sizeof t, s, s->limit),
                fmt_value(v, sizeof v, p, b->next));
    } else {
        fprintf(
            f, "  binding     %s; closest: %s (%s <= %s)\n",
            p->result.status == KV_SEARCH_BOUND ? "none within the bounds"
                                                : "unknown: nothing beyond the answer was probed",
            s->name, fmt_slo(r, sizeof r, s, a->slo[b->slo]), fmt_slo(t, sizeof t, s, s->limit));
    }
}

/* --over replicas: the fewest replicas, and GPUs. */
static void print_replica_answer(FILE *f, const kv_plan *p, const kv_plan_binding *b)
{
    char v[96], r[32];
    const kv_search_result *res = &p->result;
    const kv_search_config *c = &p->search.cfg;
    const kv_plan_probe *a = b->answer;
    const kv_summary_config *cfg = a ? &a->summary.config : NULL;
    if (a && (res->status == KV_SEARCH_FOUND || res->status == KV_SEARCH_BOUND))
        fprintf(f,
                "  answer      fewest replicas within SLOs: %u x TP%llu PP%llu = %llu %s GPUs, at "
                "load %gx = %s%s\n",
                a->replicas, (unsigned long long)cfg->tp, (unsigned long long)cfg->pp,
                (unsigned long long)a->gpus, cfg->gpu, a->load, fmt_rate(r, sizeof r, a->rate),
                res->status == KV_SEARCH_BOUND ? " (the --min bound)" : "");
    else if (a)
        fprintf(f, "  answer      fewest replicas within SLOs so far: %u (%llu GPUs)\n",
                a->replicas, (unsigned long long)a->gpus);
    else if (res->status == KV_SEARCH_NONE)
        fprintf(f, "  answer      no replica count within SLOs: even %s (--max) violates them\n",
                fmt_value(v, sizeof v, p, b->next));
    else
        fprintf(f, "  answer      no replica count within SLOs found in %zu probes (--max-probes)\n",
                p->search.n);
    print_binding(f, p, b);
    if (a && b->next && b->next->replicas + 1 == a->replicas)
        fprintf(f, "  checked     %u replicas violate the SLOs: %u is the fewest\n",
                b->next->replicas, a->replicas);
    char lo[96], hi[96];
    fprintf(f, "  search      %s after %zu probes in [%s, %s], doubling then bisecting\n",
            kv_search_status_name(res->status), p->search.n, fmt_axis(lo, sizeof lo, p, c->min),
            fmt_axis(hi, sizeof hi, p, c->max));
    if (res->non_monotone)
        fprintf(f, "  note        not monotone: a probe with more replicas than the answer "
                   "violates the SLOs; the answer is the fewest that met, and every count "
                   "below it violated\n");
}

static void print_answer(FILE *f, const kv_plan *p, const kv_plan_binding *b)
{
    char v[96], r[32], t[32];
    const kv_search_result *res = &p->result;
    const kv_search_config *c = &p->search.cfg;
    bool load = p->over == KV_PLAN_LOAD;
    const kv_plan_probe *a = b->answer;
    if (p->over == KV_PLAN_REPLICAS) {
        print_replica_answer(f, p, b);
        return;
    }
    if (a && res->status != KV_SEARCH_BOUND) {
        if (load)
            fprintf(f,
                    "  answer      highest load within SLOs%s: %gx the trace rate = %s "
                    "(--time-scale %.12g)\n",
                    res->status == KV_SEARCH_FOUND ? "" : " so far", a->load,
                    fmt_rate(r, sizeof r, a->rate), a->time_scale);
        else
            fprintf(f,
                    "  answer      smallest pool within SLOs%s: %s blocks = %s = %llu bytes of KV "
                    "per rank, at load %gx = %s\n",
                    res->status == KV_SEARCH_FOUND ? "" : " so far",
                    kv_grouped(v, sizeof v, (double)a->num_blocks),
                    fmt_bytes(t, sizeof t, a->kv_budget), (unsigned long long)a->kv_budget, a->load,
                    fmt_rate(r, sizeof r, a->rate));
    } else if (a) {
        fprintf(f,
                "  answer      every %s probed meets the SLOs, %s the bound %s (%s): the "
                "answer is at least that good\n",
                load ? "load" : "pool", load ? "up to" : "down to", fmt_value(v, sizeof v, p, a),
                load ? "--max" : "--min");
    } else if (res->status == KV_SEARCH_NONE && p->whole_trace_max) {
        fprintf(f,
                "  answer      no pool within SLOs: even %s, enough to hold every request at "
                "once, violates them: at this load the SLOs are not limited by KV blocks\n",
                fmt_value(v, sizeof v, p, b->next));
    } else if (res->status == KV_SEARCH_NONE) {
        fprintf(f, "  answer      no %s within SLOs: even the bound %s violates them%s\n",
                load ? "load" : "pool", fmt_value(v, sizeof v, p, b->next),
                load ? " (--min)" : " (--max)");
    } else {
        fprintf(f, "  answer      no %s within SLOs found in %zu probes (--max-probes)\n",
                load ? "load" : "pool", p->search.n);
    }

    print_binding(f, p, b);
    if (res->confirm >= 0) {
        const kv_plan_probe *cp = &p->probes[res->confirm];
        long w = kv_plan_worst_slo(p, cp, true);
        fprintf(f, "  checked     %g%% %s (%s): %s", 100 * c->confirm, load ? "higher" : "smaller",
                fmt_value(v, sizeof v, p, cp), cp->meets ? "meets" : "violates");
        if (w >= 0)
            fprintf(f, " (%s %s)", p->slos.slo[w].name,
                    fmt_slo(r, sizeof r, &p->slos.slo[w], cp->slo[w]));
        fputc('\n', f);
    }
    char lo[96], hi[96];
    fprintf(f, "  search      %s after %zu probes in [%s, %s], tolerance %g%%\n",
            kv_search_status_name(res->status), p->search.n, fmt_axis(lo, sizeof lo, p, c->min),
            fmt_axis(hi, sizeof hi, p, c->max), 100 * c->tolerance);
    if (res->non_monotone)
        fprintf(f,
                "  note        not monotone: a probe %s the answer violates the SLOs; the "
                "answer is the %s probe that met, and every probe beyond it violated\n",
                load ? "below" : "above", load ? "highest" : "smallest");
}

static void print_table(FILE *f, const kv_plan *p)
{
    char v[96], r[32];
    size_t n = p->search.n;
    if (n == 0)
        return;
    size_t *idx = kv_xmalloc(n * sizeof *idx);
    kv_plan_sorted(p, idx);
    const char *vname = p->over == KV_PLAN_LOAD         ? "load"
                        : p->over == KV_PLAN_NUM_BLOCKS ? "pool"
                        : p->over == KV_PLAN_REPLICAS   ? "replicas"
                                                        : "KV budget";
    int vw = p->over == KV_PLAN_KV_BUDGET ? 28 : p->over == KV_PLAN_REPLICAS ? 24 : 16;
    fprintf(f, "\n  %-*s %-14s", vw, vname, "arrival rate");
    for (size_t i = 0; i < p->slos.n; i++)
        fprintf(f, " %12s", p->slos.slo[i].name);
    fputs("  SLOs\n", f);
    for (size_t k = 0; k < n; k++) {
        const kv_plan_probe *pr = &p->probes[idx[k]];
        fprintf(f, "  %-*s %-14s", vw, fmt_value(v, sizeof v, p, pr),
                fmt_rate(r, sizeof r, pr->rate));
        for (size_t i = 0; i < p->slos.n; i++)
            fprintf(f, " %12s", fmt_slo(r, sizeof r, &p->slos.slo[i], pr->slo[i]));
        fprintf(f, "  %s%s\n", pr->meets ? "met" : "violated",
                (long)idx[k] == p->result.answer ? "  <- answer" : "");
    }
    free(idx);
}

/* Throughput per GPU at the answer, and its cost when --gpu-cost-per-hour was given. */
static void print_per_gpu(FILE *f, const kv_plan_probe *a)
{
    if (!a)
        return;
    fprintf(f, "  per GPU     %.1f output tokens/s at the answer (%llu GPU%s)",
            a->output_tok_per_s_per_gpu, (unsigned long long)a->gpus, a->gpus == 1 ? "" : "s");
    double c = a->summary.config.gpu_cost_per_hour;
    if (!isnan(a->cost_per_million))
        fprintf(f, "; %.4g per million output tokens at %g per GPU-hour", a->cost_per_million, c);
    else if (c > 0)
        fputs("; no output tokens, so no cost per token", f);
    fputc('\n', f);
}

void cli_plan_print(FILE *f, const kv_plan *p)
{
    char r[32], g[32];
    fprintf(f, "kvsim plan: %s (%s requests, %s as loaded), over %s\n", p->trace_path,
            kv_grouped(g, sizeof g, (double)p->n_requests), fmt_rate(r, sizeof r, p->base_rate),
            kv_plan_over_name(p->over));
    const kv_plan_probe *any = p->search.n ? &p->probes[0] : NULL;
    if (any) {
        const kv_summary_config *c = &any->summary.config;
        fprintf(f, "  setup       %s on %s, TP%llu PP%llu, %s KV, block %llu tokens, ", c->model,
                c->gpu, (unsigned long long)c->tp, (unsigned long long)c->pp, c->kv_dtype,
                (unsigned long long)c->block_size);
        if (p->over == KV_PLAN_LOAD || p->over == KV_PLAN_REPLICAS)
            fprintf(f, "%s blocks (from %s)%s\n", kv_grouped(g, sizeof g, (double)any->num_blocks),
                    c->num_blocks_from, p->over == KV_PLAN_REPLICAS ? " per replica" : "");
        else
            fprintf(f, "pool searched in blocks of %s (%llu bytes)\n",
                    fmt_bytes(r, sizeof r, p->block_bytes), (unsigned long long)p->block_bytes);
        const kv_summary_cluster *cl = &any->summary.cluster;
        if (p->over != KV_PLAN_REPLICAS && any->replicas > 1)
            fprintf(f, "  cluster     %u replicas x TP%llu PP%llu = %llu GPUs behind %s\n",
                    any->replicas, (unsigned long long)c->tp, (unsigned long long)c->pp,
                    (unsigned long long)any->gpus, cl->router ? cl->router : "?");
        else if (p->over == KV_PLAN_REPLICAS)
            fprintf(f, "  cluster     each replica TP%llu PP%llu = %u GPU(s), behind %s\n",
                    (unsigned long long)c->tp, (unsigned long long)c->pp, p->gpus_per_replica,
                    kv_router_policy_name(p->sim_opts__.router.policy));
    }
    if (p->target_rate > 0)
        fprintf(f, "  target      %g req/s = load %gx the trace's %s: the %s that hold%s it\n",
                p->target_rate, p->fixed_load, fmt_rate(r, sizeof r, p->base_rate),
                p->over == KV_PLAN_REPLICAS ? "fewest replicas" : "smallest pool",
                p->over == KV_PLAN_REPLICAS ? "" : "s");
    print_slos(f, p);
    kv_plan_binding b;
    kv_plan_get_binding(p, &b);
    print_answer(f, p, &b);
    print_per_gpu(f, b.answer);
    print_table(f, p);
}
