/* args: the error line and the value parsers every command's handlers use.
 *
 * cli_error is the one place a "kvsim: error:" line is printed: one line whatever the
 * message quotes.  Numbers are parsed strictly: the whole argument must be the number
 * ("12x" is an error), and range checks name the bound.  Sizes go through the core's
 * kv_parse_size.  Every parser prints its error and returns CLI_USAGE; nothing here
 * knows about commands (command.c parses argv).
 */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvsim/mem.h"
#include "kvsim/text.h"

int cli_error(int code, const char *fmt, ...)
{
    /* One line, whatever the message quotes: control characters a user's file put into a
     * field (a quoted newline, a CR) are escaped, never printed raw. */
    char msg[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fputs("kvsim: error: ", stderr);
    for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
        if (*c == '\n')
            fputs("\\n", stderr);
        else if (*c == '\r')
            fputs("\\r", stderr);
        else if (*c == '\t')
            fputs("\\t", stderr);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(stderr, "\\x%02x", *c);
        else
            fputc(*c, stderr);
    }
    fputc('\n', stderr);
    return code;
}

int cli_parse_count(const char *what, const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
    const char *s = arg;
    if (*s == '-' || *s == '+' || *s < '0' || *s > '9')
        goto bad;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0')
        goto bad;
    if (errno == ERANGE || v > max || v < min) {
        bool unbounded = max == UINT64_MAX || max == UINT32_MAX; /* the type's own limit */
        if (unbounded && (errno == ERANGE || v > max))
            return cli_error(CLI_USAGE, "%s: '%s' must be at most %llu", what, arg,
                             (unsigned long long)max);
        if (unbounded)
            return cli_error(CLI_USAGE, "%s: '%s' must be at least %llu", what, arg,
                             (unsigned long long)min);
        return cli_error(CLI_USAGE, "%s: '%s' must be between %llu and %llu", what, arg,
                         (unsigned long long)min, (unsigned long long)max);
    }
    *out = v;
    return 0;
bad:
    if (arg[0] == '-' && arg[1] >= '0' && arg[1] <= '9')
        return cli_error(CLI_USAGE, "%s: '%s' must not be negative", what, arg);
    return cli_error(CLI_USAGE, "%s: '%s' is not a whole number", what, arg);
}

int cli_parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
    char what[96];
    snprintf(what, sizeof what, "--%s", opt);
    return cli_parse_count(what, arg, min, max, out);
}

int cli_parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v = 0;
    int rc = cli_parse_u64(opt, arg, min, max, &v);
    if (rc == 0)
        *out = (uint32_t)v;
    return rc;
}

int cli_parse_double(const char *opt, const char *arg, double min, double max, double *out)
{
    /* The one number grammar (kvsim/text.h): no blanks, hex floats or inf/nan words. */
    char sb[KV_SHOWN_MAX];
    const char *shown = kv_shown(arg, sb);
    double v;
    int rc = kv_parse_number(arg, strlen(arg), &v);
    if (rc == -KV_ERANGE)
        return cli_error(CLI_USAGE, "--%s: '%s' is out of range (must be between %g and %g)", opt,
                         shown, min, max);
    if (rc != 0)
        return cli_error(CLI_USAGE, "--%s: '%s' is not a number", opt, shown);
    if (v < min || v > max)
        return cli_error(CLI_USAGE, "--%s: '%s' must be between %g and %g", opt, shown, min, max);
    *out = v;
    return 0;
}

int cli_parse_size(const char *opt, const char *arg, uint64_t *out)
{
    kv_diag d;
    if (kv_parse_size(arg, out, &d) != 0)
        return cli_error(CLI_USAGE, "--%s: %s", opt, d.msg);
    return 0;
}

double cli_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
