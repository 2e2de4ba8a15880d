/* error.c - per-thread error message behind ffnn_last_error(). Messages quote
 * bytes from files and users (keys, fields, names), so control characters are
 * escaped as \xNN before the message is stored: printing ffnn_last_error() to a
 * terminal cannot send it escape sequences. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { FFNN_ERROR_SIZE = 1024 };
static _Thread_local char error_message[FFNN_ERROR_SIZE];

const char *ffnn_last_error(void) { return error_message; }

void ffnn_escape_controls(const char *text, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (size == 0)
        return;
    for (const unsigned char *p = (const unsigned char *)text; *p && o + 1 < size; p++) {
        int c1 = p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F;
        unsigned char c = c1 ? p[1] : p[0];
        if (c1 || c < 0x20 || c == 0x7F) {
            if (o + 5 > size - 1)
                break;
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
            p += c1;
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
}

ffnn_status ffnn_fail(ffnn_status status, const char *fmt, ...)
{
    char raw[FFNN_ERROR_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    ffnn_escape_controls(raw, error_message, sizeof error_message);
    return status;
}

ffnn_status ffnn_fail_context_at(ffnn_status status, const char *path, const char *rest)
{
    char old[FFNN_ERROR_SIZE];
    memcpy(old, error_message, sizeof old);
    char raw[FFNN_ERROR_SIZE];
    if (snprintf(raw, sizeof raw, "%s%s: %s", path, rest, old) < 0)
        raw[0] = '\0';
    ffnn_escape_controls(raw, error_message, sizeof error_message);
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
