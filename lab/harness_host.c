/*
 * harness_host.c - the host side of the lab's harness (harness.h): the check against a
 * reference, the median, rates, and the one place where a backend context is
 * created. Plain C, built in every build (the benchmarks use it without CUDA too).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "harness.h"

size_t ffnn_lab_check(const char *what, const float *got, const float *want,
                      const size_t *idx, size_t n, const ffnn_lab_tolerance *tol,
                      ffnn_lab_check_result *res)
{
    ffnn_lab_check_result r;
    memset(&r, 0, sizeof r);
    double scale = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs((double)want[i]) > scale) scale = fabs((double)want[i]);
    const double limit = tol->atol + tol->rtol * scale;
    const int ranged = tol->lo <= tol->hi;
    for (size_t i = 0; i < n && r.faults < FFNN_LAB_MAX_FAULTS; i++) {
        const double g = got[idx != NULL ? idx[i] : i], w = want[i], d = fabs(g - w);
        const int out_of_range = ranged && (g < tol->lo || g > tol->hi);
        const int fault = !isfinite(g) || !isfinite(w) || out_of_range || !(d <= limit);
        if (isfinite(d) && d > r.max_abs) r.max_abs = d;
        if (!isfinite(d)) r.max_abs = INFINITY;
        if (!fault) continue;
        if (r.faults == 0) r.first = i, r.first_got = g, r.first_want = w;
        fprintf(stderr, "    %s[%zu]: got %.9g, want %.9g\n", what, i, g, w);
        r.faults++;
    }
    r.max_rel = scale > 0.0 ? r.max_abs / scale : r.max_abs;
    if (res != NULL) *res = r;
    return r.faults;
}

/* The one comparison of doubles that qsort needs (the lab's and the benchmarks'). */
static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ffnn_lab_median(double *v, size_t n, double *lo, double *hi)
{
    qsort(v, n, sizeof *v, cmp_double);
    if (lo != NULL) *lo = v[0];
    if (hi != NULL) *hi = v[n - 1];
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ffnn_lab_rate(double amount, double seconds)
{
    return seconds > 0.0 ? amount / seconds : NAN;
}

double ffnn_lab_pct(double rate, double ceiling)
{
    return ceiling > 0.0 ? 100.0 * rate / ceiling : NAN;
}

ffnn_status ffnn_lab_backend_create(const ffnn_backend_ops *ops, ffnn_matmul_variant matmul,
                                    int threads, void **ctx)
{
    if (ops == NULL)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "backend create: this build has no CUDA (nvcc was not found)");
    ffnn_backend_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.matmul = matmul;
    o.precision = FFNN_PRECISION_FP32;
    return ops->create(&o, ctx);
}
