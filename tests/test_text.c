/* text: kv_kvlist, the one comma-list splitter (each flag, each error, the items' order
 * and their strings), kv_trim, kv_grouped and kv_shell_word; and the one number grammar
 * (include/kvsim/text.h, README "Numbers") — the lexer, the parser, its edge cases — and
 * that every option and spec value the CLI reads goes through it: hex floats, inf/nan
 * words and blanks on either side are rejected everywhere, the same way, and ".5", "5.",
 * "1e3" and "-0" are accepted everywhere. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"
#include "kvsim/lengthdist.h"
#include "kvsim/model.h"
#include "kvsim/plan.h"
#include "kvsim/text.h"
#include "kvsim/timing.h"
#include "support.h"

/* Every item of spec as "key=value" (pairs) or "text", joined by '|'; the error message
 * (or "") in *err. */
static void split(const char *spec, unsigned flags, const char *hint, char *out, size_t n,
                  char *err, size_t en)
{
    kv_kvlist l;
    kv_kvlist_init(&l, spec, flags, hint);
    kv_kvitem it;
    kv_diag d;
    int rc;
    out[0] = err[0] = '\0';
    while ((rc = kv_kvlist_next(&l, &it, &d)) == 1) {
        size_t len = strlen(out);
        if (flags & KV_KVLIST_PAIRS)
            snprintf(out + len, n - len, "%s[%s]=[%s]", len ? "|" : "", it.key, it.value);
        else
            snprintf(out + len, n - len, "%s[%s]", len ? "|" : "", it.text);
    }
    if (rc < 0)
        snprintf(err, en, "%.200s", d.msg);
    cr_assert_eq(kv_kvlist_next(&l, &it, &d), 0, "the list stays at its end");
    kv_kvlist_release(&l);
}

typedef struct kv_case {
    const char *spec;
    unsigned flags;
    const char *items, *err;
} kv_case;

enum { P = KV_KVLIST_PAIRS, T = KV_KVLIST_TRIM, S = KV_KVLIST_SKIP_EMPTY, E = KV_KVLIST_TRAILING };

Test(kvlist, splits_in_order_with_each_flag)
{
    static const kv_case cases[] = {
        {"a=1,b=2", P, "[a]=[1]|[b]=[2]", ""},
        {"a=1=2", P, "[a]=[1=2]", ""},
        {"=5", P, "[]=[5]", ""},
        {" a = 1 , b=2 ", P | T, "[a]=[1]|[b]=[2]", ""},
        {" a = 1 ", P, "[ a ]=[ 1 ]", ""},
        {"16,32,64", 0, "[16]|[32]|[64]", ""},
        {"", 0, "", "empty entry in ''"},
        {"16,", 0, "[16]", "empty entry in '16,'"},
        {",16", 0, "", "empty entry in ',16'"},
        {"a=1,,b=2", P | T, "[a]=[1]", "empty entry in 'a=1,,b=2'"},
        {"a=1, ,b=2", P | T, "[a]=[1]", "empty entry in 'a=1, ,b=2'"},
        {"a=1,,b=2", P | S, "[a]=[1]|[b]=[2]", ""},
        {" , a=1 , ", P | T | S, "[a]=[1]", ""},
        {"", P | E, "", ""},
        {"a=1,", P | E, "[a]=[1]", ""},
        {"a=1,,b=2", P | E, "[a]=[1]", "empty entry in 'a=1,,b=2'"},
        {"a=1,b", P, "[a]=[1]", "'b' is not KEY=VALUE"},
        {"a=1, b ,c=3", P | T, "[a]=[1]", "'b' is not KEY=VALUE"},
        {"1,2,,3", S, "[1]|[2]|[3]", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256], err[256];
        split(cases[i].spec, cases[i].flags, NULL, out, sizeof out, err, sizeof err);
        cr_assert_str_eq(out, cases[i].items, "'%s' flags %u", cases[i].spec, cases[i].flags);
        cr_assert_str_eq(err, cases[i].err, "'%s' flags %u", cases[i].spec, cases[i].flags);
    }
}

