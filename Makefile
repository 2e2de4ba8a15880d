# ffnn - build the library (static and shared), the CLI and the tests.
#   make            library + CLI + the benchmark program build/ffnn-bench (with CUDA
#                   when nvcc is found, else CPU only)
#   make test       build and run every test (GPU tests skip without a GPU)
#   make install    PREFIX=/usr/local DESTDIR=: bin/ffnn, bin/ffnn-bench, lib/libffnn.{a,so*},
#                   lib/libffnn-cuda.so, lib/libffnn-mpi.so (the modules, with CUDA / MPI),
#                   include/ffnn.h, lib/pkgconfig/ffnn.pc, share/ffnn/, share/man/man1/ffnn.1
#   make uninstall  the same files removed
#   make check      the ABI and layer checks (tools/check_abi.sh, tools/check_layers.sh)
#   make asan       the library, the CLI and the tests under AddressSanitizer + UBSan
#                   (CPU code); ASAN_TESTS=name-filter runs a subset
#   make tsan       the library and the tests under ThreadSanitizer (CPU code): the
#                   thread-safety tests (TSAN_TESTS, default predictor_ pool_ and
#                   two of the omp backend's multi-thread tests)
#   make fuzz       the libFuzzer targets of fuzz/ (clang), FUZZ_SECONDS each
#   make fuzz-smoke each fuzz target replays its corpus, then runs FUZZ_SMOKE_SECONDS
#   make build/gemm_models   the batched sweep's matmuls against cuBLAS (CUDA builds;
#                   bench/gemm_models.cu, bench/README.md)
#   make bench-docs OUT=docs BENCH_DATA=DIR   the results that docs/ shows, regenerated
#                   (bench/README.md; default OUT=build/bench)
#   make clean
#   make CUDA_ARCH=all   machine code for every supported GPU (default: the GPU here)
#   make CUDA_ARCH="-gencode arch=compute_90,code=sm_90"   any nvcc -gencode list
#   make NVCC=      force a CPU-only build
#   make MPI=1 / MPI=0, NCCL=1 / NCCL=0   insist on / leave out MPI (multi-process runs) and
#                   NCCL (multi-GPU runs); default: each when found (mpicc; nccl.h + libnccl
#                   under CUDA_HOME)

.DEFAULT_GOAL := all
CC       ?= gcc
CFLAGS   ?= -O2 -g
# OpenMP (the omp cpu backend, src/backend/omp/; Debian's gcc ships libgomp). make OMP_CFLAGS=
# builds without it: the omp backend then runs on one thread.
OMP_CFLAGS ?= -fopenmp
ALL_CFLAGS = $(CFLAGS) -std=c11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -Iinclude -Isrc $(OMP_CFLAGS)
LDLIBS   := -lcjson -lz -lm $(OMP_CFLAGS) -ldl -lpthread

# cJSON (Debian: libcjson-dev). Where it is not installed (the device machine):
#   make CJSON_DIR=DIR   with DIR/include/cjson/cJSON.h and DIR/lib/libcjson.so
ifneq ($(strip $(CJSON_DIR)),)
  ALL_CFLAGS += -I$(CJSON_DIR)/include
  LDLIBS   := -L$(CJSON_DIR)/lib -Wl,-rpath,$(abspath $(CJSON_DIR))/lib $(LDLIBS)
endif

CUDA_HOME ?= /usr/local/cuda
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)
# What nvcc generates. Default: machine code for the GPU(s) of this machine (nvidia-smi
# --query-gpu=compute_cap, e.g. 9.0 -> sm_90); on a machine without a GPU, PTX for
# compute_80 only (no machine code: ptxas does not run, so the build takes a fraction
# of the time; the driver compiles the PTX for any GPU from sm_80 on at first use).
# CUDA_ARCH=all: machine code for sm_80, sm_86, sm_89, sm_90 plus compute_90 PTX.
CUDA_ARCH_ALL := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
                 -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 \
                 -gencode arch=compute_90,code=compute_90
CUDA_ARCH_NO_GPU := -gencode arch=compute_80,code=compute_80
ifeq ($(origin CUDA_ARCH),undefined)
  ifneq ($(strip $(NVCC)),)
    GPU_CAPS := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null \
                  | tr -d ' .' | grep -E '^[0-9]+$$' | sort -u)
    CUDA_ARCH := $(if $(GPU_CAPS),$(foreach c,$(GPU_CAPS),-gencode arch=compute_$(c),code=sm_$(c)),$(CUDA_ARCH_NO_GPU))
  endif
