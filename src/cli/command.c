/* command: the one command skeleton — the generic parse loop, the rules between options,
 * the help generator, and the rendering of library messages in the running command's
 * option names.
 *
 * Data: a cli_cmd lists the option groups it uses (its own first, then shared groups
 * such as cli_model_group); the parser flattens them into one array of (option, group)
 * entries and counts how often each was given.  A name is looked up in that order, so a
 * command's own option shadows a group's option of the same name ("--block-size" is a
 * list in sweep), and rules, written with names, follow the shadowing.
 *
 * Parse contract, for every command alike:
 *   - "--name value", "--name=value", "-x value"; "--" ends the options; "-" and a
 *     negative number ("-5") are positional, so the command reports them in context;
 *   - --help / -h print the generated help on stdout and end the command with exit 0, as
 *     soon as they are reached (an error before them wins);
 *   - the first error (unknown option, missing or unexpected value, a value the handler
 *     refuses, an excluded pair) stops the parse with exit 2;
 *   - then the positional count (cli_args), then the rules in declaration order;
 *   - then exec, and release in every case.
 * Help contract: "usage: kvsim NAME SYNOPSIS", the description, each section as
 * "title:" with one aligned row per option and its prose; -h, --help closes the last
 * section of the command's own group that has options.  Text is printed as written:
 * authors break lines themselves (tests keep every line within 88 columns).
 *
 * Out of scope: option abbreviations, bundled short flags ("-qj4"), optional values.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "kvsim/mem.h"
#include "kvsim/strbuf.h"
#include "kvsim/text.h"

enum { MAX_OPTS = 128 }; /* options of one command, all groups */

/* What find_* and next_option return besides an entry index. */
enum { HELP = -1, NONE = -2, SKIP = -3, FAIL = -4 };

static const cli_opt help_opt = {"help", 'h', NULL, CLI_CALL, 0, 0, "show this help"};

typedef struct entry {
    const cli_opt *opt;
    int group; /* index into cmd->uses */
} entry;

typedef struct parser {
    const cli_cmd *cmd;
    void *state;
    entry e[MAX_OPTS];
    unsigned given[MAX_OPTS];
    int n;
    char **pos; /* positional arguments, in order */
    int n_pos;
} parser;

/* The command being run, for cli_diag's rendering (one command per process). */
static const cli_cmd *current;

static int flatten(const cli_cmd *cmd, entry *e)
{
    int n = 0;
    for (int u = 0; u < CLI_MAX_USES && cmd->uses[u].group; u++)
        for (const cli_section *s = cmd->uses[u].group->sections; s->title; s++)
            for (const cli_opt *o = s->opts; o && o->name; o++) {
                assert(n < MAX_OPTS);
                e[n++] = (entry){o, u};
            }
    return n;
}

static int find_long(const entry *e, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(e[i].opt->name) == len && strncmp(e[i].opt->name, name, len) == 0)
            return i;
    return len == 4 && strncmp(name, "help", 4) == 0 ? HELP : NONE;
}

static int find_short(const entry *e, int n, char c)
{
    for (int i = 0; i < n; i++)
        if (e[i].opt->short_name == c)
            return i;
    return c == 'h' ? HELP : NONE;
}

/* Whether the command leaves out option o of its group uses[u] (its omit list; never one
 * of its own options, so an own option can replace a group's in the help). */
static bool omitted(const cli_cmd *cmd, int u, const cli_opt *o)
{
    for (const char *const *n = cmd->omit; u > 0 && n && *n; n++)
        if (strcmp(*n, o->name) == 0)
            return true;
    return false;
}

/* The entry of a rule's option.  It exists in every command that uses the rule's group
 * (cli_cmd_check, run by the tests); a release build skips a rule that names nothing. */
static int rule_opt(const parser *p, const char *name)
{
    int k = find_long(p->e, p->n, name, strlen(name));
    assert(k >= 0);
    return k;
}

static bool given(const parser *p, const char *name)
{
    int k = name ? rule_opt(p, name) : -1;
    return k >= 0 && p->given[k] > 0;
}

/* ---- rules -------------------------------------------------------------------------- */

