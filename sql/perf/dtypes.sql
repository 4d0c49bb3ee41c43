-- perf/dtypes — the size and the compute precision of each element type the PyTorch profiler records in a
-- cpu_op's 'Input type' (the caffe2 TypeMeta name of the tensor's dtype: 'float', 'c10::BFloat16', ...).

-- perf_dtypes: one row per recorded type name.
--   type_name          the name as recorded in 'Input type' (compared case-blind)
--   bytes_per_element  storage size of one recorded element, bytes (c10::Float4_e2m1fn_x2 packs two FP4
--                      values in one recorded element: 1 byte; the sub-byte uint1..7 and int1..7: NULL)
--   precision          the column of the device table (perf_devices) whose peak applies to math in this
--                      type: fp64, fp32, bf16, fp16, fp8, int8, fp4; NULL for types no peak is given for
--                      (integers wider than 8 bits, bool, complex)
--   torch_dtype        the torch.dtype of the type, as the attribute of the torch module ('bfloat16')
--   scalar_type        its number in c10::ScalarType, as ops that take a dtype argument record it in Concrete
--                      Inputs ('15' = BFloat16)
--   kind               'float', 'complex', 'int', 'bool', 'quantized' or 'bits' (raw bits: no arithmetic)
-- Sizes and numbers: c10/core/ScalarType.h (PyTorch); the names are those of caffe2::TypeMeta
-- (c10/util/typeid.h), read from traces PyTorch 2.13 writes; 'long' is the name PyTorch 1.x recorded for int64.
CREATE OR REPLACE VIEW perf_dtypes AS
SELECT * FROM (VALUES
    ('unsigned char', 1, 'int8', 'uint8', 0, 'int'), ('signed char', 1, 'int8', 'int8', 1, 'int'),
    ('short int', 2, NULL, 'int16', 2, 'int'), ('int', 4, NULL, 'int32', 3, 'int'),
    ('long int', 8, NULL, 'int64', 4, 'int'), ('long', 8, NULL, 'int64', 4, 'int'),
    ('c10::half', 2, 'fp16', 'float16', 5, 'float'), ('float', 4, 'fp32', 'float32', 6, 'float'),
    ('double', 8, 'fp64', 'float64', 7, 'float'), ('c10::complex<c10::half>', 4, NULL, 'complex32', 8, 'complex'),
    ('c10::complex<float>', 8, NULL, 'complex64', 9, 'complex'),
    ('c10::complex<double>', 16, NULL, 'complex128', 10, 'complex'), ('bool', 1, NULL, 'bool', 11, 'bool'),
    ('c10::qint8', 1, 'int8', 'qint8', 12, 'quantized'), ('c10::quint8', 1, 'int8', 'quint8', 13, 'quantized'),
    ('c10::qint32', 4, NULL, 'qint32', 14, 'quantized'), ('c10::bfloat16', 2, 'bf16', 'bfloat16', 15, 'float'),
    ('c10::quint4x2', 1, NULL, 'quint4x2', 16, 'quantized'), ('c10::quint2x4', 1, NULL, 'quint2x4', 17, 'quantized'),
    ('c10::bits1x8', 1, NULL, 'bits1x8', 18, 'bits'), ('c10::bits2x4', 1, NULL, 'bits2x4', 19, 'bits'),
    ('c10::bits4x2', 1, NULL, 'bits4x2', 20, 'bits'), ('c10::bits8', 1, NULL, 'bits8', 21, 'bits'),
    ('c10::bits16', 2, NULL, 'bits16', 22, 'bits'),
    ('c10::float8_e5m2', 1, 'fp8', 'float8_e5m2', 23, 'float'),
    ('c10::float8_e4m3fn', 1, 'fp8', 'float8_e4m3fn', 24, 'float'),
    ('c10::float8_e5m2fnuz', 1, 'fp8', 'float8_e5m2fnuz', 25, 'float'),
    ('c10::float8_e4m3fnuz', 1, 'fp8', 'float8_e4m3fnuz', 26, 'float'),
    ('short unsigned int', 2, NULL, 'uint16', 27, 'int'), ('unsigned int', 4, NULL, 'uint32', 28, 'int'),
    ('long unsigned int', 8, NULL, 'uint64', 29, 'int'),
    ('c10::dummy_uint1_7_t<1>', NULL, NULL, 'uint1', 30, 'int'), ('c10::dummy_uint1_7_t<2>', NULL, NULL, 'uint2', 31, 'int'),
    ('c10::dummy_uint1_7_t<3>', NULL, NULL, 'uint3', 32, 'int'), ('c10::dummy_uint1_7_t<4>', NULL, NULL, 'uint4', 33, 'int'),
    ('c10::dummy_uint1_7_t<5>', NULL, NULL, 'uint5', 34, 'int'), ('c10::dummy_uint1_7_t<6>', NULL, NULL, 'uint6', 35, 'int'),
    ('c10::dummy_uint1_7_t<7>', NULL, NULL, 'uint7', 36, 'int'),
    ('c10::dummy_int1_7_t<1>', NULL, NULL, 'int1', 37, 'int'), ('c10::dummy_int1_7_t<2>', NULL, NULL, 'int2', 38, 'int'),
    ('c10::dummy_int1_7_t<3>', NULL, NULL, 'int3', 39, 'int'), ('c10::dummy_int1_7_t<4>', NULL, NULL, 'int4', 40, 'int'),
    ('c10::dummy_int1_7_t<5>', NULL, NULL, 'int5', 41, 'int'), ('c10::dummy_int1_7_t<6>', NULL, NULL, 'int6', 42, 'int'),
    ('c10::dummy_int1_7_t<7>', NULL, NULL, 'int7', 43, 'int'),
    ('c10::float8_e8m0fnu', 1, 'fp8', 'float8_e8m0fnu', 44, 'float'),
    ('c10::float4_e2m1fn_x2', 1, 'fp4', 'float4_e2m1fn_x2', 45, 'float')
) AS t(type_name, bytes_per_element, precision, torch_dtype, scalar_type, kind);

-- _perf_scalar_type_bytes(code): bytes per element of a c10::ScalarType given by its number (perf_dtypes.scalar_type),
-- as ops that take a dtype argument record it in Concrete Inputs ('15' = BFloat16); NULL for other codes.
CREATE OR REPLACE MACRO _perf_scalar_type_bytes(code) AS
    (SELECT any_value(d.bytes_per_element) FROM perf_dtypes d WHERE d.scalar_type = TRY_CAST(code AS INTEGER));
