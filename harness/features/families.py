"""Operator families: the kind of kernel an operator call needs, from the operator's name.

A condition such as "an operand broadcast along a middle dimension" means one thing to a
pointwise kernel and another to a matrix product, and a backend's bug sits in one kernel
family: coverage is reported per family (``harness.features.coverage``). The same names
classify a Dynamo graph's calls (``torch.add``, ``operator.mul``, the method ``sum``) and
an ATen graph's (``aten.add.Tensor``, ``aten.native_layer_norm_backward``), so a condition
read from either level lands in the same family.

Torch-free: a name in, a family out.
"""

from __future__ import annotations

import re

POINTWISE = "pointwise"
REDUCTION = "reduction"
LINEAR_ALGEBRA = "linear algebra"
CONVOLUTION = "convolution"
NORMALIZATION = "normalization"
POOLING = "pooling and resampling"
INDEXING = "indexing"
SHAPE = "shape and views"
SORTING = "sorting and scans"
RANDOM = "random"
COPY = "copies and conversions"
CREATION = "creation"
HIGHER_ORDER = "higher-order"
CUSTOM = "custom"
OTHER = "other"

FAMILIES = (POINTWISE, REDUCTION, LINEAR_ALGEBRA, CONVOLUTION, NORMALIZATION, POOLING, INDEXING, SHAPE, SORTING,
            RANDOM, COPY, CREATION, HIGHER_ORDER, CUSTOM, OTHER)

_NAMES = {
    POINTWISE: """
        abs absolute acos acosh add addcdiv addcmul angle asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
        bitwise_not bitwise_or bitwise_right_shift bitwise_xor ceil celu clamp clamp_max clamp_min clip copysign cos
        cosh deg2rad digamma div divide elu eq erf erfc erfinv exp exp2 expm1 fix float_power floor floor_divide fmax
        fmin fmod frac gcd ge gelu glu gt hardshrink hardsigmoid hardswish hardtanh heaviside hypot i0 igamma
        igammac isfinite isinf isnan isneginf isposinf lcm ldexp le leaky_relu lerp lgamma log log10 log1p log2
        logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logit lt maximum minimum mish mul
        multiply mvlgamma nan_to_num ne neg negative nextafter polygamma positive pow prelu rad2deg reciprocal relu
        relu6 remainder round rsqrt rsub selu sgn sigmoid sign signbit silu sin sinc sinh softplus softshrink sqrt
        square sub subtract tan tanh tanhshrink threshold true_divide trunc where xlogy iadd isub imul itruediv
        truediv floordiv mod neg_ invert and_ or_ xor lshift rshift not_ pos radd rmul rsub rtruediv rpow sigmoid_backward
        tanh_backward threshold_backward gelu_backward silu_backward hardtanh_backward leaky_relu_backward
        elu_backward softplus_backward hardswish_backward hardsigmoid_backward mish_backward logit_backward
        special_erfcx special_xlog1py special_entr isclose
    """,
    REDUCTION: """
        sum mean amax amin max min prod std var logsumexp norm vector_norm matrix_norm frobenius_norm nansum nanmean
        any all argmax argmin count_nonzero var_mean std_mean aminmax softmax log_softmax _softmax _log_softmax
        softmin _softmax_backward_data _log_softmax_backward_data mse_loss l1_loss smooth_l1_loss huber_loss
        cross_entropy nll_loss nll_loss_forward nll_loss_backward nll_loss2d_forward nll_loss2d_backward
        binary_cross_entropy binary_cross_entropy_with_logits kl_div mse_loss_backward dist cosine_similarity
        pairwise_distance cdist median nanmedian mode logcumsumexp
    """,
    LINEAR_ALGEBRA: """
        mm bmm matmul addmm addbmm baddbmm einsum linear dot vdot mv addmv outer ger tensordot inner kron
        scaled_dot_product_attention _scaled_dot_product_flash_attention _scaled_dot_product_efficient_attention
        _scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_flash_attention_for_cpu_backward
        _scaled_dot_product_attention_math bilinear cholesky inverse det slogdet solve qr svd lu triangular_solve
        linalg_solve linalg_inv linalg_det linalg_cholesky linalg_qr linalg_svd linalg_eigh cross linalg_cross
        chain_matmul multi_dot matrix_power baddbmm_ _addmm_activation
    """,
    CONVOLUTION: """
        conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d convolution _convolution
        convolution_backward mkldnn_convolution _conv_depthwise2d conv_tbc
    """,
    NORMALIZATION: """
        layer_norm batch_norm group_norm instance_norm rms_norm local_response_norm native_layer_norm
        native_batch_norm native_group_norm _native_batch_norm_legit _native_batch_norm_legit_no_training
        _native_batch_norm_legit_functional native_layer_norm_backward native_batch_norm_backward
        native_group_norm_backward _fused_rms_norm normalize _batch_norm_with_update
        _batch_norm_with_update_functional batch_norm_backward
    """,
    POOLING: """
        max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool2d
        adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d max_pool2d_with_indices
        max_pool3d_with_indices _adaptive_avg_pool2d _adaptive_avg_pool3d lp_pool2d upsample_nearest
        upsample_bilinear upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_bilinear2d
        upsample_bicubic2d upsample_linear1d upsample_trilinear3d _upsample_nearest_exact2d interpolate upsample
        pixel_shuffle pixel_unshuffle grid_sampler grid_sampler_2d grid_sample affine_grid_generator
        max_unpool2d fractional_max_pool2d
    """,
    INDEXING: """
        index_select gather scatter scatter_add scatter_reduce index_put index_put_ index index_add index_copy
        index_fill masked_fill masked_select masked_scatter take take_along_dim put embedding embedding_bag
        embedding_dense_backward _embedding_bag nonzero argwhere one_hot index_reduce _unsafe_index _unsafe_index_put
        _index_put_impl _unsafe_masked_index _unsafe_masked_index_put_accumulate bucketize histc bincount
    """,
    SHAPE: """
        view reshape permute transpose t expand expand_as squeeze unsqueeze cat concat concatenate stack hstack
        vstack dstack split split_with_sizes chunk tensor_split narrow slice select flip fliplr flipud roll repeat
        repeat_interleave tile tril triu diagonal diag diag_embed flatten unflatten unbind movedim moveaxis swapaxes
        swapdims as_strided slice_scatter select_scatter diagonal_scatter as_strided_scatter alias detach view_as
        _unsafe_view unfold contiguous getitem setitem broadcast_to broadcast_tensors meshgrid constant_pad_nd pad
        reflection_pad1d reflection_pad2d replication_pad2d atleast_1d atleast_2d atleast_3d rot90 real imag
        view_as_real view_as_complex conj _conj resolve_conj resolve_neg lift_fresh squeeze_copy unsqueeze_copy
        view_copy permute_copy expand_copy t_copy transpose_copy split_copy unbind_copy _reshape_alias narrow_copy
        trace
    """,
    SORTING: """
        sort argsort msort topk kthvalue cumsum cumprod cummax cummin unique unique_consecutive _unique2
        searchsorted
    """,
    RANDOM: """
        rand randn randint randperm rand_like randn_like randint_like bernoulli multinomial normal poisson
        uniform uniform_ normal_ exponential_ geometric_ cauchy_ log_normal_ random_ dropout native_dropout
        dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout rrelu rrelu_with_noise bernoulli_
        native_dropout_backward
    """,
    COPY: """
        to type type_as float double half bfloat16 int long short char byte bool _to_copy copy copy_ clone
        convert_element_type lift_fresh_copy fill fill_ zero zero_ masked_fill_ detach_copy cpu cuda
        _assert_tensor_metadata
    """,
    CREATION: """
        zeros ones full empty arange linspace logspace eye zeros_like ones_like full_like empty_like empty_strided
        scalar_tensor tensor new_zeros new_ones new_full new_empty new_empty_strided new_tensor as_tensor
        sym_size sym_stride sym_numel iota
    """,
}
_FAMILY_OF = {name: family for family, names in _NAMES.items() for name in names.split()}

