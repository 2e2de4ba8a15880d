/* escape.h - bytes from files (CSV fields, model metadata) made safe to print
 * to a terminal (escape.c): the library escapes its own messages (core/error.c);
 * this is the CLI's copy for the text it builds and prints itself. */
#ifndef FFNN_CLI_ESCAPE_H
#define FFNN_CLI_ESCAPE_H

#include <stddef.h>

/* text into out [size] (truncated, NUL-terminated) with C0 controls, DEL and the
 * C1 controls (UTF-8 C2 80..C2 9F) written as \xNN. */
void ffnn_cli_escape(const char *text, char *out, size_t size);

#endif
