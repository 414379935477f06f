/* The command framework (src/cli/command.c): every real command's table is well formed and
 * its generated help lists every option; on a toy command, the parse loop, --help / -h,
 * unknown options and values, the positional count, each kind of rule with its exact
 * message and its place in the order, the stores, the seen hook and the rendering of
 * library messages.  The toy runs in process, its stdout and stderr captured. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "support.h"

/* ---- capture ------------------------------------------------------------------------ */

typedef struct captured {
    int code;
    char *out, *err;
} captured;

static char *slurp(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    char *s = calloc(1, (size_t)n + 1);
    rewind(f);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

/* cli_main(cmd, args…) with fds 1 and 2 sent to temp files. */
static captured run_args(const cli_cmd *cmd, const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)cmd->name;
    for (; args[argc - 1]; argc++)
        argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    FILE *o = tmpfile(), *e = tmpfile();
    cr_assert(o && e);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    dup2(fileno(o), 1);
    dup2(fileno(e), 2);
    captured c = {cli_main(cmd, argc, argv), NULL, NULL};
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    fseek(o, 0, SEEK_END);
    fseek(e, 0, SEEK_END);
    c.out = slurp(o);
    c.err = slurp(e);
    return c;
}

#define RUN(cmd, ...) run_args(cmd, (const char *const[]){__VA_ARGS__, NULL})

static void captured_free(captured *c)
{
    free(c->out);
    free(c->err);
}

/* A usage error: exit 2, nothing on stdout, exactly "kvsim: error: MSG\n" on stderr. */
static void assert_usage(captured *c, const char *msg)
{
    char want[512];
    snprintf(want, sizeof want, "kvsim: error: %s\n", msg);
    cr_assert_eq(c->code, CLI_USAGE, "exit %d: %s", c->code, c->err);
    cr_assert_str_empty(c->out);
    cr_assert_str_eq(c->err, want);
    captured_free(c);
}

/* ---- every real command ------------------------------------------------------------- */

Test(cli_tables, every_command_is_well_formed)
{
    int n = 0;
    for (const cli_cmd *const *c = cli_commands; *c; c++, n++) {
        char why[256] = "";
        cr_assert(cli_cmd_check(*c, why, sizeof why), "%s", why);
        cr_assert_eq(cli_find_command((*c)->name), *c);
    }
    cr_assert_eq(n, 9, "estimate, gen, run, sweep, merge, plan, calibrate, plot, hash");
    cr_assert_null(cli_find_command("bogus"));
}

static bool on_omit_list(const cli_cmd *c, int u, const char *name)
{
    for (const char *const *n = c->omit; u > 0 && n && *n; n++)
        if (strcmp(*n, name) == 0)
            return true;
    return false;
}

/* The help of each command names every option of every group it uses, with its metavar
 * and short name, and -h, --help — except the options on its omit list (and a section
 * left empty by them); no line is wider than 88 columns. */
Test(cli_tables, help_lists_every_option_of_every_table)
{
    for (const cli_cmd *const *c = cli_commands; *c; c++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        cli_help(f, *c);
        fclose(f);
        char usage[64];
        snprintf(usage, sizeof usage, "usage: kvsim %s ", (*c)->name);
        cr_assert(strncmp(text, usage, strlen(usage)) == 0, "%s", text);
        cr_assert(strstr(text, "  -h, --help "), "%s: no -h, --help", (*c)->name);
        for (int u = 0; u < CLI_MAX_USES && (*c)->uses[u].group; u++)
            for (const cli_section *s = (*c)->uses[u].group->sections; s->title; s++) {
                char title[256];
                snprintf(title, sizeof title, "\n%s:\n", s->title);
                int kept = 0, all = 0;
                for (const cli_opt *o = s->opts; o && o->name; o++)
                    all++, kept += !on_omit_list(*c, u, o->name);
                cr_assert(!strstr(text, title) == (all > 0 && kept == 0 && !s->prose),
                          "%s: section '%s' shown wrongly", (*c)->name, s->title);
                for (const cli_opt *o = s->opts; o && o->name; o++) {
                    if (on_omit_list(*c, u, o->name))
                        continue;
                    char want[128];
                    snprintf(want, sizeof want, "%s--%s%s%s", o->short_name ? ", " : "    ",
                             o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
                    if (o->short_name)
                        snprintf(want, sizeof want, "-%c, --%s%s%s", o->short_name, o->name,
                                 o->metavar ? " " : "", o->metavar ? o->metavar : "");
                    cr_assert(strstr(text, want), "%s --help lacks '%s'", (*c)->name, want);
                }
            }
        for (char *line = text; *line;) {
            size_t n = strcspn(line, "\n");
            cr_assert_leq(n, 88, "%s: a help line of %zu columns: %.*s", (*c)->name, n, (int)n,
                          line);
            line += n + (line[n] == '\n');
        }
        free(text);
    }
}

Test(cli_tables, kvsim_help_lists_every_command)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cli_usage(f);
    fclose(f);
    for (const cli_cmd *const *c = cli_commands; *c; c++) {
        char want[128];
        snprintf(want, sizeof want, "\n  %-10s %s\n", (*c)->name, (*c)->summary);
        cr_assert(strstr(text, want), "kvsim --help lacks '%s'", want);
    }
    free(text);
}

