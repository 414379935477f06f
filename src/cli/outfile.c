/* outfile: one output file written atomically, for commands whose output is a single file
 * (gen's trace, sweep's jobs file and sweep.csv, merge's sweep.csv).
 *
 * The data goes to a temp file "<dir>/.<name>.tmp-XXXXXX" in the target's own directory
 * (so rename cannot cross file systems), which is renamed over the target only after every
 * byte was written and fflush/fclose succeeded; on any error the temp file is removed, so
 * no partial file ever carries the requested name.  A NULL path or "-" means standard
 * output, written directly.  Errors are printed here ("kvsim: error: cannot write …") and
 * returned as CLI_RUNTIME.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "kvsim/mem.h"

int cli_outfile_open(cli_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    o->path = path;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_error(CLI_RUNTIME, "cannot write '%s': Is a directory", path);
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    size_t n = dir_len + strlen(base) + 32;
    o->tmp = kv_xmalloc(n);
    snprintf(o->tmp, n, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, base);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        return cli_error(CLI_RUNTIME, "cannot create '%s': %s", path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the permissions a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return cli_error(CLI_RUNTIME, "cannot create '%s': %s", path, strerror(e));
    }
    return 0;
}

void cli_outfile_abort(cli_outfile *o)
{
    if (o->path && o->f) {
        fclose(o->f);
        unlink(o->tmp);
    }
    free(o->tmp);
    o->f = NULL;
    o->tmp = NULL;
}

int cli_outfile_commit(cli_outfile *o)
{
    if (!o->path) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_error(CLI_RUNTIME, "cannot write to standard output: %s", strerror(errno));
        return 0;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->f = NULL;
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return cli_error(CLI_RUNTIME, "cannot write '%s': %s", o->path, strerror(e));
    }
    free(o->tmp);
    o->tmp = NULL;
    return 0;
}
