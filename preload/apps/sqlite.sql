-- A generated workload for sqlite3 under the preload (preload/apps/run.sh): rows with blobs of
-- 1 B to 256 KiB, each stored beside its SHA3 hash, then updates that grow, shrink and splice
-- them, deletes, an index, VACUUM; every row's hash and the database's integrity are checked at
-- the end. Prints "sqlite: N passed, N failed" (the rows whose blob no longer matches its hash,
-- and the integrity check).
PRAGMA page_size = 4096;
PRAGMA cache_size = -65536;
PRAGMA journal_mode = WAL;
CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, b BLOB, h BLOB);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO t(id, k, b)
SELECT i, printf('key-%08d-%s', i, hex(randomblob(i % 24))),
       randomblob(CASE WHEN i % 97 = 0 THEN 65536 + (i * 7919) % 196608
                       WHEN i % 13 = 0 THEN 4096 + (i * 31) % 12288
                       ELSE 1 + (i * 131) % 2000 END)
FROM n;
UPDATE t SET h = sha3(b);
COMMIT;
CREATE INDEX t_k ON t(k);
BEGIN;
UPDATE t SET b = b || randomblob(id % 300) WHERE id % 3 = 0;
UPDATE t SET b = substr(b, 1 + length(b) / 4, length(b) / 2) WHERE id % 5 = 0;
UPDATE t SET b = zeroblob(id % 50) || b || zeroblob(id % 70) WHERE id % 7 = 0;
UPDATE t SET h = sha3(b) WHERE id % 3 = 0 OR id % 5 = 0 OR id % 7 = 0;
DELETE FROM t WHERE id % 11 = 0;
COMMIT;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000)
INSERT INTO t(k, b) SELECT printf('late-%d', i), randomblob(1 + (i * 977) % 30000) FROM n;
UPDATE t SET h = sha3(b) WHERE h IS NULL;
COMMIT;
VACUUM;
SELECT printf('sqlite: %d passed, %d failed',
              (SELECT count(*) FROM t WHERE h = sha3(b))
                + (SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'),
              (SELECT count(*) FROM t WHERE h IS NOT sha3(b))
                + (SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'));
