/* main: dispatch.  The commands are cli_commands (command.c), each a cli_cmd in
 * src/cli/cmd_<name>.c; that one table is both what `kvsim NAME` looks up and what
 * `kvsim --help` lists, so the two cannot disagree.  Only this file ends the process (by
 * returning from main, or from the signal and out-of-memory handlers below; a sweep
 * configuration forked by proc.c ends as its own process once child_main returns).
 *
 * Two process-wide duties live here, because they are about the process, not a command:
 *   - standard output is checked once more when the command is done, so every command,
 *     and --help and --version, report a write error there (a full disk, /dev/full) as
 *     one error line and exit 1 instead of exiting 0 with its output lost;
 *   - SIGINT, SIGTERM and SIGHUP end the process the way the shell expects (the default
 *     action, so the exit status is 128 + the signal and a calling script stops too),
 *     after passing the signal to any configuration or gnuplot still running, removing
 *     every temporary file and directory (afile's table) and saying so in one line.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/proc.h"

/* Removes the temporary output files of this process (also for the out-of-memory
 * handler): async-signal-safe, no allocation. */
static void cli_cleanup_temp_files(void)
{
    kv_afile_remove_temps();
}

/* Out of memory is a runtime error like any other: one line, exit 1, no leftovers.  The
 * message is formatted on the stack and written with write(2), since the heap is gone;
 * _exit skips atexit handlers and stdio flushing, which could allocate, and drops any
 * half-written stdout, which would be a truncated result. */
static void on_out_of_memory(size_t bytes)
{
    cli_cleanup_temp_files();
    char msg[128];
    int n = bytes == SIZE_MAX
                ? snprintf(msg, sizeof msg,
                           "kvsim: error: out of memory (a request larger than memory)\n")
                : snprintf(msg, sizeof msg,
                           "kvsim: error: out of memory (could not allocate %zu bytes)\n", bytes);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)w;
    }
    _exit(CLI_RUNTIME);
}

static volatile sig_atomic_t stderr_is_tty;

static void put(const char *s)
{
    ssize_t w = write(STDERR_FILENO, s, strlen(s));
    (void)w;
}

static void on_signal(int sig)
{
    kv_proc_signal_children(sig);
    cli_cleanup_temp_files();
    if (stderr_is_tty)
        put("\r\033[K"); /* over a progress line */
    put(sig == SIGINT    ? "kvsim: error: interrupted (SIGINT); temporary files removed\n"
        : sig == SIGTERM ? "kvsim: error: terminated (SIGTERM); temporary files removed\n"
                         : "kvsim: error: hung up (SIGHUP); temporary files removed\n");
    signal(sig, SIG_DFL);
    raise(sig); /* delivered as this handler returns: the default action, 128 + sig */
}

static void install_signal_handlers(void)
{
    stderr_is_tty = isatty(STDERR_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&sa.sa_mask, sigs[i]); /* one handler at a time */
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* A signal ignored by whoever started kvsim (nohup, a background job) stays so. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* What reached standard output must have been written: rc, or CLI_RUNTIME after the
 * error line when it was not (and nothing else failed first). */
static int check_stdout(int rc)
{
    if (rc == CLI_OK)
        return cli_flush_stdout();
    fflush(stdout);
    return rc;
}

static int dispatch(int argc, char **argv)
{
    cli_set_command_line(argc, argv);
    kv_mem_set_oom_handler(on_out_of_memory);
    kv_mem_route_json();
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        cli_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("kvsim " KVSIM_VERSION);
        return CLI_OK;
    }
    const cli_cmd *cmd = cli_find_command(argv[1]);
    if (cmd)
        return cli_main(cmd, argc - 1, argv + 1);
    return cli_error(CLI_USAGE, "unknown command '%s' (see 'kvsim --help')", argv[1]);
}

/* A forked child (a sweep configuration): dispatch on its argv, as if exec'd. */
static int child_main(void *ctx, char *const *argv)
{
    (void)ctx;
    install_signal_handlers(); /* again: stderr is the child's own */
    int argc = 0;
    while (argv[argc])
        argc++;
    return check_stdout(dispatch(argc, (char **)argv));
}

int main(int argc, char **argv)
{
    install_signal_handlers();
    cli_set_child_entry(child_main);
    /* Standard output in 64 KiB pieces when it is not a terminal: every --help (and most
     * summaries) then reaches the kernel at the final check, where a failed write still
     * has its errno ("No space left on device"), not in the middle of printing. */
    static char out_buf[1 << 16];
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
    return check_stdout(dispatch(argc, argv));
}
