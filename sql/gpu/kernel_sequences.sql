-- gpu/kernel_sequences — the kernel sequences each op and each nn.Module launches: for every op or module name,
-- the distinct ordered sequences of GPU events its calls launch, how often each occurs and its GPU time. No op is
-- named: every cpu_op and every nn.Module frame of the call tree is a call, and a call's GPU events are those
-- launched by a runtime call inside it on its thread (through any depth of nested calls).
--
-- @requires lib/names tree/nesting tree/context tree/links

-- kernel_sequence_calls: one row per op or module call that launched GPU work.
--   trace_id, event_id   the call (a cpu_op, or an nn.Module python_function frame)
--   kind                 'op' or 'module'
--   name                 the op's name, or the module's class (nn.Module: Linear_3 -> nn.Module: Linear)
--   kernels              its GPU events (kernels, memcpy, memset)
--   sequence             their names in GPU start order (at one start, in file order), joined by ' | '
--   short_sequence       the same with each name shortened (_short_kernel_name)
--   gpu_ns               their summed duration, ns
--   dur_ns               the call's duration, ns
CREATE OR REPLACE VIEW kernel_sequence_calls AS
WITH RECURSIVE up(trace_id, gpu_event_id, event_id) AS (
    -- each linked GPU event at its launch call, then at every call enclosing that one on its thread
    SELECT trace_id, event_id, launch_event_id FROM gpu_launch_links WHERE linked AND launch_event_id IS NOT NULL
    UNION ALL
    SELECT u.trace_id, u.gpu_event_id, n.parent_event_id
    FROM up u JOIN cpu_nesting n ON n.trace_id = u.trace_id AND n.event_id = u.event_id
    WHERE n.parent_event_id IS NOT NULL
)
SELECT c.trace_id, c.event_id, any_value(c.anchor_kind) AS kind,
       any_value(CASE WHEN c.anchor_kind = 'module' THEN regexp_replace(c.name, '_[0-9]+$', '') ELSE c.name END)
           AS name,
       count(*) AS kernels, string_agg(g.name, ' | ' ORDER BY g.ts_ns, g.event_id) AS sequence,
       string_agg(coalesce(_short_kernel_name(g.name), g.name), ' | ' ORDER BY g.ts_ns, g.event_id) AS short_sequence,
       sum(g.dur_ns)::BIGINT AS gpu_ns, any_value(c.dur_ns) AS dur_ns
FROM up u
JOIN cpu_event_context c ON c.trace_id = u.trace_id AND c.event_id = u.event_id AND c.anchor_kind IN ('op', 'module')
JOIN gpu_launch_links g ON g.trace_id = u.trace_id AND g.event_id = u.gpu_event_id
GROUP BY c.trace_id, c.event_id;

-- kernel_sequences: one row per (trace, kind, name, sequence): the distinct kernel sequences of each op and
-- module name.
--   trace_id, kind, name    as in kernel_sequence_calls
--   sequence, kernels       the sequence and its length
--   short_sequence          the sequence with each name shortened
--   calls                   calls of that name that launched exactly this sequence
--   name_calls              calls of that name that launched GPU work
--   calls_pct               100 x calls / name_calls: how much of the name's work repeats this sequence
--   gpu_ns                  the GPU time of those calls, ns
--   mean_gpu_ns             gpu_ns / calls
--   dur_ns                  the calls' summed duration on the CPU, ns
CREATE OR REPLACE VIEW kernel_sequences AS
SELECT trace_id, kind, name, sequence, any_value(short_sequence) AS short_sequence, any_value(kernels) AS kernels, count(*) AS calls,
       any_value(name_calls) AS name_calls, 100.0 * count(*) / any_value(name_calls) AS calls_pct,
       sum(gpu_ns)::BIGINT AS gpu_ns, sum(gpu_ns) / count(*) AS mean_gpu_ns, sum(dur_ns)::BIGINT AS dur_ns
FROM (SELECT *, count(*) OVER (PARTITION BY trace_id, kind, name) AS name_calls FROM kernel_sequence_calls)
GROUP BY trace_id, kind, name, sequence;

-- frequent_kernel_sequences: the sequences that repeat: those of two or more GPU events that two or more calls
-- launched.
-- @output report-native 18 frequent_kernel_sequences \
--     COLUMNS trace_id trace kind name calls calls_pct kernels gpu_ns:us mean_gpu_ns:us short_sequence \
--     TITLE "Frequent kernel sequences" \
--     ABOUT "Per op and nn.Module name, each ordered sequence of GPU events (two or more) that two or more of its calls launched: calls, share of the name's calls, GPU time in µs." \
--     ORDER BY trace, gpu_ns DESC, kind, name, sequence
CREATE OR REPLACE VIEW frequent_kernel_sequences AS
SELECT * FROM kernel_sequences WHERE calls >= 2 AND kernels >= 2;