# Prefixes and suffixes a name may carry around its kernel's name: in-place and out= forms,
# ATen's native_ and leading underscores, backward formulas (the same kernel family).
_AROUND = re.compile(r"^(native_|_+)|(_backward(_data)?|_with_indices|_forward|_default|_)$")


def base_name(name: str) -> str:
    """``aten.add.Tensor`` -> ``add``; ``torch.nn.functional.relu`` -> ``relu``; ``add_`` stays
    (family_of strips it)."""
    parts = name.replace("::", ".").split(".")
    # An operator's qualified name: namespace, operator, overload (aten.sum.dim_IntList).
    if len(parts) == 3 and parts[0] in TORCH_NAMESPACES:
        return parts[1]
    return parts[-1]


def family_of(name: str, namespace: str | None = None, higher_order: bool = False) -> str:
    """The family of an operator called ``name`` (a base name or a qualified one); an
    operator of a namespace other than torch's own is custom, a higher-order operator its
    own family."""
    if higher_order:
        return HIGHER_ORDER
    if namespace is not None and namespace not in TORCH_NAMESPACES:
        return CUSTOM
    name = base_name(name)
    if name in _FAMILY_OF:
        return _FAMILY_OF[name]
    stripped = name
    for _ in range(3):  # native_layer_norm_backward -> layer_norm; add_ -> add; _softmax -> softmax
        stripped = _AROUND.sub("", stripped)
        if stripped in _FAMILY_OF:
            return _FAMILY_OF[stripped]
    return OTHER


# Operator namespaces that belong to torch itself: anything else is a custom operator.
TORCH_NAMESPACES = frozenset({"aten", "prims", "higher_order", "_c10d_functional", "c10d_functional",
                              "_c10d_functional_autograd", "_dtensor", "profiler", "inductor", "quantized",
                              "_quantized", "debugprims", "_refs"})
