BEGIN TRANSACTION;
CREATE TABLE check_results (
    id INTEGER PRIMARY KEY,
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    task TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    weight REAL NOT NULL,
    status TEXT NOT NULL,
    message TEXT NOT NULL,
    hint TEXT NOT NULL,
    seconds REAL NOT NULL
);
INSERT INTO "check_results" VALUES(1,1,'scale','scale.values','values',1.0,'passed','','',0.0);
INSERT INTO "check_results" VALUES(2,1,'row_sums','row_sums.values','values',1.0,'failed','wrong','',0.0);
CREATE TABLE current (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL REFERENCES students(id),
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (assignment, student)
);
INSERT INTO "current" VALUES('mini','alice',1,'2026-12-01T09:18:18.679591+00:00');
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO "meta" VALUES('schema_version','1');
CREATE TABLE students (
    id TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
INSERT INTO "students" VALUES('alice','2026-12-01T09:18:18.679591+00:00','2026-12-01T09:18:18.679591+00:00');
CREATE TABLE submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL REFERENCES students(id),
    digest TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    graded_at TEXT NOT NULL,
    score REAL NOT NULL DEFAULT 0,
    max_score REAL NOT NULL DEFAULT 0,
    status TEXT NOT NULL CHECK (status IN ('graded', 'error')),
    message TEXT NOT NULL DEFAULT '',
    seconds REAL NOT NULL DEFAULT 0,
    check_seconds REAL NOT NULL DEFAULT 0,
    worker_rss_mb REAL,
    report_json TEXT,
    UNIQUE (assignment, student, digest, fingerprint)
);
INSERT INTO "submissions" VALUES(1,'mini','alice','d1','fp','alice','2026-12-01T09:18:18.679591+00:00',3.0,5.0,'graded','',0.0,0.0,NULL,'{"assignment": "mini", "tasks": [{"id": "scale", "title": "Scale", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "ok", "checks": [{"name": "scale.values", "description": "values", "weight": 1.0, "status": "passed"}]}, {"id": "row_sums", "title": "Row sums", "score": 1.0, "max_score": 3.0, "status": "failed", "feedback": "no", "checks": [{"name": "row_sums.values", "description": "values", "weight": 1.0, "status": "failed", "message": "wrong"}]}]}');
CREATE TABLE task_scores (
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    task TEXT NOT NULL,
    title TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    status TEXT NOT NULL,
    feedback TEXT NOT NULL,
    PRIMARY KEY (submission, task)
);
INSERT INTO "task_scores" VALUES(1,0,'scale','Scale',2.0,2.0,'passed','ok');
INSERT INTO "task_scores" VALUES(1,1,'row_sums','Row sums',1.0,3.0,'failed','no');
CREATE INDEX check_results_submission ON check_results(submission);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('submissions',1);
COMMIT;
