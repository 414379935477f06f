/* arrivals: how requests reach a scheduler (DESIGN §6 "Time"; issue 11 items 1 and 2).
 *
 * A request is *sent* by its client, passes the serving front end (the API server: HTTP,
 * tokenization, the hand-off to the engine core) and *arrives* at the scheduler; its
 * tokens pass the front end again on the way back.  Two mechanisms, shared by every
 * replay driver (sim.c, cluster.c):
 *
 * - The front end (kv_frontend): a fixed latency `in` from the send to the scheduler, a
 *   fixed latency `out` from a token's sampling to the client, and an optional admission
 *   rate: the API server starts at most `rate` requests a second, FCFS by send — request
 *   i starts at max(send_i, start_{i−1} + 1/rate) and arrives at start_i + in.  With
 *   `tok` > 0 the API server's work per streamed token is charged to that capacity too,
 *   as a single server's service time: request i occupies it for 1/rate + tok · output_i
 *   (its tokens' streaming is booked at its admission), so start_i = max(send_i,
 *   start_{i−1} + 1/rate + tok · output_{i−1}).
 *   `none` (all zero) is the engine alone, exactly as before the front end existed.
 * - Closed-loop clients: a trace row with a `client` is sent when that client's previous
 *   row (in trace order) has been answered: at max(its own arrival field, previous reply
 *   received + its think time), the reply received `out` after the request ended
 *   (finished, or rejected).  A client's first row, and every row without a client, is
 *   sent at its arrival (open loop).  Sends depend on the simulation, yet stay
 *   deterministic: ties are broken by trace index.
 * - A client semaphore (max_concurrency N > 0; 0 = none, the default): `vllm bench serve
 *   --max-concurrency N`'s asyncio.Semaphore.  Rows without a client are sent in trace
 *   order, each at max(its arrival, the moment a slot frees): the k-th such row (0-based)
 *   takes a slot at its arrival when k < N, else when the (k − N + 1)-th reply reaches
 *   its client (the semaphore is FIFO: waiters are served in order).  A reply is received
 *   `out` after the request ended (finished or rejected).  Rows with a client hold no
 *   slot.
 *
 * Times a client sees (requests.csv, TTFT, E2E) are taken from the send: a closed-loop
 * row's spec is replaced by a copy whose arrival is its send, and kv_arrivals_finish
 * shifts first-token and finish times by `out`.  TPOT and ITL are unchanged by a
 * constant `out`.
 */
#ifndef KVSIM_ARRIVALS_H
#define KVSIM_ARRIVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/sched.h"
#include "kvsim/trace.h"

typedef struct kv_frontend {
    int64_t in_ns;  /* send → scheduler, ≥ 0 */
    int64_t out_ns; /* sampled token → client, ≥ 0 */
    double rate;    /* API-server admissions per second; 0 = unlimited */
    int64_t tok_ns; /* API-server work per output token, booked at admission, ≥ 0 */
} kv_frontend;

/* "none" (default), "vllm" (the cited preset, README "Time"), or either followed by
 * ":KEY=VALUE,..." with keys in (ms), out (ms), rate (requests/s, 0 = unlimited), tok (ms
 * per output token, at most 1000).
 * 0, or -KV_EINVAL with a diag naming {frontend}. */
int kv_frontend_parse(const char *spec, kv_frontend *out, kv_diag *diag);
bool kv_frontend_is_none(const kv_frontend *f);
/* The resolved model as a spec kv_frontend_parse reads back to the same values. */
void kv_frontend_describe(const kv_frontend *f, char *buf, size_t size);

typedef struct kv_arrivals kv_arrivals; /* opaque */

/* The arrival stream of a replay of trace t whose requests are reqs[0..t->n) (their
 * specs may be replaced, see above); max_concurrency N > 0 puts the client semaphore in
 * front of the open-loop rows (0: none).  Can't fail (out of memory aborts). */
kv_arrivals *kv_arrivals_create(const kv_trace *t, kv_req *reqs, const kv_frontend *fe,
                                uint32_t max_concurrency);
void kv_arrivals_destroy(kv_arrivals *a); /* NULL ok */

/* Whether the trace has closed-loop rows or a semaphore: then the replay must report every
 * request's end through kv_arrivals_ended (as sched's on_end) and call kv_arrivals_settle. */
bool kv_arrivals_closed_loop(const kv_arrivals *a);

/* The time of the next event on the arrival path (a send or an arrival), false when
 * none is due now (every row sent and arrived, or the rest wait for replies). */
bool kv_arrivals_next(const kv_arrivals *a, int64_t *t);
/* Do that event: true when it is an arrival (*idx the trace index of the request that
 * reaches the scheduler now), false for a send (it entered the front end). */
bool kv_arrivals_pop(kv_arrivals *a, size_t *idx);

/* sched's on_end: request r ended (finished or rejected) during the current event. */
void kv_arrivals_ended(void *arrivals, const kv_req *r);
/* After each event at now: the clients whose request ended send their next row. */
void kv_arrivals_settle(kv_arrivals *a, int64_t now);

uint64_t kv_arrivals_num_arrived(const kv_arrivals *a);

/* At the end of the replay: times as the client sees them (first token and finish
 * + out), and the copies of the sent specs, which the caller now owns (NULL if none). */
kv_request_spec *kv_arrivals_finish(kv_arrivals *a, kv_req *reqs, size_t n);

#endif
