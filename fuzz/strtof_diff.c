/* strtof_diff.c - libFuzzer target: the CSV reader's number parser (data/csv_number.c)
 * against the C library's strtof, the reference, on arbitrary text of up to 80 bytes.
 * ffnn_csv_parse_float must accept exactly the texts of its grammar whose strtof
 * value is finite, with strtof's float32 bit for bit, and csv_scan_float over the text
 * followed by a delimiter must end where the number ends with the same value (the
 * reader's one-pass path). A finding is a mismatch (abort) or a sanitizer report.
 *   make fuzz [FUZZ_SECONDS=180]     (clang with libFuzzer: Debian's clang-14)
 * Seeds: fuzz/corpus/strtof/ (fuzz/make_corpus.py). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/csv.h"
#include "ffnn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The grammar of ffnn_csv_parse_float: [+-]digits[.digits][(e|E)[+-]digits], at least
 * one mantissa digit. */
static int decimal(const char *s, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t e = i;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == e)
            return 0;
    }
    return i == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[96];
    if (size > 80)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (strlen(text) != size)
        return 0; /* a NUL inside: strtof would stop there */
    float got = 0.0f;
    int ok = ffnn_csv_parse_float(text, size, &got);
    int want_ok = decimal(text, size);
    float want = 0.0f;
    if (want_ok) {
        char *end;
        want = strtof(text, &end);
        want_ok = end == text + size && isfinite(want);
    }
    uint32_t a, b;
    memcpy(&a, &want, 4);
    memcpy(&b, &got, 4);
    if (ok != want_ok || (ok && a != b)) {
        fprintf(stderr, "'%s': strtof %s%.9g (0x%08x), ffnn %s%.9g (0x%08x)\n", text,
                want_ok ? "" : "refuses ", (double)want, a, ok ? "" : "refuses ", (double)got, b);
        abort();
    }
    if (ok) { /* in a record: the scan stops at the delimiter with the same value */
        text[size] = ',';
        text[size + 1] = '7';
        float v = 0.0f;
        const char *end = csv_scan_float(text, text + size + 2, &v);
        memcpy(&b, &v, 4);
        if (end != text + size || a != b) {
            fprintf(stderr, "'%.*s' followed by ',7': scan ends at %td, 0x%08x\n", (int)size, text,
                    end ? end - text : -1, b);
            abort();
        }
    }
    return 0;
}
