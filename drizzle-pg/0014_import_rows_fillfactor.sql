-- Issue 47: an import marks each staged row once it has run (subscriber_id, referrer_pending: neither indexed). With
-- room left on the row's page the update is HOT: no new entry in import_rows' five indexes (616 bytes of WAL a row
-- and five index pages touched at 200,000 rows on PostgreSQL, bench/README.md 2026-12-07). Pages are filled to half
-- as rows are staged.
ALTER TABLE "import_rows" SET (fillfactor = 50);
