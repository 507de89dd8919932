"""Two fleet questions asked of an ioshape Parquet dataset, by DuckDB or by
Spark, printed as JSON lines so that the two engines' answers can be set
side by side:

  python3 queries.py duckdb|spark DATASET_DIR

  sizes  the block sizes each process's I/O had: log2(size) histogram per comm
  p99    the 99th-percentile latency per host and device
  first  each host's first I/O on the wall clock (the time column, which
         Spark refused when it was in nanoseconds)
"""
import json
import sys

SIZES = """
SELECT comm, CAST(floor(log2(size)) AS INT) AS log2_size, count(*) AS ios
FROM fleet
WHERE layer = 'block' AND size > 0 AND comm IS NOT NULL
GROUP BY comm, CAST(floor(log2(size)) AS INT)
ORDER BY comm, log2_size
"""

P99 = """
SELECT host, device, {p99}(latency_ns, 0.99) AS p99_ns, count(*) AS ios
FROM fleet
WHERE latency_ns IS NOT NULL
GROUP BY host, device
ORDER BY host, device
"""

FIRST = """
SELECT host, {micros}(min(time)) AS first_us
FROM fleet
GROUP BY host
ORDER BY host
"""


def duckdb_rows(root):
    import duckdb

    con = duckdb.connect()
    glob = (root + "/**/*.parquet").replace("'", "''")
    con.execute(
        f"CREATE VIEW fleet AS SELECT * FROM read_parquet('{glob}', hive_partitioning = true, hive_types_autocast = false)"
    )
    for name, sql in (("sizes", SIZES), ("p99", P99.format(p99="quantile_cont")), ("first", FIRST.format(micros="epoch_us"))):
        cur = con.execute(sql)
        cols = [d[0] for d in cur.description]
        for row in cur.fetchall():
            yield name, dict(zip(cols, row))


def spark_rows(root):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("ioshape-fleet")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.parquet(root).createOrReplaceTempView("fleet")
    for name, sql in (("sizes", SIZES), ("p99", P99.format(p99="percentile")), ("first", FIRST.format(micros="unix_micros"))):
        for row in spark.sql(sql).collect():
            yield name, row.asDict()
    spark.stop()


def main():
    engine, root = sys.argv[1], sys.argv[2]
    rows = duckdb_rows(root) if engine == "duckdb" else spark_rows(root)
    for name, row in rows:
        print(json.dumps({"query": name, **{k: (float(v) if k == "p99_ns" else v) for k, v in row.items()}}, sort_keys=True))


if __name__ == "__main__":
    main()
