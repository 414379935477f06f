/* text: kv_kvlist, the one comma-list splitter (each flag, each error, the items' order
 * and their strings), kv_trim, kv_grouped and kv_shell_word. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "kvsim/text.h"

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
