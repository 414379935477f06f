/* text: trimming, shell words, digit grouping and the comma-list splitter
 * (include/kvsim/text.h).
 *
 * kv_kvlist keeps two copies of the spec with the same offsets: `text` is cut only at
 * the commas, so an item's text stays whole for messages; `pairs` is also cut at each
 * item's first '=' and gives out the key and the value.  One pass, O(length); nothing is
 * allocated per item.
 */
#include "kvsim/text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"

char *kv_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

void kv_shell_word(kv_buf *b, const char *w)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_./:,+-=@%";
    if (*w && strspn(w, safe) == strlen(w)) {
        kv_buf_puts(b, w);
        return;
    }
    kv_buf_putc(b, '\'');
    for (; *w; w++) {
        if (*w == '\'')
            kv_buf_puts(b, "'\\''");
        else
            kv_buf_putc(b, *w);
    }
    kv_buf_putc(b, '\'');
}

const char *kv_grouped(char *buf, size_t n, double v)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%.0f", v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        buf[o++] = raw[i];
        size_t left = len - i - 1;
        if (left > 0 && left % 3 == 0 && raw[i] != '-')
            buf[o++] = ',';
    }
    buf[o] = '\0';
    return buf;
}

void kv_kvlist_init(kv_kvlist *l, const char *spec, unsigned flags, const char *hint)
{
    l->text = kv_xstrdup(spec);
    l->pairs = kv_xstrdup(spec);
    l->at = 0;
    l->spec = spec;
    l->hint = hint;
    l->flags = flags;
}

void kv_kvlist_release(kv_kvlist *l)
{
    free(l->text);
    free(l->pairs);
    l->text = l->pairs = NULL;
    l->at = SIZE_MAX;
}

/* Cut the item at l->at out of both copies; its offset, and l->at moved past it. */
static size_t cut(kv_kvlist *l)
{
    size_t start = l->at, len = strcspn(l->text + start, ",");
    bool last = l->text[start + len] == '\0';
    l->text[start + len] = l->pairs[start + len] = '\0';
    l->at = last ? SIZE_MAX : start + len + 1;
    return start;
}

int kv_kvlist_next(kv_kvlist *l, kv_kvitem *item, kv_diag *diag)
{
    bool trim = l->flags & KV_KVLIST_TRIM;
    for (;;) {
        if (l->at == SIZE_MAX)
            return 0;
        size_t off = cut(l);
        char *text = l->text + off, *pair = l->pairs + off;
        if (trim) {
            text = kv_trim(text);
            pair = kv_trim(pair);
        }
        *item = (kv_kvitem){text, NULL, NULL};
        if (*text == '\0' && (l->flags & KV_KVLIST_SKIP_EMPTY))
            continue;
        if (*text == '\0' && (l->flags & KV_KVLIST_TRAILING) && l->at == SIZE_MAX)
            return 0;
        if (*text == '\0') {
            l->at = SIZE_MAX;
            return kv_diag_set(diag, -KV_EINVAL, "empty entry in '%s'", l->spec);
        }
        if (!(l->flags & KV_KVLIST_PAIRS))
            return 1;
        char *eq = strchr(pair, '=');
        if (!eq) {
            l->at = SIZE_MAX;
            if (l->hint)
                return kv_diag_set(diag, -KV_EINVAL, "'%s' is not KEY=VALUE (%s)", text, l->hint);
            return kv_diag_set(diag, -KV_EINVAL, "'%s' is not KEY=VALUE", text);
        }
        *eq = '\0';
        item->key = trim ? kv_trim(pair) : pair;
        item->value = trim ? kv_trim(eq + 1) : eq + 1;
        return 1;
    }
}
