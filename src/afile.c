/* afile: atomic output files (include/kvsim/afile.h).
 *
 * States: open (f set, tmp exists), closed (f NULL, tmp complete and still under its temp
 * name: kv_afile_close), done (path and tmp NULL: committed, aborted or a failed open).
 * Standard output has no temp file: it is open until closed, then done.
 *
 * Special targets.  rename(2) replaces whatever the new name is — a symbolic link itself
 * (not its target), a FIFO, a device node — by the temp file.  So the target is lstat'ed
 * at open and once more right before the rename, and anything but a missing name or a
 * regular file is refused.  Between that last check and the rename another process could
 * still swap the name; kvsim does not defend against a concurrent attacker, only against
 * the mistakes a user makes (`--out /dev/null`, a FIFO, a link into somebody else's file).
 *
 * The temp table.  A fixed array of atomic pointers, filled at the first free slot and
 * cleared before its string is freed, so a handler interrupting either update sees each
 * slot either empty or pointing at a live string.  Signals are held while a temporary is
 * created and listed, so none can exist unlisted when a handler runs.  Removal makes two passes,
 * unlink then rmdir, so a directory's files are gone before the directory whatever their slots.
 */
#include "kvsim/afile.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvsim/mem.h"
#include "kvsim/report.h"

/* ---- the temp table ----------------------------------------------------------------- */

static const char *_Atomic temps[KV_AFILE_MAX_TEMPS];

void kv_afile_track(const char *path)
{
    for (int i = 0; i < KV_AFILE_MAX_TEMPS; i++) {
        const char *empty = NULL;
        if (atomic_compare_exchange_strong(&temps[i], &empty, path))
            return;
    }
}

void kv_afile_untrack(const char *path)
{
    for (int i = 0; i < KV_AFILE_MAX_TEMPS; i++) {
        const char *p = path;
        if (atomic_compare_exchange_strong(&temps[i], &p, NULL))
            return;
    }
}

void kv_afile_hold_signals(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, old);
}

void kv_afile_release_signals(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

void kv_afile_remove_temps(void)
{
    int saved = errno; /* a handler must leave errno as it found it */
    for (int pass = 0; pass < 2; pass++)
        for (int i = KV_AFILE_MAX_TEMPS - 1; i >= 0; i--) {
            const char *p = atomic_load(&temps[i]);
            if (p && pass == 0)
                unlink(p); /* fails on a directory: the second pass takes it */
            else if (p)
                rmdir(p); /* fails on a file already unlinked */
        }
    errno = saved;
}

/* ---- the target --------------------------------------------------------------------- */

static const char *kind_of(mode_t m)
{
    return S_ISLNK(m)    ? "a symbolic link"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

int kv_afile_check_target(const char *path, kv_diag *diag)
{
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
        return 0; /* missing (or unreachable: creating the temp file will say why) */
    if (S_ISDIR(st.st_mode))
        return kv_diag_set(diag, -KV_EIO, "cannot write '%s': Is a directory", path);
    bool stream = S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode);
    return kv_diag_set(diag, -KV_EIO,
                       "cannot write '%s': it is %s (kvsim replaces only regular files%s)", path,
                       kind_of(st.st_mode), stream ? "; '-' writes to standard output" : "");
}

int kv_afile_open(kv_afile *a, const char *path, kv_diag *diag)
{
    memset(a, 0, sizeof *a);
    if (!path || strcmp(path, "-") == 0) {
        a->f = stdout;
        return 0;
    }
    if (!*path)
        return kv_diag_set(diag, -KV_EINVAL, "cannot write '': empty file name");
    int rc = kv_afile_check_target(path, diag);
    if (rc != 0)
        return rc;
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    if (!*base) /* "dir/": a directory's name, whether or not it exists */
        return kv_diag_set(diag, -KV_EIO, "cannot write '%s': Is a directory", path);
    size_t n = dir_len + strlen(base) + 32;
    char *tmp = kv_xmalloc(n);
    snprintf(tmp, n, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, base);
    sigset_t held;
    kv_afile_hold_signals(&held); /* no handler between creating and listing it */
    int fd = mkstemp(tmp);
    int e = errno;
    if (fd >= 0)
        kv_afile_track(tmp);
    kv_afile_release_signals(&held);
    if (fd < 0) {
        free(tmp);
        return kv_diag_set(diag, -KV_EIO, "cannot create '%s': %s", path, strerror(e));
    }
    /* mkstemp makes 0600; give the file the permissions a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = NULL;
    if (fchmod(fd, 0666 & ~mask) != 0 || !(f = fdopen(fd, "w"))) {
        e = errno;
        close(fd);
        unlink(tmp);
        kv_afile_untrack(tmp);
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
    if (a->tmp)
        kv_afile_untrack(a->tmp);
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

bool kv_afile_write(kv_afile *a, const void *p, size_t n)
{
    if (fwrite(p, 1, n, a->f) == n)
        return true;
    kv_afile_note_error(a);
    return false;
}

void kv_afile_note_error(kv_afile *a)
{
    if (!a->err)
        a->err = errno;
}

int kv_afile_close(kv_afile *a, kv_diag *diag)
{
    if (!a->f)
        return 0; /* never opened, or closed already */
    if (!a->path) {
        a->f = NULL;
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
            return kv_diag_set(diag, -KV_EIO, "cannot write to standard output: %s",
                               errno ? strerror(errno) : "write error");
        return 0;
    }
    errno = 0;
    int bad = fflush(a->f) != 0 || ferror(a->f);
    int e = a->err ? a->err : errno;
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
    rc = kv_afile_check_target(a->path, diag); /* it may have changed since open */
    if (rc == 0 && rename(a->tmp, a->path) != 0)
        rc = kv_diag_set(diag, -KV_EIO, "cannot write '%s': %s", a->path, strerror(errno));
    if (rc != 0)
        unlink(a->tmp);
    clear(a);
    return rc;
}

int kv_afile_write_json(const char *path, const json_t *v, kv_diag *diag)
{
    kv_afile a;
    int rc = kv_afile_open(&a, path, diag);
    if (rc != 0)
        return rc;
    if (json_dumpf(v, a.f, KV_JSON_FLAGS) != 0 || fputc('\n', a.f) == EOF)
        kv_afile_note_error(&a); /* the close reports it */
    return kv_afile_commit(&a, diag);
}
