"""The names of torch 2.13 (``torch_names.json``) that jtorch does not have, each with its
reason: ``EXCLUDED`` by nature (typing helpers, TorchScript internals, typed storages,
quantization, sparse tensors, other backends) and ``MISSING`` (not implemented yet: the
surface still to build). ``test_surface.py`` keeps both exact: a new gap fails, and so
does a listed gap that jtorch now fills."""

from __future__ import annotations

_TYPING = "a typing or documentation helper of torch's source, not API"
_STORAGE = 'typed storages: jtorch tensors hold NumPy arrays (untyped_storage is there)'
_QUANT = 'quantization is not supported'
_SPARSE = 'sparse tensors are not supported'
_BACKEND = 'a backend jtorch does not have (cuDNN, MKLDNN, MPS, XPU, nested tensors...)'
_INTERNAL = 'TorchScript / C++ binding internals'

EXCLUDED: dict = {
    'Tensor': {
        **dict.fromkeys([
            'storage'
        ], _STORAGE),
        **dict.fromkeys([
            'dequantize', 'int_repr', 'nanquantile', 'q_per_channel_axis',
            'q_per_channel_scales', 'q_per_channel_zero_points', 'q_scale',
            'q_zero_point', 'qscheme', 'quantile'
        ], _QUANT),
        **dict.fromkeys([
            'ccol_indices', 'coalesce', 'col_indices', 'crow_indices', 'dense_dim',
            'indices', 'is_coalesced', 'resize_as_sparse_', 'row_indices', 'smm',
            'sparse_dim', 'sparse_mask', 'sparse_resize_', 'sparse_resize_and_clear_',
            'sspaddmm', 'to_dense', 'to_sparse', 'to_sparse_bsc', 'to_sparse_bsr',
            'to_sparse_coo', 'to_sparse_csc', 'to_sparse_csr', 'values'
        ], _SPARSE),
        **dict.fromkeys([
            'ipu', 'mtia', 'to_mkldnn', 'xpu'
        ], _BACKEND),
    },
    'torch': {
        **dict.fromkeys([
            'TYPE_CHECKING', 'Type', 'inf'
        ], _TYPING),
        **dict.fromkeys([
            'BFloat16Storage', 'BoolStorage', 'ByteStorage', 'CharStorage',
            'ComplexDoubleStorage', 'ComplexFloatStorage', 'DoubleStorage',
            'FloatStorage', 'HalfStorage', 'IntStorage', 'LongStorage',
            'QInt32Storage', 'QInt8Storage', 'QUInt2x4Storage', 'QUInt4x2Storage',
            'QUInt8Storage', 'ShortStorage', 'Storage', 'TypedStorage',
            'UntypedStorage'
        ], _STORAGE),
        **dict.fromkeys([
            'dequantize', 'empty_quantized', 'fake_quantize_per_channel_affine',
            'fake_quantize_per_tensor_affine', 'fbgemm_linear_quantize_weight',
            'fbgemm_pack_quantized_matrix', 'fused_moving_avg_obs_fake_quant',
            'int_repr', 'nanquantile', 'per_channel_affine',
            'per_channel_affine_float_qparams', 'per_channel_symmetric',
            'per_tensor_affine', 'per_tensor_symmetric', 'q_per_channel_axis',
            'q_per_channel_scales', 'q_per_channel_zero_points', 'q_scale',
            'q_zero_point', 'qint32', 'qint8', 'qscheme', 'quantile',
            'quantize_per_channel', 'quantize_per_tensor',
            'quantize_per_tensor_dynamic', 'quantized_batch_norm', 'quantized_gru',
            'quantized_gru_cell', 'quantized_lstm', 'quantized_lstm_cell',
            'quantized_max_pool1d', 'quantized_max_pool2d', 'quantized_max_pool3d',
            'quantized_rnn_relu_cell', 'quantized_rnn_tanh_cell', 'quint2x4',
            'quint4x2', 'quint8'
        ], _QUANT),
        **dict.fromkeys([
            'hspmm', 'resize_as_sparse_', 'smm', 'sparse_bsc', 'sparse_bsc_tensor',
            'sparse_bsr', 'sparse_bsr_tensor', 'sparse_compressed_tensor',
            'sparse_coo_tensor', 'sparse_csc', 'sparse_csc_tensor', 'sparse_csr',
            'sparse_csr_tensor', 'spmm', 'sspaddmm'
        ], _SPARSE),
        **dict.fromkeys([
            'ThroughputBenchmark', 'cudnn_affine_grid_generator', 'cudnn_batch_norm',
            'cudnn_convolution', 'cudnn_convolution_add_relu',
            'cudnn_convolution_relu', 'cudnn_convolution_transpose',
            'cudnn_grid_sampler', 'cudnn_is_acceptable', 'fbgemm_linear_fp16_weight',
            'fbgemm_linear_fp16_weight_fp32_activation', 'fbgemm_linear_int8_weight',
            'fbgemm_linear_int8_weight_fp32_activation',
            'fbgemm_pack_gemm_matrix_fp16', 'get_autocast_ipu_dtype', 'has_mkl',
            'is_autocast_ipu_enabled', 'is_vulkan_available', 'miopen_batch_norm',
            'miopen_convolution', 'miopen_convolution_add_relu',
            'miopen_convolution_relu', 'miopen_convolution_transpose',
            'miopen_ctc_loss', 'miopen_depthwise_convolution', 'miopen_rnn',
            'mkldnn_adaptive_avg_pool2d', 'mkldnn_convolution',
            'mkldnn_linear_backward_weights', 'mkldnn_max_pool2d', 'mkldnn_max_pool3d',
            'mkldnn_rnn_layer', 'profiler_allow_cudagraph_cupti_lazy_reinit_cuda12',
            'set_autocast_ipu_dtype', 'set_autocast_ipu_enabled'
        ], _BACKEND),
        **dict.fromkeys([
            'AggregationType', 'AliasDb', 'AnyType', 'Argument', 'ArgumentSpec',
            'AwaitType', 'BenchmarkConfig', 'BenchmarkExecutionStats', 'Block',
            'BoolType', 'BufferDict', 'CallStack', 'Capsule', 'ClassType', 'Code',
            'CompilationUnit', 'CompleteArgumentSpec', 'ComplexType',
            'ConcreteModuleType', 'ConcreteModuleTypeBuilder', 'DeepCopyMemoTable',
            'DeserializationStorageContext', 'DeviceObjType', 'DictType',
            'DisableTorchFunction', 'DisableTorchFunctionSubclass', 'DispatchKey',
            'DispatchKeySet', 'EnumType', 'ErrorReport', 'ExcludeDispatchKeyGuard',
            'ExecutionPlan', 'FileCheck', 'FloatType', 'FunctionSchema', 'Future',
            'FutureType', 'Gradient', 'Graph', 'GraphExecutorState', 'IODescriptor',
            'InferredType', 'IntType', 'InterfaceType', 'JITException', 'ListType',
            'LiteScriptModule', 'LockingLogger', 'LoggerBase', 'ModuleDict', 'Node',
            'NoneType', 'NoopLogger', 'NumberType', 'OperatorInfo', 'OptionalType',
            'ParameterDict', 'PyObjectType', 'PyTorchFileReader', 'PyTorchFileWriter',
            'RRefType', 'ScriptClass', 'ScriptClassFunction', 'ScriptDict',
            'ScriptDictIterator', 'ScriptDictKeyIterator', 'ScriptFunction',
            'ScriptList', 'ScriptListIterator', 'ScriptMethod', 'ScriptModule',
            'ScriptModuleSerializer', 'ScriptObject', 'ScriptObjectProperty',
            'SerializationStorageContext', 'StaticModule', 'StorageBase',
            'StreamObjType', 'StringType', 'SymBoolType', 'SymIntType', 'Tag',
            'TensorType', 'TracingState', 'TupleType', 'UnionType', 'Use', 'Value',
            'to_dlpack'
        ], _INTERNAL),
    },
    'torch.autograd': {
        **dict.fromkeys([
            'Mapping', 'cast', 'overload'
        ], _TYPING),
        **dict.fromkeys([
            'NestedIOFunction'
        ], _BACKEND),
        **dict.fromkeys([
            'DeviceType', 'ProfilerActivity', 'ProfilerConfig', 'ProfilerEvent',
            'ProfilerState', 'SavedTensor', 'has_torch_function',
            'is_view_replay_enabled', 'kineto_available'
        ], _INTERNAL),
    },
    'torch.nn': {
        **dict.fromkeys([
            'Container'
        ], _TYPING),
    },
    'torch.nn.functional': {
        **dict.fromkeys([
            'BroadcastingList1', 'BroadcastingList2', 'BroadcastingList3', 'Callable',
            'DType', 'Optional', 'ScalingType', 'SwizzleType', 'TYPE_CHECKING',
            'reproducibility_notes', 'sparse_support_notes', 'tf32_notes'
        ], _TYPING),
        **dict.fromkeys([
            'boolean_dispatch', 'has_torch_function', 'has_torch_function_unary',
            'has_torch_function_variadic'
        ], _INTERNAL),
    },
    'torch.nn.init': {
        **dict.fromkeys([
            'Callable', 'Literal', 'ParamSpec', 'TypeVar'
        ], _TYPING),
        **dict.fromkeys([
            'sparse'
        ], _SPARSE),
    },
    'torch.nn.utils': {
    },
    'torch.optim': {
    },
    'torch.optim.lr_scheduler': {
        **dict.fromkeys([
            'Literal', 'Self', 'SupportsFloat', 'TYPE_CHECKING', 'TypedDict', 'cast',
            'inf', 'override'
        ], _TYPING),
    },
    'torch.utils.data': {
    },
}

