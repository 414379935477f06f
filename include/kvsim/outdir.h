/* outdir: an output directory committed as one unit (README "What a reader may rely on").
 *
 * A command that writes several files into DIR (run: summary.json, timeseries.csv, …;
 * plan: plan.csv, plan.json) writes them into a fresh temporary directory beside it,
 * "<parent>/.<DIR>.tmp-XXXXXX", and kv_outdir_commit puts that directory in DIR's place
 * in one step: rename(2) when DIR is missing, else an atomic exchange of the two names
 * (renameat2 RENAME_EXCHANGE; where the file system lacks it, DIR is first renamed
 * aside, so for a moment there is no DIR, never a mixed one), after which the earlier
 * directory is removed.  So a reader of DIR sees the earlier run's files or the new run's,
 * never some of each, and a rerun leaves nothing of the earlier run (figures included).
 *
 * Because DIR is replaced as a whole, kvsim refuses a DIR that holds anything it did not
 * write: only the names the command lists (its files and its figures, NAME.png and
 * NAME.svg) and kvsim's own temporaries (names holding ".tmp-") may be there.  A DIR that
 * is a symbolic link, ".", "..", "/", the current directory or one holding it is refused
 * too.  The temporary directory and the paths handed out in it are in afile's temp table
 * (afile.h), so a signal handler removes them.
 *
 * A DIR that is a mount point (a container's volume, a tmpfs) cannot be renamed, so it is
 * refused too: give a directory inside it.
 */
#ifndef KVSIM_OUTDIR_H
#define KVSIM_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "kvsim/error.h"

typedef struct kv_outdir {
    char *dir;    /* the target as given, trailing slashes trimmed; NULL when done */
    char *tmp;    /* the temporary directory beside it, while open */
    char **paths; /* tmp/NAME handed out by kv_outdir_path (tracked), n_paths of them */
    size_t n_paths, cap_paths;
    const char *const *files, *const *figures; /* what DIR may hold (the caller's) */
} kv_outdir;

/* Check dir and make the temporary directory (dir's parents are created if missing).
 * files and figures are NULL-terminated lists (NULL: none) of the names DIR may hold: file
 * names, and figure names that stand for NAME.png and NAME.svg; they must outlive *o.
 * 0, or -KV_EINVAL (diag "the output directory name is empty", "cannot replace '.' as a
 * whole: …", "… it is a mount point …") or -KV_EIO (not a directory, a symbolic link, holding a name kvsim did not
 * write, or the temporary directory cannot be made), with *o done (abort is a no-op). */
int kv_outdir_open(kv_outdir *o, const char *dir, const char *const *files,
                   const char *const *figures, kv_diag *diag);
/* tmp/name, where the caller writes that file (with kv_afile).  Owned by *o: valid until
 * commit or abort. */
const char *kv_outdir_path(kv_outdir *o, const char *name);
/* Put the temporary directory in DIR's place and remove the earlier DIR.  0, or -KV_EIO
 * with a diag (the temporary directory removed, DIR as it was).  *o is done either way. */
int kv_outdir_commit(kv_outdir *o, kv_diag *diag);
/* Remove the temporary directory and what it holds; DIR untouched.  Safe when done. */
void kv_outdir_abort(kv_outdir *o);

/* A diag that names a path in the temporary directory names it in DIR instead (the file as
 * the user knows it); returns rc.  For messages of writes into kv_outdir_path files. */
int kv_outdir_diag(const kv_outdir *o, int rc, kv_diag *diag);

/* Whether name is one of kvsim's temporaries (".x.tmp-…", "x.png.tmp-…"). */
bool kv_outdir_is_temp_name(const char *name);
/* Whether name is FIG.png or FIG.svg for a FIG of the NULL-terminated figures (may be
 * NULL: none). */
bool kv_outdir_is_figure_name(const char *name, const char *const *figures);

#endif
