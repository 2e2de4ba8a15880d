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
/* ffnn_escape_controls and ffnn_utf8_length (include/ffnn.h) escape the messages
 * stored here. */


#endif