Test(kvlist, hint_and_item_text_for_the_callers_wording)
{
    char out[64], err[256];
    split("p50", P, "keys: p50, max", out, sizeof out, err, sizeof err);
    cr_assert_str_eq(err, "'p50' is not KEY=VALUE (keys: p50, max)");
    kv_kvlist l;
    kv_kvlist_init(&l, "mfu=0.5,x,mbu", P, NULL);
    kv_kvitem it;
    cr_assert_eq(kv_kvlist_next(&l, &it, NULL), 1);
    cr_assert_str_eq(it.text, "mfu=0.5", "the item's text stays whole");
    cr_assert_str_eq(it.key, "mfu");
    cr_assert_str_eq(it.value, "0.5");
    cr_assert_eq(kv_kvlist_next(&l, &it, NULL), -KV_EINVAL, "a NULL diag is allowed");
    cr_assert_str_eq(it.text, "x", "the offending item, for the caller's message");
    kv_kvlist_release(&l);
}

Test(text, trim_and_grouped)
{
    char s[] = " \t a b \t";
    cr_assert_str_eq(kv_trim(s), "a b");
    char b[32];
    cr_assert_str_eq(kv_grouped(b, sizeof b, 0), "0");
    cr_assert_str_eq(kv_grouped(b, sizeof b, 999), "999");
    cr_assert_str_eq(kv_grouped(b, sizeof b, 1000), "1,000");
    cr_assert_str_eq(kv_grouped(b, sizeof b, 1234567), "1,234,567");
    cr_assert_str_eq(kv_grouped(b, sizeof b, -1234567), "-1,234,567");
    cr_assert_str_eq(kv_grouped(b, sizeof b, 28180.6), "28,181");
    cr_assert_str_eq(kv_grouped(b, 4, 1234567), "1,", "truncated to fit");
}

