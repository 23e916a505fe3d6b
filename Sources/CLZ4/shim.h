#ifndef CASK_CLZ4_SHIM_H
#define CASK_CLZ4_SHIM_H
// The system liblz4 block API (LZ4_compress_default, LZ4_decompress_safe, LZ4_compressBound).
#include <lz4.h>
#endif