/* CLI_EXCLUDES of the option at k, which is being given now. */
static int check_excludes(const parser *p, int k)
{
    for (int u = 0; u < CLI_MAX_USES && p->cmd->uses[u].group; u++)
        for (const cli_dep *d = p->cmd->uses[u].group->deps; d && d->rule; d++) {
            if (d->rule != CLI_EXCLUDES)
                continue;
            int a = rule_opt(p, d->opt), b = rule_opt(p, d->other);
            if ((k == a && given(p, d->other)) || (k == b && given(p, d->opt)))
                return cli_error(CLI_USAGE, "%s", d->msg);
        }
    return CLI_OK;
}

static int check_rule(const parser *p, const cli_dep *d)
{
    bool a = given(p, d->opt), b = given(p, d->other);
    switch (d->rule) {
    case CLI_REQUIRES:
        return a && !b ? cli_error(CLI_USAGE, "%s", d->msg) : CLI_OK;
    case CLI_REQUIRED:
        return !a ? cli_error(CLI_USAGE, "%s", d->msg) : CLI_OK;
    case CLI_ONE_OF:
        if (a && b)
            return cli_error(CLI_USAGE, "%s", d->msg);
        return !a && !b ? cli_error(CLI_USAGE, "%s", d->msg2) : CLI_OK;
    default: /* CLI_EXCLUDES: checked as options appear */
        return CLI_OK;
    }
}

/* "{n}" and "{arg}" in a positional-count message. */
static int arity_error(const parser *p, const char *msg)
{
    kv_buf b = {0};
    for (const char *c = msg; *c; c++) {
        if (strncmp(c, "{n}", 3) == 0) {
            kv_buf_printf(&b, "%d", p->n_pos);
            c += 2;
        } else if (strncmp(c, "{arg}", 5) == 0) {
            kv_buf_puts(&b, p->pos[p->cmd->args.max]);
            c += 4;
        } else {
            kv_buf_putc(&b, *c);
        }
    }
    int rc = cli_error(CLI_USAGE, "%s", b.s);
    kv_buf_release(&b);
    return rc;
}

static int check_after(const parser *p)
{
    const cli_args *a = &p->cmd->args;
    if (p->n_pos < a->min)
        return arity_error(p, a->missing);
    if (a->max >= 0 && p->n_pos > a->max)
        return arity_error(p, a->extra);
    for (int u = 0; u < CLI_MAX_USES && p->cmd->uses[u].group; u++)
        for (const cli_dep *d = p->cmd->uses[u].group->deps; d && d->rule; d++) {
            int rc = check_rule(p, d);
            if (rc != CLI_OK)
                return rc;
        }
    return CLI_OK;
}

/* ---- the loop ----------------------------------------------------------------------- */

int cli_apply(const cli_group *g, void *target, const cli_opt *o, const char *arg)
{
    char *field = (char *)target + o->offset;
    switch (o->store) {
    case CLI_TRUE:
    case CLI_FALSE:
        *(bool *)field = o->store == CLI_TRUE;
        return CLI_OK;
    case CLI_PATH:
        if (!*arg)
            return cli_error(CLI_USAGE, "--%s: the name is empty", o->name);
        *(const char **)field = arg;
        return CLI_OK;
    case CLI_STR:
        *(const char **)field = arg;
        return CLI_OK;
    default:
        return g->handle(target, o, arg);
    }
}

static int unknown(const parser *p, const char *name, int len)
{
    const char *c = p->cmd->name;
    return cli_error(CLI_USAGE, "unknown option '%.*s' for 'kvsim %s' (see 'kvsim %s --help')", len,
                     name, c, c);
}

/* The option at argv[*i] (advancing *i past it and its value): its entry index or HELP
 * with its value in *arg; SKIP when it was a negative number, collected as positional;
 * FAIL after printing the error. */
