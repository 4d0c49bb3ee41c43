-- lib/names — readable kernel names: template arguments, parameter lists and return types removed, except the
-- template argument that names the kernel when the function is a generic launch wrapper.

-- _strip_parens(s), _strip_angles(s): s with its innermost (...) groups, or its innermost <...> groups, removed
-- (one nesting level per call).
CREATE OR REPLACE MACRO _strip_parens(s) AS regexp_replace(s, '\([^()]*\)', '', 'g');
CREATE OR REPLACE MACRO _strip_angles(s) AS regexp_replace(s, '<[^<>]*>', '', 'g');

-- _kernel_function_name(s): the qualified function name of a normalised C++ kernel signature s (see
-- _short_kernel_name): parameter lists (...) removed first, then template arguments <...> (up to 12 nesting
-- levels of each; parentheses first, so that a comparison inside a template argument, as in
-- 'std::enable_if<(((8)>(0))), void>', does not end the argument list), then the leading 'void ' or return type.
CREATE OR REPLACE MACRO _kernel_function_name(s) AS
    nullif(trim(regexp_replace(regexp_replace(
        _strip_angles(_strip_angles(_strip_angles(_strip_angles(_strip_angles(_strip_angles(
        _strip_angles(_strip_angles(_strip_angles(_strip_angles(_strip_angles(_strip_angles(
        _strip_parens(_strip_parens(_strip_parens(_strip_parens(_strip_parens(_strip_parens(
        _strip_parens(_strip_parens(_strip_parens(_strip_parens(_strip_parens(_strip_parens(s
        )))))))))))))))))))))))),
        '^(void|[A-Za-z_][A-Za-z0-9_:]*\s+)\s*', ''), '[<>()]', '', 'g')), '');

-- _short_kernel_name(name): a readable kernel name that still tells different kernels apart (the rule is
-- documented in docs/definitions.md, "Short name"):
--  * names that are not C++ signatures are kept: no brackets, or neither '::', a leading 'void ' nor an
--    identifier directly followed by '<' or '(' ('Memset (Device)', 'Memcpy HtoD (Pageable -> Device)',
--    'triton_poi_fused_add_0', Tensile's 'Cijk_...');
--  * otherwise the function name is kept: 'void at::native::elementwise_kernel<128, 4, ...>(int, ...)'
--    becomes 'at::native::elementwise_kernel', 'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)'
--    becomes 'ncclDevKernel_AllGather_RING_LL'; '(anonymous namespace)' reads '{anonymous}' and a trailing
--    compiler clone suffix (' [clone .kd]') is dropped;
--  * when the function is a generic launch wrapper, whose name is the same for every kernel it launches, the
--    identifying template argument follows it in <>: the first template argument that is not a literal
--    (number, bool, enum cast), read through architecture guards, shortened to its own qualified name:
--    'void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<...> > >(...)' becomes
--    'cutlass::device_kernel<flash::FlashAttnFwdSm90>'.
--    Wrappers: CUTLASS's cutlass::Kernel, cutlass::Kernel2 and cutlass::device_kernel (include/cutlass/
--    device_kernel.h: `template <typename Operator> __global__ void Kernel(typename Operator::Params)`), also
--    under the renamed namespaces of libraries that embed CUTLASS (cuDNN's cutlass_cudnn_infer/_train), and
--    ck_tile::kentry (Composable Kernel's ck_tile/host/kernel_launch.hpp: `template <int MinBlockPerCu,
--    typename Kernel, typename... Args> __global__ void kentry(Args...)`, with one or two leading ints).
--    Architecture guards: class templates named enable_...sm... (FlashAttention-3's enable_sm90_or_later,
--    vLLM's enable_sm90_only, PyTorch's enable_3x_kernel_for_sm9x), which derive from their argument and only
--    compile its body out on other architectures.
-- NULL stays NULL.
CREATE OR REPLACE MACRO _short_kernel_name(name) AS
    CASE WHEN name IS NULL OR NOT regexp_matches(name, '[<(]')
              OR NOT regexp_matches(name, '::|^void |^[A-Za-z_][A-Za-z0-9_]*[<(]') THEN name ELSE
    (WITH n(s) AS (SELECT regexp_replace(replace(replace(name, '(anonymous namespace)', '{anonymous}'),
                                                 'operator()', 'operator{}'), '(\s*\[clone [^\]]*\])+$', '')),
          f(s, fn) AS (SELECT s, _kernel_function_name(s) FROM n),
          w(fn, arg) AS (
              SELECT fn, CASE WHEN regexp_matches(fn, '^(cutlass[A-Za-z0-9_]*::(Kernel|Kernel2|device_kernel)|ck_tile::kentry)$')
                              THEN nullif(regexp_extract(substr(s, strpos(s, fn || '<') + length(fn) + 1),
                                  '^\s*(?:(?:-?[0-9][A-Za-z0-9_]*|true|false|\([A-Za-z_][A-Za-z0-9_:]*\)-?[0-9]+)\s*,\s*)*'
                                  || '(?:(?:[A-Za-z_{][A-Za-z0-9_:{}]*::)?enable_[A-Za-z0-9_]*sm[A-Za-z0-9_]*<\s*)*'
                                  || '([A-Za-z_{][A-Za-z0-9_:{}]*)', 1), '') END
              FROM f)
     SELECT CASE WHEN arg IS NULL THEN fn ELSE fn || '<' || arg || '>' END FROM w) END;
