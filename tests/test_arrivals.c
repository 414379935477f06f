/* arrivals (include/kvsim/arrivals.h; DESIGN §6 "Time", issue 11 items 1 and 2): the
 * front end's latency arithmetic, the API server's admission-rate queue, closed-loop
 * clients sending after each reply (in order, deterministic, the same through both replay
 * drivers), the spec grammar, and `--frontend none` leaving every output byte-identical. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/arrivals.h"
#include "kvsim/cluster.h"
#include "kvsim/rng.h"
#include "kvsim/sim.h"
#include "support.h"

#define MAXR 64
#define MS   1000000LL

static kv_trace trace;
static kv_request_spec specs[MAXR];
static kv_run_result res;

static void teardown(void)
{
    kv_run_result_release(&res);
}

TestSuite(arrivals, .fini = teardown);

/* Row i: a content-less request (unique), optionally a closed-loop client's. */
static void add_req(size_t i, int64_t arrival_ns, uint32_t prompt, uint32_t output,
                    const char *client, int64_t think_ns)
{
    specs[i] = (kv_request_spec){.arrival_ns = arrival_ns,
                                 .prompt_len = prompt,
                                 .output_len = output,
                                 .row = (uint32_t)i,
                                 .content = KV_CONTENT_NONE,
                                 .client = client,
                                 .think_ns = think_ns};
}

static void set_trace(size_t n)
{
    memset(&trace, 0, sizeof trace);
    trace.reqs = specs;
    trace.n = n;
    trace.trace_block_size = 16;
}

/* Sync scheduler, 10 ms steps, 16-token blocks, and the given front end. */
static kv_engine_config config(const char *frontend)
{
    kv_engine_config c = test_engine_config(100, 16, "fixed:0.01");
    kv_diag d;
    cr_assert_eq(kv_frontend_parse(frontend, &c.frontend, &d), 0, "%s", d.msg);
    return c;
}

static void replay(const char *frontend)
{
    kv_engine_config c = config(frontend);
    kv_diag d;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s", d.msg);
}

/* send (arrival_s), first scheduled, first token, finish of request i, in ns. */
static void expect(size_t i, int64_t sent, int64_t sched, int64_t first, int64_t finish)
{
    const kv_req *r = &res.reqs[i];
    cr_assert_eq(r->status, KV_REQ_FINISHED, "row %zu", i);
    cr_assert_eq(r->spec->arrival_ns, sent, "row %zu sent at %lld", i,
                 (long long)r->spec->arrival_ns);
    cr_assert_eq(r->first_scheduled_ns, sched, "row %zu scheduled at %lld", i,
                 (long long)r->first_scheduled_ns);
    cr_assert_eq(r->first_token_ns, first, "row %zu first token at %lld", i,
                 (long long)r->first_token_ns);
    cr_assert_eq(r->finish_ns, finish, "row %zu finished at %lld", i, (long long)r->finish_ns);
}

/* ---- the front end -------------------------------------------------------------------- */

Test(arrivals, frontend_latency_is_added_before_and_after)
{
    add_req(0, 0, 16, 3, NULL, 0);
    set_trace(1);
    replay("in=2,out=3");
    /* reaches the scheduler at 2 ms; steps end at 12, 22, 32 ms; the client sees each
     * token 3 ms later.  TTFT = 2 + 10 + 3 = 15 ms, E2E = 35 ms, TPOT 10 ms unchanged. */
    expect(0, 0, 2 * MS, 15 * MS, 35 * MS);
    cr_assert_float_eq(kv_req_tpot_s(&res.reqs[0]), 0.010, 1e-12);
    cr_assert_float_eq(kv_req_ttft_s(&res.reqs[0]), 0.015, 1e-12);
}

