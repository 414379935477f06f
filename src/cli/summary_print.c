/* summary_print: the human summary of a run, printed from the same typed kv_summary that
 * summary.json is generated from, so the screen and the file can never disagree. */
#include <stdio.h>
#include <string.h>

#include "cli/sim.h"
#include "kvsim/text.h"

static void latency_row(FILE *f, const char *name, const kv_dist *d)
{
    fprintf(f, "    %-6s %10.4f %10.4f %10.4f %10.4f %10.4f\n", name, d->p50, d->p90, d->p95,
            d->p99, d->max);
}

#define G(buf, v) kv_grouped(buf, sizeof buf, (double)(v))

/* The cluster section (R ≥ 2): the router, its accuracy (C6), imbalance (C7), and one
 * line per replica. */
static void print_cluster(FILE *f, const kv_summary *s)
{
    const kv_summary_cluster *c = &s->cluster;
    const kv_summary_config *cfg = &s->config;
    char a[32], b[32], router[160], signals[64];
    if (strcmp(c->router, "weighted") == 0)
        snprintf(router, sizeof router, "weighted:prefix=%g,queue=%g,kv=%g", c->router_weights.prefix,
                 c->router_weights.queue, c->router_weights.kv);
    else if (strcmp(c->router, "kv-cost") == 0)
        snprintf(router, sizeof router, "kv-cost (overlap weight %g)", c->router_overlap_weight);
    else if (strcmp(c->router, "session") == 0)
        snprintf(router, sizeof router, "session (%s of %s rows have a session)",
                 G(a, c->session_rows), G(b, s->requests.total));
    else
        snprintf(router, sizeof router, "%s", c->router);
    if (c->router_refresh_s > 0)
        snprintf(signals, sizeof signals, "signals sampled every %g s", c->router_refresh_s);
    else
        snprintf(signals, sizeof signals, "live signals");
    fprintf(f, "  cluster     %llu replicas x TP%llu PP%llu = %llu GPUs\n",
            (unsigned long long)c->replicas, (unsigned long long)cfg->tp,
            (unsigned long long)cfg->pp, (unsigned long long)c->gpus);
    fprintf(f, "  router      %s; %s view; %s\n", router, c->router_view, signals);
    fprintf(f,
            "  routing     predicted %s hit tokens, granted %s: %llu requests over-predicted, "
            "%llu under\n",
            G(a, c->router_accuracy.predicted_hit_tokens),
            G(b, c->router_accuracy.granted_hit_tokens),
            (unsigned long long)c->router_accuracy.overpredicted,
            (unsigned long long)c->router_accuracy.underpredicted);
    fprintf(f,
            "  imbalance   requests max/mean %.3f, Gini %.3f; mean used blocks max/mean %.3f, "
            "Gini %.3f\n",
            c->imbalance.requests_max_over_mean, c->imbalance.requests_gini,
            c->imbalance.blocks_max_over_mean, c->imbalance.blocks_gini);
    fprintf(f, "  replica     %8s %8s %8s %8s %7s %10s %10s %8s\n", "requests", "finished",
            "rejected", "preempt", "hit%", "peak_phys", "mean_phys", "steps");
    for (size_t i = 0; i < c->n_per_replica; i++) {
        const kv_replica_summary *r = &c->per_replica[i];
        char p[32], st[32];
        fprintf(f, "  %7llu     %8llu %8llu %8llu %8llu %7.2f %10s %10.1f %8s\n",
                (unsigned long long)r->replica, (unsigned long long)r->requests,
                (unsigned long long)r->finished, (unsigned long long)r->rejected,
                (unsigned long long)r->preemptions, 100.0 * r->prefix.hit_rate,
                G(p, r->blocks.peak_physical), r->blocks.mean_physical, G(st, r->steps));
    }
}

