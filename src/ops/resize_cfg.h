/* A resize's mode, coordinate transformation and nearest rounding (ONNX Resize / Upsample
 * attributes), as the resize family's infer parses them and its kernels (backend/cpu/resize.h)
 * apply them. */
#ifndef WT_OPS_RESIZE_CFG_H
#define WT_OPS_RESIZE_CFG_H

enum { WT_RESIZE_NEAREST, WT_RESIZE_LINEAR, WT_RESIZE_CUBIC };
enum {
  WT_RESIZE_HALF_PIXEL,
  WT_RESIZE_PYTORCH_HALF_PIXEL,
  WT_RESIZE_ALIGN_CORNERS,
  WT_RESIZE_ASYMMETRIC,
  WT_RESIZE_TF_HALF_PIXEL_FOR_NEAREST,
  WT_RESIZE_TF_CROP_AND_RESIZE
};
enum { WT_NEAREST_ROUND_PREFER_FLOOR, WT_NEAREST_ROUND_PREFER_CEIL, WT_NEAREST_FLOOR, WT_NEAREST_CEIL };

typedef struct wt_resize_cfg {
  int mode, coord, nearest_mode, exclude_outside;
  float cubic_a;
} wt_resize_cfg;

#endif
