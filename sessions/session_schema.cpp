#include "sessions/session_schema.h"

namespace fusebox {

const std::vector<const char*>& sessionMigrations() {
  static const std::vector<const char*> migrations = {
      // 1: the first schema
      R"SQL(
      CREATE TABLE session (
        id INTEGER PRIMARY KEY,
        model TEXT NOT NULL,
        config TEXT NOT NULL,
        target TEXT NOT NULL,
        created TEXT NOT NULL);
      CREATE TABLE artifact (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        stage TEXT NOT NULL,
        graph TEXT NOT NULL,
        format TEXT NOT NULL,
        body TEXT NOT NULL,
        ms REAL NOT NULL,
        PRIMARY KEY (session_id, stage, graph, format));
      CREATE TABLE decision (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        graph TEXT NOT NULL,
        first INTEGER NOT NULL,
        second INTEGER NOT NULL,
        kind TEXT NOT NULL,
        fused INTEGER NOT NULL,
        reason TEXT NOT NULL,
        score INTEGER NOT NULL);
      CREATE TABLE kernel (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        graph TEXT NOT NULL,
        kernel_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        nodes TEXT NOT NULL,
        provenance TEXT NOT NULL,
        bytes INTEGER NOT NULL);
      CREATE TABLE source (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        graph TEXT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, graph, kind));
      CREATE TABLE compile_log (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        graph TEXT NOT NULL,
        target TEXT NOT NULL,
        ok INTEGER NOT NULL,
        log TEXT NOT NULL,
        ms REAL NOT NULL);
      CREATE TABLE profile_sample (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        run INTEGER NOT NULL,
        graph TEXT NOT NULL,
        kernel TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        ms REAL NOT NULL,
        bytes INTEGER NOT NULL);
      CREATE INDEX profile_by_session ON profile_sample(session_id, run);
      )SQL",
      // 2: Graphviz layouts cached by the hash of their dot text, shared by every session of the
      // file (re-opening a compile, or the same config again, skips the layout)
      R"SQL(
      CREATE TABLE layout_cache (
        dot_hash TEXT PRIMARY KEY,
        layout TEXT NOT NULL);
      )SQL",
      // 3: what the inspector's views need besides the graphs' dot text and the sources, so a
      // stored stage can be shown without the pipeline: every graph node's traced origins and
      // module scope (by its name in the dot text), the lines of each kernel in each generated
      // source, each kernel's ops in execution order, and each schedule's loop program and
      // memory peak
      R"SQL(
      CREATE TABLE graph_node (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        stage TEXT NOT NULL,
        graph TEXT NOT NULL,
        node TEXT NOT NULL,
        origins TEXT NOT NULL,
        scope TEXT NOT NULL,
        PRIMARY KEY (session_id, stage, graph, node));
      CREATE TABLE kernel_span (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        graph TEXT NOT NULL,
        kind TEXT NOT NULL,
        kernel_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        first_line INTEGER NOT NULL,
        last_line INTEGER NOT NULL,
        provenance TEXT NOT NULL);
      CREATE INDEX kernel_span_by_session ON kernel_span(session_id);
      CREATE TABLE kernel_op (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        graph TEXT NOT NULL,
        kernel_id INTEGER NOT NULL,
        node INTEGER NOT NULL,
        op TEXT NOT NULL);
      CREATE INDEX kernel_op_by_session ON kernel_op(session_id);
      CREATE TABLE schedule_summary (
        session_id INTEGER NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        graph TEXT NOT NULL,
        program TEXT NOT NULL,
        peak_bytes INTEGER NOT NULL,
        PRIMARY KEY (session_id, graph));
      )SQL",
      // 4: what a person writes about a session in the session browser: a name, notes, tags
      R"SQL(
      ALTER TABLE session ADD COLUMN name TEXT NOT NULL DEFAULT '';
      ALTER TABLE session ADD COLUMN notes TEXT NOT NULL DEFAULT '';
      ALTER TABLE session ADD COLUMN tags TEXT NOT NULL DEFAULT '';
      )SQL",
      // 5: which ops of a kernel the backward computes again (min-cut rematerialization), and the
      // memory plan per kernel, and when each kernel began in its iteration
      R"SQL(
      ALTER TABLE kernel_op ADD COLUMN recomputed INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE schedule_summary ADD COLUMN live_bytes TEXT NOT NULL DEFAULT '';
      ALTER TABLE schedule_summary ADD COLUMN allocated_bytes TEXT NOT NULL DEFAULT '';
      ALTER TABLE profile_sample ADD COLUMN start_ms REAL;
      )SQL",
      // 6: when the host issued each kernel's launch (CUDA: the CPU track above the GPU's)
      R"SQL(
      ALTER TABLE profile_sample ADD COLUMN launch_ms REAL;
      )SQL",
  };
  return migrations;
}

}  // namespace fusebox