static int next_option(parser *p, int argc, char **argv, int *i, const char **arg)
{
    char *a = argv[(*i)++];
    const char *inline_val = NULL;
    int k;
    *arg = NULL;
    if (a[1] == '-') {
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if ((k = find_long(p->e, p->n, name, len)) == NONE) {
            unknown(p, a, (int)len + 2);
            return FAIL;
        }
        inline_val = eq ? eq + 1 : NULL;
    } else if ((k = a[2] == '\0' ? find_short(p->e, p->n, a[1]) : NONE) == NONE) {
        /* A negative number is never an option here: positional, reported in context. */
        if ((a[1] >= '0' && a[1] <= '9') || a[1] == '.') {
            p->pos[p->n_pos++] = a;
            return SKIP;
        }
        unknown(p, a, (int)strlen(a));
        return FAIL;
    }
    const cli_opt *o = k == HELP ? &help_opt : p->e[k].opt;
    if (k != HELP && omitted(p->cmd, p->e[k].group, o)) {
        cli_error(CLI_USAGE, "--%s does not apply to kvsim %s (%s)", o->name, p->cmd->name,
                  p->cmd->omit_why ? p->cmd->omit_why : "see its --help");
        return FAIL;
    }
    if (o->metavar && !inline_val && *i >= argc) {
        cli_error(CLI_USAGE, "option '--%s' needs a value", o->name);
        return FAIL;
    }
    if (!o->metavar && inline_val) {
        cli_error(CLI_USAGE, "option '--%s' takes no value", o->name);
        return FAIL;
    }
    if (o->metavar)
        *arg = inline_val ? inline_val : argv[(*i)++];
    return k;
}

/* Apply the option at entry k: the exclusions, its store or handler, the command's seen
 * hook.  0 or CLI_USAGE after printing. */
static int take(parser *p, int k, const char *arg)
{
    const cli_use *u = &p->cmd->uses[p->e[k].group];
    int rc = check_excludes(p, k);
    if (rc == CLI_OK)
        rc = cli_apply(u->group, (char *)p->state + u->offset, p->e[k].opt, arg);
    if (rc == CLI_OK && p->cmd->seen)
        rc = p->cmd->seen(p->state, p->e[k].group, p->e[k].opt, arg);
    p->given[k]++;
    return rc == CLI_OK ? CLI_OK : CLI_USAGE;
}

