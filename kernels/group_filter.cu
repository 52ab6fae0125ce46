// Spectrum broadcast x complex filter of the S3Attention smoother (paper 001, eq. 3; Algorithm 2):
//   out[b, c, f] = spectrum[b, f, c / group_size] * weight[f, c] / divisor
// for spectrum (B, F, fold), weight (F, D) and out (B, D, F), all complex, contiguous, interleaved (re, im)
// as torch.view_as_real lays them out; D = fold * group_size. The output is channel-major, frequency last,
// so the irFFT over time that follows runs along the contiguous axis and torch needs no transposing copy;
// divisor = L folds the irFFT's 1 / L into this pass (the irFFT then runs unnormalized).
// Gradients take the gradient of out in the same (B, D, F) layout and follow torch's convention for
// complex autograd (the gradient of y = a * b with respect to a is grad_y * conj(b)):
//   grad_spectrum[b, f, g] = s(f) * sum over the channels c of group g of grad[b, c, f] * conj(weight[f, c])
//   grad_weight[f, c]      = s(f) * sum over b of grad[b, c, f] * conj(spectrum[b, f, c / group_size])
// with s(f) = 2 / divisor for 1 <= f <= doubled_bins, else 1 / divisor. When out feeds an irFFT of length
// L, grad is the unnormalized rFFT of the output's gradient, doubled_bins = L - F (the bins whose conjugate
// mirror the one-sided spectrum leaves out) and divisor = L: the doubling and the 1 / L cost no extra pass.
// doubled_bins = 0 and divisor = 1 give the plain gradients.
// Threads run along the frequencies (coalesced on the (B, D, F) tensors) and each owns CHANNELS_PER_THREAD
// neighbouring channels, so its filter entries share one memory sector and a group's spectrum value is
// loaded once for all of them. All loops are grid-stride loops, so any launch shape covers every output
// exactly once. Entry points: group_filter_{f32,f64}, group_filter_grad_spectrum_{f32,f64},
// group_filter_grad_weight_{f32,f64}.

// Keep equal to kernels.runtime.CHANNELS_PER_THREAD, which sizes the grid (correctness does not depend on it).
constexpr int CHANNELS_PER_THREAD = 4;

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

template <typename T>
__device__ __forceinline__ T bin_scale(long long f, int doubled_bins, int divisor) {
  return ((f >= 1 && f <= doubled_bins) ? T(2) : T(1)) / static_cast<T>(divisor);
}

// Thread item i of the per-channel kernels (group_filter, group_filter_grad_weight): frequency f, fastest, and
// channels first .. first + channels - 1.
struct ChannelItem {
  long long f;
  int first;
  int channels;
};

__device__ __forceinline__ long long channel_items(int n_freq, int d_model) {
  return static_cast<long long>((d_model + CHANNELS_PER_THREAD - 1) / CHANNELS_PER_THREAD) * n_freq;
}

__device__ __forceinline__ ChannelItem channel_item(long long i, int n_freq, int d_model) {
  const long long q = i / n_freq;
  const int first = static_cast<int>(q) * CHANNELS_PER_THREAD;
  const int remaining = d_model - first;
  return {i - q * n_freq, first, remaining < CHANNELS_PER_THREAD ? remaining : CHANNELS_PER_THREAD};
}

// Channel items: each thread loads its filter entries once and reuses them for every batch row of its grid-y
// slice.
template <typename T>
__device__ __forceinline__ void group_filter(const Complex<T>* __restrict__ spectrum,
                                             const Complex<T>* __restrict__ weight, Complex<T>* __restrict__ out,
                                             long long batch, int n_freq, int d_model, int group_size,
                                             int divisor) {
  const int fold = d_model / group_size;
  const long long n_items = channel_items(n_freq, d_model);
  const long long spectrum_row = static_cast<long long>(n_freq) * fold;
  const long long out_row = static_cast<long long>(d_model) * n_freq;
  const T scale = T(1) / static_cast<T>(divisor);
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_items; i += stride) {
    const ChannelItem item = channel_item(i, n_freq, d_model);
    const long long f = item.f;
    const int first = item.first, channels = item.channels;
    Complex<T> w[CHANNELS_PER_THREAD];
    int group[CHANNELS_PER_THREAD];
#pragma unroll
    for (int k = 0; k < CHANNELS_PER_THREAD; ++k) {
      if (k < channels) {
        const Complex<T> entry = weight[f * d_model + first + k];
        w[k] = {entry.re * scale, entry.im * scale};
        group[k] = (first + k) / group_size;
      }
    }
    for (long long b = blockIdx.y; b < batch; b += gridDim.y) {
      const Complex<T>* row = spectrum + b * spectrum_row + f * fold;
      Complex<T>* target = out + b * out_row + static_cast<long long>(first) * n_freq + f;
#pragma unroll
      for (int k = 0; k < CHANNELS_PER_THREAD; ++k) {
        if (k < channels) target[k * static_cast<long long>(n_freq)] = multiply(row[group[k]], w[k]);
      }
    }
  }
}

