"""One table of the implementations of each equation the exercise sets ask learners to write themselves.

An exercise set switches off computations, not dotted paths: its ``switch_off`` names equations of
``EQUATIONS`` (``"masked_softmax"``, ``"cross_entropy"``), and the teacher's grader switches off, in the
learner's sandbox, every implementation listed here (attnlib's and torch's Python functions, classes and
methods, by identity) and every aten operator listed (a failing kernel in torch's dispatcher, below
``torch._C._nn``, ``torch._C._VariableFunctions``, ``torch.ops.aten`` and the tensor methods). A road that is
an equation in disguise counts: log-softmax or softmin for softmax, a sparse softmax for a masked one (the
entries left out are the masked ones), a KL divergence or a weighted binary cross-entropy against one-hot
targets for cross-entropy, a cosine-embedding loss for a cosine.

``NOT_IMPLEMENTATIONS`` says why a callable that sounds like one of these families is none of them (a
gradient, a norm rather than a normalisation, random numbers). ``tests/exercises/test_implementations.py``
enumerates attnlib's public callables and torch's (``torch``, ``torch.nn.functional``, ``torch._C._nn``,
``torch._C._VariableFunctions``, ``torch.ops.aten``, ``torch.special``, ``torch.sparse``, ``torch.nn``) for
softmax, attention, normalisation and cross-entropy, finds each here, and checks in a sandbox of every set
that what the set switches off fails when called.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Equation:
    """What an equation computes, and its implementations: dotted paths of functions, classes and methods, and
    aten operators (both given as whitespace-separated text, kept as tuples)."""

    formula: str
    implementations: tuple[str, ...] | str
    operators: tuple[str, ...] | str = ()

    def __post_init__(self) -> None:
        for name in ("implementations", "operators"):
            value = getattr(self, name)
            object.__setattr__(self, name, tuple(value.split()) if isinstance(value, str) else tuple(value))


_ADDITIVE_PATH = """
    attnlib.chunked_additive.additive_attend attnlib.chunked_additive.additive_attend_from_projections
    attnlib.chunked_additive._AdditiveAttention attnlib.chunked_additive._hidden
    attnlib.chunked_additive._weights
"""
_SDPA_OPS = """
    scaled_dot_product_attention _scaled_dot_product_attention_math
    _scaled_dot_product_flash_attention_for_cpu _scaled_dot_product_flash_attention
    _scaled_dot_product_efficient_attention _scaled_dot_product_cudnn_attention
    _scaled_dot_product_fused_attention_overrideable _scaled_dot_product_attention_math_for_mps
    _flash_attention_forward _efficient_attention_forward _cudnn_attention_forward
    _triton_scaled_dot_attention _native_multi_head_attention _triton_multi_head_attention
    _transformer_encoder_layer_fwd _flash_attention_forward_no_dropout_inplace
"""
_SDPA_PATHS = """
    torch._scaled_dot_product_attention_math torch._scaled_dot_product_flash_attention_for_cpu
    torch._scaled_dot_product_flash_attention torch._scaled_dot_product_efficient_attention
    torch._scaled_dot_product_cudnn_attention torch._scaled_dot_product_attention_math_for_mps
    torch._triton_scaled_dot_attention torch._native_multi_head_attention torch._triton_multi_head_attention
    torch._transformer_encoder_layer_fwd torch._flash_attention_forward_no_dropout_inplace
