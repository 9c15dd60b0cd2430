"""The names of torch 2.13 (``torch_names.json``) that jtorch does not have, each with its
reason: ``EXCLUDED`` by nature (typing helpers, TorchScript internals, typed storages,
quantization, sparse tensors, other backends) and ``MISSING`` (not implemented yet: the
surface still to build). ``test_surface.py`` keeps both exact: a new gap fails, and so
does a listed gap that jtorch now fills."""

from __future__ import annotations

_TYPING = "a typing or documentation helper of torch's source, not API"
_STORAGE = 'typed storages: jtorch tensors hold NumPy arrays (untyped_storage is there)'
_QUANT = 'quantization is not supported'
_SPARSE = 'sparse layouts other than COO (CSR, CSC, BSR, BSC) are not supported'
_BACKEND = 'a backend jtorch does not have (cuDNN, MKLDNN, MPS, XPU, nested tensors...)'
_INTERNAL = 'TorchScript / C++ binding internals'
_SUBBYTE = ('sub-byte and packed dtypes: storage formats of quantised kernels, with no tensor '
            'math of their own')

EXCLUDED: dict = {
    'Tensor': {
        **dict.fromkeys([
            'storage'
        ], _STORAGE),
        **dict.fromkeys([
            'dequantize', 'int_repr', 'q_per_channel_axis',
            'q_per_channel_scales', 'q_per_channel_zero_points', 'q_scale',
            'q_zero_point', 'qscheme'
        ], _QUANT),
        **dict.fromkeys([
            'ccol_indices', 'col_indices', 'crow_indices', 'resize_as_sparse_',
            'row_indices', 'sparse_resize_', 'sparse_resize_and_clear_', 'to_sparse_bsc',
            'to_sparse_bsr', 'to_sparse_csc', 'to_sparse_csr'
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
            'int_repr', 'per_channel_affine',
            'per_channel_affine_float_qparams', 'per_channel_symmetric',
            'per_tensor_affine', 'per_tensor_symmetric', 'q_per_channel_axis',
            'q_per_channel_scales', 'q_per_channel_zero_points', 'q_scale',
            'q_zero_point', 'qint32', 'qint8', 'qscheme',
            'quantize_per_channel', 'quantize_per_tensor',
            'quantize_per_tensor_dynamic', 'quantized_batch_norm', 'quantized_gru',
            'quantized_gru_cell', 'quantized_lstm', 'quantized_lstm_cell',
            'quantized_max_pool1d', 'quantized_max_pool2d', 'quantized_max_pool3d',
            'quantized_rnn_relu_cell', 'quantized_rnn_tanh_cell', 'quint2x4',
            'quint4x2', 'quint8'
        ], _QUANT),
        **dict.fromkeys([
            'resize_as_sparse_', 'sparse_bsc', 'sparse_bsc_tensor', 'sparse_bsr',
            'sparse_bsr_tensor', 'sparse_compressed_tensor', 'sparse_csc', 'sparse_csc_tensor',
            'sparse_csr', 'sparse_csr_tensor'
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
        **dict.fromkeys([
            'AVG', 'PRIVATE_OPS', 'SUM', 'USE_GLOBAL_DEPS', 'USE_RTLD_GLOBAL_WITH_LIBTORCH',
            'classproperty', 'fork', 'get_file_path', 'import_ir_module',
            'import_ir_module_from_buffer', 'merge_type_from_type_comment', 'parse_ir',
            'parse_schema', 'parse_type_comment', 'prepare_multiprocessing_environment',
            'unify_type_list', 'wait'
        ], _INTERNAL),
        **dict.fromkeys([
            'bit', 'bits16', 'bits1x8', 'bits2x4', 'bits4x2', 'bits8', 'choose_qparams_optimized',
            'float4_e2m1fn_x2', 'int1', 'int2', 'int3', 'int4', 'int5', 'int6', 'int7', 'uint1',
            'uint2', 'uint3', 'uint4', 'uint5', 'uint6', 'uint7'
        ], _SUBBYTE),
        **dict.fromkeys([
            'ccol_indices_copy', 'col_indices_copy', 'crow_indices_copy', 'hsmm',
            'indices_copy', 'row_indices_copy', 'values_copy'
        ], _SPARSE),
        **dict.fromkeys([
            'jagged'
        ], _BACKEND),
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
    },
    'torch.nn.functional': {
        **dict.fromkeys([
            'BroadcastingList1', 'BroadcastingList2', 'BroadcastingList3', 'Callable',
            'DType', 'Optional', 'TYPE_CHECKING',
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
        'chalf', 'hash_tensor', 'index', 'slice_inverse', 'storage_type', 'to_padded_tensor',
    ],
    'torch': [
        'batch_norm_backward_elemt',
        'batch_norm_backward_reduce', 'batch_norm_elemt', 'batch_norm_gather_stats',
        'batch_norm_gather_stats_with_counts', 'batch_norm_stats', 'batch_norm_update_stats',
        'complex32', 'float8_e4m3fn', 'float8_e4m3fnuz', 'float8_e5m2', 'float8_e5m2fnuz',
        'float8_e8m0fnu', 'hash_tensor', 'slice_inverse', 'sym_constrain_range',
        'sym_constrain_range_for_size', 'sym_fresh_size', 'uint16', 'uint32', 'uint64',
    ],
    'torch.autograd': [
        'enforce_grad_layout_policy', 'handle_torch_function', 'is_tensor_like', 'variable',
    ],
    'torch.nn': [],
    'torch.nn.functional': [],
    'torch.nn.init': [],
    'torch.nn.utils': [],
    'torch.optim': [
            ],
    'torch.optim.lr_scheduler': [],
    'torch.utils.data': [
        'DFIterDataPipe', 'DataChunk', 'IterDataPipe', 'MapDataPipe',
        'argument_validation', 'functional_datapipe', 'guaranteed_datapipes_determinism',
        'non_deterministic', 'runtime_validation', 'runtime_validation_disabled',
    ],
}

# The module-level audit (``test_module_surface.py``): classes torch defines in its
# ``torch.nn.modules.<file>`` that jtorch's same-named module lacks, as "<file>.<Class>", and
# public attributes of torch's nn Module classes that jtorch's class lacks, as "<Class>.<attr>".
MODULE_EXCLUDED: dict = {
    '_functions.SyncBatchNorm': ("the autograd Function behind SyncBatchNorm's training step "
                                 "across processes (all_gather over a process group); "
                                 "jtorch has no torch.distributed"),
}
