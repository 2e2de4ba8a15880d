/* escape.c - control characters as \xNN (escape.h). */
#include "escape.h"

void ffnn_cli_escape(const char *text, char *out, size_t size)
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
