-- perf/conv — FLOPs and bytes of convolutions, forward and backward.
--
-- For an input [N, C_in, *spatial], a weight [C_out, C_in / groups, *kernel] and an output [N, C_out, *out]
-- (out_i = ⌊(in_i + 2·padding_i − dilation_i·(kernel_i − 1) − 1) / stride_i⌋ + 1; for a transposed
-- convolution out_i = (in_i − 1)·stride_i − 2·padding_i + dilation_i·(kernel_i − 1) + output_padding_i + 1):
--   forward   FLOPs = 2·N·C_out·Π out·(C_in / groups)·Π kernel (+ N·C_out·Π out for the bias); for a
--             transposed convolution the same product with input and output exchanged;
--             bytes = input, weight and output once each (+ bias), at their recorded element sizes.
--   backward  the gradient of the input and of the weight each cost the forward's product FLOPs; output_mask
--             (the last argument; both when not recorded) says which are computed; bytes: read grad_output, input and weight, write the
--             requested gradients.
-- Sources: the definition of the convolution (PyTorch torch.nn.Conv2d documentation gives the output size);
-- TraceLens PerfModel/perf_model.py (CONV.flops_func, CONV.bytes_func) counts the same product. Signatures
-- (native_functions.yaml):
--   convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
--   convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding, dilation, transposed,
--                        output_padding, groups, output_mask)
-- The precision is the input's type (tensor cores).
--
-- @requires perf/args

-- _perf_ints(t): the integers of a recorded list text ('[1, 1]') as BIGINT[].
CREATE OR REPLACE MACRO _perf_ints(t) AS list_transform(regexp_extract_all(coalesce(t, ''), '-?\d+'), lambda v: v::BIGINT);

-- _perf_conv: one row per modelled argument set (columns as in perf_arg_models).
CREATE OR REPLACE VIEW _perf_conv AS
WITH k AS (
    SELECT s.*, s.op_name IN ('aten::convolution_backward') AS bwd,
           CASE WHEN s.op_name = 'aten::convolution_backward' THEN 1 ELSE 0 END AS o  -- argument offset
    FROM _perf_arg_sets s
    WHERE s.op_name IN ('aten::convolution', 'aten::_convolution', 'aten::convolution_backward')
), g AS (
    SELECT *, dims[o + 1] AS x, dims[o + 2] AS w, bpe[o + 1] AS bx, bpe[o + 2] AS bw, prec[o + 1] AS px,
           CASE WHEN bwd THEN NULL ELSE numel[3] END AS bias_n, bpe[3] AS bb,
           _perf_ints(conc[o + 4]) AS st, _perf_ints(conc[o + 5]) AS pad, _perf_ints(conc[o + 6]) AS dil,
           coalesce(conc[o + 7], '') = 'True' AS tr, _perf_ints(conc[o + 8]) AS opad,
           coalesce(TRY_CAST(conc[o + 9] AS BIGINT), 1) AS grp,
           CASE WHEN bwd THEN regexp_extract_all(coalesce(conc[11], ''), '(True|False)') END AS mask
    FROM k
), s AS (
    SELECT *, len(x) - 2 AS nd FROM g WHERE len(x) >= 3 AND len(w) = len(x) AND bx IS NOT NULL AND bw IS NOT NULL
), o AS (
    SELECT *,
           list_transform(range(1, nd + 1), lambda i:
               CASE WHEN tr THEN (x[i + 2] - 1) * coalesce(st[i], st[1], 1) - 2 * coalesce(pad[i], pad[1], 0)
                                 + coalesce(dil[i], dil[1], 1) * (w[i + 2] - 1) + coalesce(opad[i], opad[1], 0) + 1
                    ELSE (x[i + 2] + 2 * coalesce(pad[i], pad[1], 0) - coalesce(dil[i], dil[1], 1) * (w[i + 2] - 1) - 1)
                         // coalesce(st[i], st[1], 1) + 1 END) AS y
    FROM s
), f AS (
    SELECT *, CASE WHEN tr THEN w[2] * grp ELSE w[1] END AS c_out,
           -- multiply-accumulates of one pass: every (output or, when transposed, input) position × kernel
           2.0 * x[1] * (CASE WHEN tr THEN x[2] * _perf_numel(x[3:]) * w[2] ELSE w[1] * _perf_numel(y) * w[2] END)
               * _perf_numel(w[3:]) AS pass_flops
    FROM o
)
SELECT op_name, d_txt, t_txt, c_txt, CASE WHEN bwd THEN 'CONV_bwd' ELSE 'CONV_fwd' END AS family,
       CASE WHEN bwd THEN pass_flops * ((coalesce(mask[1], 'True') = 'True')::INT + (coalesce(mask[2], 'True') = 'True')::INT)
            ELSE pass_flops + coalesce(x[1] * c_out * _perf_numel(y), 0) * (bias_n IS NOT NULL)::INT END AS flops,
       (_perf_numel(x) * bx + _perf_numel(w) * bw + x[1] * c_out * _perf_numel(y) * bx
        + coalesce(bias_n * bb, 0)
        + CASE WHEN bwd THEN (coalesce(mask[1], 'True') = 'True')::INT * _perf_numel(x) * bx
                            + (coalesce(mask[2], 'True') = 'True')::INT * _perf_numel(w) * bw ELSE 0 END
       )::DOUBLE AS bytes,
       px AS precision, true AS matrix,
       format('N={} C_in={} C_out={} in={} kernel={} out={} groups={}', x[1], x[2], c_out, x[3:], w[3:], y, grp) AS shape
FROM f WHERE list_min(y) > 0;
