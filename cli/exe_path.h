/* exe_path.h - files found beside the running ffnn (exe_path.c): the benchmark
 * program (cmd_bench.c), the plot script (cmd_plot.c). */
#ifndef FFNN_CLI_EXE_PATH_H
#define FFNN_CLI_EXE_PATH_H

#include <stddef.h>

/* The first of relative [count] (paths relative to the folder of the running
 * executable, /proc/self/exe) that access(2) allows with mode (X_OK, R_OK), into
 * path [size]. 0, or -1 when none is (or the executable's path is unknown). Never
 * the current directory. */
int ffnn_cli_beside_exe(const char *const *relative, size_t count, int mode, char *path,
                        size_t size);

#endif
