/* args: option parsing and value parsing for every subcommand.
 *
 * A deliberately small parser instead of getopt_long: subcommands combine option tables
 * (their own and shared groups) and every message names the command and the option.
 * Numbers are parsed strictly: the whole argument must be the number ("12x" is an error),
 * and range checks name the bound.
 */
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/text.h"

int cli_error(int code, const char *fmt, ...)
{
    /* One line, whatever the message quotes: control characters a user's file put into a
     * field (a quoted newline, a CR) are escaped, never printed raw. */
    char msg[2048];
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

int cli_diag(int code, const kv_diag *diag)
{
    return cli_error(code, "%s", diag->msg);
}

void cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv,
                     const cli_opt *const *tables)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
    p->tables = tables;
    p->positional = kv_xcalloc((size_t)argc + 1, sizeof *p->positional);
}

void cli_parser_release(cli_parser *p)
{
    free(p->positional);
    p->positional = NULL;
}

static const cli_opt *find_long(const cli_parser *p, const char *name, size_t len)
{
    for (const cli_opt *const *t = p->tables; *t; t++)
        for (const cli_opt *o = *t; o->name; o++)
            if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
                return o;
    return NULL;
}

static const cli_opt *find_short(const cli_parser *p, char c)
{
    for (const cli_opt *const *t = p->tables; *t; t++)
        for (const cli_opt *o = *t; o->name; o++)
            if (o->short_name && o->short_name == c)
                return o;
    return NULL;
}

int cli_next(cli_parser *p, const char **arg)
{
    *arg = NULL;
    while (p->i < p->argc) {
        char *a = p->argv[p->i++];
        if (p->no_more_options || a[0] != '-' || a[1] == '\0') {
            p->positional[p->n_positional++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            p->no_more_options = true;
            continue;
        }
        const cli_opt *o;
        const char *inline_val = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(p, name, len);
            if (!o) {
                cli_error(CLI_USAGE,
                          "unknown option '--%.*s' for 'kvsim %s' (see 'kvsim %s --help')",
                          (int)len, name, p->cmd, p->cmd);
                return CLI_OPT_ERROR;
            }
            if (eq)
                inline_val = eq + 1;
        } else {
            o = a[2] == '\0' ? find_short(p, a[1]) : NULL;
            if (!o) {
                /* A negative number is never an option here: treat "-5" as positional so
                 * the command reports it in context. */
                if ((a[1] >= '0' && a[1] <= '9') || a[1] == '.') {
                    p->positional[p->n_positional++] = a;
                    continue;
                }
                cli_error(CLI_USAGE, "unknown option '%s' for 'kvsim %s' (see 'kvsim %s --help')",
                          a, p->cmd, p->cmd);
                return CLI_OPT_ERROR;
            }
        }
        if (o->has_arg) {
            if (inline_val) {
                *arg = inline_val;
            } else if (p->i < p->argc) {
                *arg = p->argv[p->i++];
            } else {
                cli_error(CLI_USAGE, "option '--%s' needs a value", o->name);
                return CLI_OPT_ERROR;
            }
        } else if (inline_val) {
            cli_error(CLI_USAGE, "option '--%s' takes no value", o->name);
            return CLI_OPT_ERROR;
        }
        return o->id;
    }
    return CLI_OPT_END;
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
        if (max == UINT64_MAX || max == UINT32_MAX)
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
