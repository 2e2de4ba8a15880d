/* version.c - what this build of libffnn is: its version (ffnn_version, from the
 * header's FFNN_VERSION_MAJOR/MINOR/PATCH as the build saw them) and the sizes of the
 * public structs that bindings mirror (ffnn_struct_size). */
#include <string.h>

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

size_t ffnn_struct_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {
        {"ffnn_train_config", sizeof(ffnn_train_config)},
        {"ffnn_epoch_stats", sizeof(ffnn_epoch_stats)},
        {"ffnn_model_file_info", sizeof(ffnn_model_file_info)},
        {"ffnn_checkpoint_info", sizeof(ffnn_checkpoint_info)},
        {"ffnn_train_option", sizeof(ffnn_train_option)},
        {"ffnn_sweep_state", sizeof(ffnn_sweep_state)},
    };
    for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            return sizes[i].size;
    return 0;
}
