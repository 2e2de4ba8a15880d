/* test_numeric.c - see test_numeric.h. */
#include "test_numeric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t rng_next(rng *r)
{
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return r->state * 2685821657736338717ULL;
}

float rng_uniform(rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(rng_next(r) >> 40) / 16777216.0);
}

size_t rng_between(rng *r, size_t lo, size_t hi)
{
    return lo + (size_t)(rng_next(r) % (hi - lo + 1));
}

void fill_uniform(rng *r, float *v, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; ++i)
        v[i] = rng_uniform(r, lo, hi);
}

float *poisoned(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    if (p)
        memset(p, 0xFF, n * sizeof(float));
    return p;
}

int close_f32(const char *what, const float *got, const float *want, size_t n, double atol,
              double rtol)
{
    size_t bad = 0, first = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double diff = fabs((double)got[i] - (double)want[i]);
        if (!(diff <= atol + rtol * fabs((double)want[i]))) {
            if (bad == 0)
                first = i;
            ++bad;
        }
        if (diff > worst || diff != diff)
            worst = diff;
    }
    if (bad == 0)
        return 1;
    fprintf(stderr,
            "    %s: %zu of %zu values differ; first at [%zu]: got %.9g want %.9g "
            "(tolerance %.3g); largest |diff| %.3g\n",
            what, bad, n, first, (double)got[first], (double)want[first],
            atol + rtol * fabs((double)want[first]), worst);
    return 0;
}
