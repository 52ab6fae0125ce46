// Segment average of the S3Attention smoother (paper 001, eqs. 3-4, Algorithm 2): the d_model channels
// of every (batch, time) row are averaged over `fold` contiguous groups of `group_size` channels.
//
// Rows are contiguous and d_model = fold * group_size, so a contiguous (..., D) input is one flat run of
// groups: output k is the mean of inputs [k * group_size, (k + 1) * group_size). The loops are
// grid-stride loops over groups, so any launch shape covers every group exactly once, and no index needs
// a division. Entry points: segment_mean_{f32,f64} and segment_mean_backward_{f32,f64}.

template <typename T>
__device__ __forceinline__ void segment_mean(const T* __restrict__ x, T* __restrict__ out, long long n_groups,
                                             int group_size) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n_groups; k += stride) {
    const T* group = x + k * group_size;
    T sum = T(0);
#pragma unroll 4
    for (int j = 0; j < group_size; ++j) sum += group[j];
    out[k] = sum / static_cast<T>(group_size);
  }
}

// The mean's gradient: every input channel of group k receives grad_out[k] / group_size.
template <typename T>
__device__ __forceinline__ void segment_mean_backward(const T* __restrict__ grad_out, T* __restrict__ grad_x,
                                                      long long n_groups, int group_size) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n_groups; k += stride) {
    const T share = grad_out[k] / static_cast<T>(group_size);
    T* group = grad_x + k * group_size;
#pragma unroll 4
    for (int j = 0; j < group_size; ++j) group[j] = share;
  }
}

#define SEGMENT_AVERAGE_KERNELS(T, SUFFIX)                                                                   \
  extern "C" __global__ void segment_mean_##SUFFIX(const T* __restrict__ x, T* __restrict__ out,            \
                                                   long long n_groups, int group_size) {                    \
    segment_mean<T>(x, out, n_groups, group_size);                                                           \
  }                                                                                                          \
  extern "C" __global__ void segment_mean_backward_##SUFFIX(const T* __restrict__ grad_out,                 \
                                                            T* __restrict__ grad_x, long long n_groups,      \
                                                            int group_size) {                                \
    segment_mean_backward<T>(grad_out, grad_x, n_groups, group_size);                                        \
  }

SEGMENT_AVERAGE_KERNELS(float, f32)
SEGMENT_AVERAGE_KERNELS(double, f64)
