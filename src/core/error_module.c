/* error_module.c - ffnn_fail and ffnn_last_error of a run-time module
 * (error_module.h); not part of libffnn (Makefile: linked into the modules only). */
#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"
#include "core/error_module.h"

/* The loading library's functions (ffnn_error_module_set). */
static ffnn_status (*host_fail)(ffnn_status status, const char *fmt, ...);
static const char *(*host_last_error)(void);

void ffnn_error_module_set(ffnn_status (*fail)(ffnn_status status, const char *fmt, ...),
                           const char *(*last_error)(void))
{
    host_fail = fail;
    host_last_error = last_error;
}

ffnn_status ffnn_fail(ffnn_status status, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return host_fail ? host_fail(status, "%s", text) : status;
}

const char *ffnn_last_error(void) { return host_last_error ? host_last_error() : ""; }
