/* text: string helpers shared by the spec parsers (include/kvsim/text.h). */
#include "kvsim/text.h"

#include <string.h>

char *kv_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}
