/* afile: one output file written atomically — the only way kvsim writes an output file.
 *
 * The data goes to a temp file "<dir>/.<name>.tmp-XXXXXX" in the target's own directory
 * (so rename(2) cannot cross file systems, and a reader sees either the old complete file
 * or the new complete one), which is renamed over the target only after every byte was
 * written and fflush/fclose succeeded.  On any error, or kv_afile_abort, the temp file is
 * removed, so no partial file ever carries the requested name.  A NULL path or "-" means
 * standard output, written directly.  The file gets the permissions a plain fopen would
 * (0666 less the umask).
 */
#ifndef KVSIM_AFILE_H
#define KVSIM_AFILE_H

#include <jansson.h>
#include <stdio.h>

#include "kvsim/error.h"

typedef struct kv_afile {
    char *path; /* the target; NULL for standard output */
    char *tmp;  /* the temp file while open */
    FILE *f;    /* write here between open and commit/abort */
} kv_afile;

/* 0, or -KV_EIO with diag "cannot create 'PATH': …" / "cannot write 'PATH': Is a
 * directory".  *a needs kv_afile_commit or kv_afile_abort either way (both are no-ops on a
 * failed open). */
int kv_afile_open(kv_afile *a, const char *path, kv_diag *diag);
/* Flush and close, checking every error, but keep the temp name: for a group of files
 * that are renamed into place only when all were written.  0, or -KV_EIO with diag
 * "cannot write 'PATH': …" (the temp file removed, *a done).  A no-op when closed. */
int kv_afile_close(kv_afile *a, kv_diag *diag);
/* Close (if open) and rename into place: 0, or -KV_EIO with diag "cannot write 'PATH': …"
 * (the temp file removed, the target untouched). */
int kv_afile_commit(kv_afile *a, kv_diag *diag);
/* Close and remove the temp file; the target is untouched.  Safe after a commit. */
void kv_afile_abort(kv_afile *a);

/* A JSON value as a whole file (2-space indent, keys in order, 15-digit reals, a final
 * newline), atomically.  0 or -KV_EIO with a diag. */
int kv_afile_write_json(const char *path, const json_t *v, kv_diag *diag);

#endif