/* ---- a toy command ------------------------------------------------------------------ */

typedef struct toy {
    const char *out, *value;
    bool plot, alpha, beta, gamma, delta, flag;
    uint32_t count;
    int ran, seen_own, seen_other; /* what happened */
    char got[64];                  /* exec's positional arguments, joined */
} toy;

typedef struct other {
    bool on;
    const char *count;
} other;

enum { T_COUNT = 1 };

static const cli_opt toy_opts[] = {
    {"out", 'o', "DIR", CLI_TEXT(toy, out), "write into DIR"},
    {"count", 'c', "N", CLI_ID(T_COUNT), "how many (required)\nsecond line"},
    {"plot", 0, NULL, CLI_SET(toy, plot), "draw (needs --out)"},
    {"alpha", 0, NULL, CLI_SET(toy, alpha), "alpha, not with --beta"},
    {"beta", 0, NULL, CLI_SET(toy, beta), "beta"},
    {"gamma", 0, NULL, CLI_SET(toy, gamma), "gamma or delta"},
    {"delta", 0, NULL, CLI_SET(toy, delta), "delta or gamma"},
    {"a-very-long-option-name", 0, "VALUE", CLI_TEXT(toy, value), "its help on the next line"},
    {0},
};

static const cli_section toy_sections[] = {
    {"toy options", toy_opts, "prose after the options\n"},
    {0},
};

static const cli_dep toy_deps[] = {
    {CLI_REQUIRES, "plot", "out", "--plot needs --out DIR", NULL},
    {CLI_EXCLUDES, "alpha", "beta", "--alpha and --beta are mutually exclusive", NULL},
    {CLI_REQUIRED, "count", NULL, "toy needs --count N", NULL},
    {CLI_ONE_OF, "gamma", "delta", "give --gamma or --delta, not both",
     "toy needs --gamma or --delta"},
    {0},
};

static int toy_handle(void *target, const cli_opt *opt, const char *arg)
{
    return cli_parse_u32(opt->name, arg, 1, 100, &((toy *)target)->count);
}

static const cli_group toy_group = {toy_sections, toy_handle, toy_deps};

static const cli_opt other_opts[] = {
    {"on", 0, NULL, CLI_SET(other, on), "on"},
    {"off", 0, NULL, CLI_CLEAR(other, on), "off"},
    {"count", 0, "N", CLI_TEXT(other, count), "shadowed by the toy's --count"},
    {0},
};
static const cli_section other_sections[] = {{"other", other_opts, NULL}, {0}};
static const cli_group other_group = {other_sections, NULL, NULL};

typedef struct toy_state {
    toy t;
    other o;
} toy_state;

static toy last; /* what the last exec saw */

static int toy_exec(void *state, int argc, char **argv)
{
    toy_state *s = state;
    s->t.ran = 1;
    for (int i = 0; i < argc; i++)
        snprintf(s->t.got + strlen(s->t.got), sizeof s->t.got - strlen(s->t.got), "%s%s",
                 i ? " " : "", argv[i]);
    last = s->t;
    last.flag = s->o.on; /* the other group's store, for the test */
    return CLI_OK;
}

static int toy_seen(void *state, int group, const cli_opt *opt, const char *arg)
{
    toy_state *s = state;
    (void)opt, (void)arg;
    ++*(group ? &s->t.seen_other : &s->t.seen_own);
    last = s->t;
    return CLI_OK;
}

static void toy_init(void *state)
{
    memset(&last, 0, sizeof last);
    ((toy_state *)state)->o.on = true;
}

