/* A loss op's attribute 'reduction', as its definitions parse it and its kernels apply it. */
#ifndef WT_OPS_LOSS_REDUCTION_H
#define WT_OPS_LOSS_REDUCTION_H

enum { WT_LOSS_NONE = 0, WT_LOSS_SUM = 1, WT_LOSS_MEAN = 2 };

#endif
