/* plan: the I/O-free half of SLO capacity planning (`kvsim plan`, README "Capacity
 * planning"): service-level objectives parsed from a spec and measured on a replay's
 * summary.json object, and a bracket-and-bisect search that proposes the next value to
 * replay from the verdicts recorded so far.  The CLI (src/cli/cmd_plan.c) does the
 * replays, the printing and the files.
 *
 * An SLO is an upper bound on one figure of a replay: `value ≤ limit` meets it.  A probe
 * meets the SLOs when it meets every one of them.
 *
 * The search knows nothing of traces: it walks a positive axis on which one direction is
 * "harder" (more load, or a smaller pool) and looks for the hardest value that still
 * meets the SLOs.  Its next proposal is derived from the recorded probes alone, so it is
 * deterministic and restartable, and it never proposes a value twice.
 */
#ifndef KVSIM_PLAN_H
#define KVSIM_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/summary.h"

/* ---- service-level objectives -------------------------------------------------------- */

#define KV_SLO_MAX 32

typedef enum kv_slo_unit {
    KV_SLO_SECONDS,  /* a latency statistic; specs give it with a unit: 2s, 100ms, 250us */
    KV_SLO_FRACTION, /* a rate: 0.01 or 1% */
} kv_slo_unit;

typedef struct kv_slo {
    char name[24]; /* canonical key: "ttft_p99", "preemption_rate", "reject_rate" */
    kv_slo_unit unit;
    double limit;  /* met iff value ≤ limit; seconds or a fraction; ≥ 0, finite */
    bool implicit; /* added by kv_slo_finish, not written in the spec */
} kv_slo;

typedef struct kv_slo_set {
    kv_slo slo[KV_SLO_MAX]; /* in spec order; the implicit reject_rate last */
    size_t n;
} kv_slo_set;

/* The keys a spec may use, for help texts and messages. */
#define KV_SLO_KEYS_HINT                                                                           \
    "ttft, tpot, e2e or queue with _p50, _p90, _p95, _p99, _max or _mean; preemption_rate; "       \
    "reject_rate"

void kv_slo_set_init(kv_slo_set *s);
/* Parse "ttft_p99=2s,tpot_p99=100ms,preemption_rate=0.01" and append its SLOs to s.
 * 0, or -KV_EINVAL with a diag that names the offending key or entry
 * ("'ttft_p99': '2' needs a time unit …"); on error s is unchanged. */
int kv_slo_parse(kv_slo_set *s, const char *spec, kv_diag *diag);
/* After the last kv_slo_parse: add reject_rate ≤ 0 unless the spec bounded it, so a run
 * that rejects or fails to finish a request never meets the SLOs by default.  0, or
 * -KV_EINVAL when the set is empty. */
int kv_slo_finish(kv_slo_set *s, kv_diag *diag);

/* The SLO's figure in a replay's summary (summary.h's fields):
 *   <dist>_<stat>    latency_s.<dist>.<stat>, seconds; NAN when no request finished
 *   preemption_rate  preemptions / requests.total
 *   reject_rate      (requests.rejected + requests.unfinished) / requests.total
 * NAN never meets. */
double kv_slo_measure(const kv_slo *slo, const kv_summary *summary);
bool kv_slo_met(const kv_slo *slo, double value);
/* value / limit: ≤ 1 meets.  A zero limit gives 0 for a zero value and +inf otherwise;
 * NAN gives +inf.  Used to name the binding SLO. */
double kv_slo_ratio(const kv_slo *slo, double value);
/* The key as it appears in output files: "ttft_p99_s" for seconds, the name otherwise. */
void kv_slo_key(const kv_slo *slo, char *buf, size_t n);

/* ---- the search --------------------------------------------------------------------- */

typedef struct kv_search_config {
    double min, max;     /* bounds of the axis, 0 < min < max (integers when integer) */
    double start;        /* first probe, clamped into [min, max] */
    bool harder_up;      /* true: larger values are harder (load); false: smaller (pools) */
    bool integer;        /* probe whole numbers only */
    double factor;       /* bracket expansion per probe, > 1 */
    double tolerance;    /* converged when harder/easier of the bracket ≤ 1 + tolerance */
    double confirm;      /* after converging, also probe answer·(1+confirm) (harder
                            side; pools: answer/(1+confirm)); 0 = off */
    uint32_t max_probes; /* ≥ 1 */
} kv_search_config;

typedef struct kv_search_point {
    double x;
    bool meets;
} kv_search_point;

typedef struct kv_search {
    kv_search_config cfg;
    kv_search_point *pts; /* n probes in the order made; values distinct */
    size_t n, cap;
    int sig_digits; /* non-integer proposals are rounded to this many significant
                       digits (≥ 4, more for tight tolerances) */
} kv_search;

typedef enum kv_search_status {
    KV_SEARCH_FOUND,       /* answer meets, the next harder probe fails, within tolerance */
    KV_SEARCH_NONE,        /* even the easiest bound fails: there is no answer */
    KV_SEARCH_BOUND,       /* even the hardest bound meets: the answer is that bound */
    KV_SEARCH_PROBE_LIMIT, /* max_probes reached before one of the above */
} kv_search_status;

const char *kv_search_status_name(kv_search_status s); /* "found", "none", "bound",
                                                          "probe_limit" */

typedef struct kv_search_result {
    kv_search_status status;
    long answer;       /* index in pts of the hardest probe that meets; -1 if none */
    long next;         /* the easiest failing probe harder than the answer (the "next probe
                          above"); without an answer, the easiest probe; -1 if none */
    long confirm;      /* the probe at answer·(1+confirm) if made; -1 otherwise */
    bool non_monotone; /* some failing probe is easier than the answer */
} kv_search_result;

/* cfg must be valid (asserted). */
void kv_search_init(kv_search *s, const kv_search_config *cfg);
void kv_search_release(kv_search *s);
/* The next value to probe, or false when the search is over (converged and confirmed, a
 * bound reached, or max_probes made).  Never proposes a value already probed. */
bool kv_search_next(const kv_search *s, double *x);
void kv_search_record(kv_search *s, double x, bool meets);
void kv_search_result_get(const kv_search *s, kv_search_result *r);

/* x rounded to `digits` significant decimal digits: the double nearest that decimal, so
 * "%.*g" prints it exactly. */
double kv_round_sig(double x, int digits);

#endif