Test(arrivals, rate_limit_admits_fcfs_at_the_rate)
{
    /* Three sent at once, one at 0.5 s (the server idle by then), one at 0.55 s (within
     * 1/rate of the previous admission): 10 admissions a second. */
    add_req(0, 0, 16, 1, NULL, 0);
    add_req(1, 0, 16, 1, NULL, 0);
    add_req(2, 0, 16, 1, NULL, 0);
    add_req(3, 500 * MS, 16, 1, NULL, 0);
    add_req(4, 550 * MS, 16, 1, NULL, 0);
    set_trace(5);
    replay("in=1,out=0,rate=10");
    int64_t starts[] = {0, 100 * MS, 200 * MS, 500 * MS, 600 * MS};
    for (size_t i = 0; i < 5; i++)
        expect(i, specs[i].arrival_ns, starts[i] + 1 * MS, starts[i] + 11 * MS,
               starts[i] + 11 * MS);
}

/* The `vllm` preset: the API server's 1.84 ms of stages are also its capacity (one event
 * loop), so a burst is admitted one request every 1.84 ms. */
Test(arrivals, vllm_preset_admits_one_request_per_its_stages)
{
    kv_frontend f;
    kv_diag d;
    cr_assert_eq(kv_frontend_parse("vllm", &f, &d), 0);
    cr_assert_eq(f.in_ns, 1840000);
    cr_assert_eq(f.out_ns, 0);
    cr_assert_float_eq(f.rate, 1e3 / 1.84, 1e-9);
    char buf[128];
    kv_frontend_describe(&f, buf, sizeof buf);
    cr_assert_str_eq(buf, "in=1.84,out=0,rate=543.4782608695652");
    for (size_t i = 0; i < 3; i++)
        add_req(i, 0, 16, 1, NULL, 0);
    set_trace(3);
    replay("vllm");
    /* Admitted at 0, 1.84 and 3.68 ms, at the scheduler 1.84 ms later each: request 0 runs
     * alone in the step 1.84-11.84 ms; 1 (at 3.68) and 2 (at 5.52) wait for its end and
     * share the next. */
    expect(0, 0, 1840000, 11840000, 11840000);
    expect(1, 0, 11840000, 21840000, 21840000);
    expect(2, 0, 11840000, 21840000, 21840000);
}

/* tok: the API server's work per streamed token is booked against its capacity at
 * admission: request i holds the server for 1/rate + tok · output_i. */
Test(arrivals, tok_books_each_request_s_streaming_at_its_admission)
{
    /* Three sent at once with 4, 2 and 3 output tokens, tok = 1 ms, no rate: admitted at 0,
     * 4 and 6 ms, at the scheduler 0.5 ms later.  0 runs alone from 0.5 ms (steps end at
     * 10.5, 20.5, 30.5, 40.5); 1 (at 4.5) and 2 (at 6.5) join at 10.5. */
    add_req(0, 0, 16, 4, NULL, 0);
    add_req(1, 0, 16, 2, NULL, 0);
    add_req(2, 0, 16, 3, NULL, 0);
    add_req(3, 100 * MS, 16, 1, NULL, 0); /* the server idle again: admitted at once */
    set_trace(4);
    replay("in=0.5,tok=1");
    expect(0, 0, MS / 2, 10 * MS + MS / 2, 40 * MS + MS / 2);
    expect(1, 0, 10 * MS + MS / 2, 20 * MS + MS / 2, 30 * MS + MS / 2);
    expect(2, 0, 10 * MS + MS / 2, 20 * MS + MS / 2, 40 * MS + MS / 2);
    expect(3, 100 * MS, 100 * MS + MS / 2, 110 * MS + MS / 2, 110 * MS + MS / 2);
    /* With a rate too, the service time is the sum: 1/rate = 2 ms and tok = 2 ms, so 0
     * holds the server for 2 + 8 = 10 ms, 1 for 2 + 4: admissions at 0, 10 and 16 ms, at
     * the scheduler at 0.5, 10.5 (just as the step starting then looks) and 16.5 ms. */
    kv_run_result_release(&res);
    replay("in=0.5,rate=500,tok=2");
    expect(0, 0, MS / 2, 10 * MS + MS / 2, 40 * MS + MS / 2);
    expect(1, 0, 10 * MS + MS / 2, 20 * MS + MS / 2, 30 * MS + MS / 2);
    expect(2, 0, 20 * MS + MS / 2, 30 * MS + MS / 2, 50 * MS + MS / 2);
    /* The rate alone admits at 0, 2 and 4 ms: 1 and 2 share the step at 10.5 ms. */
    kv_run_result_release(&res);
    replay("in=0.5,rate=500");
    expect(2, 0, 10 * MS + MS / 2, 20 * MS + MS / 2, 40 * MS + MS / 2);
}

