/* test_module.c - the CUDA backend as a run-time module (src/backend/module.h,
 * docs/BUILD.md "The CUDA and MPI modules"): libffnn.so and the CLI (libffnn.a linked in)
 * need none of CUDA's, NCCL's libraries; the CLI without the module says which
 * file it looked for and why it failed; device auto trains on the cpu where there
 * is no GPU, with or without the module; the module exports exactly its entry
 * point, of the same interface as this build's; on a GPU, the CLI trains on cuda
 * through the module it finds beside itself (no variable set). The build folder
 * is the CLI's ($FFNN_BIN's folder, else build/). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/module.h"
#include "check.h"
#include "cli_run.h"
#include "ffnn.h"

/* Libraries of CUDA, NCCL and MPI (a module too: parallel/mpi_module.h) that a
 * program without GPU use or multi-process runs must not need. */
static const char *const gpu_libs[] = {"libcublas", "libcublasLt", "libnccl", "libcudart",
                                       "libcuda.", "libmpi"};

/* src/backend/cuda/entry.c, linked into this program in a CUDA build */
extern const void *ffnn_cuda_module_entry(const void *host) __attribute__((weak));

static void build_dir(char *dir, size_t size)
{
    snprintf(dir, size, "%s", cli_binary());
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, size, ".");
}

/* The NEEDED entries of an ELF file, space-separated, into out; -1 when readelf
 * cannot run or the file is missing. */
static int needed_of(const char *path, char *out, size_t size)
{
    char cmd[PATH_MAX + 64];
    if (access(path, R_OK) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "readelf -d '%s' 2>/dev/null", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    size_t used = 0;
    int n = 0;
    out[0] = '\0';
    while (fgets(line, sizeof line, p)) {
        char *a = strstr(line, "(NEEDED)"), *lb = a ? strchr(a, '[') : NULL;
        char *rb = lb ? strchr(lb, ']') : NULL;
        if (!rb)
            continue;
        *rb = '\0';
        int w = snprintf(out + used, size - used, "%s ", lb + 1);
        if (w > 0 && (size_t)w < size - used)
            used += (size_t)w;
        n++;
    }
    return pclose(p) == 0 && n > 0 ? n : -1;
}

static test_result no_gpu_libs(const char *path, char *why, size_t why_size)
{
    char needed[4096];
    if (needed_of(path, needed, sizeof needed) < 0)
        SKIP("readelf -d %s did not run (binutils missing, or no such file)", path);
    for (size_t i = 0; i < sizeof gpu_libs / sizeof gpu_libs[0]; i++)
        CHECK(strstr(needed, gpu_libs[i]) == NULL, "%s needs %s (NEEDED: %s)", path,
              gpu_libs[i], needed);
    printf("    %s NEEDED: %s\n", path, needed);
    return TEST_PASS;
}

TEST("module_libffnn_needs_no_gpu_libs", libffnn_needs_no_gpu_libs)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    build_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/libffnn.so", dir);
    return no_gpu_libs(path, why, why_size);
}

/* build/ffnn carries libffnn.a: the static link of the library */
TEST("module_static_cli_needs_no_gpu_libs", static_cli_needs_no_gpu_libs)
{
    return no_gpu_libs(cli_binary(), why, why_size);
}

/* ffnn train on a tiny data set; module: FFNN_CUDA_MODULE's value (NULL: unset);
 * mpi_module: FFNN_MPI_MODULE's, with the variable of an mpirun launch set (the CLI
 * then asks for an MPI communicator), or NULL. */
static int run_train_with(const char *device, const char *module, const char *mpi_module,
                          const char *out)
{
    const char *args[] = {"train", "--data", "synth:points:256", "--arch", "2-8relu-2",
                          "--epochs", "1", "--batch", "64", "--device", device, NULL};
    char env_module[PATH_MAX + 32], env_mpi[PATH_MAX + 32];
    const char *env[4] = {NULL, NULL, NULL, NULL};
    int n = 0;
    if (module) {
        snprintf(env_module, sizeof env_module, "FFNN_CUDA_MODULE=%s", module);
        env[n++] = env_module;
    }
    if (mpi_module) {
        snprintf(env_mpi, sizeof env_mpi, "FFNN_MPI_MODULE=%s", mpi_module);
        env[n++] = env_mpi;
        env[n++] = "OMPI_COMM_WORLD_SIZE=1";
    }
    cli_run_opts o = {0};
    o.env = env;
    return cli_run(args, out, &o);
}

static int run_train(const char *device, const char *module, const char *out)
{
    return run_train_with(device, module, NULL, out);
}

