/* plot_table: the small CSV reader behind the sweep and plan figures (plot_internal.h).
 *
 * RFC 4180: fields separated by commas, a field in double quotes may hold commas, "" for
 * a quote and line breaks; lines end in LF or CRLF; spaces and tabs around an unquoted
 * field are trimmed; a UTF-8 byte-order mark is skipped; blank lines are skipped.  The
 * first record is the header, columns are found by name.  Every record must have the
 * header's field count (an error naming the line, as the record's first line).
 *
 * Layout: the whole file is read (at most MAX_TABLE bytes: a sweep or plan has a row per
 * configuration or load, not per request) and split into one malloc'd string per cell,
 * row-major, header first.  Values stay text; kv__parse_num and kv__same_value compare
 * them as numbers when both are numbers ("0.10" = "0.1"), so knob columns can hold text
 * (free_order) or numbers alike.  kv__n_distinct is O(rows²), fine at sweep sizes.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/path.h"
#include "plot_internal.h"

enum { MAX_TABLE = 64 << 20 };

/* A whole field as a finite number (C locale strtod, surrounding blanks allowed). */
bool kv__parse_num(const char *s, double *out)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return false;
    double x = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (*end || !isfinite(x))
        return false;
    *out = x;
    return true;
}

void kv__table_release(kv__table *t)
{
    for (size_t i = 0; i < (t->n_rows + 1) * t->n_cols && t->cell; i++)
        free(t->cell[i]);
    free(t->cell);
    free(t->path);
    memset(t, 0, sizeof *t);
}

const char *kv__cell(const kv__table *t, size_t row, int col)
{
    return t->cell[(row + 1) * t->n_cols + (size_t)col];
}

int kv__col_of(const kv__table *t, const char *name)
{
    for (size_t c = 0; c < t->n_cols; c++)
        if (strcmp(t->cell[c], name) == 0)
            return (int)c;
    return -1;
}

/* A cursor over the text and the field being read. */
typedef struct {
    const char *text;
    size_t len, i, line;
    char *field;
    size_t flen, fcap;
} scanner;

static void field_push(scanner *s, char c)
{
    void *p = s->field;
    kv_grow(&p, &s->fcap, s->flen + 2, 1);
    s->field = p;
    s->field[s->flen++] = c;
}

/* A quoted field, the cursor on its opening quote: "" is a quote, newlines are kept;
 * blanks may follow the closing quote, then ',' or the end of the record. */
static int scan_quoted(scanner *s, const char *path, size_t rec_line, kv_diag *diag)
{
    const char *text = s->text;
    s->i++;
    for (;;) {
        if (s->i >= s->len)
            return kv_diag_set(diag, -KV_EPARSE, "%s:%zu: unterminated quoted field", path,
                               rec_line);
        if (text[s->i] == '"' && s->i + 1 < s->len && text[s->i + 1] == '"')
            s->i++;
        else if (text[s->i] == '"') {
            s->i++;
            break;
        }
        if (text[s->i] == '\n')
            s->line++;
        field_push(s, text[s->i++]);
    }
    while (s->i < s->len && (text[s->i] == ' ' || text[s->i] == '\t' || text[s->i] == '\r'))
        s->i++;
    if (s->i < s->len && text[s->i] != ',' && text[s->i] != '\n')
        return kv_diag_set(diag, -KV_EPARSE, "%s:%zu: text after a closing quote", path,
                           rec_line);
    return 0;
}

/* An unquoted field up to ',' or the end of the line, trailing blanks dropped. */
static void scan_plain(scanner *s)
{
    while (s->i < s->len && s->text[s->i] != ',' && s->text[s->i] != '\n')
        field_push(s, s->text[s->i++]);
    while (s->flen > 0 && strchr(" \t\r", s->field[s->flen - 1]))
        s->flen--;
}