/* ---- closed-loop clients ---------------------------------------------------------------- */

/* Client x: a (3 tokens), then c after 5 ms of thought; client y: b, then d; e open loop. */
static void two_clients(void)
{
    add_req(0, 0, 16, 3, "x", 0);
    add_req(1, 0, 16, 1, "y", 0);
    add_req(2, 0, 16, 2, "x", 5 * MS);
    add_req(3, 0, 16, 1, "y", 0);
    add_req(4, 500 * MS, 16, 1, NULL, 0);
    set_trace(5);
}

Test(arrivals, closed_loop_sends_each_row_after_the_previous_reply)
{
    two_clients();
    replay("none");
    expect(0, 0, 0, 10 * MS, 30 * MS);
    expect(1, 0, 0, 10 * MS, 10 * MS);
    expect(3, 10 * MS, 10 * MS, 20 * MS, 20 * MS);     /* b answered at 10 ms: d sent then */
    expect(2, 35 * MS, 35 * MS, 45 * MS, 55 * MS);     /* a answered at 30, + 5 ms thought */
    expect(4, 500 * MS, 500 * MS, 510 * MS, 510 * MS); /* open loop: its arrival */
}

Test(arrivals, closed_loop_through_the_front_end)
{
    two_clients();
    replay("in=2,out=3,rate=100");
    /* a admitted at 0 (arrives 2), b at 10 ms (arrives 12).  Steps: 2-12 (a prefill),
     * 12-22 (a, b), 22-32 (a).  b's reply reaches y at 25: d sent, admitted at 25, arrives
     * 27, runs 32-42.  a's reply at 35, + 5 ms: c sent at 40, arrives 42, runs 42-62. */
    expect(0, 0, 2 * MS, 15 * MS, 35 * MS);
    expect(1, 0, 12 * MS, 25 * MS, 25 * MS);
    expect(3, 25 * MS, 32 * MS, 45 * MS, 45 * MS);
    expect(2, 40 * MS, 42 * MS, 55 * MS, 65 * MS);
    expect(4, 500 * MS, 502 * MS, 515 * MS, 515 * MS);
}

Test(arrivals, a_rejected_request_is_a_reply)
{
    add_req(0, 0, 4000, 1, "x", 0); /* needs 250 blocks of a pool of 99: rejected */
    add_req(1, 0, 16, 1, "x", 0);
    set_trace(2);
    replay("in=2,out=3");
    cr_assert_eq(res.reqs[0].status, KV_REQ_REJECTED);
    /* rejected on arrival at 2 ms; the client hears it at 5 ms and sends the next */
    expect(1, 5 * MS, 7 * MS, 20 * MS, 20 * MS);
}

Test(arrivals, a_closed_loop_row_is_never_sent_before_its_arrival)
{
    /* x's second row may not go before 1 s (as vllm bench serve's --request-rate with
     * --max-concurrency): the reply at 10 ms does not bring it forward. */
    add_req(0, 0, 16, 1, "x", 0);
    add_req(1, 1000 * MS, 16, 1, "x", 2 * MS);
    set_trace(2);
    replay("none");
    expect(0, 0, 0, 10 * MS, 10 * MS);
    expect(1, 1000 * MS, 1000 * MS, 1010 * MS, 1010 * MS);
}

/* A seeded closed-loop workload: 6 clients, 48 rows, random lengths and think times. */
static void random_clients(uint64_t seed)
{
    static const char *names[] = {"c0", "c1", "c2", "c3", "c4", "c5"};
    kv_rng g;
    kv_rng_seed(&g, seed);
    for (size_t i = 0; i < 48; i++)
        add_req(i, (int64_t)(i / 6) * 3 * MS, 1 + (uint32_t)kv_rng_below(&g, 200),
                1 + (uint32_t)kv_rng_below(&g, 20), i % 7 == 6 ? NULL : names[i % 6],
                (int64_t)kv_rng_below(&g, 20) * MS);
    set_trace(48);
}

