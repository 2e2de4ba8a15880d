/* error.h - recording the last error of this thread (read by ffnn_last_error). */
#ifndef FFNN_ERROR_H
#define FFNN_ERROR_H

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Format a message into this thread's error buffer and return status, so that
 * callers can write `return ffnn_fail(FFNN_ERR_FORMAT, "...", ...);`. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
ffnn_status ffnn_fail(ffnn_status status, const char *fmt, ...);

/* Prefix the current message with "context: " (e.g. the file name) and return status. */
ffnn_status ffnn_fail_context(ffnn_status status, const char *context);

/* The same with the context in two parts, "<path><rest>: " (e.g. a file name and
 * ": header: ..."), the path at any length (the message keeps its size limit). */
ffnn_status ffnn_fail_context_at(ffnn_status status, const char *path, const char *rest);

#ifdef __cplusplus
}
#endif
/* text with C0 controls, DEL, the C1 controls (UTF-8 C2 80..C2 9F) and every
 * byte that is not part of valid UTF-8 (raw 0x80..0x9F: 8-bit C1 controls)
 * written as \xNN into out [size] (truncated between characters; nothing when
 * size is 0): bytes from files and users are shown this way in messages and on
 * the terminal (docs/SECURITY.md). */
void ffnn_escape_controls(const char *text, char *out, size_t size);

/* The length (1-4) of the valid UTF-8 sequence at s [n] (shortest form, no
 * surrogates, at most U+10FFFF), or 0 when s does not start one (or n is 0). */
size_t ffnn_utf8_length(const unsigned char *s, size_t n);

#endif
