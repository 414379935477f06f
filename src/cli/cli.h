/* cli: the only layer that parses argv, prints for humans or decides exit codes.
 *
 * Exit codes (git/jq habit): 0 success (and --help, printed to stdout), 2 usage error
 * (unknown option, bad value), 1 runtime error (unreadable file, malformed trace).
 * Every error is one line on stderr: "kvsim: error: <what>".
 */
#ifndef KVSIM_CLI_H
#define KVSIM_CLI_H

#include <stdbool.h>
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
 * ("{sample_every}") rendered as this command's options ("--sample-every"). */
int cli_diag(int code, const kv_diag *diag);
/* The exit code for a library error in option resolution: -KV_EINVAL is a usage error
 * (2), anything else a runtime error (1). */
int cli_code(int err);

/* ---- option parsing ------------------------------------------------------------------
 * Long options "--name value" or "--name=value", optional one-letter aliases "-j 4".
 * A command passes a NULL-terminated list of option tables (its own plus shared groups
 * such as cli_model_options), so groups are parsed the same way everywhere. */
typedef struct cli_opt {
    const char *name; /* long name without "--"; NULL ends a table */
    char short_name;  /* 0 = none */
    bool has_arg;
    int id; /* > 0, unique across the tables a command uses */
} cli_opt;

typedef struct cli_parser {
    const char *cmd; /* "run", for messages */
    int argc;
    char **argv;
    int i;
    const cli_opt *const *tables;
    char **positional; /* collected non-option arguments, in order */
    int n_positional;
    bool no_more_options; /* after "--" */
} cli_parser;

enum { CLI_OPT_END = 0, CLI_OPT_ERROR = -1 };

/* argv[0] is the subcommand name and is skipped. */
void cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv,
                     const cli_opt *const *tables);
/* Next option id with *arg set (NULL for flags); CLI_OPT_END when done;
 * CLI_OPT_ERROR after printing the error (unknown option, missing value). */
int cli_next(cli_parser *p, const char **arg);
void cli_parser_release(cli_parser *p);

/* Value parsers: 0 on success; on failure print "kvsim: error: --opt: …" and return
 * CLI_USAGE.  `opt` is the option's long name, for the message. */
/* The same for a value that is not an option's: `what` is printed as is ("token 3"). */
int cli_parse_count(const char *what, const char *arg, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out);
int cli_parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_double(const char *opt, const char *arg, double min, double max, double *out);
/* Sizes with binary or decimal units (kv_parse_size); defined in model_opts.c. */
int cli_parse_size(const char *opt, const char *arg, uint64_t *out);

/* ---- shared option group: model, GPU, parallelism, pool sizing (DESIGN §2) ------------
 * The values live in the core's kv_setup_options; this group parses them. */
extern const cli_opt cli_model_options[];

/* Handles an id from cli_model_options: 0, or CLI_USAGE after printing. */
int cli_model_opts_handle(kv_setup_options *o, int id, const char *arg);
/* Whether id belongs to cli_model_options. */
bool cli_model_opts_owns(int id);
/* Help text for the group, for each command's --help. */
extern const char cli_model_opts_help[];

/* kv_setup_resolve, its error printed: 0, CLI_USAGE (contradictory or unknown options) or
 * CLI_RUNTIME (an input that does not work). */
int cli_model_resolve(const kv_setup_options *o, kv_setup *out);

/* ---- subcommands: each returns the process exit code ---------------------------------- */
int cmd_estimate(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_hash(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

/* ---- figures (cmd_plot.c), for run/sweep/plan --plot ---------------------------------- */
/* Draw every figure DIR supports (kv_plot_dir).  Prints the figures written on stdout
 * unless quiet (pass quiet when stdout carries JSON), a note on stderr when gnuplot is
 * missing (then returns CLI_OK: the outputs are there, only the pictures are not) or
 * when the directory supports no figure, and an error otherwise.  Returns the exit code:
 * CLI_OK, or CLI_RUNTIME after printing "kvsim: error: ...". */
int cli_plot_dir(const char *dir, bool quiet);

#endif
