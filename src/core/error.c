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

size_t ffnn_utf8_length(const unsigned char *s, size_t n)
{
    unsigned c = n ? s[0] : 0, cp, min;
    size_t len;

    if (n == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0)
        len = 3, cp = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Escaped: C0 controls and DEL (one byte), the C1 controls U+0080..U+009F
 * (C2 80..C2 9F, shown by their code), and every byte that does not start a
 * valid UTF-8 sequence - raw 0x80..0x9F are the 8-bit C1 controls (0x9B is
 * CSI) of terminals that are not in UTF-8 mode. */
void ffnn_escape_controls(const char *text, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)text;
    size_t o = 0, left = strlen(text);
    if (size == 0)
        return;
    while (left > 0) {
        size_t len = ffnn_utf8_length(p, left);
        int c1 = len == 2 && p[0] == 0xC2 && p[1] <= 0x9F;
        unsigned char c = c1 ? p[1] : p[0];
        if (len == 0 || c1 || c < 0x20 || c == 0x7F) {
            if (o + 4 > size - 1)
                break;
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
            len = len ? len : 1;
        } else {
            if (o + len > size - 1)
                break;
            memcpy(out + o, p, len);
            o += len;
        }
        p += len;
        left -= len;
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
