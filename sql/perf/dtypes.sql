-- perf/dtypes — the size and the compute precision of each element type the PyTorch profiler records in a
-- cpu_op's 'Input type' (the caffe2 TypeMeta name of the tensor's dtype: 'float', 'c10::BFloat16', ...).

-- perf_dtypes: one row per recorded type name.
--   type_name          the name as recorded in 'Input type' (compared case-blind)
--   bytes_per_element  storage size of one recorded element, bytes (c10::Float4_e2m1fn_x2 packs two FP4
--                      values in one recorded element: 1 byte)
--   precision          the column of the device table (perf_devices) whose peak applies to math in this
--                      type: fp64, fp32, bf16, fp16, fp8, int8, fp4; NULL for types no peak is given for
--                      (integers wider than 8 bits, bool, complex)
-- Sizes: c10/core/ScalarType.h (PyTorch); the names are those of caffe2::TypeMeta (c10/util/typeid.h).
CREATE OR REPLACE VIEW perf_dtypes AS
SELECT * FROM (VALUES
    ('double', 8, 'fp64'), ('float', 4, 'fp32'), ('c10::half', 2, 'fp16'), ('c10::bfloat16', 2, 'bf16'),
    ('c10::float8_e4m3fn', 1, 'fp8'), ('c10::float8_e5m2', 1, 'fp8'), ('c10::float8_e4m3fnuz', 1, 'fp8'),
    ('c10::float8_e5m2fnuz', 1, 'fp8'), ('c10::float8_e8m0fnu', 1, 'fp8'), ('c10::float4_e2m1fn_x2', 1, 'fp4'),
    ('signed char', 1, 'int8'), ('unsigned char', 1, 'int8'), ('c10::qint8', 1, 'int8'), ('c10::quint8', 1, 'int8'),
    ('short int', 2, NULL), ('unsigned short', 2, NULL), ('int', 4, NULL), ('unsigned int', 4, NULL),
    ('c10::qint32', 4, NULL), ('long int', 8, NULL), ('unsigned long', 8, NULL), ('bool', 1, NULL),
    ('c10::complex<c10::half>', 4, NULL), ('c10::complex<float>', 8, NULL), ('c10::complex<double>', 16, NULL)
) AS t(type_name, bytes_per_element, precision);

-- _perf_scalar_type_bytes(code): bytes per element of a c10::ScalarType given by its number, as ops that take a
-- dtype argument record it in Concrete Inputs ('15' = BFloat16); NULL for other codes. The numbers are the
-- order of AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS in c10/core/ScalarType.h: Byte 0, Char 1, Short 2,
-- Int 3, Long 4, Half 5, Float 6, Double 7, Bool 11, BFloat16 15, Float8_e5m2 23, Float8_e4m3fn 24,
-- Float8_e5m2fnuz 25, Float8_e4m3fnuz 26.
CREATE OR REPLACE MACRO _perf_scalar_type_bytes(code) AS
    CASE TRY_CAST(code AS INTEGER) WHEN 0 THEN 1 WHEN 1 THEN 1 WHEN 2 THEN 2 WHEN 3 THEN 4 WHEN 4 THEN 8 WHEN 5 THEN 2
                                   WHEN 6 THEN 4 WHEN 7 THEN 8 WHEN 11 THEN 1 WHEN 15 THEN 2 WHEN 23 THEN 1
                                   WHEN 24 THEN 1 WHEN 25 THEN 1 WHEN 26 THEN 1 END;