Test(arrivals, closed_loop_is_deterministic_and_the_same_in_both_drivers)
{
    random_clients(7);
    kv_engine_config c = config("in=1.5,out=0.5,rate=300");
    c.sched.async_scheduling = true;
    kv_diag d;
    kv_run_result a, b;
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, NULL, &a, &d), 0, "%s", d.msg);
    cr_assert_eq(kv_replay(&c, &trace, "t", "bf16", 0, NULL, &b, &d), 0, "%s", d.msg);
    kv_router_config rc;
    kv_router_config_init(&rc);
    cr_assert_eq(kv_cluster_replay(&c, 1, &rc, &trace, "t", "bf16", 0, NULL, &res, &d), 0, "%s",
                 d.msg);
    const kv_run_result *runs[] = {&b, &res};
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < 48; i++) {
            const kv_req *x = &a.reqs[i], *y = &runs[k]->reqs[i];
            cr_assert_eq(x->status, KV_REQ_FINISHED);
            cr_assert(x->spec->arrival_ns == y->spec->arrival_ns &&
                          x->first_scheduled_ns == y->first_scheduled_ns &&
                          x->first_token_ns == y->first_token_ns && x->finish_ns == y->finish_ns,
                      "run %zu, row %zu differs", k, i);
        }
    /* Each client's rows are sent in trace order, each after the previous reply plus its
     * think time (out = 0.5 ms), never before its own arrival field. */
    for (size_t i = 0; i < 48; i++)
        for (size_t j = i + 1; j < 48; j++) {
            if (!specs[i].client || !specs[j].client || strcmp(specs[i].client, specs[j].client))
                continue;
            int64_t due = a.reqs[i].finish_ns + specs[j].think_ns;
            int64_t sent = a.reqs[j].spec->arrival_ns;
            cr_assert_eq(sent, due > specs[j].arrival_ns ? due : specs[j].arrival_ns,
                         "row %zu after row %zu", j, i);
            break;
        }
    kv_run_result_release(&a);
    kv_run_result_release(&b);
}

/* ---- the spec --------------------------------------------------------------------------- */

