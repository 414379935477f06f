/* summary_print: the human summary of a run, printed from the same typed kv_summary that
 * summary.json is generated from, so the screen and the file can never disagree. */
#include <stdio.h>
#include <string.h>

#include "cli/sim.h"

/* 1234567 → "1,234,567" */
static const char *grouped(char *buf, size_t n, double v)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%.0f", v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        buf[o++] = raw[i];
        size_t left = len - i - 1;
        if (left > 0 && left % 3 == 0 && raw[i] != '-')
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

static void latency_row(FILE *f, const char *name, const kv_dist *d)
{
    fprintf(f, "    %-6s %10.4f %10.4f %10.4f %10.4f %10.4f\n", name, d->p50, d->p90, d->p95,
            d->p99, d->max);
}

#define G(buf, v) grouped(buf, sizeof buf, (double)(v))

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
    for (size_t i = 0; i < cfg->n_notes; i++)
        fprintf(f, "  note        %s\n", cfg->notes[i]);
}
