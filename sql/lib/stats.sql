-- lib/stats — statistics of integer columns computed exactly: the same numbers whatever the order DuckDB
-- aggregates the rows in (a parallel stddev_samp combines partial states in no fixed order, so its last digits
-- change with the threads and with the other traces a connection reads).

-- _stddev_samp_int(x): the sample standard deviation of the integers x of a group (an aggregate; 0 for a group
-- of one value): sqrt((n Σx² − (Σx)²) / (n (n − 1))), the sums in 128-bit integers (exact), rounded once to
-- float64 before the division and the square root.
CREATE OR REPLACE MACRO _stddev_samp_int(x) AS
    CASE WHEN count(x) > 1
         THEN sqrt(greatest(count(x)::HUGEINT * sum(x::HUGEINT * x::HUGEINT) - sum(x::HUGEINT) * sum(x::HUGEINT), 0)
                   ::DOUBLE / (count(x) * (count(x) - 1)))
         ELSE 0.0 END;

-- _avg_float(x), _stddev_samp_float(x): the mean and the sample standard deviation of the floats x of a group (an
-- aggregate), summed left to right over the values sorted ascending, so the same rows always give the same bits
-- (a parallel avg of floats adds its partial sums in no fixed order).
CREATE OR REPLACE MACRO _avg_float(x) AS list_avg(list(x ORDER BY x));
CREATE OR REPLACE MACRO _stddev_samp_float(x) AS list_stddev_samp(list(x ORDER BY x));
