/* cli: the only layer that parses argv, prints for humans or decides exit codes.
 *
 * Exit codes (git/jq habit): 0 success (and --help, printed to stdout), 2 usage error
 * (unknown option, bad value), 1 runtime error (unreadable file, malformed trace).
 * Every error is one line on stderr: "kvsim: error: <what>".
 *
 * A command is data (cli_cmd): its option groups, the rules between options, its
 * positional arguments and three functions (init, exec, release) over a state struct the
 * framework allocates.  cli_main (command.c) runs every command the same way: parse argv
 * with the one generic loop, answer --help / -h from the same tables, check the arity and
 * the rules, then call exec.  See command.c for the parse and help contracts.
 */
#ifndef KVSIM_CLI_H
#define KVSIM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kvsim/error.h"
#include "kvsim/model.h"
#include "kvsim/setup.h"

enum { CLI_OK = 0, CLI_RUNTIME = 1, CLI_USAGE = 2 };

/* Print "kvsim: error: <fmt>" and a newline to stderr; returns code. */
int cli_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* cli_error(code, "%s", diag->msg), with the quantities the library names in braces
 * ("{sample_every}") rendered as the running command's options ("--sample-every"). */
int cli_diag(int code, const kv_diag *diag);
/* Flush standard output and check it was written: CLI_OK, or CLI_RUNTIME after printing
 * "kvsim: error: cannot write to standard output: <reason>" (a full disk, /dev/full, a
 * closed pipe).  Commands call it after their output; main once more at the end. */
int cli_flush_stdout(void);
/* Seconds on the monotonic clock (for wall times and progress pacing). */
double cli_wall_now(void);
/* The exit code for a library error in option resolution: -KV_EINVAL is a usage error
 * (2), anything else a runtime error (1). */
int cli_code(int err);

/* ---- options ----------------------------------------------------------------------------
 * Long options "--name value" or "--name=value", optional one-letter aliases "-j 4".
 * What happens to a value: CLI_CALL hands it to the group's handler with the option;
 * the stores write it into the group's target at `offset` without a handler. */
typedef enum cli_store {
    CLI_CALL = 0, /* handler(target, opt, arg) */
    CLI_TRUE,     /* a flag: the bool at offset becomes true */
    CLI_FALSE,    /* a flag: the bool at offset becomes false */
    CLI_STR,      /* the const char * at offset keeps the value (it points into argv) */
    CLI_PATH,     /* as CLI_STR, for a file or directory name: an empty one is a usage
                     error ("--out: the name is empty"), never a path into the cwd */
} cli_store;

typedef struct cli_opt {
    const char *name;    /* long name without "--"; NULL ends a table */
    char short_name;     /* 0 = none */
    const char *metavar; /* the value in help ("DIR"); NULL: a flag, takes no value */
    cli_store store;
    int id;           /* CLI_CALL: for the handler's switch, unique within the group */
    size_t offset;    /* the stores: offsetof(target type, field) */
    const char *help; /* the help column; '\n' continues in the same column; never NULL */
} cli_opt;

/* The three middle fields of a cli_opt row. */
#define CLI_ID(id)          CLI_CALL, (id), 0
#define CLI_SET(T, field)   CLI_TRUE, 0, offsetof(T, field)
#define CLI_CLEAR(T, field) CLI_FALSE, 0, offsetof(T, field)
#define CLI_TEXT(T, field)  CLI_STR, 0, offsetof(T, field)
#define CLI_FILE(T, field)  CLI_PATH, 0, offsetof(T, field)

/* A titled run of options in --help, with optional prose after them. */
typedef struct cli_section {
    const char *title;   /* printed "title:"; NULL ends a group's list of sections */
    const cli_opt *opts; /* {0}-terminated; NULL: prose only */
    const char *prose;   /* printed verbatim after the options (lines end in '\n'); or NULL */
} cli_section;

/* ---- rules between options, checked by the framework -------------------------------------
 * Options are named by their long name, resolved in the running command (so a command's
 * own option shadows a group's of the same name, and the rule follows it).  Messages are
 * printed as they are.  CLI_EXCLUDES fires when the second of the two appears, before its
 * value is parsed; the others are checked after every option was parsed and the positional
 * arguments were counted, in the order they are declared (the command's group first). */
typedef enum cli_rule {
    CLI_RULES_END = 0,
    CLI_REQUIRES, /* opt given without other */
    CLI_EXCLUDES, /* opt and other both given */
    CLI_REQUIRED, /* opt not given */
    CLI_ONE_OF,   /* exactly one of opt and other: msg if both, msg2 if neither */
} cli_rule;

typedef struct cli_dep {
    cli_rule rule;
    const char *opt;
    const char *other; /* CLI_REQUIRED: NULL */
    const char *msg;
    const char *msg2; /* CLI_ONE_OF only */
} cli_dep;

/* A value handler: 0, or CLI_USAGE after printing. */
typedef int (*cli_handler)(void *target, const cli_opt *opt, const char *arg);

/* Options that are parsed together into one target (the run options into kv_sim_options). */
typedef struct cli_group {
    const cli_section *sections; /* ends with a section whose title is NULL */
    cli_handler handle;          /* for CLI_CALL options; NULL when there are none */
    const cli_dep *deps;         /* {0}-terminated, or NULL */
} cli_group;

/* A group as a command uses it: the target is the command's state + offset. */
typedef struct cli_use {
    const cli_group *group; /* NULL ends the list */
    size_t offset;
} cli_use;

