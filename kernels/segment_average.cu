// Segment average of the S3Attention smoother (paper 001, eqs. 3-4, Algorithm 2): the d_model channels
// of every (batch, time) row are averaged over `fold` contiguous groups of `group_size` channels.
//
// Rows are contiguous and d_model = fold * group_size, so a contiguous (..., D) input is one flat run of
// groups: output k is the mean of inputs [k * group_size, (k + 1) * group_size). The loops are
// grid-stride loops (over groups forward, over input elements backward), so any launch shape covers every
// output exactly once. Entry points: segment_mean_{f32,f64} and segment_mean_backward_{f32,f64}.

// 16 bytes of T, loaded with one vector instruction.
template <typename T>
struct alignas(16) Packet {
  T lane[16 / sizeof(T)];
};

// One thread item per group. A thread reads its group's contiguous run in 16-byte packets when the run is
// whole packets and aligned (fewer, wider loads on the uncoalesced per-thread runs), else element by element.
template <typename T>
__device__ __forceinline__ void segment_mean(const T* __restrict__ x, T* __restrict__ out, long long n_groups,
                                             int group_size) {
  constexpr int width = 16 / sizeof(T);
  const bool packed = group_size % width == 0 && reinterpret_cast<unsigned long long>(x) % 16 == 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n_groups; k += stride) {
    const T* group = x + k * group_size;
    T sum = T(0);
    if (packed) {
      const Packet<T>* packets = reinterpret_cast<const Packet<T>*>(group);
#pragma unroll 2
      for (int j = 0; j < group_size / width; ++j) {
        const Packet<T> packet = packets[j];
#pragma unroll
        for (int lane = 0; lane < width; ++lane) sum += packet.lane[lane];
      }
    } else {
#pragma unroll 4
      for (int j = 0; j < group_size; ++j) sum += group[j];
    }
    out[k] = sum / static_cast<T>(group_size);
  }
}

// The mean's gradient: input element i of group i / group_size receives grad_out[i / group_size] / group_size.
// One thread item per input element, so the (large) gradient is written coalesced.
template <typename T>
__device__ __forceinline__ void segment_mean_backward(const T* __restrict__ grad_out, T* __restrict__ grad_x,
                                                      long long n_elements, int group_size) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_elements; i += stride) {
    grad_x[i] = grad_out[i / group_size] / static_cast<T>(group_size);
  }
}

#define SEGMENT_AVERAGE_KERNELS(T, SUFFIX)                                                                   \
  extern "C" __global__ void segment_mean_##SUFFIX(const T* __restrict__ x, T* __restrict__ out,            \
                                                   long long n_groups, int group_size) {                    \
    segment_mean<T>(x, out, n_groups, group_size);                                                           \
  }                                                                                                          \
  extern "C" __global__ void segment_mean_backward_##SUFFIX(const T* __restrict__ grad_out,                 \
                                                            T* __restrict__ grad_x, long long n_elements,    \
                                                            int group_size) {                                \
    segment_mean_backward<T>(grad_out, grad_x, n_elements, group_size);                                      \
  }

SEGMENT_AVERAGE_KERNELS(float, f32)
SEGMENT_AVERAGE_KERNELS(double, f64)