/* One record into rec[0..*nrec) (grown as needed); *blank when it was an empty line. */
static int scan_record(scanner *s, const char *path, char ***rec, size_t *nrec, size_t *rcap,
                       bool *blank, kv_diag *diag)
{
    size_t rec_line = s->line;
    *nrec = 0;
    *blank = true;
    for (;;) { /* one field */
        s->flen = 0;
        while (s->i < s->len && (s->text[s->i] == ' ' || s->text[s->i] == '\t'))
            s->i++;
        if (s->i < s->len && s->text[s->i] == '"') {
            *blank = false;
            int rc = scan_quoted(s, path, rec_line, diag);
            if (rc != 0)
                return rc;
        } else {
            scan_plain(s);
            *blank &= s->flen == 0;
        }
        void *p = *rec;
        kv_grow(&p, rcap, *nrec + 1, sizeof **rec);
        *rec = p;
        char *f = kv_xmalloc(s->flen + 1);
        memcpy(f, s->field ? s->field : "", s->flen);
        f[s->flen] = '\0';
        (*rec)[(*nrec)++] = f;
        if (s->i < s->len && s->text[s->i] == ',') {
            s->i++;
            *blank = false;
            continue;
        }
        if (s->i < s->len) /* '\n' */
            s->i++, s->line++;
        return 0;
    }
}

/* Parse text (len bytes, NUL-terminated) into t.  0 or -KV_EPARSE. */
static int table_parse(kv__table *t, const char *text, size_t len, kv_diag *diag)
{
    scanner s = {text, len, 0, 1, NULL, 0, 0};
    char **rec = NULL;
    size_t nrec = 0, rcap = 0;
    int rc = 0;
    while (s.i < len && rc == 0) {
        size_t rec_line = s.line;
        bool blank;
        rc = scan_record(&s, t->path, &rec, &nrec, &rcap, &blank, diag);
        if (rc == 0 && blank && nrec == 1) {
            free(rec[0]);
            continue;
        }
        if (rc == 0 && t->cell && nrec != t->n_cols)
            rc = kv_diag_set(diag, -KV_EPARSE, "%s:%zu: %zu field%s, the header has %zu", t->path,
                             rec_line, nrec, nrec == 1 ? "" : "s", t->n_cols);
        if (rc != 0) {
            for (size_t k = 0; k < nrec; k++)
                free(rec[k]);
            break;
        }
        if (!t->cell)
            t->n_cols = nrec;
        else
            t->n_rows++;
        size_t need = (t->n_rows + 1) * t->n_cols;
        void *p = t->cell;
        kv_grow(&p, &t->cap, need, sizeof *t->cell);
        t->cell = p;
        memcpy(t->cell + need - nrec, rec, nrec * sizeof *rec);
    }
    free(s.field);
    free(rec);
    if (rc == 0 && !t->cell)
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: empty file (no header)", t->path);
    return rc;
}

int kv__table_load(kv__table *t, const char *dir, const char *name, kv_diag *diag)
{
    memset(t, 0, sizeof *t);
    t->path = kv_path_join(dir, name);
    FILE *f = fopen(t->path, "rb");
    if (!f)
        return kv_diag_set(diag, -KV_EIO, "cannot open '%s'", t->path);
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    char buf[65536];
    int rc = 0;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + n > MAX_TABLE)
            rc = kv_diag_set(diag, -KV_EPARSE, "%s: larger than %d MiB", t->path, MAX_TABLE >> 20);
        void *p = text;
        kv_grow(&p, &cap, len + n + 1, 1);
        text = p;
        memcpy(text + len, buf, n);
        len += n;
    }
    if (rc == 0 && ferror(f))
        rc = kv_diag_set(diag, -KV_EIO, "cannot read '%s'", t->path);
    fclose(f);
    if (rc == 0) {
        if (!text)
            text = kv_xcalloc(1, 1);
        text[len] = '\0';
        size_t skip = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* BOM */
        rc = table_parse(t, text + skip, len - skip, diag);
    }
    free(text);
    return rc;
}

int kv__require_cols(const kv__table *t, const char *const *names, kv_diag *diag)
{
    for (size_t i = 0; names[i]; i++)
        if (kv__col_of(t, names[i]) < 0)
            return kv_diag_set(diag, -KV_EPARSE, "%s: no column '%s'", t->path, names[i]);
    return 0;
}

/* Numeric equality when both parse as numbers ("0.10" = "0.1"), else text equality. */
bool kv__same_value(const char *a, const char *b)
{
    double x, y;
    if (kv__parse_num(a, &x) && kv__parse_num(b, &y))
        return x == y;
    return strcmp(a, b) == 0;
}

/* Distinct values of column col over the rows. */
size_t kv__n_distinct(const kv__table *t, int col)
{
    size_t n = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        size_t q = 0;
        while (q < r && !kv__same_value(kv__cell(t, q, col), kv__cell(t, r, col)))
            q++;
        n += q == r;
    }
    return n;
}
