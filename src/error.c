/* error: the X-macro error table and kv_diag helper (see include/kvsim/error.h). */
#include "kvsim/error.h"

#include <stdarg.h>
#include <stdio.h>

const char *kv_strerror(int err)
{
    if (err < 0)
        err = -err;
    switch (err) {
    case KV_OK:
        return "success";
#define X(code, text)                                                                              \
    case KV_##code:                                                                                \
        return text;
        KV_ERRNO_MAP(X)
#undef X
    default:
        return "unknown error";
    }
}

int kv_diag_set(kv_diag *diag, int err, const char *fmt, ...)
{
    if (diag) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
        va_end(ap);
    }
    return err;
}
