/* outdir: output directories committed as one unit (include/kvsim/outdir.h).
 *
 * States: open (tmp exists, tracked in afile's temp table with every path handed out),
 * done (dir and tmp NULL: committed, aborted or a failed open).
 *
 * Commit.  With DIR missing, rename(tmp, DIR) is the whole commit.  With DIR present,
 * renameat2(tmp, DIR, RENAME_EXCHANGE) swaps the two names atomically, tmp then naming the
 * earlier directory, which is emptied and removed.  A file system without RENAME_EXCHANGE
 * (EINVAL, ENOSYS) gets the two-step fallback: DIR renamed over an empty placeholder
 * ".<DIR>.old-XXXXXX", then tmp to DIR (undone if that fails).  Before either, DIR is
 * checked again, so a name that appeared since open cannot be swallowed.
 *
 * Ownership of DIR.  Only kvsim's names may be in a DIR it replaces (the caller's lists
 * plus temporaries); the check reads one directory level: a subdirectory is never ours.
 * Removing the earlier directory unlinks what it holds (all ours by that check) and rmdirs
 * it; if something appeared there meanwhile it stays, hidden, beside DIR.
 *
 * Complexity: O(entries of DIR) at open and commit.  The current directory check uses
 * realpath(3), so a DIR reached through a link to an ancestor of "." is refused too.
 */
#define _GNU_SOURCE /* syscall(2), for renameat2 without depending on the libc's wrapper */
#include "kvsim/outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kvsim/afile.h"
#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "kvsim/report.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

bool kv_outdir_is_temp_name(const char *name)
{
    return strstr(name, ".tmp-") != NULL;
}

static bool in_list(const char *const *list, const char *name)
{
    for (; list && *list; list++)
        if (strcmp(*list, name) == 0)
            return true;
    return false;
}

/* Whether name is one of the files or figures DIR may hold. */
static bool is_ours(const kv_outdir *o, const char *name)
{
    return in_list(o->files, name) || kv_outdir_is_temp_name(name) ||
           kv_outdir_is_figure_name(name, o->figures);
}

bool kv_outdir_is_figure_name(const char *name, const char *const *figures)
{
    const char *dot = strrchr(name, '.');
    if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
        return false;
    for (const char *const *f = figures; f && *f; f++)
        if (strlen(*f) == (size_t)(dot - name) && strncmp(*f, name, (size_t)(dot - name)) == 0)
            return true;
    return false;
}

/* 0 when every entry of dir is ours; else -KV_EIO naming the first (in name order) that is
 * not (or why dir cannot be read). */
static int check_contents(const kv_outdir *o, const char *dir, kv_diag *diag)
{
    char **names;
    size_t n;
    int rc = kv_path_list(dir, &names, &n, diag);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *p = kv_path_join(dir, names[i]);
        struct stat st;
        bool ok = lstat(p, &st) == 0 && S_ISREG(st.st_mode) && is_ours(o, names[i]);
        free(p);
        if (!ok)
            rc = kv_diag_set(diag, -KV_EIO,
                             "'%s' holds '%s', which kvsim did not write; kvsim replaces its "
                             "output directory as a whole: give a new or empty one",
                             dir, names[i]);
    }
    kv_path_list_free(names, n);
    return rc;
}

/* Unlink what dir holds, then dir itself; what cannot be removed stays. */
static void remove_tree(const char *dir)
{
    char **names;
    size_t n;
    kv_diag ignored;
    if (kv_path_list(dir, &names, &n, &ignored) == 0) {
        for (size_t i = 0; i < n; i++) {
            char *p = kv_path_join(dir, names[i]);
            unlink(p);
            free(p);
        }
        kv_path_list_free(names, n);
    }
    rmdir(dir);
}

/* DIR as it is now: 0 with *exists, or -KV_EIO (a link, not a directory, not ours). */
static int check_dir(const kv_outdir *o, const char *dir, bool *exists, kv_diag *diag)
{
    struct stat st;
    *exists = false;
    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        return kv_diag_set(diag, -KV_EIO, "cannot create directory '%s': %s", dir, strerror(errno));
    }
    if (S_ISLNK(st.st_mode))
        return kv_diag_set(diag, -KV_EIO,
                           "cannot write into '%s': it is a symbolic link (kvsim replaces its "
                           "output directory as a whole and follows no link)",
                           dir);
    if (!S_ISDIR(st.st_mode))
        return kv_diag_set(diag, -KV_EIO, "'%s' is not a directory", dir);
    *exists = true;
    return check_contents(o, dir, diag);
}

