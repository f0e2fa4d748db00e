-- Issue 47: a staged row lives only while its import runs (staged, run, then deleted). The vacuums autovacuum starts
-- after inserts alone (PostgreSQL 13 on) are there to mark pages all-visible and freeze rows that stay; here they
-- re-read a table about to be emptied, with the import running beside them. At 1,000,000 staged rows they took 16 s
-- of vacuum on 700 MB as the run began (bench/README.md, 2026-12-08). Vacuums after updates and deletes still run.
ALTER TABLE "import_rows" SET (autovacuum_vacuum_insert_threshold = -1);
