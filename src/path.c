/* path: path joining (include/kvsim/path.h). */
#include "kvsim/path.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kvsim/mem.h"

char *kv_path_join(const char *dir, const char *name)
{
    size_t base = strlen(dir);
    while (base > 1 && dir[base - 1] == '/')
        base--;
    size_t n = base + strlen(name) + 2;
    char *p = kv_xmalloc(n);
    bool sep = *name && !(base == 1 && dir[0] == '/');
    snprintf(p, n, "%.*s%s%s", (int)base, dir, sep ? "/" : "", name);
    return p;
}

const char *kv_path_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}