/* Positional arguments: their count is checked before the rules.  Messages may hold
 * "{n}" (how many were given) and "{arg}" (the first one beyond max). */
typedef struct cli_args {
    int min, max; /* max < 0: no limit */
    const char *missing, *extra;
} cli_args;

enum { CLI_MAX_USES = 4 };

typedef struct cli_cmd {
    const char *name;           /* "run" */
    const char *summary;        /* its line in `kvsim --help` */
    const char *synopsis;       /* after "usage: kvsim NAME "; '\n' continues, aligned */
    const char *description;    /* printed verbatim after the usage line */
    cli_use uses[CLI_MAX_USES]; /* the command's own group first; {NULL} ends */
    cli_args args;
    size_t state_size;         /* the state is zeroed, then init sets defaults */
    void (*init)(void *state); /* NULL: zero is the default */
    int (*exec)(void *state, int argc, char **argv); /* the positional args; exit code */
    void (*release)(void *state);                    /* NULL ok; runs after exec or an error */
    /* NULL, or called after each option is applied (group = its index in uses): sweep
     * passes the run options it sees on to every configuration. */
    int (*seen)(void *state, int group, const cli_opt *opt, const char *arg);
    /* NULL, or the long names (NULL-terminated) of the used groups' options this command
     * does not take: left out of its --help, and given, "--NAME does not apply to kvsim
     * CMD (omit_why)" — unless the command's own group has an option of that name, which
     * then replaces the group's (calibrate's --seed with its own default). */
    const char *const *omit;
    const char *omit_why;
} cli_cmd;

/* Every command, in `kvsim --help` order, NULL-terminated: what main dispatches on and
 * cli_usage lists. */
extern const cli_cmd *const cli_commands[];
/* `kvsim --help`: the command list with each summary. */
void cli_usage(FILE *f);
/* The command called name, or NULL. */
const cli_cmd *cli_find_command(const char *name);
/* The table's invariants, for tests: option names unique within a group, short names
 * unique, --help / -h left to the framework, every option with help text and (CLI_CALL) a
 * handler, stores that fit their value, rules that name options of the command and carry
 * their messages, positional counts with theirs.  false with the first violation in why. */
bool cli_cmd_check(const cli_cmd *cmd, char *why, size_t n);
/* Run a command: argv[0] is its name.  Returns the exit code. */
int cli_main(const cli_cmd *cmd, int argc, char **argv);
/* The command's --help text. */
void cli_help(FILE *f, const cli_cmd *cmd);
/* The option called name in a group, or NULL. */
const cli_opt *cli_group_find(const cli_group *g, const char *name);
/* Apply one value as the parser does (store or handler): 0 or CLI_USAGE after printing. */
int cli_apply(const cli_group *g, void *target, const cli_opt *o, const char *arg);

/* ---- value parsers: 0, or CLI_USAGE after printing "kvsim: error: --opt: …" --------------
 * `opt` is the option's long name; cli_parse_count prints `what` as it is ("token 3").
 * Numbers are parsed strictly: the whole argument must be the number. */
int cli_parse_count(const char *what, const char *arg, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out);
int cli_parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_double(const char *opt, const char *arg, double min, double max, double *out);
/* Sizes with binary or decimal units (kv_parse_size). */
int cli_parse_size(const char *opt, const char *arg, uint64_t *out);

/* ---- shared option group: model, GPU, parallelism, pool sizing (DESIGN §2) -------------
 * The values live in the core's kv_setup_options; this group parses them. */
extern const cli_group cli_model_group;

/* kv_setup_resolve, its error printed: 0, CLI_USAGE (contradictory or unknown options) or
 * CLI_RUNTIME (an input that does not work). */
int cli_model_resolve(const kv_setup_options *o, kv_setup *out);

/* ---- the command line, for the JSON outputs' "command" stamp -------------------------
 * main records argv once; cli_command_line is "kvsim" and every argument after argv[0],
 * each shell-quoted where it needs it (so the line can be pasted into a shell), or NULL
 * before cli_set_command_line. */
void cli_set_command_line(int argc, char **argv);
const char *cli_command_line(void);

/* ---- a forked child's entry ------------------------------------------------------------
 * What a child forked by this process (kv_job.fn: sweep's configurations) runs on a kvsim
 * argv: main's dispatch, registered by main; NULL (a test driving the tables): children
 * are exec'd instead. */
typedef int (*cli_child_fn)(void *ctx, char *const *argv);
void cli_set_child_entry(cli_child_fn f);
cli_child_fn cli_child_entry(void);

/* ---- the commands (cmd_*.c), in `kvsim --help` order ----------------------------------- */
extern const cli_cmd cli_cmd_estimate, cli_cmd_gen, cli_cmd_run, cli_cmd_sweep, cli_cmd_merge,
    cli_cmd_plan, cli_cmd_calibrate, cli_cmd_plot, cli_cmd_hash;

/* ---- figures (cmd_plot.c), for run/sweep/plan --plot ---------------------------------- */
/* Draw every figure DIR supports (kv_plot_dir).  Prints the figures written on stdout
 * unless quiet (pass quiet when stdout carries JSON), a note on stderr when gnuplot is
 * missing (then returns CLI_OK: the outputs are there, only the pictures are not) or
 * when the directory supports no figure, and an error otherwise.  Returns the exit code:
 * CLI_OK, or CLI_RUNTIME after printing "kvsim: error: ...". */
int cli_plot_dir(const char *dir, bool quiet);

#endif