Test(text, shell_words)
{
    const char *cases[][2] = {
        {"run", "run"},
        {"/a/b.jsonl", "/a/b.jsonl"},
        {"--kv-budget=1GiB,2%", "--kv-budget=1GiB,2%"},
        {"", "''"},
        {"a b", "'a b'"},
        {"it's", "'it'\\''s'"},
        {"$HOME", "'$HOME'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kv_buf b = {0};
        kv_shell_word(&b, cases[i][0]);
        cr_assert_str_eq(b.s, cases[i][1]);
        kv_buf_release(&b);
    }
}

/* ---- kv_parse_number ------------------------------------------------------------------ */

typedef struct num_ok {
    char text[48];
    double value;
} num_ok;

ParameterizedTestParameters(number, accepted)
{
    static num_ok cases[] = {
        {"0", 0},
        {"1", 1},
        {"007", 7},
        {"+1", 1},
        {"-2.5", -2.5},
        {"1e3", 1000},
        {"1E3", 1000},
        {"1e+3", 1000},
        {"1e-3", 0.001},
        {".5", 0.5},
        {"5.", 5},
        {"5.e1", 50},
        {".5e-1", 0.05},
        {"0.1", 0.1},  /* correctly rounded: the double nearest 0.1 */
        {"1e-400", 0}, /* below the smallest subnormal: rounds to 0, not an error */
        {"4.9406564584124654e-324", 4.9406564584124654e-324},
        {"1.7976931348623157e308", DBL_MAX},
        {"1e00000000000000000000000003", 1000},       /* exponent digits: any number */
        {"000000000000000000000000000000001.5", 1.5}, /* mantissa digits: any number */
    };
    return cr_make_param_array(num_ok, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(num_ok *c, number, accepted)
{
    double v = -42;
    int rc = kv_parse_number(c->text, strlen(c->text), &v);
    cr_assert_eq(rc, 0, "'%s' rejected: %d", c->text, rc);
    cr_assert_eq(v, c->value, "'%s' → %.17g, want %.17g", c->text, v, c->value);
}

Test(number, minus_zero_is_zero)
{
    double v = 1;
    cr_assert_eq(kv_parse_number("-0", 2, &v), 0);
    cr_assert(v == 0 && !signbit(v), "-0 must read as +0 (printed as 0, never -0)");
    cr_assert_eq(kv_parse_number("-0.0e5", 6, &v), 0);
    cr_assert(v == 0 && !signbit(v));
}

typedef struct num_bad {
    char text[48];
    int err;
} num_bad;

ParameterizedTestParameters(number, rejected)
{
    static num_bad cases[] = {
        {"", -KV_EINVAL},         {" 1", -KV_EINVAL},
        {"1 ", -KV_EINVAL},       {"\t1", -KV_EINVAL},
        {"1\n", -KV_EINVAL},      {"0x10", -KV_EINVAL},
        {"0X1p4", -KV_EINVAL},    {"0x1p-2", -KV_EINVAL},
        {"inf", -KV_EINVAL},      {"-inf", -KV_EINVAL},
        {"infinity", -KV_EINVAL}, {"nan", -KV_EINVAL},
        {"NAN(1)", -KV_EINVAL},   {".", -KV_EINVAL},
        {"-", -KV_EINVAL},        {"+", -KV_EINVAL},
        {"-.", -KV_EINVAL},       {"e5", -KV_EINVAL},
        {".e5", -KV_EINVAL},      {"1e", -KV_EINVAL},
        {"1e+", -KV_EINVAL},      {"1e-", -KV_EINVAL},
        {"1e5.5", -KV_EINVAL},    {"1..2", -KV_EINVAL},
        {"1.2.3", -KV_EINVAL},    {"1,5", -KV_EINVAL},
        {"1_000", -KV_EINVAL},    {"--1", -KV_EINVAL},
        {"+-1", -KV_EINVAL},      {"1-", -KV_EINVAL},
        {"1e3s", -KV_EINVAL},     {"١", -KV_EINVAL},
        {"1e999", -KV_ERANGE},    {"-1e999", -KV_ERANGE},
        {"1.8e308", -KV_ERANGE},  {"1e99999999999999999999999999", -KV_ERANGE},
    };
    return cr_make_param_array(num_bad, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(num_bad *c, number, rejected)
{
    double v = 42;
    int rc = kv_parse_number(c->text, strlen(c->text), &v);
    cr_assert_eq(rc, c->err, "'%s': %d, want %d", c->text, rc, c->err);
    cr_assert_eq(v, 42, "'%s': a failed parse leaves the output alone", c->text);
}

Test(number, long_texts_and_exact_lengths)
{
    /* 400 digits: longer than the parser's stack buffer. */
    char big[402];
    big[0] = '1';
    memset(big + 1, '0', 399);
    big[400] = '\0';
    double v;
    cr_assert_eq(kv_parse_number(big, 400, &v), -KV_ERANGE, "1e399 is beyond a double");
    cr_assert_eq(kv_parse_number(big, 300, &v), 0);
    cr_assert_eq(v, 1e299);
    /* n bounds the text: no read past it, no NUL needed. */
    const char s[] = {'1', '2', '3'};
    cr_assert_eq(kv_parse_number(s, 2, &v), 0);
    cr_assert_eq(v, 12);
}

Test(number, lex_longest_prefix)
{
    kv_number_parts p;
    cr_assert(kv_number_lex("100ms", 5, &p));
    cr_assert_eq(p.len, 3);
    cr_assert(kv_number_lex("1e5s", 4, &p));
    cr_assert_eq(p.len, 3);
    cr_assert_eq(p.exponent, 5);
    cr_assert(kv_number_lex("1es", 3, &p), "an incomplete exponent is not part of the number");
    cr_assert_eq(p.len, 1);
    cr_assert(kv_number_lex("0x10", 4, &p), "hex lexes as the number 0 and the text 'x10'");
    cr_assert_eq(p.len, 1);
    cr_assert(kv_number_lex("-12.50e-3%", 10, &p));
    cr_assert_eq(p.len, 9);
    cr_assert(p.negative);
    cr_assert_eq(p.n_int, 2);
    cr_assert_eq(strncmp(p.int_digits, "12", 2), 0);
    cr_assert_eq(p.n_frac, 2);
    cr_assert_eq(strncmp(p.frac_digits, "50", 2), 0);
    cr_assert_eq(p.exponent, -3);
    cr_assert(kv_number_lex("5.%", 3, &p));
    cr_assert_eq(p.len, 2);
    cr_assert_not(kv_number_lex(".%", 2, &p));
    cr_assert_not(kv_number_lex("x", 1, &p));
    cr_assert_not(kv_number_lex("12", 0, &p), "an empty text holds no number");
    cr_assert(kv_number_lex("1e999999999999", 14, &p));
    cr_assert_eq(p.exponent, KV_NUMBER_EXP_SAT, "the exponent saturates");
}

/* ---- the grammar in every core parser -------------------------------------------------- */

Test(number, every_core_parser_rejects_hex_and_blanks)
{
    kv_diag d;
    kv_lendist ld;
    kv_slo_set slo;
    kv_timing t;
    uint64_t sz;
    /* Length specs and SLOs trim blanks around a list entry, key and value (list syntax, as
     * before), so blanks there are tested inside the value ("5 0"); the time model and sizes
     * take the text as it is. */
    static const char *const bad_numbers[] = {"0x10", " 5", "5 ",    "5 0", "inf",
                                              "nan",  "1e", "0x1p3", "+-1"};
    for (size_t i = 0; i < sizeof bad_numbers / sizeof bad_numbers[0]; i++) {
        const char *n = bad_numbers[i];
        bool edge_blank = n[0] == ' ' || n[strlen(n) - 1] == ' ';
        char spec[64];
        if (!edge_blank) {
            snprintf(spec, sizeof spec, "p50=%s", n);
            cr_assert_neq(kv_lendist_parse(&ld, spec, &d), 0, "length spec '%s' accepted", spec);
            snprintf(spec, sizeof spec, "ttft_p99=%ss", n);
            kv_slo_set_init(&slo);
            cr_assert_neq(kv_slo_parse(&slo, spec, &d), 0, "SLO '%s' accepted", spec);
            snprintf(spec, sizeof spec, "preemption_rate=%s", n);
            cr_assert_neq(kv_slo_parse(&slo, spec, &d), 0, "SLO '%s' accepted", spec);
        }
        snprintf(spec, sizeof spec, "fixed:%s", n);
        cr_assert_neq(kv_timing_parse(spec, &t, &d), 0, "'%s' accepted", spec);
        snprintf(spec, sizeof spec, "linear:%s,0,0", n);
        cr_assert_neq(kv_timing_parse(spec, &t, &d), 0, "'%s' accepted", spec);
        snprintf(spec, sizeof spec, "linear:1,%s,0", n);
        cr_assert_neq(kv_timing_parse(spec, &t, &d), 0, "'%s' accepted", spec);
        snprintf(spec, sizeof spec, "roofline:mfu=%s", n);
        cr_assert_neq(kv_timing_parse(spec, &t, &d), 0, "'%s' accepted", spec);
        snprintf(spec, sizeof spec, "roofline:overhead=%s,mfu=0.5", n);
        cr_assert_neq(kv_timing_parse(spec, &t, &d), 0, "'%s' accepted", spec);
        snprintf(spec, sizeof spec, "%sGiB", n);
        if (strcmp(n, "5 ") != 0) /* "5 GiB": one blank before the unit is size syntax */
            cr_assert_neq(kv_parse_size(spec, &sz, &d), 0, "size '%s' accepted", spec);
    }
}

Test(number, every_core_parser_accepts_the_same_forms)
{
    kv_diag d = {{0}};
    kv_lendist ld;
    cr_assert_eq(kv_lendist_parse(&ld, "p50=1e3,p99=5000.,max=.5e4", &d), 0, "%s", d.msg);
    cr_assert_eq(ld.value[0], 1000);
    cr_assert_eq(ld.hi, 5000);
    kv_slo_set slo;
    kv_slo_set_init(&slo);
    cr_assert_eq(kv_slo_parse(&slo, "ttft_p99=.5s,tpot_p99=1e2ms,preemption_rate=5.%", &d), 0, "%s",
                 d.msg);
    cr_assert_eq(slo.slo[0].limit, 0.5);
    cr_assert_eq(slo.slo[1].limit, 0.1);
    cr_assert_eq(slo.slo[2].limit, 0.05);
    kv_timing t;
    cr_assert_eq(kv_timing_parse("fixed:1e-2", &t, &d), 0, "%s", d.msg);
    cr_assert_eq(t.fixed_ns, 10000000);
    cr_assert_eq(kv_timing_parse("linear:.001,5.e-5,-0", &t, &d), 0, "%s", d.msg);
    cr_assert_eq(t.c, 0);
    cr_assert_eq(kv_timing_parse("roofline:overhead=2e-3,mfu=.5,mbu=1.", &t, &d), 0, "%s", d.msg);
    cr_assert_eq(t.mfu, 0.5);
    cr_assert_eq(t.mbu, 1);
    uint64_t sz;
    cr_assert_eq(kv_parse_size(".5KiB", &sz, &d), 0, "%s", d.msg);
    cr_assert_eq(sz, 512);
}

Test(number, spec_messages)
{
    kv_diag d;
    kv_slo_set slo;
    kv_slo_set_init(&slo);
    cr_assert_eq(kv_slo_parse(&slo, "ttft_p99=0x10s", &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "'ttft_p99': unknown time unit 'x10s' in '0x10s' (s, ms or us)",
                     "hex is a number 0 and a bad unit, never 16 s");
    cr_assert_eq(kv_slo_parse(&slo, "ttft_p99=1e999s", &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "'ttft_p99': '1e999s' is out of range");
    cr_assert_eq(kv_slo_parse(&slo, "preemption_rate=-0.5%", &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "'preemption_rate' must not be negative (got '-0.5%')");
    cr_assert_eq(kv_slo_parse(&slo, "preemption_rate=-0", &d), 0, "-0 is 0: %s", d.msg);
    kv_lendist ld;
    cr_assert_eq(kv_lendist_parse(&ld, "p50=1e999", &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "'p50' must be at most 16777216 (got 1e999)");
    cr_assert_eq(kv_lendist_parse(&ld, "p50=0x10", &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "'p50': '0x10' is not a number");
}

Test(number, percentile_keys_are_names)
{
    kv_diag d;
    kv_lendist ld;
    static const char *const bad[] = {"p9.99e1=10", "p+50=10", "p50.=10",  "p.5=10",
                                      "p=10",       "p-1=10",  "p0x10=10", "p 50=10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "p50=5,%s", bad[i]);
        cr_assert_eq(kv_lendist_parse(&ld, spec, &d), -KV_EINVAL, "'%s' accepted", spec);
        cr_assert(strstr(d.msg, "unknown key"), "'%s': %s", spec, d.msg);
    }
    cr_assert_eq(kv_lendist_parse(&ld, "p50=5,p99.9=10", &d), 0, "%s", d.msg);
}

/* ---- the grammar in every CLI option --------------------------------------------------- */

typedef struct cli_case {
    char args[10][32]; /* "@rel" is a path under the source tree */
    int status;
    char msg[96];
} cli_case;

/* The CLI reads options before it opens the trace, so a missing trace never masks them. */
#define TRACE "@traces/tiny.csv"

ParameterizedTestParameters(number_cli, rejected_everywhere)
{
    static cli_case cases[] = {
        {{"run", TRACE, "--gpu-util", " 0.9"}, 2, "--gpu-util: ' 0.9' is not a number"},
        {{"run", TRACE, "--gpu-util", "0.9 "}, 2, "--gpu-util: '0.9 ' is not a number"},
        {{"run", TRACE, "--gpu-util", "0x0.Ep0"}, 2, "--gpu-util: '0x0.Ep0' is not a number"},
        {{"run", TRACE, "--watermark", "0x0"}, 2, "--watermark: '0x0' is not a number"},
        {{"run", TRACE, "--watermark", "nan"}, 2, "--watermark: 'nan' is not a number"},
        {{"run", TRACE, "--time-scale", "inf"}, 2, "--time-scale: 'inf' is not a number"},
        {{"run", TRACE, "--time-scale", "1e999"},
         2,
         "--time-scale: '1e999' is out of range (must be between 1e-09 and 1e+09)"},
        {{"run", TRACE, "--rate", "\t2"}, 2, "--rate: '\\t2' is not a number"},
        {{"run", TRACE, "--time-model", "fixed: 0.01"}, 2, "fixed:DT needs DT in seconds"},
        {{"run", TRACE, "--time-model", "fixed:0x1p-7"}, 2, "fixed:DT needs DT in seconds"},
        {{"run", TRACE, "--time-model", "linear:0x1,0,0"}, 2, "linear:A,B,C needs three"},
        {{"run", TRACE, "--kv-budget", "0x10GiB"}, 2, "unknown unit 'x10GiB'"},
        {{"gen", "--prompt", "p50=0x10", "--output", "p50=1", "--rate", "1", "--requests", "1"},
         2,
         "'p50': '0x10' is not a number"},
        {{"gen", "--prompt", "p50=10", "--output", "p50=1", "--rate", " 1", "--requests", "1"},
         2,
         "--rate: ' 1' is not a number"},
        {{"plan", TRACE, "--slo", "ttft_p99=0x10s"}, 2, "unknown time unit 'x10s' in '0x10s'"},
        {{"plan", TRACE, "--slo", "ttft_p99=2s", "--over", "num_blocks", "--load", "0x2"},
         2,
         "'0x2' is not a number"},
        {{"estimate", "--safety", "0x1"}, 2, "--safety: '0x1' is not a number"},
    };
    return cr_make_param_array(cli_case, cases, sizeof cases / sizeof cases[0]);
}

static const char *expand(const char *a)
{
    return a[0] == '@' ? src_path(a + 1) : a;
}

ParameterizedTest(cli_case *c, number_cli, rejected_everywhere)
{
    const char *args[11] = {0};
    for (size_t i = 0; i < 10 && c->args[i][0]; i++)
        args[i] = expand(c->args[i]);
    run_result r = run_kvsimv(args);
    assert_error_line(&r, c->status, "kvsim: error: ", c->msg);
    run_result_free(&r);
}

Test(number_cli, accepted_forms)
{
    /* The same forms every parser accepts, through the binary: .5, 5., 1e3, -0. */
    run_result r = run_kvsim("run", src_path("traces/tiny.csv"), "--gpu-util", ".9", "--watermark",
                             "-0", "--time-scale", "1e0", "--time-model", "fixed:1e-2", "-q", NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    run_result_free(&r);
    r = run_kvsim("run", src_path("traces/tiny.csv"), "--gpu-util", "0.9", "--watermark", "0",
                  "--json", NULL);
    run_result r2 = run_kvsim("run", src_path("traces/tiny.csv"), "--gpu-util", "9.e-1",
                              "--watermark", "-0", "--json", NULL);
    cr_assert_eq(r.status, 0);
    json_t *a = json_loads(r.out, 0, NULL), *b = json_loads(r2.out, 0, NULL);
    cr_assert(a && b);
    json_object_del(a, "command"); /* the command lines differ, of course */
    json_object_del(b, "command");
    cr_assert(json_equal(a, b), "'9.e-1' and '-0' are 0.9 and 0 exactly");
    json_decref(a), json_decref(b);
    run_result_free(&r);
    run_result_free(&r2);
}

/* ---- long texts in messages ------------------------------------------------------------- */

Test(shown, short_texts_are_themselves_long_ones_are_cut)
{
    char buf[KV_SHOWN_MAX];
    cr_assert_str_eq(kv_shown("abc", buf), "abc");
    char long_text[200];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    const char *s = kv_shown(long_text, buf);
    cr_assert_eq(strlen(s), KV_SHOWN_MAX - 1);
    cr_assert_eq(strncmp(s, long_text, KV_SHOWN_MAX - 4), 0);
    cr_assert_str_eq(s + KV_SHOWN_MAX - 4, "...");
}

/* Found by fuzz_size and fuzz_timemodel: a message quoting a long input in full overflowed
 * the 512-byte diag and lost its reason and hint.  Every parser now quotes kv_shown(). */
Test(shown, long_inputs_keep_the_reason_and_hint)
{
    char text[700];
    kv_diag d;
    uint64_t sz;
    snprintf(text, sizeof text, "1%0600dQ", 0);
    cr_assert_eq(kv_parse_size(text, &sz, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "(known: B, KiB, MiB, GiB, TiB, PiB (x1024) or KB, MB, GB, TB, PB (x1000))"),
              "%s", d.msg);
    memset(text, 'B', 600);
    memcpy(text, "1e", 2);
    text[600] = '\0';
    cr_assert_eq(kv_parse_size(text, &sz, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "...' in size '1eBB"), "%s", d.msg);
    cr_assert(strstr(d.msg, "PB (x1000))"), "%s", d.msg);
    kv_timing t;
    snprintf(text, sizeof text, "linear:3%0600d", 0);
    cr_assert_eq(kv_timing_parse(text, &t, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "seconds/KV token read)"), "%s", d.msg);
    kv_lendist ld;
    snprintf(text, sizeof text, "p50=%0600dx", 0);
    cr_assert_eq(kv_lendist_parse(&ld, text, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "...' is not a number"), "%s", d.msg);
    kv_slo_set slo;
    kv_slo_set_init(&slo);
    memset(text, 'q', 600);
    memcpy(text, "ttft_p99=1", 10);
    text[600] = '\0';
    cr_assert_eq(kv_slo_parse(&slo, text, &d), -KV_EINVAL);
    cr_assert(strstr(d.msg, "(s, ms or us)"), "%s", d.msg);
}
