"""Pure-torch building blocks (tensors in, tensors out): S3Attention parts, the attention zoo, TNN family."""

from forecaster.nn.fourier import FourierExtrapolation
from forecaster.nn.skeleton import S3AttentionMixer, SkeletonAttention
from forecaster.nn.skeleton_lra import ReferenceS3Block, ReferenceSkeletonAttention
from forecaster.nn.smoother import Smoother, filter_groups, fourier_smooth, segment_average

__all__ = [
    "FourierExtrapolation",
    "ReferenceS3Block",
    "ReferenceSkeletonAttention",
    "S3AttentionMixer",
    "SkeletonAttention",
    "Smoother",
    "filter_groups",
    "fourier_smooth",
    "segment_average",
]
