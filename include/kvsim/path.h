/* path: joining file-system paths, the one helper every module uses for it, and reading a
 * whole file into memory under a size limit. */
#ifndef KVSIM_PATH_H
#define KVSIM_PATH_H

#include <stddef.h>
#include <stdio.h>

#include "kvsim/error.h"

/* dir + "/" + name, without dir's trailing slashes ("out/" + "x" → "out/x"); name ""
 * gives dir alone, trimmed ("/" stays "/").  malloc'd; can't fail. */
char *kv_path_join(const char *dir, const char *name);
/* The last component of path (after its last '/'): a pointer into path. */
const char *kv_path_base(const char *path);

/* The names in directory dir but "." and "..", in byte order (strcmp), so every walk and
 * every message naming "the first" entry is the same on every file system: *names (a
 * malloc'd array of *n malloc'd strings; release with kv_path_list_free), or -KV_EIO
 * "cannot open directory 'dir': why" (*names NULL, *n 0). */
int kv_path_list(const char *dir, char ***names, size_t *n, kv_diag *diag);
void kv_path_list_free(char **names, size_t n);

/* Read f to its end into a malloc'd, NUL-terminated buffer (*out, *n bytes, the NUL not
 * counted); path names the file in messages.  0, or -KV_EIO "cannot read 'path'", or
 * -KV_EPARSE "path: larger than M MiB<note>" when it holds more than max bytes (max a whole
 * number of MiB; note may be ""); *out is untouched on error. */
int kv_path_slurp(FILE *f, const char *path, size_t max, const char *note, char **out, size_t *n,
                  kv_diag *diag);

#endif
