PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta VALUES('schema_version','2');
CREATE TABLE students (
    id TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
INSERT INTO students VALUES('dee','2026-12-06T02:30:08.690334+00:00','2026-12-06T02:30:08.690334+00:00');
INSERT INTO students VALUES('ada','2026-12-06T02:30:20.082503+00:00','2026-12-06T02:30:20.082503+00:00');
INSERT INTO students VALUES('bob','2026-12-06T02:30:20.362532+00:00','2026-12-06T02:30:32.758534+00:00');
INSERT INTO students VALUES('cy','2026-12-06T02:30:20.674495+00:00','2026-12-06T02:30:20.674495+00:00');
INSERT INTO students VALUES('eve','2026-12-06T02:30:20.962496+00:00','2026-12-06T02:30:20.962496+00:00');
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
    raw_score REAL,
    submitted_at TEXT,
    due_at TEXT,
    late_seconds REAL NOT NULL DEFAULT 0,
    penalty REAL NOT NULL DEFAULT 0,
    late_note TEXT NOT NULL DEFAULT '',
    UNIQUE (assignment, student, digest, fingerprint)
);
INSERT INTO submissions VALUES(1,'mini','dee','raw:af9bf4a7d0af8a8b18cf7b79390312fa3f06aa5b612604d5ab584c8fa2635d39','5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb','class2/dee','2026-12-06T02:30:08.690334+00:00',0.0,5.0,'error','no mini/ package found in dee (looked for ops.py), nor a notebook (.ipynb)',0.0,0.0,NULL,NULL,0.0,NULL,'2026-12-01T22:59:00+00:00',0.0,0.0,'no time recorded');
INSERT INTO submissions VALUES(2,'mini','ada','1db7490300b983d90018011cc584f1c94b8bd9e5898ff26a99d23aa05365416c','5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb','class2/ada','2026-12-06T02:30:20.082503+00:00',5.0,5.0,'graded','',0.32000000000000000666,0.11970000000000000084,456.5,'{"assignment": "mini", "submission": "class2/ada", "score": 5.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0515, "cpu_seconds": 0.0171}]}, {"id": "row_sums", "title": "Row sums", "score": 3.0, "max_score": 3.0, "status": "passed", "feedback": "all 2 checks passed", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "passed", "message": "", "hint": "", "seed": 232093816, "seconds": 0.052, "cpu_seconds": 0.0166}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 784561298, "seconds": 0.0162, "cpu_seconds": 0.0055}]}], "digest": "1db7490300b983d90018011cc584f1c94b8bd9e5898ff26a99d23aa05365416c", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.32}',5.0,'2026-11-30T10:00:00+00:00','2026-12-01T22:59:00+00:00',0.0,0.0,'on time');
INSERT INTO submissions VALUES(3,'mini','bob','e85dbd9ba054350e565555a5e5fbfadcf1b399a1c262b5990e781a658c2434ba','5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb','class2/bob','2026-12-06T02:30:20.362532+00:00',0.0,5.0,'graded','',0.26000000000000000888,0.12659999999999999031,456.5,'{"assignment": "mini", "submission": "class2/bob", "score": 0.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 0.0, "max_score": 2.0, "status": "not_implemented", "feedback": "not implemented (the function still raises NotImplementedError)", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 8, in scale)", "hint": "", "seed": 1591119095, "seconds": 0.0571, "cpu_seconds": 0.0175}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "not_implemented", "feedback": "not implemented (the function still raises NotImplementedError)", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 13, in row_sums)", "hint": "", "seed": 232093816, "seconds": 0.0571, "cpu_seconds": 0.0161}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 13, in row_sums)", "hint": "", "seed": 784561298, "seconds": 0.0124, "cpu_seconds": 0.0042}]}], "digest": "e85dbd9ba054350e565555a5e5fbfadcf1b399a1c262b5990e781a658c2434ba", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.26}',0.0,'2026-12-02T09:00:00+00:00','2026-12-01T22:59:00+00:00',36060.0,0.10000000000000000555,'10 h 1 min late (1 day counted): -10%');
INSERT INTO submissions VALUES(4,'mini','cy','b682d4b1eb910805d5073873f54d5261c2adb5b5c2ab413a8e2c88ca78ec7de3','5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb','class2/cy','2026-12-06T02:30:20.674495+00:00',1.6000000000000000888,5.0,'graded','',0.29999999999999998889,0.11899999999999999467,456.5,'{"assignment": "mini", "submission": "class2/cy", "score": 2.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0563, "cpu_seconds": 0.0177}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "failed", "feedback": "0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: row_sums(x (5, 3)): expected shape (5,), got (3,) Hint: You summed each column; a row sum reduces over the last dimension.", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "failed", "message": "row_sums(x (5, 3)): expected shape (5,), got (3,)", "hint": "You summed each column; a row sum reduces over the last dimension.", "seed": 232093816, "seconds": 0.0501, "cpu_seconds": 0.0158}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "failed", "message": "row_sums(x (1, 7)): expected shape (1,), got (7,)", "hint": "You summed each column; a row sum reduces over the last dimension.", "seed": 784561298, "seconds": 0.0126, "cpu_seconds": 0.004}]}], "digest": "b682d4b1eb910805d5073873f54d5261c2adb5b5c2ab413a8e2c88ca78ec7de3", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.3}',2.0,'2026-12-03T12:00:00+00:00','2026-12-01T22:59:00+00:00',133260.0,0.2000000000000000111,'1 d 13 h late (2 days counted): -20%');
INSERT INTO submissions VALUES(5,'mini','eve','e29a5a3e17c033e72ce06c3c5adc7749ca356146993a4643a38ceca9a09dede3','5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb','class2/eve','2026-12-06T02:30:20.962496+00:00',5.0,5.0,'graded','',0.27000000000000001776,0.12679999999999999604,456.5,'{"assignment": "mini", "submission": "class2/eve", "score": 5.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0561, "cpu_seconds": 0.0181}]}, {"id": "row_sums", "title": "Row sums", "score": 3.0, "max_score": 3.0, "status": "passed", "feedback": "all 2 checks passed", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "passed", "message": "", "hint": "", "seed": 232093816, "seconds": 0.0581, "cpu_seconds": 0.0183}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 784561298, "seconds": 0.0126, "cpu_seconds": 0.004}]}], "digest": "e29a5a3e17c033e72ce06c3c5adc7749ca356146993a4643a38ceca9a09dede3", "notes": [], "student_output": "--- output during scale.scale_values\n<script>alert(1)</script>", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.27}',5.0,'2026-12-01T22:00:00+00:00','2026-12-01T22:59:00+00:00',0.0,0.0,'on time');
INSERT INTO submissions VALUES(6,'mini','bob','6d8e806df8eac9b2edbbc2654cb68b1415ddae537eb49970811240615345898d','5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb','class2/bob','2026-12-06T02:30:32.758534+00:00',1.8000000000000000444,5.0,'graded','',0.29999999999999998889,0.12089999999999999358,451.69999999999998862,'{"assignment": "mini", "submission": "class2/bob", "score": 2.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0531, "cpu_seconds": 0.0171}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "error", "feedback": "0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "error", "message": "ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "hint": "", "seed": 232093816, "seconds": 0.0554, "cpu_seconds": 0.0172}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "error", "message": "ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "hint": "", "seed": 784561298, "seconds": 0.0124, "cpu_seconds": 0.004}]}], "digest": "6d8e806df8eac9b2edbbc2654cb68b1415ddae537eb49970811240615345898d", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.3}',2.0,'2026-12-02T09:00:00+00:00','2026-12-01T22:59:00+00:00',36060.0,0.10000000000000000555,'10 h 1 min late (1 day counted): -10%');
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
INSERT INTO check_results VALUES(1,2,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.051499999999999997168);
INSERT INTO check_results VALUES(2,2,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'passed','','',0.051999999999999997613);
INSERT INTO check_results VALUES(3,2,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'passed','','',0.016199999999999999122);
INSERT INTO check_results VALUES(4,3,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'not_implemented','NotImplementedError (mini/ops.py, line 8, in scale)','',0.057099999999999997979);
INSERT INTO check_results VALUES(5,3,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'not_implemented','NotImplementedError (mini/ops.py, line 13, in row_sums)','',0.057099999999999997979);
INSERT INTO check_results VALUES(6,3,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'not_implemented','NotImplementedError (mini/ops.py, line 13, in row_sums)','',0.012399999999999999564);
INSERT INTO check_results VALUES(7,4,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.056300000000000002819);
INSERT INTO check_results VALUES(8,4,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'failed','row_sums(x (5, 3)): expected shape (5,), got (3,)','You summed each column; a row sum reduces over the last dimension.',0.050099999999999998701);
INSERT INTO check_results VALUES(9,4,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'failed','row_sums(x (1, 7)): expected shape (1,), got (7,)','You summed each column; a row sum reduces over the last dimension.',0.012600000000000000088);
INSERT INTO check_results VALUES(10,5,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.056099999999999997091);
INSERT INTO check_results VALUES(11,5,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'passed','','',0.058099999999999998867);
INSERT INTO check_results VALUES(12,5,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'passed','','',0.012600000000000000088);
INSERT INTO check_results VALUES(13,6,'scale','scale.scale_values','scale(x, factor) on a random (3, 4) tensor with factor 2.5',1.0,'passed','','',0.053100000000000001365);
INSERT INTO check_results VALUES(14,6,'row_sums','row_sums.row_sums_values','row_sums(x) on a random (5, 3) tensor',2.0,'error','ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)','',0.055399999999999997857);
INSERT INTO check_results VALUES(15,6,'row_sums','row_sums.row_sums_single','row_sums(x) on a (1, 7) tensor',1.0,'error','ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)','',0.012399999999999999564);
CREATE TABLE sources (
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    file TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (submission, file)
);
INSERT INTO sources VALUES(2,'ops.py',replace('"""Two small tensor functions."""\n\nimport torch\n\n\ndef scale(x: torch.Tensor, factor: float) -> torch.Tensor:\n    """Multiply every entry of x by factor."""\n    ### BEGIN SOLUTION\n    return x * factor\n    ### END SOLUTION\n\n\ndef row_sums(x: torch.Tensor) -> torch.Tensor:\n    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""\n    ### BEGIN SOLUTION\n    return x.sum(dim=-1)\n    ### END SOLUTION\n','\n',char(10)));
INSERT INTO sources VALUES(3,'ops.py',replace('"""Two small tensor functions."""\n\nimport torch\n\n\ndef scale(x: torch.Tensor, factor: float) -> torch.Tensor:\n    """Multiply every entry of x by factor."""\n    raise NotImplementedError\n\n\ndef row_sums(x: torch.Tensor) -> torch.Tensor:\n    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""\n    raise NotImplementedError\n','\n',char(10)));
INSERT INTO sources VALUES(4,'ops.py',replace('"""Two small tensor functions."""\n\nimport torch\n\n\ndef scale(x: torch.Tensor, factor: float) -> torch.Tensor:\n    """Multiply every entry of x by factor."""\n    ### BEGIN SOLUTION\n    return x * factor\n    ### END SOLUTION\n\n\ndef row_sums(x: torch.Tensor) -> torch.Tensor:\n    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""\n    ### BEGIN SOLUTION\n    return x.sum(dim=0)\n    ### END SOLUTION\n','\n',char(10)));
INSERT INTO sources VALUES(5,'ops.py',replace('"""Two small tensor functions."""\n\nimport torch\n\n\ndef scale(x: torch.Tensor, factor: float) -> torch.Tensor:\n    """Multiply every entry of x by factor."""\n    ### BEGIN SOLUTION\n    print(''<script>alert(1)</script>'')\n    return x * factor\n    ### END SOLUTION\n\n\ndef row_sums(x: torch.Tensor) -> torch.Tensor:\n    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""\n    ### BEGIN SOLUTION\n    return x.sum(dim=-1)\n    ### END SOLUTION\n','\n',char(10)));
INSERT INTO sources VALUES(6,'ops.py',replace('"""Two small tensor functions."""\n\nimport torch\n\n\ndef scale(x: torch.Tensor, factor: float) -> torch.Tensor:\n    """Multiply every entry of x by factor."""\n    ### BEGIN SOLUTION\n    return x * factor\n    ### END SOLUTION\n\n\ndef row_sums(x: torch.Tensor) -> torch.Tensor:\n    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""\n    ### BEGIN SOLUTION\n    raise ValueError(''<b>not yet</b>'')\n    ### END SOLUTION\n','\n',char(10)));
CREATE TABLE current (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL REFERENCES students(id),
    submission INTEGER NOT NULL REFERENCES submissions(id) ON DELETE CASCADE,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (assignment, student)
);
INSERT INTO "current" VALUES('mini','dee',1,'2026-12-06T02:30:08.690334+00:00');
INSERT INTO "current" VALUES('mini','ada',2,'2026-12-06T02:30:20.082503+00:00');
INSERT INTO "current" VALUES('mini','bob',6,'2026-12-06T02:30:32.758534+00:00');
INSERT INTO "current" VALUES('mini','cy',4,'2026-12-06T02:30:20.674495+00:00');
INSERT INTO "current" VALUES('mini','eve',5,'2026-12-06T02:30:20.962496+00:00');
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('submissions',6);
CREATE INDEX check_results_submission ON check_results(submission);
COMMIT;
