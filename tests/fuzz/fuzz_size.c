/* Harness: sizes (kv_parse_size, kv_parse_size_or_zero; README "Units").
 *
 * Checks: an accepted text is a number in the one grammar (kv_number_lex covers all but
 * the unit), then at most one blank, then nothing or a known unit; the byte count is the
 * exact value rounded down (compared with a long-double evaluation to within its
 * rounding), at least 1 (or 0 for _or_zero) and at most 2^63 − 1; the two functions agree
 * except on zero.  A rejected text leaves the output alone and its diagnostic quotes it
 * (shortened by kv_shown when long, so the message keeps its reason).
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/model.h"
#include "kvsim/text.h"

static const struct {
    const char *unit;
    long double mult;
} units[] = {
    {"", 1},          {"B", 1},         {"KiB", 0x1p10L}, {"MiB", 0x1p20L}, {"GiB", 0x1p30L},
    {"TiB", 0x1p40L}, {"PiB", 0x1p50L}, {"KB", 1e3L},     {"kB", 1e3L},     {"MB", 1e6L},
    {"GB", 1e9L},     {"TB", 1e12L},    {"PB", 1e15L},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 512)
        return 0;
    char *s = fuzz_string(data, size);
    uint64_t v = 42, z = 43;
    kv_diag d = {{0}}, dz = {{0}};
    int rc = kv_parse_size(s, &v, &d);
    int rcz = kv_parse_size_or_zero(s, &z, &dz);

    if (rc == 0) {
        kv_number_parts p;
        size_t n = strlen(s);
        FUZZ_CHECK(kv_number_lex(s, n, &p), "accepted '%s' without a number", s);
        const char *u = s + p.len;
        if (*u == ' ')
            u++;
        long double mult = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcmp(u, units[i].unit) == 0)
                mult = units[i].mult;
        FUZZ_CHECK(mult > 0, "accepted '%s' with unit '%s'", s, u);
        FUZZ_CHECK(v >= 1 && v <= (uint64_t)INT64_MAX, "'%s' gave %llu", s, (unsigned long long)v);
        char *num = fuzz_string((const uint8_t *)s, p.len);
        long double x = strtold(num, NULL) * mult;
        free(num);
        long double lo = floorl(x * (1 - 1e-15L)) - 1, hi = x * (1 + 1e-15L) + 1;
        FUZZ_CHECK((long double)v >= lo && (long double)v <= hi, "'%s' gave %llu, about %.21Lg", s,
                   (unsigned long long)v, x);
        FUZZ_CHECK(rcz == 0 && z == v, "_or_zero disagrees on '%s'", s);
    } else {
        fuzz_check_diag(rc, &d);
        FUZZ_CHECK(v == 42, "output changed on error");
        FUZZ_CHECK(rc == -KV_EINVAL || rc == -KV_ERANGE, "rc %d", rc);
        char quoted[KV_SHOWN_MAX + 2], sb[KV_SHOWN_MAX];
        snprintf(quoted, sizeof quoted, "'%s'", kv_shown(s, sb));
        FUZZ_CHECK(strstr(d.msg, quoted), "diag does not quote %s: %s", quoted, d.msg);
        if (rcz == 0)
            FUZZ_CHECK(z == 0 && strstr(d.msg, "at least 1 byte"),
                       "only zero separates the two: '%s' (%s)", s, d.msg);
        else
            fuzz_check_diag(rcz, &dz);
    }
    free(s);
    return 0;
}
