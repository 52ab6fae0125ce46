// Spectrum broadcast x complex filter of the S3Attention smoother (paper 001, eq. 3; Algorithm 2):
//   out[b, f, c] = spectrum[b, f, c / group_size] * weight[f, c]
// for spectrum (B, F, fold), weight (F, D) and out (B, F, D), all complex, contiguous, interleaved (re, im)
// as torch.view_as_real lays them out; D = fold * group_size. Gradients follow torch's convention for
// complex autograd (the gradient of y = a * b with respect to a is grad_y * conj(b)):
//   grad_spectrum[b, f, g] = s(f) * sum over the channels c of group g of grad_out[b, f, c] * conj(weight[f, c])
//   grad_weight[f, c]      = s(f) * sum over b of grad_out[b, f, c] * conj(spectrum[b, f, c / group_size])
// with s(f) = 2 for 1 <= f <= doubled_bins, else 1. When the filter output feeds an irFFT of length L, the
// irFFT's gradient is rfft(grad) / L with bins 1 .. L - F doubled (the bins whose conjugate mirror the
// one-sided spectrum leaves out); passing doubled_bins = L - F folds that doubling into these kernels
// instead of a separate pass over the (B, F, D) gradient. doubled_bins = 0 gives the plain gradients.
// All loops are grid-stride loops, so any launch shape covers every output exactly once; divisions happen
// once per thread item, never in the inner loops. Entry points: group_filter_{f32,f64},
// group_filter_grad_spectrum_{f32,f64}, group_filter_grad_weight_{f32,f64}.

template <typename T>
struct alignas(2 * sizeof(T)) Complex {
  T re;
  T im;
};

template <typename T>
__device__ __forceinline__ Complex<T> multiply(Complex<T> a, Complex<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// a * conj(b)
template <typename T>
__device__ __forceinline__ Complex<T> multiply_conj(Complex<T> a, Complex<T> b) {
  return {a.re * b.re + a.im * b.im, a.im * b.re - a.re * b.im};
}

// Threads stride over the F * D filter entries along x and over the batch along y: each thread loads its
// filter entry once and reuses it for every batch row it owns; stores are coalesced along the channels.
template <typename T>
__device__ __forceinline__ void group_filter(const Complex<T>* __restrict__ spectrum,
                                             const Complex<T>* __restrict__ weight, Complex<T>* __restrict__ out,
                                             long long batch, int n_freq, int d_model, int group_size) {
  const long long n_filter = static_cast<long long>(n_freq) * d_model;
  const long long spectrum_row = static_cast<long long>(n_freq) * (d_model / group_size);
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_filter; i += stride) {
    const long long f = i / d_model;
    const int c = static_cast<int>(i - f * d_model);
    const long long spectrum_offset = f * (d_model / group_size) + c / group_size;
    const Complex<T> w = weight[i];
    for (long long b = blockIdx.y; b < batch; b += gridDim.y) {
      out[b * n_filter + i] = multiply(spectrum[b * spectrum_row + spectrum_offset], w);
    }
  }
}

template <typename T>
__device__ __forceinline__ T bin_scale(long long f, int doubled_bins) {
  return (f >= 1 && f <= doubled_bins) ? T(2) : T(1);
}

// One thread item per (b, f, g): the segmented sum over the group's channels.
template <typename T>
__device__ __forceinline__ void group_filter_grad_spectrum(const Complex<T>* __restrict__ grad_out,
                                                           const Complex<T>* __restrict__ weight,
                                                           Complex<T>* __restrict__ grad_spectrum, long long batch,
                                                           int n_freq, int d_model, int group_size,
                                                           int doubled_bins) {
  const int fold = d_model / group_size;
  const long long n_items = batch * n_freq * fold;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n_items; k += stride) {
    const long long row = k / fold;  // b * n_freq + f
    const int g = static_cast<int>(k - row * fold);
    const long long f = row % n_freq;
    const Complex<T>* grad = grad_out + row * d_model + static_cast<long long>(g) * group_size;
    const Complex<T>* w = weight + f * d_model + static_cast<long long>(g) * group_size;
    Complex<T> sum = {T(0), T(0)};
#pragma unroll 4
    for (int j = 0; j < group_size; ++j) {
      const Complex<T> term = multiply_conj(grad[j], w[j]);
      sum.re += term.re;
      sum.im += term.im;
    }
    const T scale = bin_scale<T>(f, doubled_bins);
    grad_spectrum[k] = {sum.re * scale, sum.im * scale};
  }
}

// One thread item per filter entry (f, c): the reduction over the batch, coalesced along the channels.
template <typename T>
__device__ __forceinline__ void group_filter_grad_weight(const Complex<T>* __restrict__ grad_out,
                                                         const Complex<T>* __restrict__ spectrum,
                                                         Complex<T>* __restrict__ grad_weight, long long batch,
                                                         int n_freq, int d_model, int group_size,
                                                         int doubled_bins) {
  const long long n_filter = static_cast<long long>(n_freq) * d_model;
  const long long spectrum_row = static_cast<long long>(n_freq) * (d_model / group_size);
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_filter; i += stride) {
    const long long f = i / d_model;
    const int c = static_cast<int>(i - f * d_model);
    const long long spectrum_offset = f * (d_model / group_size) + c / group_size;
    Complex<T> sum = {T(0), T(0)};
#pragma unroll 4
    for (long long b = 0; b < batch; ++b) {
      const Complex<T> term = multiply_conj(grad_out[b * n_filter + i], spectrum[b * spectrum_row + spectrum_offset]);
      sum.re += term.re;
      sum.im += term.im;
    }
    const T scale = bin_scale<T>(f, doubled_bins);
    grad_weight[i] = {sum.re * scale, sum.im * scale};
  }
}

#define GROUP_FILTER_KERNELS(T, SUFFIX)                                                                       \
  extern "C" __global__ void group_filter_##SUFFIX(const Complex<T>* __restrict__ spectrum,                  \
                                                   const Complex<T>* __restrict__ weight,                    \
                                                   Complex<T>* __restrict__ out, long long batch, int n_freq,\
                                                   int d_model, int group_size) {                            \
    group_filter<T>(spectrum, weight, out, batch, n_freq, d_model, group_size);                              \
  }                                                                                                           \
  extern "C" __global__ void group_filter_grad_spectrum_##SUFFIX(                                             \
      const Complex<T>* __restrict__ grad_out, const Complex<T>* __restrict__ weight,                         \
      Complex<T>* __restrict__ grad_spectrum, long long batch, int n_freq, int d_model, int group_size,        \
      int doubled_bins) {                                                                                     \
    group_filter_grad_spectrum<T>(grad_out, weight, grad_spectrum, batch, n_freq, d_model, group_size,        \
                                  doubled_bins);                                                              \
  }                                                                                                           \
  extern "C" __global__ void group_filter_grad_weight_##SUFFIX(                                               \
      const Complex<T>* __restrict__ grad_out, const Complex<T>* __restrict__ spectrum,                       \
      Complex<T>* __restrict__ grad_weight, long long batch, int n_freq, int d_model, int group_size,          \
      int doubled_bins) {                                                                                     \
    group_filter_grad_weight<T>(grad_out, spectrum, grad_weight, batch, n_freq, d_model, group_size,          \
                                doubled_bins);                                                                \
  }

GROUP_FILTER_KERNELS(float, f32)
GROUP_FILTER_KERNELS(double, f64)
