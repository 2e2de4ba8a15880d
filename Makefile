# ffnn - build the library (static and shared), the CLI and the tests.
#   make            library + CLI (with CUDA when nvcc is found, else CPU only)
#   make test       build and run every test (GPU tests skip without a GPU)
#   make asan       the tests under AddressSanitizer + UBSan (CPU code)
#   make clean
#   make CUDA_ARCH="-gencode arch=compute_90,code=sm_90"   one target only
#   make NVCC=      force a CPU-only build

CC       ?= gcc
CFLAGS   ?= -O2 -g
# OpenMP (the omp cpu backend, src/backend/omp/; Debian's gcc ships libgomp). make OMP_CFLAGS=
# builds without it: the omp backend then runs on one thread.
OMP_CFLAGS ?= -fopenmp
ALL_CFLAGS = $(CFLAGS) -std=c11 -Wall -Wextra -Werror -fPIC -Iinclude -Isrc $(OMP_CFLAGS)
LDLIBS   := -lcjson -lz -lm $(OMP_CFLAGS)

# cJSON (Debian: libcjson-dev). Where it is not installed (the device machine):
#   make CJSON_DIR=DIR   with DIR/include/cjson/cJSON.h and DIR/lib/libcjson.so
ifneq ($(strip $(CJSON_DIR)),)
  ALL_CFLAGS += -I$(CJSON_DIR)/include
  LDLIBS   := -L$(CJSON_DIR)/lib -Wl,-rpath,$(abspath $(CJSON_DIR))/lib $(LDLIBS)
endif

CUDA_HOME ?= /usr/local/cuda
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls $(CUDA_HOME)/bin/nvcc 2>/dev/null)
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
             -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -lineinfo
ALL_NVCCFLAGS = $(NVCCFLAGS) -std=c++17 $(CUDA_ARCH) -Xcompiler -Wall,-Wextra,-fPIC -Werror all-warnings \
             -Iinclude -Isrc

BUILD    := build
# the layers (docs/ARCHITECTURE.md): core <- data <- io <- backend <- strategy <- train
C_SRC    := $(filter-out src/backend/cuda_none.c,$(wildcard src/core/*.c src/data/*.c src/io/*.c \
              src/backend/*.c src/backend/cpu/*.c src/backend/omp/*.c src/strategy/*.c src/train/*.c))
CU_SRC   := $(wildcard src/backend/cuda/*.cu)
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/*.c)

ifneq ($(strip $(NVCC)),)
  LIB_OBJ := $(C_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.o)
  # cuBLAS (the cublas strategy, src/backend/cuda/cublas.cu) is a shared library: the rpath
  # lets the binaries find libcublas.so at run time without LD_LIBRARY_PATH.
  LDLIBS  += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart_static -ldl -lrt -lpthread -lstdc++
  BUILD_KIND := with CUDA ($(NVCC))
else
  LIB_OBJ := $(C_SRC:%.c=$(BUILD)/%.o) $(BUILD)/src/backend/cuda_none.o
  BUILD_KIND := CPU only (nvcc not found)
endif

.PHONY: all test asan clean info
all: info $(BUILD)/libffnn.a $(BUILD)/libffnn.so $(BUILD)/ffnn

info:
	@echo "ffnn build: $(BUILD_KIND)"

$(BUILD)/%.o: %.c $(wildcard include/*.h src/*.h src/*/*.h src/*/*/*.h cli/*.h tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The omp kernels: -O3 (vectorisation), no errno from sqrtf (lets it vectorise; same
# values); the matmuls contract a*b+c into fma (gemm.c), the element-wise ops do not
# (ISO C default), so that they keep the reference's roundings. No -march: the
# kernels for AVX2 / AVX-512 are chosen at run time.
$(BUILD)/src/backend/omp/%.o: ALL_CFLAGS += -O3 -fno-math-errno $(if $(strip $(OMP_CFLAGS)),,-Wno-unknown-pragmas)
$(BUILD)/src/backend/omp/gemm.o: ALL_CFLAGS += -ffp-contract=fast

$(BUILD)/%.o: %.cu $(wildcard include/*.h src/*.h src/*/*.h src/backend/cuda/*.cuh)
	@mkdir -p $(dir $@)
	$(NVCC) $(ALL_NVCCFLAGS) -c $< -o $@

$(BUILD)/libffnn.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libffnn.so: $(LIB_OBJ)
	$(CC) $(LDFLAGS) -shared -o $@ $^ $(LDLIBS)

$(BUILD)/ffnn: $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libffnn.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libffnn.a $(LDLIBS)

$(BUILD)/ffnn_tests: $(TEST_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libffnn.a
	$(CC) $(LDFLAGS) -o $@ $(TEST_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libffnn.a $(LDLIBS)

test: all $(BUILD)/ffnn_tests
	$(BUILD)/ffnn_tests

asan:
	$(MAKE) BUILD=build-asan NVCC= CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	    LDFLAGS="-fsanitize=address,undefined" \
	    build-asan/ffnn_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 build-asan/ffnn_tests

clean:
	rm -rf build build-asan
