/* onnx_none.c - ffnn_model_export_onnx in a build without protobuf-c (the
 * Makefile uses onnx_export.c when pkg-config finds libprotobuf-c and protoc-c,
 * which generates the schema's C code, is on PATH). */
#include "core/error.h"
#include "core/model.h"

ffnn_status ffnn_model_export_onnx(const ffnn_model *m, const char *path)
{
    (void)m, (void)path;
    return ffnn_fail(FFNN_ERR_UNSUPPORTED, "ONNX export: this build of ffnn has no protobuf-c "
                     "(libprotobuf-c or protoc-c was not found at build time); install "
                     "them (Debian: apt-get install libprotobuf-c-dev protobuf-c-compiler) "
                     "and rebuild");
}
