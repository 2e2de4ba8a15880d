/* csv_number.c - decimal text to the nearest float32 (ffnn.h: ffnn_csv_parse_float;
 * csv.h: csv_scan_float, the same parse over a number ending anywhere).
 *
 * Clinger's fast path (W. D. Clinger, "How to read floating point numbers
 * accurately", PLDI 1990): when the decimal mantissa m < 2^53 and the power of
 * ten 10^|e| <= 10^22 are both exact doubles, m * 10^e (or m / 10^-e) rounded
 * once is the correctly rounded double d. Rounding d again to float32 gives the
 * correctly rounded float32 unless d sits exactly on a float32 midpoint (then
 * the first rounding may have moved the value there from either side): that
 * case, subnormal and out-of-range results, and more than 19 mantissa digits
 * (leading zeros included) go to strtof, the reference. For a negative exponent
 * (every "%.4f" cell) m times the double nearest 10^e comes first: a multiply
 * instead of a division, within 2 units in the last place of the exact value,
 * which decides the float32 unless it lands within 2 units of a float32 midpoint
 * (then the division above). Debian's parsers (libfast-float-dev,
 * libdouble-conversion) are C++; tests/test_csv.c checks this one against strtof
 * over every class of float32 bit pattern. */
#define _POSIX_C_SOURCE 200809L
#include "data/csv.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* strtof over a NUL-terminated copy of s[0..n) (s is known to be a decimal). */
static int slow_path(const char *s, size_t n, float *out)
{
    char small[128], *b = n < sizeof small ? small : malloc(n + 1), *end;
    if (!b)
        return 0;
    memcpy(b, s, n);
    b[n] = '\0';
    float v = strtof(b, &end);
    int ok = end == b + n && isfinite(v);
    if (b != small)
        free(b);
    if (ok)
        *out = v;
    return ok;
}

static inline int is_digit(char c)
{
    return (unsigned)(c - '0') < 10;
}

/* the doubles nearest 10^-k (not exact: csv_scan_float bounds the error) */
static const double pow10_neg[23] = {1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,
                                     1e-8,  1e-9,  1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15,
                                     1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22};

/* The run of decimal digits at p (before e) appended to *m (*m = *m * 10^k + the
 * value of the k digits, wrapping past 19 digits); returns its end. (Eight digits
 * at a time in a 64-bit word, as fast_float does, measured slower here on the
 * short numbers of a CSV file.) */
static inline const char *digit_run(const char *p, const char *e, uint64_t *m)
{
    for (; p < e && is_digit(*p); p++)
        *m = *m * 10 + (uint64_t)(*p - '0');
    return p;
}

const char *csv_scan_float(const char *s, const char *e, float *out)
{
    const char *p = s;
    int neg = 0;
    uint64_t m = 0; /* wraps past 19 digits: then unused */
    if (p < e && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    const char *mant = p;
    p = digit_run(p, e, &m);
    size_t digits = (size_t)(p - mant), frac = 0;
    if (p < e && *p == '.') {
        const char *f = ++p;
        p = digit_run(p, e, &m);
        frac = (size_t)(p - f);
        digits += frac;
    }
    if (digits == 0)
        return NULL;
    long exp10 = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < e && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p == e || !is_digit(*p))
            return NULL;
        for (; p < e && is_digit(*p); p++)
            if (exp10 < 100000)
                exp10 = exp10 * 10 + (*p - '0');
        if (eneg)
            exp10 = -exp10;
    }
    if (digits > 19) /* maybe more than 19 significant digits: the reference */
        return slow_path(s, (size_t)(p - s), out) ? p : NULL;
    if (m == 0) {
        *out = neg ? -0.0f : 0.0f;
        return p;
    }
    exp10 -= (long)frac;
    if (m > ((uint64_t)1 << 53) || exp10 < -22 || exp10 > 22)
        return slow_path(s, (size_t)(p - s), out) ? p : NULL;
    double d;
    uint64_t bits;
    if (exp10 < 0) {
        /* m times the double nearest 10^exp10: two roundings put d within 2 units in
         * the last place (of d) of the exact value, so d rounds to the float32 the
         * exact value rounds to unless d lies within 2 such units of a float32
         * midpoint (its 29 dropped bits 0x10000000 +- 2): then Clinger's one
         * rounding, m / 10^-exp10 (a division costs 3-4 multiplies' time) */
        d = (double)m * pow10_neg[-exp10];
        memcpy(&bits, &d, sizeof bits);
        if ((bits & 0x1fffffffu) - (0x10000000u - 8) <= 16)
            d = (double)m / pow10_exact[-exp10];
    } else {
        d = (double)m * pow10_exact[exp10];
    }
    memcpy(&bits, &d, sizeof bits);
    /* below FLT_MIN (subnormal), above FLT_MAX, or on a float32 midpoint (29 dropped
     * bits): the reference */
    if (!(d >= FLT_MIN && d <= FLT_MAX) || (bits & 0x1fffffffu) == 0x10000000u)
        return slow_path(s, (size_t)(p - s), out) ? p : NULL;
    *out = neg ? -(float)d : (float)d;
    return p;
}

int ffnn_csv_parse_float(const char *s, size_t n, float *out)
{
    float v;
    const char *end = csv_scan_float(s, s + n, &v);
    if (!end || end != s + n)
        return 0;
    *out = v;
    return 1;
}