MISSING: dict = {
    'Tensor': [
        'addbmm_', 'addmv_', 'addr_', 'adjoint', 'angle', 'apply_', 'as_strided_scatter',
        'as_subclass', 'baddbmm_', 'bfloat16', 'bincount', 'chalf', 'cholesky',
        'cholesky_inverse', 'cholesky_solve', 'conj_physical_', 'const_data_ptr',
        'corrcoef', 'cov', 'cross', 'det', 'diagonal_scatter', 'diff', 'digamma',
        'digamma_', 'dim_order', 'dist', 'dsplit', 'eig', 'fill_diagonal_', 'float_power_',
        'frexp', 'geqrf', 'grad_dtype', 'hardshrink', 'hash_tensor', 'histc', 'histogram',
        'i0', 'i0_', 'igamma', 'igamma_', 'igammac', 'igammac_', 'index', 'index_reduce',
        'index_reduce_', 'inverse', 'is_distributed', 'is_inference', 'is_neg',
        'is_nonzero', 'is_same_size', 'is_set_to', 'isreal', 'istft', 'ldexp', 'ldexp_',
        'lgamma', 'lgamma_', 'logdet', 'lstsq', 'lu', 'lu_solve', 'map2_', 'map_',
        'matrix_exp', 'matrix_power', 'module_load', 'mvlgamma', 'mvlgamma_', 'name',
        'narrow_copy', 'new', 'nextafter', 'nextafter_', 'nonzero_static', 'orgqr',
        'ormqr', 'output_nr', 'pin_memory', 'pinverse', 'polygamma', 'polygamma_', 'prelu',
        'qr', 'record_stream', 'reinforce', 'renorm', 'renorm_', 'resize', 'resize_',
        'resize_as', 'resize_as_', 'resolve_neg', 'select_scatter', 'set_',
        'slice_inverse', 'slice_scatter', 'slogdet', 'solve', 'stft', 'storage_type',
        'sum_to_size', 'svd', 'swapaxes_', 'swapdims_', 'symeig', 'to_padded_tensor',
        'triangular_solve', 'unsafe_chunk', 'unsafe_split', 'unsafe_split_with_sizes',
        'volatile',
    ],
    'torch': [
        'AVG', 'AcceleratorError', 'BFloat16Tensor', 'Event', 'FatalError', 'GradScaler',
        'OutOfMemoryError', 'PRIVATE_OPS', 'SUM', 'Stream', 'SymBool', 'SymFloat',
        'SymInt', 'USE_GLOBAL_DEPS', 'USE_RTLD_GLOBAL_WITH_LIBTORCH', 'addmv_', 'adjoint',
        'affine_grid_generator', 'alias_copy', 'alpha_dropout', 'alpha_dropout_', 'angle',
        'as_strided_', 'as_strided_copy', 'as_strided_scatter',
        'autocast_decrement_nesting', 'autocast_increment_nesting', 'bartlett_window',
        'batch_norm', 'batch_norm_backward_elemt', 'batch_norm_backward_reduce',
        'batch_norm_elemt', 'batch_norm_gather_stats',
        'batch_norm_gather_stats_with_counts', 'batch_norm_stats',
        'batch_norm_update_stats', 'bfloat16', 'binary_cross_entropy_with_logits',
        'bincount', 'binomial', 'bit', 'bits16', 'bits1x8', 'bits2x4', 'bits4x2', 'bits8',
        'blackman_window', 'bucketize', 'ccol_indices_copy', 'celu', 'celu_',
        'channel_shuffle', 'cholesky', 'cholesky_inverse', 'cholesky_solve',
        'choose_qparams_optimized', 'clamp_', 'clamp_max_', 'clamp_min_', 'classproperty',
        'clear_autocast_cache', 'clip_', 'col_indices_copy', 'complex32', 'cond',
        'conj_physical_', 'constant_pad_nd', 'conv_tbc', 'convolution', 'corrcoef',
        'cosine_embedding_loss', 'cov', 'cross', 'crow_indices_copy', 'ctc_loss',
        'cumulative_trapezoid', 'det', 'detach', 'detach_', 'detach_copy', 'diagonal_copy',
        'diagonal_scatter', 'diff', 'digamma', 'dist', 'dropout', 'dropout_', 'dsmm',
        'dsplit', 'e', 'eig', 'embedding', 'embedding_bag', 'embedding_renorm_',
        'empty_permuted', 'expand_copy', 'feature_alpha_dropout', 'feature_alpha_dropout_',
        'feature_dropout', 'feature_dropout_', 'fill', 'fill_', 'float4_e2m1fn_x2',
        'float8_e4m3fn', 'float8_e4m3fnuz', 'float8_e5m2', 'float8_e5m2fnuz',
        'float8_e8m0fnu', 'fork', 'frexp', 'frobenius_norm', 'from_dlpack', 'from_file',
        'frombuffer', 'gcd_', 'geqrf', 'get_autocast_cpu_dtype', 'get_autocast_dtype',
        'get_autocast_gpu_dtype', 'get_autocast_xla_dtype', 'get_device',
        'get_device_module', 'get_file_path', 'gradient', 'grid_sampler',
        'grid_sampler_2d', 'grid_sampler_3d', 'group_norm', 'gru', 'gru_cell',
        'hamming_window', 'hann_window', 'hardshrink', 'has_lapack', 'has_openmp',
        'has_spectral', 'hash_tensor', 'hinge_embedding_loss', 'histc', 'histogram',
        'histogramdd', 'hsmm', 'i0', 'i0_', 'igamma', 'igammac', 'import_ir_module',
        'import_ir_module_from_buffer', 'index_put_', 'index_reduce', 'indices_copy',
        'init_num_threads', 'instance_norm', 'int1', 'int2', 'int3', 'int4', 'int5',
        'int6', 'int7', 'inverse', 'is_autocast_cache_enabled', 'is_autocast_cpu_enabled',
        'is_autocast_enabled', 'is_autocast_xla_enabled', 'is_conj', 'is_distributed',
        'is_inference', 'is_neg', 'is_same_size', 'is_signed', 'is_storage', 'isin',
        'isreal', 'istft', 'jagged', 'kaiser_window', 'kl_div', 'layer_norm', 'lcm_',
        'ldexp', 'ldexp_', 'legacy_contiguous_format', 'lgamma', 'lobpcg', 'logdet',
        'logit_', 'lstm', 'lstm_cell', 'lstsq', 'lu', 'lu_solve', 'lu_unpack',
        'margin_ranking_loss', 'matrix_exp', 'matrix_power', 'matrix_rank',
        'merge_type_from_type_comment', 'mvlgamma', 'nan', 'nan_to_num_', 'narrow_copy',
        'native_batch_norm', 'native_channel_shuffle', 'native_dropout',
        'native_group_norm', 'native_layer_norm', 'native_norm', 'newaxis', 'nextafter',
        'nonzero_static', 'norm_except_dim', 'nuclear_norm', 'orgqr', 'ormqr', 'parse_ir',
        'parse_schema', 'parse_type_comment', 'pca_lowrank', 'pdist', 'permute_copy', 'pi',
        'pinverse', 'pixel_shuffle', 'pixel_unshuffle', 'poisson', 'poisson_nll_loss',
        'polygamma', 'prelu', 'prepare_multiprocessing_environment', 'put', 'qr', 'range',
        'renorm', 'resize_as_', 'resolve_neg', 'rms_norm', 'rnn_relu', 'rnn_relu_cell',
        'rnn_tanh', 'rnn_tanh_cell', 'row_indices_copy', 'row_stack', 'rrelu', 'rrelu_',
        'saddmm', 'searchsorted', 'segment_reduce', 'select_copy', 'select_scatter',
        'selu', 'selu_', 'set_autocast_cache_enabled', 'set_autocast_cpu_dtype',
        'set_autocast_cpu_enabled', 'set_autocast_dtype', 'set_autocast_enabled',
        'set_autocast_gpu_dtype', 'set_autocast_xla_dtype', 'set_autocast_xla_enabled',
        'set_flush_denormal', 'slice_copy', 'slice_inverse', 'slice_scatter', 'slogdet',
        'solve', 'split_copy', 'split_with_sizes', 'split_with_sizes_copy', 'squeeze_copy',
        'stft', 'svd', 'svd_lowrank', 'sym_constrain_range',
        'sym_constrain_range_for_size', 'sym_fresh_size', 'sym_sqrt', 'sym_sum', 'symeig',
        't_copy', 'thread_safe_generator', 'threshold', 'threshold_', 'transpose_copy',
        'trapezoid', 'trapz', 'triangular_solve', 'triplet_margin_loss', 'typename',
        'uint1', 'uint16', 'uint2', 'uint3', 'uint32', 'uint4', 'uint5', 'uint6', 'uint64',
        'uint7', 'unbind_copy', 'unfold_copy', 'unify_type_list', 'unravel_index',
        'unsafe_chunk', 'unsafe_split', 'unsafe_split_with_sizes', 'unsqueeze_copy',
        'values_copy', 'vander', 'view_as_complex', 'view_as_complex_copy', 'view_as_real',
        'view_as_real_copy', 'view_copy', 'wait', 'while_loop', 'xlogy_', 'zero_',
    ],
    'torch.autograd': [
        'enforce_grad_layout_policy', 'handle_torch_function', 'is_tensor_like', 'variable',
    ],
    'torch.nn': [
        'AdaptiveLogSoftmaxWithLoss', 'CTCLoss', 'CrossMapLRN2d', 'FractionalMaxPool2d',
        'FractionalMaxPool3d', 'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d',
        'LazyConv1d', 'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d',
        'LazyConvTranspose2d', 'LazyConvTranspose3d', 'LazyInstanceNorm1d',
        'LazyInstanceNorm2d', 'LazyInstanceNorm3d', 'LazyLinear', 'LinearCrossEntropyLoss',
        'LinearCrossEntropyOptions', 'NLLLoss2d', 'RNNCellBase', 'SyncBatchNorm',
        'UninitializedBuffer', 'factory_kwargs',
    ],
    'torch.nn.functional': [
        'GRID_SAMPLE_INTERPOLATION_MODES', 'GRID_SAMPLE_PADDING_MODES',
        'assert_int_or_pair', 'conv_tbc', 'ctc_loss', 'fractional_max_pool2d',
        'fractional_max_pool2d_with_indices', 'fractional_max_pool3d',
        'fractional_max_pool3d_with_indices', 'grouped_mm', 'handle_torch_function',
        'linear_cross_entropy', 'native_channel_shuffle', 'scaled_grouped_mm', 'scaled_mm',
    ],
    'torch.nn.init': [],
    'torch.nn.utils': [
        'convert_conv2d_weight_memory_format', 'convert_conv3d_weight_memory_format',
        'fuse_conv_bn_eval', 'fuse_conv_bn_weights', 'fuse_linear_bn_eval',
        'fuse_linear_bn_weights', 'remove_spectral_norm', 'remove_weight_norm',
        'skip_init', 'spectral_norm', 'weight_norm',
    ],
    'torch.optim': [
        'Muon', 'swap_in_optimizer_params_and_state',
    ],
    'torch.optim.lr_scheduler': [],
    'torch.utils.data': [
        'DFIterDataPipe', 'DataChunk', 'IterDataPipe', 'MapDataPipe',
        'argument_validation', 'functional_datapipe', 'guaranteed_datapipes_determinism',
        'non_deterministic', 'runtime_validation', 'runtime_validation_disabled',
    ],
}