/* ffnn train --device DEVICE with the module variable env (FFNN_CUDA_MODULE or
 * FFNN_MPI_MODULE: run_train_with's module or mpi_module) naming the missing file:
 * refused (exit not 0), the message naming the file, its dlerror and env. */
static test_result missing_module_refused(const char *device, const char *env,
                                          const char *missing)
{
    char out[] = "/tmp/ffnn-module-XXXXXX";
    int fd = mkstemp(out);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    const int mpi = strcmp(env, "FFNN_MPI_MODULE") == 0;
    int rc = run_train_with(device, mpi ? NULL : missing, mpi ? missing : NULL, out);
    int named = file_contains(out, missing) && file_contains(out, "No such file") &&
                file_contains(out, env);
    char text[2048] = "";
    FILE *f = fopen(out, "r");
    if (f) {
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    unlink(out);
    CHECK(rc != 0, "ffnn train --device %s with %s=%s exited 0", device, env, missing);
    CHECK(named, "the message does not name %s and its dlerror: %s", missing, text);
    return TEST_PASS;
}

/* an mpirun launch without the MPI module: refused, naming the file and its dlerror */
TEST("module_mpi_missing_names_the_file", mpi_missing_names_the_file)
{
    return missing_module_refused("cpu", "FFNN_MPI_MODULE", "/nonexistent/libffnn-mpi.so");
}

/* The dynamic symbols module defines (nm -D --defined-only, absolute ones left out):
 * *symbols of them, *entry named entry (the others printed when print_others).
 * nm's exit status (pclose's), -1 when it could not be started. */
static int count_exports(const char *module, const char *entry_name, int print_others,
                         int *symbols, int *entry)
{
    char cmd[PATH_MAX + 96], line[512];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s' 2>/dev/null", module);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    while (fgets(line, sizeof line, p)) {
        char value[64], type[8], name[256];
        if (sscanf(line, "%63s %7s %255s", value, type, name) != 3 || strcmp(type, "A") == 0)
            continue;
        (*symbols)++;
        *entry += strcmp(name, entry_name) == 0;
        if (print_others && strcmp(name, entry_name) != 0)
            printf("    exported: %s\n", name);
    }
    int rc = pclose(p);
    return rc == -1 ? -2 : rc;
}

/* the MPI module (a build with MPI): its entry point alone, and libmpi */
TEST("module_mpi_exports_the_entry_point", mpi_module_exports_the_entry_point)
{
    char dir[PATH_MAX], module[PATH_MAX + 32];
    build_dir(dir, sizeof dir);
    snprintf(module, sizeof module, "%s/libffnn-mpi.so", dir);
    if (access(module, R_OK) != 0)
        SKIP("a build without MPI (no %s)", module);
    int symbols = 0, entry = 0;
    const int nm_rc = count_exports(module, "ffnn_mpi_module_entry", 0, &symbols, &entry);
    CHECK(nm_rc != -1, "popen nm");
    if (nm_rc != 0 && symbols == 0)
        SKIP("nm -D did not run (binutils missing)");
    CHECK(entry == 1 && symbols == 1, "%s exports %d symbols, its entry point %d", module,
          symbols, entry);
    char needed[4096];
    CHECK(needed_of(module, needed, sizeof needed) > 0, "readelf -d %s", module);
    CHECK(strstr(needed, "libmpi"), "the MPI module does not need libmpi: %s", needed);
    CHECK(ffnn_has_mpi(), "ffnn_has_mpi() is 0 although %s is there", module);
    return TEST_PASS;
}

TEST("module_missing_names_the_file", missing_module_names_the_file)
{
    return missing_module_refused("cuda", "FFNN_CUDA_MODULE", "/nonexistent/libffnn-cuda.so");
}

/* device auto on a machine without a GPU: the cpu, silently, whether the module is
 * missing, present and named, or looked for in the usual places */
TEST("module_auto_without_gpu_trains_on_cpu", auto_without_gpu_trains_on_cpu)
{
    if (ffnn_cuda_device_count() > 0)
        SKIP("a CUDA GPU is visible (auto picks it: module_cli_trains_on_cuda)");
    char dir[PATH_MAX], module[PATH_MAX + 32], out[] = "/tmp/ffnn-module-XXXXXX";
    build_dir(dir, sizeof dir);
    snprintf(module, sizeof module, "%s/%s", dir, FFNN_CUDA_MODULE_FILE);
    int fd = mkstemp(out);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    const char *modules[] = {NULL, "/nonexistent/libffnn-cuda.so",
                             access(module, R_OK) == 0 ? module : NULL};
    for (int i = 0; i < 3; i++) {
        if (i == 2 && !modules[2])
            continue;
        int rc = run_train("auto", modules[i], out);
        int cpu = file_contains(out, "cpu (") && !file_contains(out, "could be loaded");
        if (rc != 0 || !cpu)
            unlink(out);
        CHECK(rc == 0, "ffnn train --device auto (FFNN_CUDA_MODULE=%s) exited %d",
              modules[i] ? modules[i] : "(unset)", rc);
        CHECK(cpu, "ffnn train --device auto (FFNN_CUDA_MODULE=%s): not on the cpu, or a "
              "module message", modules[i] ? modules[i] : "(unset)");
    }
    unlink(out);
    return TEST_PASS;
}

