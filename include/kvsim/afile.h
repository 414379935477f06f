/* afile: one output file written atomically — the only way kvsim writes an output file.
 *
 * The data goes to a temp file "<dir>/.<name>.tmp-XXXXXX" in the target's own directory
 * (so rename(2) cannot cross file systems, and a reader sees either the old complete file
 * or the new complete one), which is renamed over the target only after every byte was
 * written and fflush/fclose succeeded.  On any error, or kv_afile_abort, the temp file is
 * removed, so no partial file ever carries the requested name.  A NULL path or "-" means
 * standard output, written directly.  The file gets the permissions a plain fopen would
 * (0666 less the umask).
 *
 * Only a regular file is ever replaced: a target that exists as anything else — a
 * directory, a symbolic link (never followed), a character or block device such as
 * /dev/null, a FIFO, a socket — is refused at open, and again just before the rename
 * (rename(2) would replace the special file by a regular one, even /dev/null as root).
 *
 * Temporaries and signals.  Every temp file (and every temporary directory kv_outdir
 * makes) is listed, while it exists, in one process-wide table, so that a signal handler
 * or the out-of-memory handler can remove them all with kv_afile_remove_temps, which is
 * async-signal-safe and does not allocate.  The table is kvsim's one piece of global
 * output state: a handler has no context to reach it through.
 */
#ifndef KVSIM_AFILE_H
#define KVSIM_AFILE_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "kvsim/error.h"

typedef struct kv_afile {
    char *path; /* the target; NULL for standard output */
    char *tmp;  /* the temp file while open */
    FILE *f;    /* write here between open and commit/abort */
    int err;    /* errno of the first failed kv_afile_write, or 0: the close's message */
} kv_afile;

/* 0, or -KV_EINVAL with diag "cannot write '': empty file name", or -KV_EIO with diag
 * "cannot create 'PATH': …" / "cannot write 'PATH': Is a directory" / "cannot write 'PATH':
 * it is a symbolic link (kvsim replaces only regular files)" (likewise a character device,
 * a block device, a FIFO, a socket).  *a needs kv_afile_commit or kv_afile_abort either
 * way (both are no-ops on a failed open). */
int kv_afile_open(kv_afile *a, const char *path, kv_diag *diag);
/* fwrite n bytes: false on a short write, whose errno is kept for the message of the
 * close (a failure of an unbuffered write leaves nothing for fclose to report). */
bool kv_afile_write(kv_afile *a, const void *p, size_t n);
/* Keep errno as the first error's if none was kept yet (after another writer on a->f, such
 * as json_dumpf, failed). */
void kv_afile_note_error(kv_afile *a);
/* Flush and close, checking every error, but keep the temp name: for a group of files
 * that are renamed into place only when all were written.  0, or -KV_EIO with diag
 * "cannot write 'PATH': …" (the temp file removed, *a done).  A no-op when closed. */
int kv_afile_close(kv_afile *a, kv_diag *diag);
/* Close (if open) and rename into place: 0, or -KV_EIO with diag "cannot write 'PATH': …"
 * (the temp file removed, the target untouched; also when the target became a special
 * file meanwhile). */
int kv_afile_commit(kv_afile *a, kv_diag *diag);
/* Close and remove the temp file; the target is untouched.  Safe after a commit. */
void kv_afile_abort(kv_afile *a);

/* A JSON value as a whole file (2-space indent, keys in order, 15-digit reals, a final
 * newline), atomically.  0 or -KV_EIO with a diag. */
int kv_afile_write_json(const char *path, const json_t *v, kv_diag *diag);

/* The refusal kv_afile_open makes for an existing path that is not a regular file: 0 when
 * path is missing or a regular file, else -KV_EIO with the diag above (a directory is
 * "Is a directory").  For callers that want the check before any work. */
int kv_afile_check_target(const char *path, kv_diag *diag);

/* ---- temporaries (the process-wide table) ------------------------------------------- */

/* List path (a temp file or directory that exists now) for kv_afile_remove_temps.  The
 * string is not copied: it must stay valid until kv_afile_untrack.  When the table is full
 * (KV_AFILE_MAX_TEMPS at once) the path is simply not listed. */
enum { KV_AFILE_MAX_TEMPS = 64 };
void kv_afile_track(const char *path);
/* Take path (the same pointer) off the table; a no-op if it is not there. */
void kv_afile_untrack(const char *path);
/* Block every signal (the previous mask into *old) / restore the mask: around creating a
 * temporary and listing it, so that a handler never runs between the two. */
void kv_afile_hold_signals(sigset_t *old);
void kv_afile_release_signals(const sigset_t *old);
/* Remove every listed temporary: files first, then directories (empty by then).  Async-
 * signal-safe (unlink, rmdir), no allocation; for signal and out-of-memory handlers. */
void kv_afile_remove_temps(void);

#endif
