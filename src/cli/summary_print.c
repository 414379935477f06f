/* summary_print: the human summary of a run, read back from summary.json's object so the
 * screen and the file can never disagree. */
#include <stdio.h>
#include <string.h>

#include "cli/sim.h"
#include "kvsim/report.h"

/* path: "a.b.c"; 0 when absent */
static double num(const json_t *o, const char *path)
{
    return json_number_value(kv_json_at(o, path));
}

static const char *str(const json_t *o, const char *k1, const char *k2)
{
    const json_t *v = json_object_get(json_object_get(o, k1), k2);
    return json_is_string(v) ? json_string_value(v) : "?";
}

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

static void latency_row(FILE *f, const json_t *s, const char *name, const char *key)
{
    char p[64];
    snprintf(p, sizeof p, "latency_s.%s.", key);
    double v[5];
    const char *q[] = {"p50", "p90", "p95", "p99", "max"};
    for (int i = 0; i < 5; i++) {
        char path[96];
        snprintf(path, sizeof path, "%s%s", p, q[i]);
        v[i] = num(s, path);
    }
    fprintf(f, "    %-6s %10.4f %10.4f %10.4f %10.4f %10.4f\n", name, v[0], v[1], v[2], v[3], v[4]);
}

void cli_print_summary(FILE *f, const json_t *s)
{
    char a[32], b[32], c[32], d[32];
    const json_t *cfg = json_object_get(s, "config");
    fprintf(f, "kvsim run: %s (%s, %s requests)\n", str(s, "config", "trace"),
            str(s, "config", "format"), grouped(a, sizeof a, num(s, "requests.total")));
    fprintf(
        f, "  setup       %s on %s, TP%.0f PP%.0f, %s KV, block %.0f tokens, %s blocks (from %s)\n",
        str(s, "config", "model"), str(s, "config", "gpu"), num(cfg, "tp"), num(cfg, "pp"),
        str(s, "config", "kv_dtype"), num(cfg, "block_size"),
        grouped(b, sizeof b, num(cfg, "num_blocks")), str(s, "config", "num_blocks_from"));
    fprintf(f, "  requests    %s finished, %s rejected, %s unfinished\n",
            grouped(a, sizeof a, num(s, "requests.finished")),
            grouped(b, sizeof b, num(s, "requests.rejected")),
            grouped(c, sizeof c, num(s, "requests.unfinished")));
    fprintf(f, "  rejections  exceeds_capacity %.0f, exceeds_watermark %.0f, exceeds_batch %.0f\n",
            num(s, "rejections.exceeds_capacity"), num(s, "rejections.exceeds_watermark"),
            num(s, "rejections.exceeds_batch"));
    fprintf(f,
            "  blocks      usable %s; unique physical peak %s, mean %.1f; logical peak %s, "
            "mean %.1f; sharing x%.3f\n",
            grouped(a, sizeof a, num(s, "blocks.usable")),
            grouped(b, sizeof b, num(s, "blocks.peak_physical")), num(s, "blocks.mean_physical"),
            grouped(c, sizeof c, num(s, "blocks.peak_logical")), num(s, "blocks.mean_logical"),
            num(s, "blocks.sharing_ratio"));
    fprintf(f,
            "  prefix      hit rate %.2f%% (%s of %s prompt tokens); after preemption %s of %s\n",
            100.0 * num(s, "prefix.hit_rate"), grouped(a, sizeof a, num(s, "prefix.hits")),
            grouped(b, sizeof b, num(s, "prefix.queries")),
            grouped(c, sizeof c, num(s, "prefix.preempted_hits")),
            grouped(d, sizeof d, num(s, "prefix.preempted_queries")));
    fprintf(f, "  evictions   %s\n", grouped(a, sizeof a, num(s, "evictions")));
    fprintf(f, "  preemptions %s\n", grouped(a, sizeof a, num(s, "preemptions")));
    fprintf(f, "  watermark   %g = %.0f blocks: %s deferrals in %s steps (%s requests held back)\n",
            num(s, "watermark.watermark"), num(s, "watermark.blocks"),
            grouped(a, sizeof a, num(s, "watermark.deferrals")),
            grouped(b, sizeof b, num(s, "watermark.deferral_steps")),
            grouped(c, sizeof c, num(s, "watermark.deferred_requests")));
    fprintf(f, "  latency (s)       p50        p90        p95        p99        max\n");
    latency_row(f, s, "TTFT", "ttft");
    latency_row(f, s, "TPOT", "tpot");
    latency_row(f, s, "E2E", "e2e");
    latency_row(f, s, "queue", "queue");
    fprintf(
        f, "  throughput  %.1f output tokens/s, %.3f requests/s over %.3f s simulated (%s steps)\n",
        num(s, "throughput.output_tok_per_s"), num(s, "throughput.requests_per_s"),
        num(s, "sim_time_s"), grouped(a, sizeof a, num(s, "steps")));
    const json_t *notes = json_object_get(cfg, "notes");
    for (size_t i = 0; i < json_array_size(notes); i++)
        fprintf(f, "  note        %s\n", json_string_value(json_array_get(notes, i)));
}
