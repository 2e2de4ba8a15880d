/* version.c - the library's version at run time (ffnn_version), from the header's
 * FFNN_VERSION_MAJOR/MINOR/PATCH as this build of libffnn saw them. */
#include "ffnn.h"

const char *ffnn_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = FFNN_VERSION_MAJOR;
    if (minor)
        *minor = FFNN_VERSION_MINOR;
    if (patch)
        *patch = FFNN_VERSION_PATCH;
    return FFNN_VERSION;
}