static const cli_cmd toy_cmd = {
    .name = "toy",
    .summary = "a toy",
    .synopsis = "FILE --count N\n[options]",
    .description = "A toy command.\n",
    .uses = {{&toy_group, 0}, {&other_group, offsetof(toy_state, o)}},
    .args = {1, 1, "kvsim toy needs a FILE", "kvsim toy takes one FILE, got {n}"},
    .state_size = sizeof(toy_state),
    .init = toy_init,
    .exec = toy_exec,
    .seen = toy_seen,
};

/* A command's omit list: the group's option leaves the help and is refused by name with
 * the command's reason; a section it empties goes too; an own option of an omitted name
 * replaces the group's; a name no group has is a table error. */
static const char *const toy_omit[] = {"on", "off", "count", NULL};

Test(cli_toy, an_omitted_option_is_neither_shown_nor_taken)
{
    cli_cmd toy_omitting = toy_cmd;
    toy_omitting.omit = toy_omit;
    toy_omitting.omit_why = "a reason";
    char why[256];
    cr_assert(cli_cmd_check(&toy_omitting, why, sizeof why), "%s", why);
    captured c = RUN(&toy_omitting, "--help");
    cr_assert_eq(c.code, 0);
    cr_assert_null(strstr(c.out, "--on"), "%s", c.out);
    cr_assert_null(strstr(c.out, "\nother:\n"), "%s", c.out);
    cr_assert_null(strstr(c.out, "shadowed"), "%s", c.out);
    cr_assert(strstr(c.out, "-c, --count N  how many"), "%s", c.out);
    captured_free(&c);
    c = RUN(&toy_omitting, "f", "--count", "3", "--gamma", "--on");
    cr_assert_eq(c.code, CLI_USAGE);
    cr_assert_str_eq(c.err, "kvsim: error: --on does not apply to kvsim toy (a reason)\n");
    cr_assert_eq(last.ran, 0);
    captured_free(&c);
    c = RUN(&toy_omitting, "f", "--count", "3", "--gamma");
    cr_assert_eq(c.code, 0, "%s", c.err);
    cr_assert_eq(last.count, 3, "the own --count still parses");
    captured_free(&c);
    static const char *const bad[] = {"nowhere", NULL};
    cli_cmd broken = toy_omitting;
    broken.omit = bad;
    cr_assert_not(cli_cmd_check(&broken, why, sizeof why));
    cr_assert_str_eq(why, "toy: omits '--nowhere', which no used group has");
}

Test(cli_toy, the_toy_is_well_formed_and_a_broken_rule_is_caught)
{
    char why[256];
    cr_assert(cli_cmd_check(&toy_cmd, why, sizeof why), "%s", why);
    static const cli_dep bad_deps[] = {
        {CLI_REQUIRES, "plot", "nowhere", "x", NULL},
        {0},
    };
    static const cli_group bad_group = {toy_sections, toy_handle, bad_deps};
    cli_cmd bad = toy_cmd;
    bad.uses[0].group = &bad_group;
    cr_assert_not(cli_cmd_check(&bad, why, sizeof why));
    cr_assert_str_eq(why, "toy: a rule names '--nowhere', not an option");
    static const cli_opt dup_opts[] = {
        {"out", 'o', "DIR", CLI_TEXT(toy, out), "write into DIR"},
        {"out", 0, "DIR", CLI_TEXT(toy, out), "again"},
        {0},
    };
    static const cli_section dup_sections[] = {{"dup", dup_opts, NULL}, {0}};
    static const cli_group dup_group = {dup_sections, NULL, NULL};
    bad.uses[0].group = &dup_group;
    cr_assert_not(cli_cmd_check(&bad, why, sizeof why));
    cr_assert_str_eq(why, "toy: '--out' twice in one group");
}

Test(cli_toy, a_good_command_line_runs_with_every_store)
{
    captured c = RUN(&toy_cmd, "f", "--count=7", "-o", "d", "--plot", "--gamma", "--off");
    cr_assert_eq(c.code, 0, "%s", c.err);
    cr_assert_str_empty(c.err);
    cr_assert_eq(last.ran, 1);
    cr_assert_eq(last.count, 7);
    cr_assert_str_eq(last.out, "d");
    cr_assert(last.plot && last.gamma && !last.delta);
    cr_assert_not(last.flag, "--off cleared the other group's bool");
    cr_assert_str_eq(last.got, "f");
    cr_assert_eq(last.seen_own, 4);
    cr_assert_eq(last.seen_other, 1);
    captured_free(&c);
    c = RUN(&toy_cmd, "-c", "3", "--delta", "--", "-x");
    cr_assert_eq(c.code, 0, "%s", c.err);
    cr_assert_str_eq(last.got, "-x", "after --, '-x' is positional");
    captured_free(&c);
    c = RUN(&toy_cmd, "-5", "--count", "3", "--delta");
    cr_assert_eq(c.code, 0, "%s", c.err);
    cr_assert_str_eq(last.got, "-5", "a negative number is positional");
    captured_free(&c);
}