void cli_print_summary(FILE *f, const kv_summary *s)
{
    char a[32], b[32], c[32], d[32];
    const kv_summary_config *cfg = &s->config;
    fprintf(f, "kvsim run: %s (%s, %s requests)\n", cfg->trace, cfg->format,
            G(a, s->requests.total));
    fprintf(
        f, "  setup       %s on %s, TP%llu PP%llu, %s KV, block %llu tokens, %s blocks (from %s)\n",
        cfg->model, cfg->gpu, (unsigned long long)cfg->tp, (unsigned long long)cfg->pp,
        cfg->kv_dtype, (unsigned long long)cfg->block_size, G(b, cfg->num_blocks),
        cfg->num_blocks_from);
    fprintf(f, "  requests    %s finished, %s rejected, %s unfinished\n",
            G(a, s->requests.finished), G(b, s->requests.rejected), G(c, s->requests.unfinished));
    fprintf(f, "  rejections  exceeds_capacity %llu, exceeds_watermark %llu, exceeds_batch %llu\n",
            (unsigned long long)s->rejections.exceeds_capacity,
            (unsigned long long)s->rejections.exceeds_watermark,
            (unsigned long long)s->rejections.exceeds_batch);
    fprintf(f,
            "  blocks      usable %s; unique physical peak %s, mean %.1f; logical peak %s, "
            "mean %.1f; sharing x%.3f\n",
            G(a, s->blocks.usable), G(b, s->blocks.peak_physical), s->blocks.mean_physical,
            G(c, s->blocks.peak_logical), s->blocks.mean_logical, s->blocks.sharing_ratio);
    fprintf(f,
            "  prefix      hit rate %.2f%% (%s of %s prompt tokens); after preemption %s of %s\n",
            100.0 * s->prefix.hit_rate, G(a, s->prefix.hits), G(b, s->prefix.queries),
            G(c, s->prefix.preempted_hits), G(d, s->prefix.preempted_queries));
    fprintf(f, "  evictions   %s\n", G(a, s->evictions));
    fprintf(f, "  preemptions %s\n", G(a, s->preemptions));
    if (strcmp(cfg->policy, "fcfs") != 0 || !cfg->async_scheduling)
        fprintf(f, "  scheduler   %s policy, %s scheduling\n", cfg->policy,
                cfg->async_scheduling ? "async" : "sync");
    fprintf(f,
            "  watermark   %g (%s rule) = %llu blocks: %s deferrals in %s steps (%s requests held "
            "back)\n",
            s->watermark.watermark, cfg->watermark_rule, (unsigned long long)s->watermark.blocks,
            G(a, s->watermark.deferrals), G(b, s->watermark.deferral_steps),
            G(c, s->watermark.deferred_requests));
    fprintf(f, "  latency (s)       p50        p90        p95        p99        max\n");
    latency_row(f, "TTFT", &s->latency_s.ttft);
    latency_row(f, "TPOT", &s->latency_s.tpot);
    latency_row(f, "E2E", &s->latency_s.e2e);
    latency_row(f, "queue", &s->latency_s.queue);
    fprintf(
        f, "  throughput  %.1f output tokens/s, %.3f requests/s over %.3f s simulated (%s steps)\n",
        s->throughput.output_tok_per_s, s->throughput.requests_per_s, s->sim_time_s,
        G(a, s->steps));
    unsigned long long gpus = (unsigned long long)(cfg->tp * cfg->pp);
    char replicas[48] = "";
    if (s->has_cluster) { /* every replica's GPUs (C7: the throughput is the cluster's) */
        gpus = (unsigned long long)s->cluster.gpus;
        snprintf(replicas, sizeof replicas, "%llu replicas x ",
                 (unsigned long long)s->cluster.replicas);
    }
    fprintf(f, "  per GPU     %.1f output tokens/s (%llu GPU%s: %sTP%llu x PP%llu)",
            s->throughput.output_tok_per_s_per_gpu, gpus, gpus == 1 ? "" : "s", replicas,
            (unsigned long long)cfg->tp, (unsigned long long)cfg->pp);
    if (cfg->gpu_cost_per_hour > 0 && s->throughput.cost_per_million_output_tokens > 0)
        fprintf(f, "; %.4g per million output tokens at %g per GPU-hour",
                s->throughput.cost_per_million_output_tokens, cfg->gpu_cost_per_hour);
    else if (cfg->gpu_cost_per_hour > 0)
        fprintf(f, "; no output tokens, so no cost per token");
    fputc('\n', f);
    if (s->has_cluster)
        print_cluster(f, s);
    for (size_t i = 0; i < cfg->n_notes; i++)
        fprintf(f, "  note        %s\n", cfg->notes[i]);
}
