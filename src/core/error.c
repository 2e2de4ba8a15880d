/* error.c - per-thread error message behind ffnn_last_error(). */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { FFNN_ERROR_SIZE = 1024 };
static _Thread_local char error_message[FFNN_ERROR_SIZE];

const char *ffnn_last_error(void) { return error_message; }

ffnn_status ffnn_fail(ffnn_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    return status;
}

ffnn_status ffnn_fail_context_at(ffnn_status status, const char *path, const char *rest)
{
    char old[FFNN_ERROR_SIZE];
    memcpy(old, error_message, sizeof old);
    if (snprintf(error_message, sizeof error_message, "%s%s: %s", path, rest, old) < 0)
        error_message[0] = '\0';
    return status;
}

ffnn_status ffnn_fail_context(ffnn_status status, const char *context)
{
    return ffnn_fail_context_at(status, context, "");
}

const char *ffnn_status_name(ffnn_status status)
{
    switch (status) {
    case FFNN_OK: return "ok";
    case FFNN_ERR_INVALID_ARGUMENT: return "invalid argument";
    case FFNN_ERR_PARSE: return "parse error";
    case FFNN_ERR_IO: return "I/O error";
    case FFNN_ERR_FORMAT: return "format error";
    case FFNN_ERR_NO_MEMORY: return "out of memory";
    case FFNN_ERR_CUDA: return "CUDA error";
    case FFNN_ERR_UNSUPPORTED: return "unsupported";
    case FFNN_ERR_NUMERIC: return "numeric error";
    }
    return "unknown status";
}
