/* ONNX Runtime's LoRA adapter file (".onnx_adapter"): the "TORT" flatbuffer of
 * onnxruntime/lora/adapter_format/adapter_schema.fbs, format version 1:
 *   table Adapter { format_version:int; adapter_version:int; model_version:int; parameters:[Parameter]; }
 *   table Parameter { name:string; dims:[int64]; data_type:TensorDataType (int32, ONNX codes);
 *                     raw_data:[uint8] (force_align: 8); } */
#ifndef WT_IO_ADAPTER_H
#define WT_IO_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

#define WT_ADAPTER_FORMAT_VERSION 1

/* Writes n tensors (names, dims, raw little-endian data). *out malloc'd. */
int wt_adapter_write(const wt_const_tensor *params, int n, int adapter_version, int model_version,
                     uint8_t **out, size_t *len);
/* Reads an adapter file (every offset checked): *params (malloc'd, data copied; free with
 * wt_adapter_free) and their count. Errors name the file part that is wrong. */
int wt_adapter_read(const uint8_t *bytes, size_t len, wt_const_tensor **params, int *n,
                    int *adapter_version, int *model_version);
void wt_adapter_free(wt_const_tensor *params, int n);

#endif
