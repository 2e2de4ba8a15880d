/* csv_number.c - decimal text to the nearest float32 (ffnn.h: ffnn_csv_parse_float).
 *
 * Clinger's fast path (W. D. Clinger, "How to read floating point numbers
 * accurately", PLDI 1990): when the decimal mantissa m < 2^53 and the power of
 * ten 10^|e| <= 10^22 are both exact doubles, m * 10^e (or m / 10^-e) rounded
 * once is the correctly rounded double d. Rounding d again to float32 gives the
 * correctly rounded float32 unless d sits exactly on a float32 midpoint (then
 * the first rounding may have moved the value there from either side): that
 * case, subnormal and out-of-range results, and more than 19 significant digits
 * go to strtof, the reference. No Debian package offers this in C (fast_float
 * and ryu's parser are C++ or Rust there); tests/test_data.c checks it against
 * strtof over every class of float32 bit pattern. */
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

int ffnn_csv_parse_float(const char *s, size_t n, float *out)
{
    const char *p = s, *e = s + n;
    int neg = 0, digits = 0, dropped = 0; /* significant digits kept, digits after 19 */
    uint64_t m = 0;
    long exp10 = 0;
    if (p < e && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    const char *mant = p;
    for (; p < e && (unsigned)(*p - '0') < 10; p++) {
        if (digits < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            digits += m != 0;
        } else {
            dropped |= *p != '0';
            exp10++;
        }
    }
    size_t int_digits = (size_t)(p - mant);
    size_t frac_digits = 0;
    if (p < e && *p == '.') {
        const char *f = ++p;
        for (; p < e && (unsigned)(*p - '0') < 10; p++) {
            if (digits < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                digits += m != 0;
                exp10--;
            } else {
                dropped |= *p != '0';
            }
        }
        frac_digits = (size_t)(p - f);
    }
    if (int_digits + frac_digits == 0)
        return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        long x = 0;
        if (p < e && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p == e)
            return 0;
        for (; p < e && (unsigned)(*p - '0') < 10; p++)
            if (x < 100000)
                x = x * 10 + (*p - '0');
        exp10 += eneg ? -x : x;
    }
    if (p != e)
        return 0;
    if (m == 0 && !dropped) {
        *out = neg ? -0.0f : 0.0f;
        return 1;
    }
    if (dropped || m > ((uint64_t)1 << 53) || exp10 < -22 || exp10 > 22)
        return slow_path(s, n, out);
    double d = exp10 >= 0 ? (double)m * pow10_exact[exp10] : (double)m / pow10_exact[-exp10];
    if (!(d >= FLT_MIN && d <= FLT_MAX))
        return slow_path(s, n, out);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    if ((bits & 0x1fffffffu) == 0x10000000u) /* on a float32 midpoint: 29 dropped bits */
        return slow_path(s, n, out);
    *out = neg ? -(float)d : (float)d;
    return 1;
}
