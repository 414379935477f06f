/* text: small string helpers shared by the spec parsers (length specs, SLO specs). */
#ifndef KVSIM_TEXT_H
#define KVSIM_TEXT_H

/* Strip spaces and tabs from both ends in place; returns the first kept character. */
char *kv_trim(char *s);

#endif