/* CLI_OK with every option applied, HELP, or CLI_USAGE after printing. */
static int parse(parser *p, int argc, char **argv)
{
    bool options = true;
    for (int i = 1; i < argc;) {
        char *a = argv[i];
        if (!options || a[0] != '-' || a[1] == '\0') {
            p->pos[p->n_pos++] = a;
            i++;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options = false;
            i++;
            continue;
        }
        const char *arg;
        int k = next_option(p, argc, argv, &i, &arg);
        if (k == HELP)
            return HELP;
        if (k == FAIL || (k >= 0 && take(p, k, arg) != CLI_OK))
            return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_main(const cli_cmd *cmd, int argc, char **argv)
{
    parser *p = kv_xcalloc(1, sizeof *p);
    p->cmd = current = cmd;
    p->n = flatten(cmd, p->e);
    p->pos = kv_xcalloc((size_t)argc + 1, sizeof *p->pos);
    p->state = kv_xcalloc(1, cmd->state_size);
    if (cmd->init)
        cmd->init(p->state);
    int rc = parse(p, argc, argv);
    if (rc == HELP) {
        cli_help(stdout, cmd);
        rc = CLI_OK;
    } else if (rc == CLI_OK && (rc = check_after(p)) == CLI_OK) {
        rc = cmd->exec(p->state, p->n_pos, p->pos);
    }
    if (cmd->release)
        cmd->release(p->state);
    free(p->state);
    free(p->pos);
    free(p);
    return rc;
}

const cli_opt *cli_group_find(const cli_group *g, const char *name)
{
    for (const cli_section *s = g->sections; s->title; s++)
        for (const cli_opt *o = s->opts; o && o->name; o++)
            if (strcmp(o->name, name) == 0)
                return o;
    return NULL;
}

/* ---- help --------------------------------------------------------------------------- */

enum { MAX_LEFT = 28 }; /* a longer option name puts its help on the next line */

static int left_width(const cli_opt *o)
{
    return 8 + (int)strlen(o->name) + (o->metavar ? 1 + (int)strlen(o->metavar) : 0);
}

static void print_opt(FILE *f, const cli_opt *o, int col)
{
    char left[128];
    int w = snprintf(left, sizeof left, "  %c%c%c --%s%s%s", o->short_name ? '-' : ' ',
                     o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ', o->name,
                     o->metavar ? " " : "", o->metavar ? o->metavar : "");
    fputs(left, f);
    if (w + 2 > col)
        fprintf(f, "\n%*s", col, "");
    else
        fprintf(f, "%*s", col - w, "");
    for (const char *h = o->help;;) {
        size_t n = strcspn(h, "\n");
        fprintf(f, "%.*s\n", (int)n, h);
        h += n;
        if (*h == '\0' || *++h == '\0')
            break;
        fprintf(f, "%*s", col, "");
    }
}

/* The section that ends with -h, --help: the last of the own group's with options. */
static const cli_section *help_section(const cli_cmd *cmd)
{
    const cli_section *last = NULL;
    for (const cli_section *s = cmd->uses[0].group->sections; s->title; s++)
        if (s->opts && s->opts->name)
            last = s;
    return last;
}

void cli_help(FILE *f, const cli_cmd *cmd)
{
    int col = left_width(&help_opt);
    for (int u = 0; u < CLI_MAX_USES && cmd->uses[u].group; u++)
        for (const cli_section *s = cmd->uses[u].group->sections; s->title; s++)
            for (const cli_opt *o = s->opts; o && o->name; o++)
                if (!omitted(cmd, u, o) && left_width(o) > col && left_width(o) <= MAX_LEFT)
                    col = left_width(o);
    col += 2;
    int indent = (int)strlen("usage: kvsim  ") + (int)strlen(cmd->name);
    fprintf(f, "usage: kvsim %s ", cmd->name);
    for (const char *c = cmd->synopsis; *c; c++) {
        fputc(*c, f);
        if (*c == '\n')
            fprintf(f, "%*s", indent, "");
    }
    fprintf(f, "\n\n%s", cmd->description);
    const cli_section *with_help = help_section(cmd);
    for (int u = 0; u < CLI_MAX_USES && cmd->uses[u].group; u++)
        for (const cli_section *s = cmd->uses[u].group->sections; s->title; s++) {
            int shown = 0;
            for (const cli_opt *o = s->opts; o && o->name; o++)
                shown += !omitted(cmd, u, o);
            if (shown == 0 && s->opts && s->opts->name && !s->prose)
                continue; /* every option left out: no empty section */
            fprintf(f, "\n%s:\n", s->title);
            for (const cli_opt *o = s->opts; o && o->name; o++)
                if (!omitted(cmd, u, o))
                    print_opt(f, o, col);
            if (s == with_help)
                print_opt(f, &help_opt, col);
            if (s->prose)
                fputs(s->prose, f);
        }
}

/* ---- the command table ------------------------------------------------------------ */

const cli_cmd *const cli_commands[] = {
    &cli_cmd_estimate, &cli_cmd_gen,  &cli_cmd_run,  &cli_cmd_sweep, &cli_cmd_merge,
    &cli_cmd_plan,     &cli_cmd_calibrate, &cli_cmd_plot, &cli_cmd_hash, NULL,
};

void cli_usage(FILE *f)
{
    fputs("usage: kvsim <command> [options]\n\n"
          "kvsim simulates the paged KV-cache block allocator of an LLM serving engine.\n\n"
          "commands:\n",
          f);
    for (const cli_cmd *const *c = cli_commands; *c; c++)
        fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->summary);
    fputs("\n'kvsim <command> --help' shows each command's options and defaults.\n", f);
}

const cli_cmd *cli_find_command(const char *name)
{
    for (const cli_cmd *const *c = cli_commands; *c; c++)
        if (strcmp((*c)->name, name) == 0)
            return *c;
    return NULL;
}

/* ---- the table's invariants (tests) ------------------------------------------------- */

static bool fail(char *why, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static bool fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return false;
}

static bool check_rules(const cli_cmd *cmd, const entry *e, int n, char *why, size_t wn)
{
    for (int u = 0; u < CLI_MAX_USES && cmd->uses[u].group; u++)
        for (const cli_dep *d = cmd->uses[u].group->deps; d && d->rule; d++) {
            const char *names[2] = {d->opt, d->other};
            for (int k = 0; k < 2; k++)
                if (names[k] && find_long(e, n, names[k], strlen(names[k])) < 0)
                    return fail(why, wn, "%s: a rule names '--%s', not an option", cmd->name,
                                names[k]);
            if (!d->msg || (d->rule != CLI_REQUIRED) != (d->other != NULL) ||
                (d->rule == CLI_ONE_OF) != (d->msg2 != NULL))
                return fail(why, wn, "%s: the rule on '--%s' is malformed", cmd->name, d->opt);
        }
    return true;
}

bool cli_cmd_check(const cli_cmd *cmd, char *why, size_t wn)
{
    entry e[MAX_OPTS];
    int n = flatten(cmd, e);
    for (int i = 0; i < n; i++) {
        const cli_opt *o = e[i].opt;
        const cli_group *g = cmd->uses[e[i].group].group;
        for (int j = 0; j < i; j++) {
            if (e[j].group == e[i].group && strcmp(e[j].opt->name, o->name) == 0)
                return fail(why, wn, "%s: '--%s' twice in one group", cmd->name, o->name);
            if (o->short_name && e[j].opt->short_name == o->short_name)
                return fail(why, wn, "%s: '--%s' reuses a short name", cmd->name, o->name);
        }
        if (strcmp(o->name, "help") == 0 || o->short_name == 'h')
            return fail(why, wn, "%s: '--%s' takes the framework's help", cmd->name, o->name);
        if (!o->help || !*o->help || (o->store == CLI_CALL && !g->handle))
            return fail(why, wn, "%s: '--%s' has no help or no handler", cmd->name, o->name);
        if ((o->store == CLI_STR || o->store == CLI_PATH) != (o->metavar != NULL) &&
            o->store != CLI_CALL)
            return fail(why, wn, "%s: '--%s': a store that does not fit its value", cmd->name,
                        o->name);
    }
    for (const char *const *name = cmd->omit; name && *name; name++) {
        bool found = false;
        for (int u = 1; u < CLI_MAX_USES && cmd->uses[u].group && !found; u++)
            found = cli_group_find(cmd->uses[u].group, *name) != NULL;
        if (!found)
            return fail(why, wn, "%s: omits '--%s', which no used group has", cmd->name, *name);
    }
    if ((cmd->args.min > 0 && !cmd->args.missing) || (cmd->args.max >= 0 && !cmd->args.extra))
        return fail(why, wn, "%s: a positional count without its message", cmd->name);
    return check_rules(cmd, e, n, why, wn);
}

/* ---- the command line ------------------------------------------------------------- */

/* The process's command line (one per process, like `current`). */
static kv_buf command_line;

void cli_set_command_line(int argc, char **argv)
{
    kv_buf_reset(&command_line);
    kv_buf_puts(&command_line, "kvsim"); /* argv[0] is wherever this binary lies */
    for (int i = 1; i < argc; i++) {
        kv_buf_putc(&command_line, ' ');
        kv_shell_word(&command_line, argv[i]);
    }
}

const char *cli_command_line(void)
{
    return command_line.s;
}

/* ---- a forked child's entry ------------------------------------------------------- */

static cli_child_fn child_entry;

void cli_set_child_entry(cli_child_fn f)
{
    child_entry = f;
}

cli_child_fn cli_child_entry(void)
{
    return child_entry;
}

/* ---- library messages in option names ---------------------------------------------- */

/* "{sample_every}" → "--sample-every" when that is an option of the command; any other
 * brace text is kept as it is (it may be a user's). */
static void render(const char *msg, kv_buf *out)
{
    entry e[MAX_OPTS];
    int n = current ? flatten(current, e) : 0;
    for (const char *c = msg; *c;) {
        const char *close = *c == '{' ? strchr(c, '}') : NULL;
        size_t len = close ? (size_t)(close - c - 1) : 0;
        char dashed[64];
        if (close && len > 0 && len < sizeof dashed &&
            strspn(c + 1, "abcdefghijklmnopqrstuvwxyz0123456789_") == len) {
            for (size_t i = 0; i < len; i++)
                dashed[i] = c[1 + i] == '_' ? '-' : c[1 + i];
            if (find_long(e, n, dashed, len) >= 0) {
                kv_buf_printf(out, "--%.*s", (int)len, dashed);
                c = close + 1;
                continue;
            }
        }
        kv_buf_putc(out, *c++);
    }
}

int cli_diag(int code, const kv_diag *diag)
{
    kv_buf b = {0};
    render(diag->msg, &b);
    int rc = cli_error(code, "%s", b.s ? b.s : "");
    kv_buf_release(&b);
    return rc;
}

int cli_flush_stdout(void)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return CLI_OK;
    return cli_error(CLI_RUNTIME, "cannot write to standard output: %s",
                     errno ? strerror(errno) : "write error");
}

int cli_code(int err)
{
    return err == -KV_EINVAL ? CLI_USAGE : CLI_RUNTIME;
}
