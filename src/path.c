/* path: path joining, sorted directory listings and bounded whole-file reads
 * (include/kvsim/path.h). */
#include "kvsim/path.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int kv_path_list(const char *dir, char ***names, size_t *n, kv_diag *diag)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return kv_diag_set(diag, -KV_EIO, "cannot open directory '%s': %s", dir, strerror(errno));
    size_t cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        kv_grow((void **)names, &cap, *n + 1, sizeof **names);
        (*names)[(*n)++] = kv_xstrdup(e->d_name);
    }
    closedir(d);
    if (*n > 1)
        qsort(*names, *n, sizeof **names, cmp_names);
    return 0;
}

void kv_path_list_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int kv_path_slurp(FILE *f, const char *path, size_t max, const char *note, char **out, size_t *n,
                  kv_diag *diag)
{
    size_t cap = 16384, len = 0;
    char *b = kv_xmalloc(cap);
    for (;;) {
        if (len + 1 == cap) { /* room for one more byte than the limit, and the NUL */
            cap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
            b = kv_xrealloc(b, cap);
        }
        size_t got = fread(b + len, 1, cap - len - 1, f);
        len += got;
        if (ferror(f)) {
            free(b);
            return kv_diag_set(diag, -KV_EIO, "cannot read '%s'", path);
        }
        if (len > max) {
            free(b);
            return kv_diag_set(diag, -KV_EPARSE, "%s: larger than %u MiB%s", path,
                               (unsigned)(max >> 20), note);
        }
        if (got == 0 || feof(f))
            break;
    }
    b[len] = '\0';
    *out = b;
    *n = len;
    return 0;
}