// Items (b, g, f), f fastest: the segmented sum over group g's channels, reading grad coalesced.
template <typename T>
__device__ __forceinline__ void group_filter_grad_spectrum(const Complex<T>* __restrict__ grad,
                                                           const Complex<T>* __restrict__ weight,
                                                           Complex<T>* __restrict__ grad_spectrum, long long batch,
                                                           int n_freq, int d_model, int group_size,
                                                           int doubled_bins, int divisor) {
  const int fold = d_model / group_size;
  const long long n_items = batch * fold * n_freq;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_items; i += stride) {
    const long long row = i / n_freq;  // b * fold + g
    const long long f = i - row * n_freq;
    const long long b = row / fold;
    const int g = static_cast<int>(row - b * fold);
    const long long first = static_cast<long long>(g) * group_size;
    const Complex<T>* column = grad + (b * d_model + first) * n_freq + f;
    const Complex<T>* w = weight + f * d_model + first;
    Complex<T> sum = {T(0), T(0)};
#pragma unroll 4
    for (int j = 0; j < group_size; ++j) {
      const Complex<T> term = multiply_conj(column[j * static_cast<long long>(n_freq)], w[j]);
      sum.re += term.re;
      sum.im += term.im;
    }
    const T scale = bin_scale<T>(f, doubled_bins, divisor);
    grad_spectrum[(b * n_freq + f) * fold + g] = {sum.re * scale, sum.im * scale};
  }
}

// Channel items as in group_filter: the reduction over the batch for the thread's channels.
template <typename T>
__device__ __forceinline__ void group_filter_grad_weight(const Complex<T>* __restrict__ grad,
                                                         const Complex<T>* __restrict__ spectrum,
                                                         Complex<T>* __restrict__ grad_weight, long long batch,
                                                         int n_freq, int d_model, int group_size,
                                                         int doubled_bins, int divisor) {
  const int fold = d_model / group_size;
  const long long n_items = channel_items(n_freq, d_model);
  const long long spectrum_row = static_cast<long long>(n_freq) * fold;
  const long long grad_row = static_cast<long long>(d_model) * n_freq;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_items; i += stride) {
    const ChannelItem item = channel_item(i, n_freq, d_model);
    const long long f = item.f;
    const int first = item.first, channels = item.channels;
    Complex<T> sum[CHANNELS_PER_THREAD];
    int group[CHANNELS_PER_THREAD];
#pragma unroll
    for (int k = 0; k < CHANNELS_PER_THREAD; ++k) {
      sum[k] = {T(0), T(0)};
      group[k] = (first + k) / group_size;
    }
    for (long long b = 0; b < batch; ++b) {
      const Complex<T>* row = spectrum + b * spectrum_row + f * fold;
      const Complex<T>* source = grad + b * grad_row + static_cast<long long>(first) * n_freq + f;
#pragma unroll
      for (int k = 0; k < CHANNELS_PER_THREAD; ++k) {
        if (k < channels) {
          const Complex<T> term = multiply_conj(source[k * static_cast<long long>(n_freq)], row[group[k]]);
          sum[k].re += term.re;
          sum[k].im += term.im;
        }
      }
    }
    const T scale = bin_scale<T>(f, doubled_bins, divisor);
#pragma unroll
    for (int k = 0; k < CHANNELS_PER_THREAD; ++k) {
      if (k < channels) grad_weight[f * d_model + first + k] = {sum[k].re * scale, sum[k].im * scale};
    }
  }
}

#define GROUP_FILTER_KERNELS(T, SUFFIX)                                                                       \
  extern "C" __global__ void group_filter_##SUFFIX(const Complex<T>* __restrict__ spectrum,                  \
                                                   const Complex<T>* __restrict__ weight,                    \
                                                   Complex<T>* __restrict__ out, long long batch, int n_freq,\
                                                   int d_model, int group_size, int divisor) {               \
    group_filter<T>(spectrum, weight, out, batch, n_freq, d_model, group_size, divisor);                     \
  }                                                                                                           \
  extern "C" __global__ void group_filter_grad_spectrum_##SUFFIX(                                             \
      const Complex<T>* __restrict__ grad, const Complex<T>* __restrict__ weight,                             \
      Complex<T>* __restrict__ grad_spectrum, long long batch, int n_freq, int d_model, int group_size,        \
      int doubled_bins, int divisor) {                                                                        \
    group_filter_grad_spectrum<T>(grad, weight, grad_spectrum, batch, n_freq, d_model, group_size,            \
                                  doubled_bins, divisor);                                                     \
  }                                                                                                           \
  extern "C" __global__ void group_filter_grad_weight_##SUFFIX(                                               \
      const Complex<T>* __restrict__ grad, const Complex<T>* __restrict__ spectrum,                           \
      Complex<T>* __restrict__ grad_weight, long long batch, int n_freq, int d_model, int group_size,          \
      int doubled_bins, int divisor) {                                                                        \
    group_filter_grad_weight<T>(grad, spectrum, grad_weight, batch, n_freq, d_model, group_size, doubled_bins, \
                                divisor);                                                                     \
  }

GROUP_FILTER_KERNELS(float, f32)
GROUP_FILTER_KERNELS(double, f64)
