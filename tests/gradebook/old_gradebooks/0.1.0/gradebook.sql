PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta VALUES('schema_version','1');
CREATE TABLE students (
    id TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
INSERT INTO students VALUES('dee','2026-12-06T02:29:27.430658+00:00','2026-12-06T02:29:27.430658+00:00');
INSERT INTO students VALUES('ada','2026-12-06T02:29:36.948572+00:00','2026-12-06T02:29:36.948572+00:00');
INSERT INTO students VALUES('bob','2026-12-06T02:29:37.199196+00:00','2026-12-06T02:29:58.457014+00:00');
INSERT INTO students VALUES('cy','2026-12-06T02:29:37.439153+00:00','2026-12-06T02:29:37.439153+00:00');
INSERT INTO students VALUES('eve','2026-12-06T02:29:37.651709+00:00','2026-12-06T02:29:37.651709+00:00');
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
INSERT INTO submissions VALUES(1,'mini','dee','raw:af9bf4a7d0af8a8b18cf7b79390312fa3f06aa5b612604d5ab584c8fa2635d39','d423ce38030e14e472bc9a832a6ae73c668f4b4c471fbb82ccea93c380d0670e','class1/dee','2026-12-06T02:29:27.430658+00:00',0.0,5.0,'error','no mini/ package found in /tmp/fixwork/class1/dee (looked for ops.py)',0.0,0.0,NULL,NULL);
INSERT INTO submissions VALUES(2,'mini','ada','1db7490300b983d90018011cc584f1c94b8bd9e5898ff26a99d23aa05365416c','d423ce38030e14e472bc9a832a6ae73c668f4b4c471fbb82ccea93c380d0670e','class1/ada','2026-12-06T02:29:36.948572+00:00',5.0,5.0,'graded','',0.23000000000000000999,0.052600000000000000921,245.19999999999998862,'{"assignment": "mini", "submission": "class1/ada", "score": 5.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0171, "cpu_seconds": 0.008}]}, {"id": "row_sums", "title": "Row sums", "score": 3.0, "max_score": 3.0, "status": "passed", "feedback": "all 2 checks passed", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "passed", "message": "", "hint": "", "seed": 232093816, "seconds": 0.0336, "cpu_seconds": 0.0117}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 784561298, "seconds": 0.0019, "cpu_seconds": 0.0}]}], "digest": "1db7490300b983d90018011cc584f1c94b8bd9e5898ff26a99d23aa05365416c", "notes": [], "student_output": "", "environment": {"grader": "0.1.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.23}');
INSERT INTO submissions VALUES(3,'mini','bob','e85dbd9ba054350e565555a5e5fbfadcf1b399a1c262b5990e781a658c2434ba','d423ce38030e14e472bc9a832a6ae73c668f4b4c471fbb82ccea93c380d0670e','class1/bob','2026-12-06T02:29:37.199196+00:00',0.0,5.0,'graded','',0.23999999999999999111,0.048300000000000002653,245.19999999999998862,'{"assignment": "mini", "submission": "class1/bob", "score": 0.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 0.0, "max_score": 2.0, "status": "not_implemented", "feedback": "not implemented (the function still raises NotImplementedError)", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 8, in scale)", "hint": "", "seed": 1591119095, "seconds": 0.0193, "cpu_seconds": 0.008}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "not_implemented", "feedback": "not implemented (the function still raises NotImplementedError)", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 13, in row_sums)", "hint": "", "seed": 232093816, "seconds": 0.0193, "cpu_seconds": 0.0079}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 13, in row_sums)", "hint": "", "seed": 784561298, "seconds": 0.0097, "cpu_seconds": 0.004}]}], "digest": "e85dbd9ba054350e565555a5e5fbfadcf1b399a1c262b5990e781a658c2434ba", "notes": [], "student_output": "", "environment": {"grader": "0.1.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.24}');
INSERT INTO submissions VALUES(4,'mini','cy','b682d4b1eb910805d5073873f54d5261c2adb5b5c2ab413a8e2c88ca78ec7de3','d423ce38030e14e472bc9a832a6ae73c668f4b4c471fbb82ccea93c380d0670e','class1/cy','2026-12-06T02:29:37.439153+00:00',2.0,5.0,'graded','',0.23999999999999999111,0.044900000000000002409,245.19999999999998862,'{"assignment": "mini", "submission": "class1/cy", "score": 2.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0213, "cpu_seconds": 0.0079}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "failed", "feedback": "0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: row_sums(x (5, 3)): expected shape (5,), got (3,) Hint: You summed each column; a row sum reduces over the last dimension.", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "failed", "message": "row_sums(x (5, 3)): expected shape (5,), got (3,)", "hint": "You summed each column; a row sum reduces over the last dimension.", "seed": 232093816, "seconds": 0.0176, "cpu_seconds": 0.008}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "failed", "message": "row_sums(x (1, 7)): expected shape (1,), got (7,)", "hint": "You summed each column; a row sum reduces over the last dimension.", "seed": 784561298, "seconds": 0.006, "cpu_seconds": 0.004}]}], "digest": "b682d4b1eb910805d5073873f54d5261c2adb5b5c2ab413a8e2c88ca78ec7de3", "notes": [], "student_output": "", "environment": {"grader": "0.1.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.24}');
INSERT INTO submissions VALUES(5,'mini','eve','e29a5a3e17c033e72ce06c3c5adc7749ca356146993a4643a38ceca9a09dede3','d423ce38030e14e472bc9a832a6ae73c668f4b4c471fbb82ccea93c380d0670e','class1/eve','2026-12-06T02:29:37.651709+00:00',5.0,5.0,'graded','',0.20999999999999999222,0.04179999999999999688,245.19999999999998862,'{"assignment": "mini", "submission": "class1/eve", "score": 5.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0179, "cpu_seconds": 0.0079}]}, {"id": "row_sums", "title": "Row sums", "score": 3.0, "max_score": 3.0, "status": "passed", "feedback": "all 2 checks passed", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "passed", "message": "", "hint": "", "seed": 232093816, "seconds": 0.022, "cpu_seconds": 0.0119}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 784561298, "seconds": 0.0019, "cpu_seconds": 0.0}]}], "digest": "e29a5a3e17c033e72ce06c3c5adc7749ca356146993a4643a38ceca9a09dede3", "notes": [], "student_output": "--- output during scale.scale_values\n<script>alert(1)</script>", "environment": {"grader": "0.1.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.21}');
INSERT INTO submissions VALUES(6,'mini','bob','6d8e806df8eac9b2edbbc2654cb68b1415ddae537eb49970811240615345898d','d423ce38030e14e472bc9a832a6ae73c668f4b4c471fbb82ccea93c380d0670e','class1/bob','2026-12-06T02:29:58.457014+00:00',2.0,5.0,'graded','',0.32000000000000000666,0.050799999999999997934,244.59999999999999431,'{"assignment": "mini", "submission": "class1/bob", "score": 2.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0252, "cpu_seconds": 0.008}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "error", "feedback": "0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "error", "message": "ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "hint": "", "seed": 232093816, "seconds": 0.024, "cpu_seconds": 0.008}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "error", "message": "ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "hint": "", "seed": 784561298, "seconds": 0.0016, "cpu_seconds": 0.0}]}], "digest": "6d8e806df8eac9b2edbbc2654cb68b1415ddae537eb49970811240615345898d", "notes": [], "student_output": "", "environment": {"grader": "0.1.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.32}');
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
INSERT INTO task_scores VALUES(2,0,'scale','Scale a tensor',2.0,2.0,'passed','all 1 checks passed');
INSERT INTO task_scores VALUES(2,1,'row_sums','Row sums',3.0,3.0,'passed','all 2 checks passed');
INSERT INTO task_scores VALUES(3,0,'scale','Scale a tensor',0.0,2.0,'not_implemented','not implemented (the function still raises NotImplementedError)');
INSERT INTO task_scores VALUES(3,1,'row_sums','Row sums',0.0,3.0,'not_implemented','not implemented (the function still raises NotImplementedError)');
INSERT INTO task_scores VALUES(4,0,'scale','Scale a tensor',2.0,2.0,'passed','all 1 checks passed');
INSERT INTO task_scores VALUES(4,1,'row_sums','Row sums',0.0,3.0,'failed','0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: row_sums(x (5, 3)): expected shape (5,), got (3,) Hint: You summed each column; a row sum reduces over the last dimension.');
INSERT INTO task_scores VALUES(5,0,'scale','Scale a tensor',2.0,2.0,'passed','all 1 checks passed');
INSERT INTO task_scores VALUES(5,1,'row_sums','Row sums',3.0,3.0,'passed','all 2 checks passed');
INSERT INTO task_scores VALUES(6,0,'scale','Scale a tensor',2.0,2.0,'passed','all 1 checks passed');
INSERT INTO task_scores VALUES(6,1,'row_sums','Row sums',0.0,3.0,'error','0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)');
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
INSERT INTO check_results VALUES(1,2,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.017100000000000000616);
INSERT INTO check_results VALUES(2,2,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'passed','','',0.033599999999999997923);
INSERT INTO check_results VALUES(3,2,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'passed','','',0.0018999999999999999961);
INSERT INTO check_results VALUES(4,3,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'not_implemented','NotImplementedError (mini/ops.py, line 8, in scale)','',0.019300000000000001182);
INSERT INTO check_results VALUES(5,3,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'not_implemented','NotImplementedError (mini/ops.py, line 13, in row_sums)','',0.019300000000000001182);
INSERT INTO check_results VALUES(6,3,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'not_implemented','NotImplementedError (mini/ops.py, line 13, in row_sums)','',0.0097000000000000002886);
INSERT INTO check_results VALUES(7,4,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.021299999999999999489);
INSERT INTO check_results VALUES(8,4,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'failed','row_sums(x (5, 3)): expected shape (5,), got (3,)','You summed each column; a row sum reduces over the last dimension.',0.01760000000000000106);
INSERT INTO check_results VALUES(9,4,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'failed','row_sums(x (1, 7)): expected shape (1,), got (7,)','You summed each column; a row sum reduces over the last dimension.',0.0060000000000000001249);
INSERT INTO check_results VALUES(10,5,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.017899999999999999245);
INSERT INTO check_results VALUES(11,5,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'passed','','',0.021999999999999998723);
INSERT INTO check_results VALUES(12,5,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'passed','','',0.0018999999999999999961);
INSERT INTO check_results VALUES(13,6,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.025200000000000000177);
INSERT INTO check_results VALUES(14,6,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'error','ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)','',0.024000000000000000499);
INSERT INTO check_results VALUES(15,6,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'error','ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)','',0.0016000000000000000766);
CREATE TABLE current (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL REFERENCES students(id),
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (assignment, student)
);
INSERT INTO "current" VALUES('mini','dee',1,'2026-12-06T02:29:27.430658+00:00');
INSERT INTO "current" VALUES('mini','ada',2,'2026-12-06T02:29:36.948572+00:00');
INSERT INTO "current" VALUES('mini','bob',6,'2026-12-06T02:29:58.457014+00:00');
INSERT INTO "current" VALUES('mini','cy',4,'2026-12-06T02:29:37.439153+00:00');
INSERT INTO "current" VALUES('mini','eve',5,'2026-12-06T02:29:37.651709+00:00');
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('submissions',6);
CREATE INDEX check_results_submission ON check_results(submission);
COMMIT;