Test(arrivals, frontend_specs_parse_and_describe_round_trip)
{
    const char *specs_ok[] = {
        "none",          "vllm",          "vllm:out=2.5", "in=1,out=2,rate=40",
        "none:rate=0.5", "vllm:tok=0.07", "tok=1000"};
    for (size_t i = 0; i < sizeof specs_ok / sizeof *specs_ok; i++) {
        kv_frontend f, g;
        kv_diag d;
        char buf[256];
        cr_assert_eq(kv_frontend_parse(specs_ok[i], &f, &d), 0, "%s: %s", specs_ok[i], d.msg);
        kv_frontend_describe(&f, buf, sizeof buf);
        cr_assert_eq(kv_frontend_parse(buf, &g, &d), 0, "%s: %s", buf, d.msg);
        cr_assert(memcmp(&f, &g, sizeof f) == 0, "%s -> %s", specs_ok[i], buf);
    }
    kv_frontend f;
    kv_diag d;
    cr_assert_eq(kv_frontend_parse("none", &f, &d), 0);
    cr_assert(kv_frontend_is_none(&f));
    cr_assert_eq(kv_frontend_parse("vllm:in=7,rate=44", &f, &d), 0);
    cr_assert(f.in_ns == 7 * MS && f.out_ns == 0 && f.rate == 44 && f.tok_ns == 0);
    /* tok alone is a front end; it is echoed only when set, so older echoes read the same. */
    cr_assert_eq(kv_frontend_parse("tok=0.07", &f, &d), 0);
    cr_assert(!kv_frontend_is_none(&f) && f.tok_ns == 70000);
    char echo[128];
    kv_frontend_describe(&f, echo, sizeof echo);
    cr_assert_str_eq(echo, "in=0,out=0,rate=0,tok=0.07");
    cr_assert_eq(kv_frontend_parse("vllm:tok=0", &f, &d), 0);
    kv_frontend_describe(&f, echo, sizeof echo);
    cr_assert_str_eq(echo, "in=1.84,out=0,rate=543.4782608695652");
    const char *bad[][2] = {
        {"fast", "{frontend}: 'fast' is not none, vllm or in=MS,out=MS,rate=R,tok=MS"},
        {"vllm:lag=1", "{frontend}: unknown key 'lag' (in, out, rate, tok)"},
        {"tok=1001", "{frontend}: 'tok' must be at most 1000 ms"},
        {"tok=-0.1", "{frontend}: 'tok' must be a non-negative number, got '-0.1'"},
        {"in=-1", "{frontend}: 'in' must be a non-negative number, got '-1'"},
        {"rate=many", "{frontend}: 'rate' must be a non-negative number, got 'many'"},
        {"vllm:in", "{frontend}: 'in' is not KEY=VALUE"},
        {"vllm:", "{frontend}: an empty or overlong item in 'vllm:'"},
        {"out=2e9", "{frontend}: 'out' must be at most 1e9 ms"},
        {"rate=1e-300", "{frontend}: 'rate' must be 0 (unlimited) or between 1e-09 and 1e+12 "
                        "requests/s, got '1e-300'"},
        {"vllm:rate=2e12", "{frontend}: 'rate' must be 0 (unlimited) or between 1e-09 and 1e+12 "
                           "requests/s, got '2e12'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(kv_frontend_parse(bad[i][0], &f, &d), -KV_EINVAL, "%s", bad[i][0]);
        cr_assert_str_eq(d.msg, bad[i][1]);
    }
}

/* ---- the CLI: none changes nothing -------------------------------------------------------- */

static char *run_to(const char *dir, const char *name, const char *frontend)
{
    char *out = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(out, "%s/%s", dir, name);
    const char *args[] = {"run",          src_path("traces/tiny_shared.jsonl"),
                          "--num-blocks", "64",
                          "--block-size", "16",
                          "--out",        out,
                          "--quiet",      frontend ? "--frontend" : NULL,
                          frontend,       NULL};
    run_result r = run_kvsimv(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_result_free(&r);
    return out;
}

static char *file_of(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    size_t n;
    char *t = read_file(p, &n);
    cr_assert(t, "%s missing", p);
    return t;
}

/* summary.json without its "command" line (the command lines differ). */
static char *without_command(char *t)
{
    char *c = strstr(t, "\"command\":");
    cr_assert(c);
    char *nl = strchr(c, '\n');
    memmove(c, nl + 1, strlen(nl + 1) + 1);
    return t;
}

Test(arrivals, frontend_none_leaves_every_output_byte_identical)
{
    char *dir = make_temp_dir();
    char *a = run_to(dir, "default", NULL), *b = run_to(dir, "none", "none");
    char *c = run_to(dir, "on", "in=5,out=5");
    const char *files[] = {"requests.csv", "timeseries.csv", "summary.json"};
    for (size_t i = 0; i < 3; i++) {
        char *x = file_of(a, files[i]), *y = file_of(b, files[i]);
        if (i == 2) {
            without_command(x);
            without_command(y);
            cr_assert_null(strstr(x, "\"frontend\""), "none: no config.frontend key");
        }
        cr_assert_str_eq(x, y, "%s differs with --frontend none", files[i]);
        free(x);
        free(y);
    }
    char *s = file_of(c, "summary.json");
    cr_assert(strstr(s, "\"frontend\": \"in=5,out=5,rate=0\""), "%s", s);
    free(s);
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--frontend", "vllm:in=x", "--out",
                             dir, NULL);
    assert_error_line(&r, 2,
                      "kvsim: error: ", "--frontend: 'in' must be a non-negative number, got 'x'");
    run_result_free(&r);
    rm_rf(dir);
    free(a), free(b), free(c), free(dir);
}