"""

EQUATIONS: dict[str, Equation] = {
    # ------------------------------------------------------------------ softmax and attention
    "softmax": Equation(
        "softmax(x)_i = exp(x_i) / Σ_j exp(x_j) over one dimension; log-softmax and softmin(x) = softmax(-x)",
        """
        torch.nn.functional.softmax torch.nn.functional.log_softmax torch.nn.functional.softmin
        torch.softmax torch.log_softmax torch._softmax torch._log_softmax torch.special.softmax
        torch.special.log_softmax torch.nn.Softmax torch.nn.LogSoftmax torch.nn.Softmin torch.nn.Softmax2d
        torch.sparse.softmax torch.sparse.log_softmax attnlib.masking.masked_softmax
        """,
        """
        softmax _softmax log_softmax _log_softmax special_softmax special_log_softmax _safe_softmax
        _masked_softmax _sparse_softmax _sparse_log_softmax _nested_tensor_softmax_with_shape
        """,
    ),
    "masked_softmax": Equation(
        "softmax over the positions a mask keeps, exactly 0 elsewhere (a row that keeps none: all 0)",
        """
        attnlib.masking.masked_softmax attnlib.masked_softmax torch._masked_softmax torch._safe_softmax
        torch.sparse.softmax torch.sparse.log_softmax
        """,
        "_masked_softmax _safe_softmax _sparse_softmax _sparse_log_softmax",
    ),
    "attention": Equation(
        "α = softmax(scores) over the keys (masked), context = Σ_s α_s v_s: any scores, any number of heads",
        """
        attnlib.masking.attend attnlib.attend attnlib.layers.attend attnlib.layers.Attention.forward
        attnlib.fast.scaled_dot_product_attention attnlib.fast.run attnlib.chunked.chunked_attend
        attnlib.chunked._step attnlib.layers.AdditiveScore.attend_fast
        attnlib.layers.ConcatScore.attend_fast attnlib.seq2seq.luong.LuongDecoder.attention
        attnlib.transformer.attend attnlib.transformer.self_attention
        attnlib.transformer.attention.self_attention attnlib.transformer.cross_attention
        attnlib.transformer.attention.cross_attention attnlib.transformer.MultiHeadAttention
        attnlib.transformer.attention.MultiHeadAttention
        attnlib.transformer.model.CrossAttentionHead.forward
        torch.nn.functional.scaled_dot_product_attention torch._C._nn.scaled_dot_product_attention
        torch.nn.functional.multi_head_attention_forward torch.nn.MultiheadAttention
        torch.nn.modules.activation.MultiheadAttention torch.nn.attention.flex_attention.flex_attention
        torch.nn.attention.varlen.varlen_attn torch.nn.attention.varlen.varlen_attn_out
        """
        + _ADDITIVE_PATH
        + _SDPA_PATHS,
        _SDPA_OPS + " _safe_softmax _masked_softmax",
    ),
    "additive_attention": Equation(
        "Bahdanau's weights softmax(vᵀ tanh(W s + U h_s)) and their context, one chunk of keys at a time",
        """
        attnlib.layers.AdditiveScore.attend_fast attnlib.layers.ConcatScore.attend_fast
        """
        + _ADDITIVE_PATH,
    ),
    "padding_mask": Equation(
        "mask[b, s] = s < lengths[b]",
        """
        attnlib.masking.lengths_to_mask attnlib.lengths_to_mask attnlib.transformer.lengths_to_mask
        """,
    ),
    "causal_mask": Equation(
        "mask[t, s] = s <= t (and shifted by a cache of past positions)",
        """
        attnlib.transformer.causal_mask attnlib.transformer.attention.causal_mask
        attnlib.transformer.shifted_causal_mask attnlib.transformer.attention.shifted_causal_mask
        torch.nn.Transformer.generate_square_subsequent_mask
        torch.nn.modules.transformer._generate_square_subsequent_mask
        """,
    ),
    "positional_encoding": Equation(
        "PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d))",
        """
        attnlib.transformer.positional_encoding attnlib.transformer.positions.positional_encoding
        """,
    ),
    "multi_head_split": Equation(
        "(..., T, d) -> (..., h, T, d/h) and back",
        """
        attnlib.transformer.MultiHeadAttention.split
        """,
    ),
    # ------------------------------------------------------------------ scores
    "dot_score": Equation(
        "e_s = sᵀ h_s (scaled: divided by √d; general with W = I)",
        """
        attnlib.scores.dot attnlib.scores.scaled_dot attnlib.scores.general
        attnlib.layers.DotScore.forward attnlib.layers.ScaledDotScore.forward
        attnlib.layers.GeneralScore.forward
        """,
    ),
    "scaled_dot_score": Equation(
        "e_s = sᵀ h_s / √d",
        """
        attnlib.scores.scaled_dot attnlib.layers.ScaledDotScore.forward
        """,
    ),
    "general_score": Equation(
        "e_s = sᵀ W h_s",
        """
        attnlib.scores.general attnlib.layers.GeneralScore.forward
        """,
    ),
    "additive_score": Equation(
        "e_s = vᵀ tanh(W s + U h_s); concat: vᵀ tanh(W [s; h_s])",
        """
        attnlib.scores.additive attnlib.scores.additive_from_projections attnlib.scores.concat
        attnlib.layers.AdditiveScore.forward attnlib.layers.AdditiveScore.project_keys
        attnlib.layers.AdditiveScore.attend_fast attnlib.layers.ConcatScore.forward
        attnlib.layers.ConcatScore.attend_fast
        """
        + _ADDITIVE_PATH,
    ),
    "concat_score": Equation(
        "e_s = vᵀ tanh(W [s; h_s])",
        """
        attnlib.scores.concat attnlib.layers.ConcatScore.forward attnlib.layers.ConcatScore.attend_fast
        """,
    ),
    "cosine_similarity": Equation(
        "cos(a, b) = aᵀ b / (‖a‖ ‖b‖) (a cosine-embedding loss of target 1 is 1 - cos)",
        """
        attnlib.scores.cosine attnlib.layers.CosineScore.forward torch.nn.functional.cosine_similarity
        torch.cosine_similarity torch.nn.CosineSimilarity torch.nn.functional.cosine_embedding_loss
        torch.cosine_embedding_loss torch.nn.CosineEmbeddingLoss
        """,
        "cosine_similarity cosine_embedding_loss",
    ),
    "location_score": Equation(
        "e_t = W_a s_t, one score per source position",
        """
        attnlib.scores.location attnlib.layers.LocationScore.forward
        """,
    ),
    "local_attention": Equation(
        "Luong's local weights: a window around p_t (monotonic or predicted) times a Gaussian",
        """
        attnlib.local.gaussian attnlib.local.weights attnlib.local.predict_position
        attnlib.local.monotonic_position attnlib.local._gaussian_and_window
        attnlib.layers.PositionPredictor
        """,
    ),
    # ------------------------------------------------------------------ losses and normalisations
    "cross_entropy": Equation(
        "-log softmax(z)_y averaged over the tokens (any reduction or weighting of the same terms)",
        """
        attnlib.train.loss_fn attnlib.train.teacher_forced_loss attnlib.train.evaluate_loss
        attnlib.classifier.cross_entropy attnlib.metrics.perplexity torch.nn.functional.cross_entropy
        torch.nn.functional.nll_loss torch.nn.functional.linear_cross_entropy torch.nn.functional.kl_div
        torch.nn.functional.binary_cross_entropy torch.nn.functional.binary_cross_entropy_with_logits
        torch.nn.functional.poisson_nll_loss torch._C._nn.cross_entropy_loss torch._C._nn.nll_loss
        torch._C._nn.nll_loss_nd torch._C._nn.nll_loss2d torch._C._nn.binary_cross_entropy torch.kl_div
        torch.binary_cross_entropy_with_logits torch.poisson_nll_loss torch.nn.CrossEntropyLoss
        torch.nn.NLLLoss torch.nn.NLLLoss2d torch.nn.KLDivLoss torch.nn.BCELoss torch.nn.BCEWithLogitsLoss
        torch.nn.PoissonNLLLoss torch.nn.LinearCrossEntropyLoss torch.nn.AdaptiveLogSoftmaxWithLoss
        """,
        """
        cross_entropy_loss nll_loss nll_loss_nd nll_loss2d nll_loss_forward nll_loss2d_forward kl_div
        binary_cross_entropy binary_cross_entropy_with_logits poisson_nll_loss
        """,
    ),
    "layer_normalisation": Equation(
        "(x - mean) / sqrt(var + eps) over the features, then a gain and a bias (RMS: no mean)",
        """
        torch.nn.functional.layer_norm torch.nn.functional.rms_norm torch.layer_norm torch.rms_norm
        torch.nn.LayerNorm torch.nn.RMSNorm
        """,
        "layer_norm native_layer_norm rms_norm _fused_rms_norm",
    ),
    "batch_normalisation": Equation(
        "(x - mean) / sqrt(var + eps) over the batch (or groups, or each instance)",
        """
        torch.nn.functional.batch_norm torch.nn.functional.group_norm torch.nn.functional.instance_norm
        torch.nn.functional.local_response_norm torch.batch_norm torch.group_norm torch.instance_norm
        """,
        "batch_norm native_batch_norm group_norm native_group_norm instance_norm",
    ),
    "l2_normalisation": Equation(
        "x / max(‖x‖, eps)",
        """
        torch.nn.functional.normalize
        """,
    ),
    # ------------------------------------------------------------------ the sets' other equations
    "rnn_step_jacobian": Equation(
        "∂h_t/∂h_{t-1} = diag(tanh'(z_t)) W_h",
        """
        attnlib.rnn.phi_prime attnlib.rnn.step_jacobian
        """,
    ),
    "jacobian": Equation(
        "the Jacobian of a function (by autograd) and the products of step Jacobians",
        """
        attnlib.rnn.jacobian_product attnlib.rnn.gradient_norms attnlib.rnn._norms_by_perturbation
        attnlib.rnn.cell_gradient_norms torch.autograd.functional.jacobian torch.func.jacrev
        torch.func.jacfwd
        """,
    ),
    "spectral_radius": Equation(
        "ρ(W) = max |λ_i(W)|",
        """
        attnlib.rnn.spectral_radius
        """,
    ),
    "global_norm_clipping": Equation(
        "g <- g · min(1, c / ‖(g_1, ..., g_n)‖), one norm over all the tensors",
        """
        attnlib.rnn.clip_by_norm torch.nn.utils.clip_grad_norm_ torch.nn.utils.clip_grad_norm
        torch.nn.utils.get_total_norm torch.nn.utils.clip_grads_with_norm_
        torch.nn.utils.clip_grad.clip_grad_norm_ torch.nn.utils.clip_grad.clip_grad_norm
        torch.nn.utils.clip_grad._get_total_norm torch.nn.utils.clip_grad._clip_grads_with_norm_
        """,
    ),
    "sequence_accuracy": Equation(
        "exact match and token accuracy of decoded sequences (by source length)",
        """
        attnlib.metrics.exact_match attnlib.metrics.token_accuracy attnlib.probe.accuracy_by_length
        """,
    ),
    "linear_probe": Equation(
        "ridge regression W = (Xᵀ X + λ N I)⁻¹ Xᵀ Y with a bias column, and its argmax predictions",
        """
        attnlib.probe.fit_linear_probe attnlib.probe.probe_predict attnlib.probe._with_bias
        attnlib.probe.position_recovery
        """,
    ),
    "bahdanau_decoder": Equation(
        "s_t = GRU([E y_{t-1}; c_t], s_{t-1}) with the context of s_{t-1}, and the encoder's final states",
        """
        attnlib.seq2seq.decoders.ContextGRUCell.forward attnlib.seq2seq.decoders.BahdanauDecoder.start
        attnlib.seq2seq.decoders.BahdanauDecoder._recur attnlib.seq2seq.decoders.BahdanauDecoder.step
        attnlib.seq2seq.decoders.BahdanauDecoder.forward attnlib.seq2seq.encoder.final_states
        """,
    ),
    "luong_decoder": Equation(
        "Luong's decoder: s_t, α_t from s_t, s~_t = tanh(W_c [c_t; s_t]) (input feeding)",
        """
        attnlib.seq2seq.luong.LuongDecoder attnlib.seq2seq.LuongDecoder
        """,
    ),
    "attention_links": Equation(
        "the links (t, argmax_s α_{t,s}) of a weight map",
        """
        attnlib.metrics.attention_links attnlib.metrics.pair_links attnlib.metrics.model_alignments
        """,
    ),
    "alignment_error_rate": Equation(
        "AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)",
        """
        attnlib.metrics.aer
        """,
    ),
    "crossings": Equation(
        "pairs of links (t, s), (t', s') with t < t' and s > s'",
        """
        attnlib.analysis.crossings attnlib.analysis.adjective_crossing
        """,
    ),
    "beam_search": Equation(
        "keep the k best partial translations by summed log-probability",
        """
        attnlib.seq2seq.decoding.beam_search attnlib.seq2seq.beam_search
        attnlib.seq2seq.decoding.beam_step attnlib.seq2seq.beam_step
        """,
    ),
}

# Callables whose names sound like the families above but that compute none of their equations.
NOT_IMPLEMENTATIONS: dict[str, str] = {
    **dict.fromkeys(
        """
        _softmax_backward_data _log_softmax_backward_data _sparse_softmax_backward_data
        _sparse_log_softmax_backward_data _masked_softmax_backward nll_loss_backward nll_loss2d_backward
        binary_cross_entropy_backward native_layer_norm_backward native_batch_norm_backward
        native_group_norm_backward batch_norm_backward batch_norm_backward_elemt
        batch_norm_backward_reduce _batch_norm_impl_index_backward cudnn_batch_norm_backward
        miopen_batch_norm_backward _fused_rms_norm_backward _weight_norm_interface_backward
        _weight_norm_differentiable_backward _cudnn_attention_backward _efficient_attention_backward
        _flash_attention_backward _scaled_dot_product_cudnn_attention_backward
        _scaled_dot_product_efficient_attention_backward _scaled_dot_product_flash_attention_backward
        _scaled_dot_product_flash_attention_for_cpu_backward
        _scaled_dot_product_fused_attention_overrideable_backward
        """.split(),
        "a gradient of the equation, given the forward's results, not the equation",
    ),
    **dict.fromkeys(
        """
        norm frobenius_norm nuclear_norm native_norm norm_except_dim linalg_norm linalg_vector_norm
        linalg_matrix_norm _foreach_norm renorm renorm_ embedding_renorm embedding_renorm_
        _no_grad_embedding_renorm_
        """.split(),
        "a norm ‖x‖ (a building block the learner may use), not a normalisation",
    ),
    **dict.fromkeys(
        """
        _weight_norm _weight_norm_interface weight_norm
        """.split(),
        "a reparametrisation of weights (w = g v / ‖v‖)",
    ),
    **dict.fromkeys(
        """
        batch_norm_elemt batch_norm_gather_stats batch_norm_gather_stats_with_counts batch_norm_stats
        batch_norm_update_stats _batch_norm_impl_index _batch_norm_no_update _batch_norm_with_update
        _batch_norm_with_update_functional _native_batch_norm_legit _native_batch_norm_legit_functional
        _native_batch_norm_legit_no_training cudnn_batch_norm miopen_batch_norm quantized_batch_norm
        BatchNorm1d BatchNorm2d BatchNorm3d LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d SyncBatchNorm
        GroupNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d LazyInstanceNorm1d LazyInstanceNorm2d
        LazyInstanceNorm3d LocalResponseNorm
        """.split(),
        "batch normalisation's pieces and modules (batch_normalisation: no set asks for it)",
    ),
    **dict.fromkeys(
        """
        normal normal_ _philox_normal _philox_normal_ normal_functional log_normal log_normal_
        """.split(),
        "random numbers from a normal distribution",
    ),
    "set_flush_denormal": "a floating-point mode",
    "_get_softmax_dim": "picks a default dimension, computes nothing",
    "gumbel_softmax": "softmax of logits plus random Gumbel noise: random, not the softmax of its input",
    **dict.fromkeys(
        """
        gaussian_nll_loss GaussianNLLLoss
        """.split(),
        "a Gaussian likelihood (x - μ)² / σ²: selects no log-probability",
    ),
    "_fused_sdp_choice": "picks which attention kernel would run, computes nothing",
    "LinearCrossEntropyOptions": "options of a loss, computes nothing",
    **dict.fromkeys(
        """
        Transformer TransformerEncoder TransformerDecoder TransformerEncoderLayer TransformerDecoderLayer
        attention
        """.split(),
        "builds torch.nn.MultiheadAttention or holds the attention functions: switched off with them",
    ),
    # attnlib's own callables that use these equations without being one a question asks for
    "attnlib.analysis.perturbed_attention": "swaps a decoder's weights inside a block",
    "attnlib.classifier.train_classifier": "trains a classifier (its loss is listed)",
    "attnlib.data.tatoeba.normalize": "text normalisation of the corpus",
    "attnlib.data.tatoeba.parse_lines": "reads the corpus",
    "attnlib.masking.weighted_sum": "Σ_s α_s v_s for given weights: a matrix product, no softmax",
    "attnlib.probe.source_gradient_norms": "gradient norms of a trained model (a figure of chapter 2)",
    "attnlib.seq2seq.decoding.greedy": "decodes with a whole model",
    "attnlib.grading.stepwise.StepDecoder.step": "calls the step it is given (the learner's)",
    "attnlib.grading.stepwise.attention_map": "runs a whole model and returns its weights",
    "attnlib.transformer.model.Seq2SeqTransformer.attention_maps": "runs a whole model and returns its maps",
    "attnlib.widgets.query_figure": "draws a figure",
}