/* One mount point field of /proc/self/mountinfo, its octal escapes (\040 for a space)
 * decoded, into out. */
static void unescape(const char *s, size_t len, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++) {
        if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3') {
            out[k++] = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = '\0';
}

/* Whether dir (existing) is a mount point: rename(2) cannot move it (EBUSY), so it cannot
 * be replaced as a whole (a container's volume, a tmpfs).  /proc/self/mountinfo knows bind
 * mounts too; without it, a device different from the parent's is the sign. */
static bool is_mount_point(const char *dir, const char *parent)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return false;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (f) {
        char line[PATH_MAX + 512], mp[PATH_MAX];
        bool found = false;
        while (!found && fgets(line, sizeof line, f)) {
            /* "ID PARENT MAJ:MIN ROOT MOUNTPOINT …": the fifth field */
            const char *p = line;
            for (int field = 0; field < 4 && p; field++)
                p = (p = strchr(p, ' ')) ? p + 1 : NULL;
            if (!p)
                continue;
            unescape(p, strcspn(p, " \n"), mp, sizeof mp);
            found = strcmp(mp, real) == 0;
        }
        fclose(f);
        return found;
    }
    struct stat a, b;
    return stat(dir, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/* Whether dir (existing) is the current directory or one of its ancestors. */
static bool holds_cwd(const char *dir)
{
    char d[PATH_MAX], cwd[PATH_MAX];
    if (!realpath(dir, d) || !realpath(".", cwd))
        return false;
    size_t n = strlen(d);
    if (n == 1) /* "/" */
        return true;
    return strncmp(cwd, d, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

static void done(kv_outdir *o)
{
    for (size_t i = 0; i < o->n_paths; i++) {
        kv_afile_untrack(o->paths[i]);
        free(o->paths[i]);
    }
    free(o->paths);
    if (o->tmp)
        kv_afile_untrack(o->tmp);
    free(o->tmp);
    free(o->dir);
    memset(o, 0, sizeof *o);
}

int kv_outdir_open(kv_outdir *o, const char *dir, const char *const *files,
                   const char *const *figures, kv_diag *diag)
{
    memset(o, 0, sizeof *o);
    if (!*dir)
        return kv_diag_set(diag, -KV_EINVAL, "the output directory name is empty");
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    char *d = kv_xmalloc(len + 1);
    memcpy(d, dir, len);
    d[len] = '\0';
    const char *base = kv_path_base(d);
    if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(d, "/") == 0 || holds_cwd(d)) {
        int rc = kv_diag_set(diag, -KV_EINVAL,
                             "cannot replace '%s' as a whole (the current directory or one "
                             "holding it): give the output a directory of its own",
                             dir);
        free(d);
        return rc;
    }
    o->files = files;
    o->figures = figures;
    bool exists;
    int rc = check_dir(o, d, &exists, diag);
    size_t parent_len = (size_t)(base - d);
    char *parent = kv_xmalloc(parent_len + 2);
    if (parent_len == 0)
        strcpy(parent, ".");
    else
        snprintf(parent, parent_len + 1, "%s", d);
    if (rc == 0 && !exists)
        rc = kv_mkdir_p(parent, diag);
    if (rc == 0 && exists && is_mount_point(d, parent))
        rc = kv_diag_set(diag, -KV_EINVAL,
                         "cannot replace '%s' as a whole: it is a mount point; give the output "
                         "a directory inside it",
                         dir);
    struct stat st;
    mode_t mode = 0777;
    if (rc == 0 && exists && stat(d, &st) == 0)
        mode = st.st_mode & 07777; /* a rerun keeps the directory's permissions */
    else if (rc == 0) {
        mode_t mask = umask(0);
        umask(mask);
        mode &= ~mask;
    }
    if (rc == 0) {
        size_t n = strlen(parent) + strlen(base) + 16;
        o->tmp = kv_xmalloc(n);
        snprintf(o->tmp, n, "%s/.%s.tmp-XXXXXX", parent, base);
        sigset_t held;
        kv_afile_hold_signals(&held); /* no handler between creating and listing it */
        bool made = mkdtemp(o->tmp) != NULL;
        int e = errno;
        if (made)
            kv_afile_track(o->tmp);
        kv_afile_release_signals(&held);
        if (!made) {
            rc = kv_diag_set(diag, -KV_EIO, "cannot create a directory beside '%s': %s", d,
                             strerror(e));
            free(o->tmp);
            o->tmp = NULL;
        } else {
            chmod(o->tmp, mode);
        }
    }
    free(parent);
    o->dir = d;
    if (rc != 0)
        done(o);
    return rc;
}

const char *kv_outdir_path(kv_outdir *o, const char *name)
{
    kv_grow((void **)&o->paths, &o->cap_paths, o->n_paths + 1, sizeof *o->paths);
    char *p = kv_path_join(o->tmp, name);
    o->paths[o->n_paths++] = p;
    kv_afile_track(p);
    return p;
}

int kv_outdir_diag(const kv_outdir *o, int rc, kv_diag *diag)
{
    const char *tmp = o->tmp;
    char *at = rc != 0 && diag && tmp ? strstr(diag->msg, tmp) : NULL;
    if (at) {
        kv_diag copy;
        snprintf(copy.msg, sizeof copy.msg, "%.*s%s%s", (int)(at - diag->msg), diag->msg, o->dir,
                 at + strlen(tmp));
        *diag = copy;
    }
    return rc;
}

static int exchange(const char *a, const char *b)
{
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* DIR present: put tmp in its place and remove the earlier one.  0 or -KV_EIO. */
static int replace(kv_outdir *o, kv_diag *diag)
{
    if (exchange(o->tmp, o->dir) == 0) {
        remove_tree(o->tmp); /* the earlier DIR, under the temporary name now */
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return kv_diag_set(diag, -KV_EIO, "cannot replace '%s': %s", o->dir, strerror(errno));
    size_t n = strlen(o->tmp) + 8;
    char *old = kv_xmalloc(n);
    snprintf(old, n, "%s", o->tmp);
    memcpy(old + strlen(old) - strlen(".tmp-XXXXXX"), ".old-", 5); /* the same suffix */
    int rc = 0;
    sigset_t held;
    kv_afile_hold_signals(&held);
    bool made = mkdir(old, 0700) == 0;
    if (made)
        kv_afile_track(old);
    kv_afile_release_signals(&held);
    if (!made || rename(o->dir, old) != 0) {
        rc = kv_diag_set(diag, -KV_EIO, "cannot replace '%s': %s", o->dir, strerror(errno));
        rmdir(old);
        kv_afile_untrack(old);
    } else {
        if (rename(o->tmp, o->dir) != 0) {
            rc = kv_diag_set(diag, -KV_EIO, "cannot replace '%s': %s", o->dir, strerror(errno));
            rename(old, o->dir); /* put the earlier one back */
        } else {
            remove_tree(old);
        }
        kv_afile_untrack(old);
    }
    free(old);
    return rc;
}

int kv_outdir_commit(kv_outdir *o, kv_diag *diag)
{
    if (!o->tmp)
        return 0;
    bool exists;
    int rc = check_dir(o, o->dir, &exists, diag);
    if (rc == 0 && !exists && rename(o->tmp, o->dir) != 0) {
        if (errno == EEXIST || errno == ENOTEMPTY) /* it appeared meanwhile */
            rc = check_dir(o, o->dir, &exists, diag);
        else
            rc = kv_diag_set(diag, -KV_EIO, "cannot create '%s': %s", o->dir, strerror(errno));
        if (rc == 0)
            rc = replace(o, diag);
    } else if (rc == 0 && exists) {
        rc = replace(o, diag);
    }
    if (rc != 0)
        remove_tree(o->tmp);
    done(o);
    return rc;
}

void kv_outdir_abort(kv_outdir *o)
{
    if (o->tmp)
        remove_tree(o->tmp);
    done(o);
}
