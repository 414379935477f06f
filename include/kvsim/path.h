/* path: joining file-system paths, the one helper every module uses for it. */
#ifndef KVSIM_PATH_H
#define KVSIM_PATH_H

/* dir + "/" + name, without dir's trailing slashes ("out/" + "x" → "out/x"); name ""
 * gives dir alone, trimmed ("/" stays "/").  malloc'd; can't fail. */
char *kv_path_join(const char *dir, const char *name);
/* The last component of path (after its last '/'): a pointer into path. */
const char *kv_path_base(const char *path);

#endif