Test(cli_toy, help_and_h_print_the_generated_help)
{
    const char *const forms[] = {"--help", "-h"};
    for (int i = 0; i < 2; i++) {
        captured c = RUN(&toy_cmd, "--count", "x", forms[i]);
        cr_assert_eq(c.code, CLI_USAGE, "an error before %s wins", forms[i]);
        captured_free(&c);
        c = RUN(&toy_cmd, forms[i], "--count", "x", "--bogus");
        cr_assert_eq(c.code, 0);
        cr_assert_str_empty(c.err);
        cr_assert_eq(last.ran, 0, "--help runs nothing");
        cr_assert_str_eq(c.out, "usage: kvsim toy FILE --count N\n"
                                "                 [options]\n"
                                "\n"
                                "A toy command.\n"
                                "\n"
                                "toy options:\n"
                                "  -o, --out DIR  write into DIR\n"
                                "  -c, --count N  how many (required)\n"
                                "                 second line\n"
                                "      --plot     draw (needs --out)\n"
                                "      --alpha    alpha, not with --beta\n"
                                "      --beta     beta\n"
                                "      --gamma    gamma or delta\n"
                                "      --delta    delta or gamma\n"
                                "      --a-very-long-option-name VALUE\n"
                                "                 its help on the next line\n"
                                "  -h, --help     show this help\n"
                                "prose after the options\n"
                                "\n"
                                "other:\n"
                                "      --on       on\n"
                                "      --off      off\n"
                                "      --count N  shadowed by the toy's --count\n");
        captured_free(&c);
    }
    captured c = RUN(&toy_cmd, "--help=yes");
    assert_usage(&c, "option '--help' takes no value");
}

Test(cli_toy, unknown_options_and_values)
{
    captured c = RUN(&toy_cmd, "f", "--bogus");
    assert_usage(&c, "unknown option '--bogus' for 'kvsim toy' (see 'kvsim toy --help')");
    c = RUN(&toy_cmd, "f", "--bogus=1");
    assert_usage(&c, "unknown option '--bogus' for 'kvsim toy' (see 'kvsim toy --help')");
    c = RUN(&toy_cmd, "f", "-z");
    assert_usage(&c, "unknown option '-z' for 'kvsim toy' (see 'kvsim toy --help')");
    c = RUN(&toy_cmd, "f", "-oc");
    assert_usage(&c, "unknown option '-oc' for 'kvsim toy' (see 'kvsim toy --help')");
    c = RUN(&toy_cmd, "f", "--count");
    assert_usage(&c, "option '--count' needs a value");
    c = RUN(&toy_cmd, "f", "--plot=1");
    assert_usage(&c, "option '--plot' takes no value");
    c = RUN(&toy_cmd, "f", "--count", "0");
    assert_usage(&c, "--count: '0' must be between 1 and 100");
    cr_assert_eq(last.ran, 0);
}

Test(cli_toy, positional_count_before_the_rules)
{
    captured c = RUN(&toy_cmd, "--plot");
    assert_usage(&c, "kvsim toy needs a FILE");
    c = RUN(&toy_cmd, "f", "g", "--plot");
    assert_usage(&c, "kvsim toy takes one FILE, got 2");
    cli_cmd none = toy_cmd;
    none.args = (cli_args){0, 0, NULL, "kvsim toy takes no arguments (got '{arg}')"};
    c = RUN(&none, "--count", "1", "--gamma", "extra", "more");
    assert_usage(&c, "kvsim toy takes no arguments (got 'extra')");
}

/* Each kind of rule fires with its exact message; the post-parse rules in declaration
 * order, an exclusion as soon as its second option appears. */
