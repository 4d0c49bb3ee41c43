-- lib/pytext — JSON values of the trace's args written as Python writes them (tuples), the text shown for
-- Input Dims, Input type, Input Strides and Concrete Inputs.

-- _py_atom(j) / _py_tuple1..3(j): a JSON value of the trace's args written as Python writes the same
-- value after turning lists into tuples (the text TraceLens shows for Input Dims, Input type, Input
-- Strides and Concrete Inputs): [[16, 559, 1], [], []] -> '((16, 559, 1), (), ())', ["", "1"] ->
-- "('', '1')", [1024] -> '(1024,)'. Up to three levels of nesting (tensor lists).
CREATE OR REPLACE MACRO _py_atom(x) AS
    CASE json_type(x) WHEN 'VARCHAR' THEN '''' || (x ->> '$') || ''''
                      WHEN 'NULL' THEN 'None'
                      WHEN 'BOOLEAN' THEN CASE WHEN x::VARCHAR = 'true' THEN 'True' ELSE 'False' END
                      ELSE x::VARCHAR END;

CREATE OR REPLACE MACRO _py_seq(items, n) AS
    '(' || array_to_string(items, ', ') || CASE WHEN n = 1 THEN ',' ELSE '' END || ')';

CREATE OR REPLACE MACRO _py_tuple1(j) AS
    CASE WHEN json_type(j) = 'ARRAY'
         THEN _py_seq(list_transform(json_extract(j, '$[*]'), lambda x: _py_atom(x)), json_array_length(j))
         ELSE _py_atom(j) END;

CREATE OR REPLACE MACRO _py_tuple2(j) AS
    CASE WHEN json_type(j) = 'ARRAY'
         THEN _py_seq(list_transform(json_extract(j, '$[*]'), lambda x: _py_tuple1(x)), json_array_length(j))
         ELSE _py_atom(j) END;

CREATE OR REPLACE MACRO _py_tuple3(j) AS
    CASE WHEN json_type(j) = 'ARRAY'
         THEN _py_seq(list_transform(json_extract(j, '$[*]'), lambda x: _py_tuple2(x)), json_array_length(j))
         ELSE _py_atom(j) END;