/* the module (a CUDA build): one exported symbol, the entry point, whose table is
 * of this build's interface (the same as the entry point linked into this test
 * program); it needs the CUDA libraries libffnn does not */
TEST("module_exports_the_entry_point", module_exports_the_entry_point)
{
    char dir[PATH_MAX], module[PATH_MAX + 32];
    build_dir(dir, sizeof dir);
    snprintf(module, sizeof module, "%s/%s", dir, FFNN_CUDA_MODULE_FILE);
    if (access(module, R_OK) != 0) {
        if (!ffnn_has_cuda())
            SKIP("a build without CUDA (no %s)", module);
        CHECK(0, "a CUDA build without %s", module);
    }
    int symbols = 0, entry = 0;
    const int nm_rc = count_exports(module, FFNN_CUDA_MODULE_ENTRY, 1, &symbols, &entry);
    CHECK(nm_rc != -1, "popen nm");
    if (nm_rc != 0 && symbols == 0)
        SKIP("nm -D did not run (binutils missing)");
    CHECK(entry == 1 && symbols == 1, "%s exports %d symbols, entry point %s: %d", module,
          symbols, FFNN_CUDA_MODULE_ENTRY, entry);

    char needed[4096];
    CHECK(needed_of(module, needed, sizeof needed) > 0, "readelf -d %s", module);
    CHECK(strstr(needed, "libcublas"), "the module does not need libcublas: %s", needed);

    void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen %s: %s", module, dlerror());
    ffnn_module_entry_fn fn;
    *(void **)&fn = dlsym(h, FFNN_CUDA_MODULE_ENTRY);
    CHECK(fn != NULL, "dlsym %s", FFNN_CUDA_MODULE_ENTRY);
    const ffnn_cuda_module *m = (const ffnn_cuda_module *)fn(NULL); /* the fields only */
    CHECK(m && m->version == FFNN_CUDA_MODULE_VERSION && m->size == sizeof *m &&
              m->ops_size == sizeof(ffnn_backend_ops),
          "the module's table: version %u size %zu ops %zu", m ? m->version : 0u,
          m ? m->size : (size_t)0, m ? m->ops_size : (size_t)0);
    CHECK(strcmp(m->ffnn_version, FFNN_VERSION) == 0, "module of ffnn %s", m->ffnn_version);
    const ffnn_cuda_module *linked =
        ffnn_cuda_module_entry ? (const ffnn_cuda_module *)ffnn_cuda_module_entry(NULL) : NULL;
    CHECK(!linked || linked->abi == m->abi, "the module's header checksum %u, this build's %u",
          m->abi, linked ? linked->abi : 0u);
    CHECK(m->ops && strcmp(m->ops->name, "cuda") == 0, "the module's backend");
    printf("    %s: interface %u, checksum %u, ffnn %s\n", module, m->version, m->abi,
           m->ffnn_version);
    /* the module's handle stays open: its CUDA runtime registered its kernels */
    return TEST_PASS;
}

/* on a GPU machine: the CLI (libffnn.a linked in, no CUDA library of its own) trains
 * on cuda through the module beside it, with no variable set */
TEST("module_cli_trains_on_cuda", module_cli_trains_on_cuda)
{
    if (!ffnn_has_cuda())
        SKIP("build has no CUDA");
    if (ffnn_cuda_device_count() == 0)
        SKIP("no CUDA GPU");
    char out[] = "/tmp/ffnn-module-XXXXXX";
    int fd = mkstemp(out);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    unsetenv("FFNN_CUDA_MODULE");
    int rc_cuda = run_train("cuda", NULL, out);
    int on_cuda = file_contains(out, "cuda (");
    int rc_auto = rc_cuda == 0 && on_cuda ? run_train("auto", NULL, out) : -1;
    int auto_cuda = rc_auto == 0 && file_contains(out, "cuda (");
    unlink(out);
    CHECK(rc_cuda == 0 && on_cuda, "ffnn train --device cuda: exit %d, on cuda %d", rc_cuda,
          on_cuda);
    CHECK(auto_cuda, "ffnn train --device auto on a GPU machine: exit %d, not on cuda", rc_auto);
    return TEST_PASS;
}