Test(cli_toy, every_rule_fires_with_its_message)
{
    captured c = RUN(&toy_cmd, "f", "--count", "1", "--gamma", "--plot");
    assert_usage(&c, "--plot needs --out DIR");
    c = RUN(&toy_cmd, "f", "--gamma");
    assert_usage(&c, "toy needs --count N");
    c = RUN(&toy_cmd, "f", "--plot");
    assert_usage(&c, "--plot needs --out DIR"); /* declared before --count's rule */
    c = RUN(&toy_cmd, "f", "--count", "1", "--gamma", "--delta");
    assert_usage(&c, "give --gamma or --delta, not both");
    c = RUN(&toy_cmd, "f", "--count", "1");
    assert_usage(&c, "toy needs --gamma or --delta");
    c = RUN(&toy_cmd, "f", "--beta", "--alpha", "--count", "x");
    assert_usage(&c, "--alpha and --beta are mutually exclusive");
    c = RUN(&toy_cmd, "--alpha", "--beta");
    assert_usage(&c, "--alpha and --beta are mutually exclusive"); /* before the count */
    c = RUN(&toy_cmd, "f", "--beta", "--count", "x", "--alpha");
    assert_usage(&c, "--count: 'x' is not a whole number");
    cr_assert_eq(last.ran, 0);
}

/* Library messages name quantities in braces; the running command's options are rendered
 * as flags, anything else is kept. */
Test(cli_toy, library_messages_in_the_commands_option_names)
{
    captured c = RUN(&toy_cmd, "f", "--count", "1", "--gamma");
    cr_assert_eq(c.code, 0);
    captured_free(&c);
    kv_diag d;
    kv_diag_set(&d, -KV_EINVAL, "{count} and {a_very_long_option_name} but not {nope} or {Count}");
    FILE *t = tmpfile();
    fflush(stderr);
    int se = dup(2);
    dup2(fileno(t), 2);
    cli_diag(CLI_USAGE, &d);
    fflush(stderr);
    dup2(se, 2);
    close(se);
    fseek(t, 0, SEEK_END);
    char *err = slurp(t);
    cr_assert_str_eq(err, "kvsim: error: --count and --a-very-long-option-name but not {nope} "
                          "or {Count}\n");
    free(err);
    cr_assert_eq(cli_code(-KV_EINVAL), CLI_USAGE);
    cr_assert_eq(cli_code(-KV_EIO), CLI_RUNTIME);
}

/* The real commands through the binary: -h is --help, and a rule keeps its wording. */
Test(cli_binary, h_is_help_and_rules_keep_their_wording)
{
    for (const cli_cmd *const *c = cli_commands; *c; c++) {
        run_result a = run_kvsim((*c)->name, "-h", NULL);
        run_result b = run_kvsim((*c)->name, "--help", NULL);
        cr_assert_eq(a.status, 0);
        cr_assert_str_eq(a.out, b.out, "%s: -h differs from --help", (*c)->name);
        cr_assert_str_empty(a.err);
        run_result_free(&a);
        run_result_free(&b);
    }
    run_result r = run_kvsim("gen", "--prompt", "p50=10", "--output", "p50=5", "--rate", "1",
                             "--requests", "3", "--duration", "2", NULL);
    assert_error_line(&r, 2,
                      "kvsim: error: ", "give either --requests N or --duration S, not both");
    run_result_free(&r);
    r = run_kvsim("estimate", "--kv-budget", "1GiB", "--num-blocks", "x", NULL);
    assert_error_line(&r, 2, "kvsim: error: ",
                      "--num-blocks and --kv-budget are mutually exclusive (give the pool size "
                      "one way)");
    run_result_free(&r);
}

/* ---- the progress line of a replay ----------------------------------------------------- */

/* An overloaded replay: every request arrived early, and for most of the run only the
 * finished count and the simulated time move, so they lead the line. */
Test(cli, progress_line_leads_with_finished_requests_and_simulated_time)
{
    char line[160];
    kv_progress p = {8123400000000LL, 1000000, 412345, 1000000};
    cli_progress_text(line, sizeof line, &p);
    cr_assert_str_eq(line, "kvsim: 412,345 of 1,000,000 requests finished (41.2%) at 8123.4 s "
                           "simulated, all arrived");
    kv_progress q = {2500000000LL, 300, 120, 1000};
    cli_progress_text(line, sizeof line, &q);
    cr_assert_str_eq(line, "kvsim: 120 of 1,000 requests finished (12.0%) at 2.5 s simulated, "
                           "300 arrived");
    kv_progress none = {0, 0, 0, 0};
    cli_progress_text(line, sizeof line, &none);
    cr_assert_str_eq(line, "kvsim: 0 of 0 requests finished (100.0%) at 0.0 s simulated, all "
                           "arrived");
    char small[24];
    cli_progress_text(small, sizeof small, &p);
    cr_assert_eq(strlen(small), sizeof small - 1, "cut, never overrun");
}