endif
NVCC_ARCH = $(if $(filter all,$(CUDA_ARCH)),$(CUDA_ARCH_ALL),$(CUDA_ARCH))
NVCCFLAGS ?= -O3 -lineinfo
ALL_NVCCFLAGS = $(NVCCFLAGS) -std=c++17 $(NVCC_ARCH) -Xcompiler -Wall,-Wextra,-fPIC -Xcompiler -fvisibility=hidden -Werror all-warnings \
             -Iinclude -Isrc

BUILD    := build
# the layers (docs/ARCHITECTURE.md): core <- data <- io <- backend <- parallel <- strategy <- train
# (src/backend/module.c: the loader of the CUDA module, src/parallel/nccl_module.c: the
# NCCL functions forwarded to it; the module itself is below, "The CUDA module")
C_SRC    := $(filter-out src/core/error_module.c, \
              $(wildcard src/core/*.c src/data/*.c src/io/*.c \
              src/backend/*.c src/backend/cpu/*.c src/backend/omp/*.c src/strategy/*.c src/train/*.c)) \
            src/parallel/comm.c src/parallel/nccl_module.c

# ONNX export (src/io/onnx_export.c) with protobuf-c (Debian: libprotobuf-c-dev) over the
# onnx project's schema src/io/onnx/onnx.proto; its C code, onnx.pb-c.c/h, is generated
# at build time into $(BUILD)/gen/io/onnx/ by protoc-c (Debian: protobuf-c-compiler).
# Default: built when pkg-config finds libprotobuf-c and protoc-c is on PATH; without
# either, src/io/onnx_none.c: the export says what is missing. make ONNX=1 fails when
# one is missing, make ONNX=0 leaves it out.
PROTOC_C ?= protoc-c
ONNX     ?= $(if $(shell pkg-config --exists libprotobuf-c 2>/dev/null && command -v $(PROTOC_C) 2>/dev/null),1,0)
C_SRC    := $(filter-out src/io/onnx_export.c src/io/onnx_none.c,$(C_SRC))
ONNX_GEN := $(BUILD)/gen/io/onnx/onnx.pb-c
ifeq ($(ONNX),1)
  ifeq ($(shell pkg-config --exists libprotobuf-c 2>/dev/null && command -v $(PROTOC_C) 2>/dev/null),)
    $(error make ONNX=1: the ONNX export needs libprotobuf-c (pkg-config) and $(PROTOC_C); install them, e.g. apt-get install libprotobuf-c-dev protobuf-c-compiler)
  endif
  C_SRC  += src/io/onnx_export.c
  ONNX_OBJ := $(ONNX_GEN).o
  ALL_CFLAGS += $(shell pkg-config --cflags libprotobuf-c)
  LDLIBS += $(shell pkg-config --libs libprotobuf-c)
  ONNX_KIND := ONNX export
else
  C_SRC  += src/io/onnx_none.c
  ONNX_KIND := no ONNX export (needs libprotobuf-c-dev and protobuf-c-compiler)
endif

# MPI (Open MPI; Debian: openmpi-bin libopenmpi-dev), for multi-process runs (src/parallel/mpi.c):
# found through mpicc (--showme) or pkg-config ompi-c. It is a module too, build/libffnn-mpi.so
# (src/parallel/mpi_module.h), which libffnn loads when a multi-process run is asked for;
# without it src/parallel/mpi_module.c says what is missing. make MPI=1 fails when it is
# not found, make MPI=0 leaves it out.
MPICC    ?= mpicc
MPI      ?= $(if $(shell command -v $(MPICC) 2>/dev/null || pkg-config --exists ompi-c 2>/dev/null && echo y),1,0)
ifeq ($(MPI),1)
  MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null || pkg-config --cflags ompi-c 2>/dev/null)
  MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null || pkg-config --libs ompi-c 2>/dev/null)
  ifeq ($(strip $(MPI_LIBS)),)
    $(error make MPI=1: MPI not found (neither $(MPICC) --showme nor pkg-config ompi-c); install it, e.g. apt-get install openmpi-bin libopenmpi-dev)
  endif
  MPI_MODULE := $(BUILD)/libffnn-mpi.so
  $(BUILD)/src/parallel/mpi_module.o: ALL_CFLAGS += -DFFNN_BUILT_MPI_MODULE=1
  MPI_KIND := MPI (in libffnn-mpi.so)
else
  MPI_MODULE :=
  MPI_KIND := no MPI
endif
C_SRC    += src/parallel/mpi_module.c
CU_SRC   := $(wildcard src/backend/cuda/*.cu)
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(sort $(wildcard tests/*.c))

# NCCL (multi-GPU runs, src/parallel/nccl.cu) from the CUDA toolkit: nccl.h and libnccl under
# NCCL_HOME (default CUDA_HOME), with nvcc. make NCCL=1 fails when it is not found.
NCCL_HOME ?= $(CUDA_HOME)
NCCL_LIB  := $(firstword $(wildcard $(NCCL_HOME)/lib/libnccl.so $(NCCL_HOME)/lib64/libnccl.so \
                 /usr/lib/x86_64-linux-gnu/libnccl.so))
NCCL      ?= $(if $(and $(strip $(NVCC)),$(wildcard $(NCCL_HOME)/include/nccl.h),$(NCCL_LIB)),1,0)
ifeq ($(NCCL),1)
  ifeq ($(and $(strip $(NVCC)),$(NCCL_LIB)),)
    $(error make NCCL=1: NCCL needs nvcc and libnccl.so under NCCL_HOME=$(NCCL_HOME))
  endif
  CU_SRC  += src/parallel/nccl.cu
  MODULE_LIBS += -L$(dir $(NCCL_LIB)) -Wl,-rpath,$(dir $(NCCL_LIB)) -lnccl
  NCCL_KIND := NCCL
else
  NCCL_KIND := no NCCL
endif

# The CUDA module (src/backend/module.h, docs/BUILD.md "The CUDA and MPI modules"): libffnn
# carries the cpu backends only; the CUDA backend (src/backend/cuda/*.cu, nccl.cu) with
# cuBLAS, cuBLASLt, NCCL and the CUDA runtime is build/libffnn-cuda.so, beside
# libffnn.so and the programs, which libffnn loads (dlopen) when a GPU is asked for.
# The module links the helpers it shares with libffnn from libffnn.a (gemm plans,
# names); src/backend/cuda/host.c with src/core/error_module.c sends its error messages
# to the libffnn that loaded it. MODULE_ABI: a checksum of the headers both sides are built from (the loader
# refuses a module of other headers).
LIB_OBJ    := $(C_SRC:%.c=$(BUILD)/%.o)
MODULE_ABI := $(firstword $(shell cat $(sort $(wildcard include/*.h src/backend/*.h src/core/*.h \
                  src/parallel/*.h)) | cksum))
$(BUILD)/src/backend/module.o $(BUILD)/src/backend/cuda/entry.o $(BUILD)/src/parallel/mpi.o \
    $(BUILD)/src/parallel/mpi_module.o: ALL_CFLAGS += -DFFNN_MODULE_ABI=$(MODULE_ABI)u
# (both rebuilt when it changes: a stamp holding it)
MODULE_ABI_STAMP := $(BUILD)/module-abi.txt
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(MODULE_ABI_STAMP) 2>/dev/null)" = "$(MODULE_ABI)" ] || \
    echo "$(MODULE_ABI)" > $(MODULE_ABI_STAMP); })
$(BUILD)/src/backend/module.o $(BUILD)/src/backend/cuda/entry.o $(BUILD)/src/parallel/mpi.o \
    $(BUILD)/src/parallel/mpi_module.o: $(MODULE_ABI_STAMP)
ifneq ($(strip $(NVCC)),)
  # the CUDA objects and the entry point: into the module, and into the programs that
  # call kernels directly (ffnn_tests, ffnn-bench: the kernel lab)
  CUDA_OBJ := $(CU_SRC:%.cu=$(BUILD)/%.o) $(BUILD)/src/backend/cuda/entry.o
  # cuBLAS and cuBLASLt (the cublas and cublaslt strategies, src/backend/cuda/cublas.cu)
  # are shared libraries: the rpath lets the module find them at run time without
  # LD_LIBRARY_PATH.
  MODULE_LIBS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas \
             -lcudart_static -ldl -lrt -lpthread -lstdc++
  MODULES  := $(BUILD)/libffnn-cuda.so $(MPI_MODULE)
  $(BUILD)/src/backend/cuda/entry.o: ALL_CFLAGS += -DFFNN_MODULE_NCCL=$(NCCL)
  $(BUILD)/src/backend/module.o: ALL_CFLAGS += -DFFNN_BUILT_CUDA_MODULE=1
  BUILD_KIND := with CUDA ($(NVCC) $(NVCC_ARCH); the CUDA backend in libffnn-cuda.so)
else
  CUDA_OBJ :=
  MODULES  := $(MPI_MODULE)
  BUILD_KIND := CPU only (nvcc not found)
endif

# the ONNX export's generated protobuf-c code (ONNX=1)
LIB_OBJ  += $(ONNX_OBJ)

# The kernel lab (lab/) and the benchmark suites (bench/) sit above the library: linked into
# the benchmark program ffnn-bench (which `ffnn bench` runs) and the tests, never into
# libffnn or ffnn. Without nvcc the lab's .cu files are not built and the suites that
# need them say so at run time (FFNN_HAVE_CUDA unset).
HAVE_CUDA := $(if $(strip $(NVCC)),-DFFNN_HAVE_CUDA=1)
LAB_OBJ  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard lab/*.c)) \
            $(if $(HAVE_CUDA),$(patsubst %.cu,$(BUILD)/%.o,$(wildcard lab/*.cu)))
BENCH_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/*.c))
$(BUILD)/lab/%.o $(BUILD)/bench/%.o $(BUILD)/tests/%.o: ALL_CFLAGS += $(HAVE_CUDA)

# The version (include/ffnn.h) and the shared library's names: the file
# libffnn.so.MAJOR.MINOR.PATCH, its soname libffnn.so.MAJOR (a link), libffnn.so (a link).
version_part = $(shell sed -n 's/^\#define FFNN_VERSION_$(1) \([0-9][0-9]*\).*/\1/p' include/ffnn.h)
VERSION_MAJOR := $(call version_part,MAJOR)
VERSION  := $(VERSION_MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME   := libffnn.so.$(VERSION_MAJOR)
SHLIB    := libffnn.so.$(VERSION)

.PHONY: all test check fuzz asan tsan clean info install uninstall examples
all: info $(BUILD)/libffnn.a $(BUILD)/libffnn.so $(BUILD)/ffnn $(BUILD)/ffnn-bench $(MODULES)

info:
	@echo "ffnn build: $(BUILD_KIND), $(MPI_KIND), $(NCCL_KIND), $(ONNX_KIND)"

$(BUILD)/%.o: %.c $(wildcard include/*.h src/*.h src/*/*.h src/*/*/*.h src/*/*.def cli/*.h tests/*.h lab/*.h bench/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The omp kernels: -O3 (vectorisation), no errno from sqrtf (lets it vectorise; same
# values); the matmuls contract a*b+c into fma (gemm.c), the element-wise ops do not
# (ISO C default), so that they keep the reference's roundings. No -march: the
# kernels for AVX2 / AVX-512 are chosen at run time.
$(BUILD)/src/backend/omp/%.o: ALL_CFLAGS += -O3 -fno-math-errno $(if $(strip $(OMP_CFLAGS)),,-Wno-unknown-pragmas)
$(BUILD)/src/backend/omp/gemm.o: ALL_CFLAGS += -ffp-contract=fast
# the protobuf-c code, generated from the schema (not ours to warn about); the export
# includes its header as "io/onnx/onnx.pb-c.h" from $(BUILD)/gen
$(ONNX_GEN).c $(ONNX_GEN).h &: src/io/onnx/onnx.proto
	@mkdir -p $(dir $(ONNX_GEN))
	$(PROTOC_C) --proto_path=src/io/onnx --c_out=$(dir $(ONNX_GEN)) $<
$(ONNX_GEN).o: $(ONNX_GEN).c $(ONNX_GEN).h
	$(CC) $(ALL_CFLAGS) -Wno-error -w -c $< -o $@
$(BUILD)/src/io/onnx_export.o: ALL_CFLAGS += -I$(BUILD)/gen
$(BUILD)/src/io/onnx_export.o: $(ONNX_GEN).h
# make tsan: elementwise.c's target_clones resolvers run before TSan's runtime is up
# (an instrumented resolver crashes at load), so it is built without TSan there
$(BUILD)/src/backend/omp/elementwise.o: ALL_CFLAGS += $(ELEMENTWISE_CFLAGS)
$(BUILD)/src/parallel/mpi.o: ALL_CFLAGS += $(MPI_CFLAGS)
$(BUILD)/src/parallel/nccl.o: ALL_NVCCFLAGS += -I$(NCCL_HOME)/include

$(BUILD)/%.o: %.cu $(wildcard include/*.h src/*.h src/*/*.h src/backend/cuda/*.cuh lab/*.h)
	@mkdir -p $(dir $@)
	$(NVCC) $(ALL_NVCCFLAGS) -c $< -o $@

$(BUILD)/libffnn.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

# libffnn.so exports the functions of include/ffnn.h and nothing else: the objects are built
# with -fvisibility=hidden, the static archives (libcudart_static) stay local
# (--exclude-libs) and the version script (generated from the header) hides what
# slips through (tools/check_abi.sh); make check verifies it.
$(BUILD)/libffnn.map: include/ffnn.h tools/check_abi.sh
	@mkdir -p $(dir $@)
	sh tools/check_abi.sh --version-script include/ffnn.h > $@.tmp && mv $@.tmp $@

$(BUILD)/$(SHLIB): $(LIB_OBJ) $(BUILD)/libffnn.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--exclude-libs,ALL \
	    -Wl,--version-script=$(BUILD)/libffnn.map -o $@ $(filter-out %.map,$^) $(LDLIBS)

$(BUILD)/libffnn.so: $(BUILD)/$(SHLIB)
	ln -sf $(SHLIB) $(BUILD)/$(SONAME)
	ln -sfn $(SONAME) $@

# the module: its objects, the helpers it shares with libffnn (from libffnn.a: the
# archive gives only the members they need; core/error.o is not among them,
# core/error_module.o stands in), every symbol resolved at link time (-z defs), one
# symbol exported
$(BUILD)/libffnn-cuda.map:
	@mkdir -p $(dir $@)
	printf '{\n  global:\n    ffnn_cuda_module_entry;\n  local:\n    *;\n};\n' > $@

$(BUILD)/libffnn-cuda.so: $(CUDA_OBJ) $(BUILD)/src/backend/cuda/host.o \
                          $(BUILD)/src/core/error_module.o $(BUILD)/libffnn.a \
                          $(BUILD)/libffnn-cuda.map
	$(CC) $(LDFLAGS) -shared -Wl,-z,defs -Wl,--exclude-libs,ALL \
	    -Wl,--version-script=$(BUILD)/libffnn-cuda.map -o $@ $(CUDA_OBJ) \
	    $(BUILD)/src/backend/cuda/host.o $(BUILD)/src/core/error_module.o \
	    $(BUILD)/libffnn.a $(MODULE_LIBS) $(LDLIBS)

# the MPI module: mpi.c with mpi_host.c (libffnn's functions that it calls, through the
# loading library), one symbol exported
$(BUILD)/libffnn-mpi.map:
	@mkdir -p $(dir $@)
	printf '{\n  global:\n    ffnn_mpi_module_entry;\n  local:\n    *;\n};\n' > $@

$(BUILD)/libffnn-mpi.so: $(BUILD)/src/parallel/mpi.o $(BUILD)/src/parallel/mpi_host.o \
                         $(BUILD)/src/core/error_module.o $(BUILD)/libffnn-mpi.map
	$(CC) $(LDFLAGS) -shared -Wl,-z,defs -Wl,--version-script=$(BUILD)/libffnn-mpi.map -o $@ \
	    $(BUILD)/src/parallel/mpi.o $(BUILD)/src/parallel/mpi_host.o \
	    $(BUILD)/src/core/error_module.o $(MPI_LIBS)

# the modules of this build (the Python wheel ships them beside libffnn: python/_build_libffnn.py)
.PHONY: modules print-modules
modules: $(MODULES)
print-modules:
	@echo $(MODULES)

$(BUILD)/ffnn: $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libffnn.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libffnn.a $(LDLIBS)

# ffnn-bench: the suites and the lab; with CUDA, the CUDA objects linked in (the lab
# calls kernels directly)
$(BUILD)/ffnn-bench: $(BENCH_OBJ) $(LAB_OBJ) $(BUILD)/libffnn.a $(CUDA_OBJ)
	$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJ) $(LAB_OBJ) $(CUDA_OBJ) \
	    $(BUILD)/libffnn.a $(if $(CUDA_OBJ),$(MODULE_LIBS)) $(LDLIBS)

$(BUILD)/ffnn_tests: $(TEST_SRC:%.c=$(BUILD)/%.o) $(BUILD)/bench/harness.o $(LAB_OBJ) $(BUILD)/libffnn.a \
                     $(CUDA_OBJ)
	$(CC) $(LDFLAGS) -o $@ $(TEST_SRC:%.c=$(BUILD)/%.o) $(BUILD)/bench/harness.o $(LAB_OBJ) \
	    $(CUDA_OBJ) $(BUILD)/libffnn.a $(if $(CUDA_OBJ),$(MODULE_LIBS)) $(LDLIBS)

# build/gemm_models (bench/gemm_models.cu, bench/README.md): the batched sweep's matmuls
# timed per tile against cuBLAS's strided-batched GEMM. A program of its own, CUDA only,
# not part of `all`: make build/gemm_models. It links the CUDA objects, as ffnn-bench does.
.PHONY: gemm_models
gemm_models: $(BUILD)/gemm_models
ifneq ($(strip $(NVCC)),)
GEMM_MODELS_OBJ := $(BUILD)/bench/gemm_models.o $(BUILD)/lab/harness.o $(BUILD)/lab/harness_host.o
$(BUILD)/gemm_models: $(GEMM_MODELS_OBJ) $(BUILD)/libffnn.a $(CUDA_OBJ)
	$(CC) $(LDFLAGS) -o $@ $(GEMM_MODELS_OBJ) $(CUDA_OBJ) $(BUILD)/libffnn.a $(MODULE_LIBS) \
	    $(LDLIBS)
else
$(BUILD)/gemm_models:
	@echo "$@: needs nvcc (a CUDA build; CUDA_HOME=$(CUDA_HOME))"; exit 1
endif

# The tests run the CLI of this build (FFNN_BIN, unless set) and preload the
# fault library (tests/preload/faults.c: a full disk, a read-only directory) into it.
$(BUILD)/libffnn_faults.so: tests/preload/faults.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=c11 -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl

TEST_ENV = FFNN_BIN=$${FFNN_BIN:-$(BUILD)/ffnn} FFNN_FAULTS_LIB=$(abspath $(BUILD))/libffnn_faults.so

test: all check $(BUILD)/ffnn_tests $(BUILD)/libffnn_faults.so examples
	@echo "$(TEST_ENV) $(BUILD)/ffnn_tests"; $(TEST_ENV) $(BUILD)/ffnn_tests

# The ABI (libffnn.so exports exactly the functions of include/ffnn.h) and the layer
# rule (docs/ARCHITECTURE.md: no include of a layer to the right); make test runs both.
check: $(BUILD)/libffnn.so $(MODULES)
	sh tools/check_layers.sh
	sh tools/check_abi.sh $(BUILD)/libffnn.so include/ffnn.h
	$(if $(CUDA_OBJ),sh tools/check_abi.sh --module $(BUILD)/libffnn-cuda.so ffnn_cuda_module_entry)
	$(if $(MPI_MODULE),sh tools/check_abi.sh --module $(MPI_MODULE) ffnn_mpi_module_entry)

# libFuzzer targets (fuzz/, one per parser of outside bytes; clang with libFuzzer, e.g.
# Debian's clang-14): built with ASan + UBSan over the layers a parser needs (core,
# data, io; the CSV target adds cli/csv_input.c), run for FUZZ_SECONDS each on a copy
# of their seed corpus (fuzz/corpus/<name>/, regenerated by fuzz/make_corpus.py), so
# findings land in build-fuzz/ and the committed corpus changes only by hand.
# make fuzz-smoke (CI): every target replays its corpus, then runs FUZZ_SMOKE_SECONDS.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 180
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_FLAGS   := -O1 -g -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer $(filter -I%,$(ALL_CFLAGS)) -Icli -Ifuzz
# (the parsers need no ONNX export: its stub, without protobuf-c)
FUZZ_LIB_SRC := $(filter-out src/io/onnx_export.c src/core/error_module.c,$(wildcard src/core/*.c src/data/*.c src/io/*.c))
FUZZ_TARGETS := $(patsubst fuzz/%.c,build-fuzz/%,$(wildcard fuzz/*.c))
FUZZ_EXTRA_csv_input := cli/csv_input.c
FUZZ_EXTRA_info_json := cli/info_json.c cli/options.c cli/messages.c
# the corpus of target NAME: fuzz/corpus/<NAME up to its first '_'> (idx_raw, idx_gz: idx)

build-fuzz/%: fuzz/%.c $(FUZZ_LIB_SRC) $(wildcard include/*.h src/*/*.h fuzz/*.h cli/*.c cli/*.h)
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_LIB_SRC) $(FUZZ_EXTRA_$*) \
	    $(filter -L% -Wl% -lcjson -lz -lm,$(LDLIBS))

.PHONY: fuzz-build fuzz-smoke
fuzz-build: $(FUZZ_TARGETS)

fuzz: $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
	    name=$$(basename $$t); corpus=build-fuzz/corpus-$$name; \
	    mkdir -p $$corpus && cp fuzz/corpus/$${name%%_*}/* $$corpus/ 2>/dev/null; \
	    echo "fuzz $$name: $(FUZZ_SECONDS) s"; \
	    $$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=build-fuzz/ \
	        -max_len=65536 $$corpus || exit 1; \
	done

fuzz-smoke: $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
	    name=$$(basename $$t); corpus=fuzz/corpus/$${name%%_*}; \
	    echo "fuzz-smoke $$name: replay $$corpus, then $(FUZZ_SMOKE_SECONDS) s"; \
	    $$t -runs=0 $$corpus >build-fuzz/$$name-replay.log 2>&1 || \
	        { tail -40 build-fuzz/$$name-replay.log; exit 1; }; \
	    mkdir -p build-fuzz/smoke-$$name; \
	    $$t -max_total_time=$(FUZZ_SMOKE_SECONDS) -print_final_stats=1 -max_len=65536 \
	        -artifact_prefix=build-fuzz/ build-fuzz/smoke-$$name $$corpus \
	        >build-fuzz/$$name-smoke.log 2>&1 || { tail -60 build-fuzz/$$name-smoke.log; exit 1; }; \
	    grep -E 'stat::number_of_executed_units' build-fuzz/$$name-smoke.log; \
	done

# The sanitizer build covers the CLI too (the tests run build-asan/ffnn); every
# ASan or UBSan report stops the process with an error (halt_on_error), so a
# finding fails its test. ASAN_TESTS: a test-name filter (CI runs a subset).
ASAN_TESTS ?=
asan:
	$(MAKE) BUILD=build-asan NVCC= CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" \
	    build-asan/ffnn build-asan/ffnn-bench build-asan/ffnn_tests build-asan/libffnn_faults.so
	ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    FFNN_BIN=build-asan/ffnn \
	    FFNN_FAULTS_LIB=$(abspath build-asan)/libffnn_faults.so build-asan/ffnn_tests $(ASAN_TESTS)

# ThreadSanitizer over the thread-safety tests: predictors in several threads on one
# model while another thread trains (tests/test_predictor.c), and the fork-join
# pool's jobs, every part once (tests/test_pool.c). libgomp is not built
# with TSan, so under TSan those tests run each OpenMP team on one thread (the test
# checks what may be shared between the caller's threads, not libgomp's barriers);
# src/backend/omp/elementwise.c is not instrumented (see ELEMENTWISE_CFLAGS).
TSAN_TESTS ?= predictor_ pool_ omp_dense_same_bits_any_thread_count omp_train_deterministic
tsan:
	$(MAKE) BUILD=build-tsan NVCC= CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=thread" ELEMENTWISE_CFLAGS=-fno-sanitize=thread build-tsan/ffnn_tests
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/ffnn_tests $(TSAN_TESTS)

clean:
	rm -rf build build-asan build-tsan build-fuzz

# ---------------------------------------------------------------- bench-docs
# make bench-docs [OUT=docs] [BENCH_DATA=DIR]: the results that docs/ shows, regenerated:
# the four report suites at full size and the kernel lab, each suite's plot beside its
# CSV (bench/README.md). OUT defaults to build/bench; OUT=docs rewrites the committed
# files. BENCH_DATA: the Fashion-MNIST (or MNIST) IDX folder of mnist-mlp and modular.
# The GPU rows need a CUDA GPU (without one they are skipped, with the
# reason); about 10 minutes on an H200 (BENCH_DOC_SUITES="..." runs some of them).
OUT ?= build/bench
BENCH_DATA ?=
BENCH_PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
BENCH_DOC_SUITES ?= mnist-mlp regression-mlp local1d modular kernels
.PHONY: bench-docs
bench-docs: $(BUILD)/ffnn-bench
	@[ -n "$(BENCH_DATA)" ] || { echo "make bench-docs: BENCH_DATA=DIR is needed (the Fashion-MNIST" \
	    "IDX files of mnist-mlp and modular)"; exit 2; }
	@rc=0; for s in $(BENCH_DOC_SUITES); do \
	    case $$s in \
	    kernels) [ -n "$(HAVE_CUDA)" ] || { echo "kernels: skipped (a build without CUDA)"; continue; };; \
	    esac; \
	    data=; case $$s in mnist-mlp|modular) data="--data $(BENCH_DATA)";; esac; \
	    echo "$(BUILD)/ffnn-bench $$s --out $(OUT) $$data"; \
	    $(BUILD)/ffnn-bench $$s --out $(OUT) $$data || { rc=1; echo "$$s: failed"; continue; }; \
	    [ $$s = kernels ] || $(BENCH_PYTHON) bench/plot_$$(echo $$s | tr - _).py $(OUT)/$$s.csv \
	        $(OUT)/$$s.png || { rc=1; echo "$$s: the plot failed"; }; \
	done; exit $$rc

# ---------------------------------------------------------------- install
# make install PREFIX=/usr/local DESTDIR=   (DESTDIR: a staging root, e.g. for packages)
# The CLI and ffnn-bench carry libffnn statically (the bench suites call kernels that the
# shared library does not export), so bin/ffnn needs no library path; programs link
# against lib/ with pkg-config (docs/C_API.md, "Building a program").
PREFIX   ?= /usr/local
BINDIR    = $(PREFIX)/bin
LIBDIR    = $(PREFIX)/lib
INCDIR    = $(PREFIX)/include
DATADIR   = $(PREFIX)/share/ffnn
MANDIR    = $(PREFIX)/share/man/man1
PLOT_SCRIPTS := $(wildcard bench/plot_*.py)

# The loader looks for the modules in the install directory too (src/backend/module_search.c,
# after the directory of libffnn): $(LIBDIR) of the build, rebuilt when PREFIX changes.
MODULE_DIR_STAMP := $(BUILD)/module-dir.txt
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(MODULE_DIR_STAMP) 2>/dev/null)" = "$(LIBDIR)" ] || \
    echo "$(LIBDIR)" > $(MODULE_DIR_STAMP); })
$(BUILD)/src/backend/module_search.o: $(MODULE_DIR_STAMP)
$(BUILD)/src/backend/module_search.o: ALL_CFLAGS += -DFFNN_MODULE_DIR='"$(LIBDIR)"'

# ffnn.pc (written by make install with its PREFIX): Libs for shared linking; for
# static linking (pkg-config --static) the libraries libffnn.a needs: Requires.private
# those with a .pc file here (libcjson, zlib), Libs.private the rest (libgomp, libm,
# libdl, cJSON of CJSON_DIR; CUDA's, NCCL and MPI are the modules', loaded at run time).
pc_have = $(shell pkg-config --exists $(1) 2>/dev/null && echo $(1))
PC_CJSON = $(if $(CJSON_DIR),,$(call pc_have,libcjson))
PC_ZLIB  = $(call pc_have,zlib)
# everything the library links with (LDLIBS: cJSON, zlib, libm, OpenMP, libdl)
# but what Requires.private brings, -fopenmp spelt as the library it links (-lgomp)
PC_LIBS_PRIVATE = $(patsubst -fopenmp,-lgomp,$(filter-out $(if $(PC_CJSON),-lcjson) \
    $(if $(PC_ZLIB),-lz),$(LDLIBS)))

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) \
	    $(DESTDIR)$(DATADIR) $(DESTDIR)$(MANDIR)
	install -m 755 $(BUILD)/ffnn $(DESTDIR)$(BINDIR)/ffnn
	install -m 755 $(BUILD)/ffnn-bench $(DESTDIR)$(BINDIR)/ffnn-bench
	install -m 644 $(BUILD)/libffnn.a $(DESTDIR)$(LIBDIR)/libffnn.a
	install -m 755 $(BUILD)/$(SHLIB) $(DESTDIR)$(LIBDIR)/$(SHLIB)
	$(if $(MODULES),install -m 755 $(MODULES) $(DESTDIR)$(LIBDIR)/)
	ln -sf $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libffnn.so
	install -m 644 include/ffnn.h $(DESTDIR)$(INCDIR)/ffnn.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@REQUIRES_PRIVATE@|$(strip $(PC_CJSON) $(PC_ZLIB))|' \
	    -e 's|@LIBS_PRIVATE@|$(strip $(PC_LIBS_PRIVATE))|' tools/ffnn.pc.in \
	    > $(DESTDIR)$(LIBDIR)/pkgconfig/ffnn.pc
	install -m 644 $(PLOT_SCRIPTS) $(DESTDIR)$(DATADIR)/
	install -m 644 docs/ffnn.1 $(DESTDIR)$(MANDIR)/ffnn.1
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && command -v ldconfig >/dev/null; then \
	    ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ffnn $(DESTDIR)$(BINDIR)/ffnn-bench $(DESTDIR)$(LIBDIR)/libffnn.a \
	    $(DESTDIR)$(LIBDIR)/$(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libffnn.so \
	    $(DESTDIR)$(INCDIR)/ffnn.h $(DESTDIR)$(LIBDIR)/pkgconfig/ffnn.pc \
	    $(DESTDIR)$(MANDIR)/ffnn.1 $(addprefix $(DESTDIR)$(DATADIR)/,$(notdir $(PLOT_SCRIPTS))) \
	    $(DESTDIR)$(LIBDIR)/libffnn-cuda.so $(DESTDIR)$(LIBDIR)/libffnn-mpi.so
	-rmdir $(DESTDIR)$(DATADIR) 2>/dev/null

# ---------------------------------------------------------------- examples
# examples/*.c: complete programs against the public API, linked with the shared
# library of this build (found through the rpath $ORIGIN/.., no LD_LIBRARY_PATH);
# make test runs them, and installs into a temporary DESTDIR to build them there with
# pkg-config, shared and static (tests/install_test.sh).
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
examples: $(EXAMPLES)
$(BUILD)/examples/%: examples/%.c include/ffnn.h $(BUILD)/libffnn.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=c11 -Wall -Wextra -Werror -Iinclude -o $@ $< \
	    -L$(BUILD) -Wl,-rpath,'$$ORIGIN/..' -lffnn
