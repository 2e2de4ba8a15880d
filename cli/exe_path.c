/* exe_path.c - files found beside the running ffnn (exe_path.h). */
#define _POSIX_C_SOURCE 200809L
#include "exe_path.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ffnn_cli_beside_exe(const char *const *relative, size_t count, int mode, char *path,
                        size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    for (size_t i = 0; i < count; i++)
        if ((size_t)snprintf(path, size, "%s/%s", exe, relative[i]) < size &&
            access(path, mode) == 0)
            return 0;
    return -1;
}
