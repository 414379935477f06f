/* afile: atomic output files (include/kvsim/afile.h).
 *
 * States: open (f set, tmp exists), closed (f NULL, tmp complete and still under its temp
 * name: kv_afile_close), done (path and tmp NULL: committed, aborted or a failed open).
 * Standard output has no temp file: it is open until closed, then done. */
#include "kvsim/afile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvsim/mem.h"
#include "kvsim/report.h"

int kv_afile_open(kv_afile *a, const char *path, kv_diag *diag)
{
    memset(a, 0, sizeof *a);
    if (!path || strcmp(path, "-") == 0) {
        a->f = stdout;
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return kv_diag_set(diag, -KV_EIO, "cannot write '%s': Is a directory", path);
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    size_t n = dir_len + strlen(base) + 32;
    char *tmp = kv_xmalloc(n);
    snprintf(tmp, n, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, base);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return kv_diag_set(diag, -KV_EIO, "cannot create '%s': %s", path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the permissions a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = NULL;
    if (fchmod(fd, 0666 & ~mask) != 0 || !(f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return kv_diag_set(diag, -KV_EIO, "cannot create '%s': %s", path, strerror(e));
    }
    a->path = kv_xstrdup(path);
    a->tmp = tmp;
    a->f = f;
    return 0;
}

static void clear(kv_afile *a)
{
    free(a->path);
    free(a->tmp);
    a->path = a->tmp = NULL;
    a->f = NULL;
}

void kv_afile_abort(kv_afile *a)
{
    if (a->path && a->f)
        fclose(a->f);
    if (a->tmp)
        unlink(a->tmp);
    clear(a);
}

int kv_afile_close(kv_afile *a, kv_diag *diag)
{
    if (!a->f)
        return 0; /* never opened, or closed already */
    if (!a->path) {
        a->f = NULL;
        if (fflush(stdout) != 0 || ferror(stdout))
            return kv_diag_set(diag, -KV_EIO, "cannot write to standard output: %s",
                               strerror(errno));
        return 0;
    }
    errno = 0;
    int bad = fflush(a->f) != 0 || ferror(a->f);
    int e = errno;
    if (fclose(a->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    a->f = NULL;
    if (!bad)
        return 0;
    unlink(a->tmp);
    int rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", a->path,
                         e ? strerror(e) : "write error");
    clear(a);
    return rc;
}

int kv_afile_commit(kv_afile *a, kv_diag *diag)
{
    int rc = kv_afile_close(a, diag);
    if (rc != 0 || !a->tmp)
        return rc;
    if (rename(a->tmp, a->path) != 0) {
        int e = errno;
        unlink(a->tmp);
        rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", a->path, strerror(e));
    }
    clear(a);
    return rc;
}

int kv_afile_write_json(const char *path, const json_t *v, kv_diag *diag)
{
    kv_afile a;
    int rc = kv_afile_open(&a, path, diag);
    if (rc != 0)
        return rc;
    if (json_dumpf(v, a.f, KV_JSON_FLAGS) != 0) {
        kv_afile_abort(&a);
        return kv_diag_set(diag, -KV_EIO, "cannot write '%s'", path);
    }
    fputc('\n', a.f);
    return kv_afile_commit(&a, diag);
}
