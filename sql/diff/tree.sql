-- diff/tree — the call trees of two traces merged top-down and compared: where in the tree the GPU time changed,
-- named by ops and argument sets, so that a change shows under the same op even when the kernels underneath
-- have other names (another vendor, library or version).
--
-- The nodes are the call_tree's annotations, nn.Module calls and cpu_ops (launch calls and GPU events are left
-- out: their names are the platform's). A node's key is its name, and for an op also its argument set (input
-- dims, types, strides, concrete inputs, as recorded); its path is the list of the keys from the root down to
-- it. Two nodes of the two traces are the same merged node when their paths are equal (the parents matched
-- first, then the children by key): the calls of one path in one trace are added up.
--
-- @requires diff/pairs tree/call_tree lib/pytext

-- _diff_tree_nodes: the annotation, module and op nodes of call_tree with their path, one row per node.
--   trace_id, node_id, kind, name, gpu_sum_ns, kernel_count     as in call_tree
--   dims                                 the op's input dims as recorded (JSON text; NULL for other kinds)
--   path                                 the keys from the root down to the node (name, and for an op its
--                                        argument set, separated by chr(31))
-- @materialize diff-tree
CREATE OR REPLACE VIEW _diff_tree_nodes AS
WITH RECURSIVE n AS MATERIALIZED (
    SELECT t.trace_id, t.node_id, t.parent_node_id, t.kind, t.name, t.gpu_sum_ns, t.kernel_count,
           e.input_dims::VARCHAR AS dims,
           CASE WHEN t.kind = 'op' THEN concat_ws(chr(31), t.name, coalesce(e.input_dims::VARCHAR, ''),
                                                  coalesce(e.input_types::VARCHAR, ''),
                                                  coalesce(e.input_strides::VARCHAR, ''),
                                                  coalesce(e.concrete_inputs::VARCHAR, ''))
                ELSE t.name END AS node_key
    FROM call_tree t
    LEFT JOIN events e ON t.kind = 'op' AND e.trace_id = t.trace_id AND e.event_id = t.node_id
    WHERE t.kind IN ('annotation', 'module', 'op')
), walk(trace_id, node_id, path) AS (
    SELECT trace_id, node_id, [node_key] FROM n WHERE parent_node_id IS NULL
    UNION ALL
    SELECT c.trace_id, c.node_id, list_append(w.path, c.node_key)
    FROM walk w JOIN n c ON c.trace_id = w.trace_id AND c.parent_node_id = w.node_id
)
SELECT n.trace_id, n.node_id, n.kind, n.name, n.gpu_sum_ns, n.kernel_count, n.dims, w.path
FROM walk w JOIN n USING (trace_id, node_id);

-- _diff_tree_src: the merged nodes of every trace (see diff/pairs for the columns): k {path}, n the calls of
-- that path, v_ns the Σ duration of the GPU events below them.
CREATE OR REPLACE VIEW _diff_tree_src AS
SELECT trace_id, {'path': path} AS k, count(*) AS n, sum(gpu_sum_ns)::BIGINT AS v_ns
FROM _diff_tree_nodes GROUP BY trace_id, path;

-- diff_tree(base_id, variant_id): the call trees of the traces base_id and variant_id merged (see the top of
-- this file); one row per merged node present in either tree:
--   depth                       0 for a root
--   kind                        annotation, module or op
--   name                        the node's name (`nn.Module: Qwen2Attention_0`, `aten::mm`)
--   input_dims                  an op's input dims as Python text ('' for other nodes and unrecorded shapes)
--   path                        the names from the root down to the node, ' > '-joined
--   side                        both | base_only | variant_only (diff/pairs)
--   base_count, variant_count   calls of this path in each trace
--   base_ns, variant_ns         Σ duration of the GPU events below those calls (call_tree.gpu_sum_ns), ns
--   diff_ns, ratio              variant - base, ns; variant / base (diff/pairs)
--   self_diff_ns                for a node on both sides, the part of diff_ns that no child on both sides
--                               explains: diff_ns minus the diff_ns of its children present in both trees, i.e.
--                               the change of its own GPU events and of every subtree below it that exists in
--                               one trace only (this node is their lowest common ancestor); NULL for a node on
--                               one side only (its change is in the self_diff_ns of its lowest common ancestor).
--                               The self_diff_ns of all nodes on both sides plus the diff_ns of the roots on one
--                               side only add up to the change of the whole trees.
-- Ordered by |self_diff_ns| descending, then |diff_ns| descending, then path, then the ops' argument sets along
-- it (nodes of one path of names differ by them).
-- @output diff-level 9 tree KEYS depth kind name input_dims path
CREATE OR REPLACE MACRO diff_tree(base_id, variant_id) AS TABLE
WITH d AS (
    SELECT k.path AS key_path, * EXCLUDE (k) FROM _diff_sides('_diff_tree_src', base_id, variant_id)
), kids AS (
    SELECT key_path[:-2] AS parent_path, sum(diff_ns) AS children_diff_ns
    FROM d WHERE side = 'both' AND len(key_path) > 1 GROUP BY ALL
), names AS (   -- one node of each path, for its kind, name and dims
    SELECT path, any_value(kind) AS kind, any_value(name) AS name, any_value(dims) AS dims
    FROM _diff_tree_nodes WHERE _diff_in(trace_id, base_id) OR _diff_in(trace_id, variant_id) GROUP BY path
), texts AS (
    SELECT dims, _py_tuple3(dims::JSON) AS py FROM (SELECT DISTINCT dims FROM names WHERE dims IS NOT NULL)
)
SELECT len(d.key_path) - 1 AS depth, n.kind, n.name, coalesce(t.py, '') AS input_dims,
       array_to_string(list_transform(d.key_path, lambda x: split_part(x, chr(31), 1)), ' > ') AS path,
       d.* EXCLUDE (key_path),
       CASE WHEN d.side = 'both' THEN (d.diff_ns - coalesce(c.children_diff_ns, 0))::BIGINT END AS self_diff_ns
FROM d
JOIN names n ON n.path = d.key_path
LEFT JOIN texts t ON t.dims = n.dims
LEFT JOIN kids c ON c.parent_path = d.key_path
ORDER BY abs(coalesce(self_diff_ns, 0)) DESC, abs(d.diff_ns) DESC, path, d.key_path;
