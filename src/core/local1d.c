/* local1d.c - the shape rules of the 1-D locally connected layer (local1d.h): its
 * output width and its zero padding. Core: the architecture parser (arch.c) and
 * every backend use them. */
#include "core/local1d.h"

#include "core/error.h"

size_t ffnn_local1d_output_size(size_t N, size_t R, ffnn_local1d_padding padding)
{
    if (N == 0 || R == 0)
        return 0;
    switch (padding) {
    case FFNN_LOCAL1D_VALID: return N >= R ? N - R + 1 : 0;
    case FFNN_LOCAL1D_SAME: return R % 2 == 1 ? N : 0;
    }
    return 0;
}

ffnn_status ffnn_local1d_check_outputs(const char *who, size_t N, size_t R,
                                       ffnn_local1d_padding padding)
{
    if (ffnn_local1d_output_size(N, R, padding) != 0)
        return FFNN_OK;
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "%s: N=%zu R=%zu %s has no outputs", who, N, R,
                     padding == FFNN_LOCAL1D_SAME ? "same" : "valid");
}

size_t ffnn_local1d_pad(size_t R, ffnn_local1d_padding padding)
{
    return padding == FFNN_LOCAL1D_SAME ? (R - 1) / 2 : 0;
}
