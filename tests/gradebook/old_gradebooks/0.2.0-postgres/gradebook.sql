--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: check_results; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.check_results (
    id bigint NOT NULL,
    submission bigint NOT NULL,
    task text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    weight double precision NOT NULL,
    status text NOT NULL,
    message text NOT NULL,
    hint text NOT NULL,
    seconds double precision NOT NULL
);


--
-- Name: check_results_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.check_results_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: check_results_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.check_results_id_seq OWNED BY public.check_results.id;


--
-- Name: current; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.current (
    assignment text NOT NULL,
    student text NOT NULL,
    submission bigint NOT NULL,
    seen_at text NOT NULL
);


--
-- Name: grading_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.grading_queue (
    assignment text NOT NULL,
    student text NOT NULL,
    digest text NOT NULL,
    fingerprint text NOT NULL,
    worker text,
    lease_until timestamp with time zone,
    done boolean DEFAULT false NOT NULL,
    claim bigint
);


--
-- Name: grading_queue_claims; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.grading_queue_claims
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: meta; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.meta (
    key text NOT NULL,
    value text NOT NULL
);


--
-- Name: sources; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sources (
    submission bigint NOT NULL,
    file text NOT NULL,
    text text NOT NULL
);


--
-- Name: students; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.students (
    id text NOT NULL,
    first_seen text NOT NULL,
    last_seen text NOT NULL
);


--
-- Name: submissions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.submissions (
    id bigint NOT NULL,
    assignment text NOT NULL,
    student text NOT NULL,
    digest text NOT NULL,
    fingerprint text NOT NULL,
    source text DEFAULT ''::text NOT NULL,
    graded_at text NOT NULL,
    score double precision DEFAULT 0 NOT NULL,
    max_score double precision DEFAULT 0 NOT NULL,
    status text NOT NULL,
    message text DEFAULT ''::text NOT NULL,
    seconds double precision DEFAULT 0 NOT NULL,
    check_seconds double precision DEFAULT 0 NOT NULL,
    worker_rss_mb double precision,
    report_json text,
    raw_score double precision,
    submitted_at text,
    due_at text,
    late_seconds double precision DEFAULT 0 NOT NULL,
    penalty double precision DEFAULT 0 NOT NULL,
    late_note text DEFAULT ''::text NOT NULL,
    CONSTRAINT submissions_status_check CHECK ((status = ANY (ARRAY['graded'::text, 'error'::text])))
);


--
-- Name: submissions_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.submissions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: submissions_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.submissions_id_seq OWNED BY public.submissions.id;


--
-- Name: task_scores; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.task_scores (
    submission bigint NOT NULL,
    "position" bigint NOT NULL,
    task text NOT NULL,
    title text NOT NULL,
    score double precision NOT NULL,
    max_score double precision NOT NULL,
    status text NOT NULL,
    feedback text NOT NULL
);


--
-- Name: check_results id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.check_results ALTER COLUMN id SET DEFAULT nextval('public.check_results_id_seq'::regclass);


--
-- Name: submissions id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.submissions ALTER COLUMN id SET DEFAULT nextval('public.submissions_id_seq'::regclass);


--
-- Data for Name: check_results; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.check_results VALUES (1, 2, 'scale', 'scale.scale_values', 'scale(x, factor) on a random (3, 4) tensor with factor 2.5', 1, 'passed', '', '', 0.0362);
INSERT INTO public.check_results VALUES (2, 2, 'row_sums', 'row_sums.row_sums_values', 'row_sums(x) on a random (5, 3) tensor', 2, 'passed', '', '', 0.0379);
INSERT INTO public.check_results VALUES (3, 2, 'row_sums', 'row_sums.row_sums_single', 'row_sums(x) on a (1, 7) tensor', 1, 'passed', '', '', 0.0026);
INSERT INTO public.check_results VALUES (4, 3, 'scale', 'scale.scale_values', 'scale(x, factor) on a random (3, 4) tensor with factor 2.5', 1, 'not_implemented', 'NotImplementedError (mini/ops.py, line 8, in scale)', '', 0.0323);
INSERT INTO public.check_results VALUES (5, 3, 'row_sums', 'row_sums.row_sums_values', 'row_sums(x) on a random (5, 3) tensor', 2, 'not_implemented', 'NotImplementedError (mini/ops.py, line 13, in row_sums)', '', 0.0364);
INSERT INTO public.check_results VALUES (6, 3, 'row_sums', 'row_sums.row_sums_single', 'row_sums(x) on a (1, 7) tensor', 1, 'not_implemented', 'NotImplementedError (mini/ops.py, line 13, in row_sums)', '', 0.0022);
INSERT INTO public.check_results VALUES (7, 4, 'scale', 'scale.scale_values', 'scale(x, factor) on a random (3, 4) tensor with factor 2.5', 1, 'passed', '', '', 0.0385);
INSERT INTO public.check_results VALUES (8, 4, 'row_sums', 'row_sums.row_sums_values', 'row_sums(x) on a random (5, 3) tensor', 2, 'failed', 'row_sums(x (5, 3)): expected shape (5,), got (3,)', 'You summed each column; a row sum reduces over the last dimension.', 0.0452);
INSERT INTO public.check_results VALUES (9, 4, 'row_sums', 'row_sums.row_sums_single', 'row_sums(x) on a (1, 7) tensor', 1, 'failed', 'row_sums(x (1, 7)): expected shape (1,), got (7,)', 'You summed each column; a row sum reduces over the last dimension.', 0.0025);
INSERT INTO public.check_results VALUES (10, 5, 'scale', 'scale.scale_values', 'scale(x, factor) on a random (3, 4) tensor with factor 2.5', 1, 'passed', '', '', 0.0379);
INSERT INTO public.check_results VALUES (11, 5, 'row_sums', 'row_sums.row_sums_values', 'row_sums(x) on a random (5, 3) tensor', 2, 'passed', '', '', 0.0477);
INSERT INTO public.check_results VALUES (12, 5, 'row_sums', 'row_sums.row_sums_single', 'row_sums(x) on a (1, 7) tensor', 1, 'passed', '', '', 0.011);
INSERT INTO public.check_results VALUES (13, 6, 'scale', 'scale.scale_values', 'scale(x, factor) on a random (3, 4) tensor with factor 2.5', 1, 'passed', '', '', 0.0374);
INSERT INTO public.check_results VALUES (14, 6, 'row_sums', 'row_sums.row_sums_values', 'row_sums(x) on a random (5, 3) tensor', 2, 'error', 'ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)', '', 0.0457);
INSERT INTO public.check_results VALUES (15, 6, 'row_sums', 'row_sums.row_sums_single', 'row_sums(x) on a (1, 7) tensor', 1, 'error', 'ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)', '', 0.0147);


--
-- Data for Name: current; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.current VALUES ('mini', 'dee', 1, '2026-12-06T02:30:53.236939+00:00');
INSERT INTO public.current VALUES ('mini', 'ada', 2, '2026-12-06T02:31:02.142693+00:00');
INSERT INTO public.current VALUES ('mini', 'cy', 4, '2026-12-06T02:31:02.619665+00:00');
INSERT INTO public.current VALUES ('mini', 'eve', 5, '2026-12-06T02:31:02.858955+00:00');
INSERT INTO public.current VALUES ('mini', 'bob', 6, '2026-12-06T02:31:14.655261+00:00');


--
-- Data for Name: grading_queue; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.grading_queue VALUES ('mini', 'ada', '1db7490300b983d90018011cc584f1c94b8bd9e5898ff26a99d23aa05365416c', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', NULL, NULL, true, NULL);
INSERT INTO public.grading_queue VALUES ('mini', 'cy', 'b682d4b1eb910805d5073873f54d5261c2adb5b5c2ab413a8e2c88ca78ec7de3', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', NULL, NULL, true, NULL);
INSERT INTO public.grading_queue VALUES ('mini', 'eve', 'e29a5a3e17c033e72ce06c3c5adc7749ca356146993a4643a38ceca9a09dede3', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', NULL, NULL, true, NULL);
INSERT INTO public.grading_queue VALUES ('mini', 'bob', '6d8e806df8eac9b2edbbc2654cb68b1415ddae537eb49970811240615345898d', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', NULL, NULL, true, NULL);


--
-- Data for Name: meta; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.meta VALUES ('schema_version', '2');


--
-- Data for Name: sources; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.sources VALUES (2, 'ops.py', '"""Two small tensor functions."""

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Multiply every entry of x by factor."""
    ### BEGIN SOLUTION
    return x * factor
    ### END SOLUTION


def row_sums(x: torch.Tensor) -> torch.Tensor:
    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""
    ### BEGIN SOLUTION
    return x.sum(dim=-1)
    ### END SOLUTION
');
INSERT INTO public.sources VALUES (3, 'ops.py', '"""Two small tensor functions."""

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Multiply every entry of x by factor."""
    raise NotImplementedError


def row_sums(x: torch.Tensor) -> torch.Tensor:
    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""
    raise NotImplementedError
');
INSERT INTO public.sources VALUES (4, 'ops.py', '"""Two small tensor functions."""

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Multiply every entry of x by factor."""
    ### BEGIN SOLUTION
    return x * factor
    ### END SOLUTION


def row_sums(x: torch.Tensor) -> torch.Tensor:
    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""
    ### BEGIN SOLUTION
    return x.sum(dim=0)
    ### END SOLUTION
');
INSERT INTO public.sources VALUES (5, 'ops.py', '"""Two small tensor functions."""

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Multiply every entry of x by factor."""
    ### BEGIN SOLUTION
    print(''<script>alert(1)</script>'')
    return x * factor
    ### END SOLUTION


def row_sums(x: torch.Tensor) -> torch.Tensor:
    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""
    ### BEGIN SOLUTION
    return x.sum(dim=-1)
    ### END SOLUTION
');
INSERT INTO public.sources VALUES (6, 'ops.py', '"""Two small tensor functions."""

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Multiply every entry of x by factor."""
    ### BEGIN SOLUTION
    return x * factor
    ### END SOLUTION


def row_sums(x: torch.Tensor) -> torch.Tensor:
    """Sum each row of a 2-D tensor: shape (n, m) -> (n,)."""
    ### BEGIN SOLUTION
    raise ValueError(''<b>not yet</b>'')
    ### END SOLUTION
');


--
-- Data for Name: students; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.students VALUES ('dee', '2026-12-06T02:30:53.236939+00:00', '2026-12-06T02:30:53.236939+00:00');
INSERT INTO public.students VALUES ('ada', '2026-12-06T02:31:02.142693+00:00', '2026-12-06T02:31:02.142693+00:00');
INSERT INTO public.students VALUES ('cy', '2026-12-06T02:31:02.619665+00:00', '2026-12-06T02:31:02.619665+00:00');
INSERT INTO public.students VALUES ('eve', '2026-12-06T02:31:02.858955+00:00', '2026-12-06T02:31:02.858955+00:00');
INSERT INTO public.students VALUES ('bob', '2026-12-06T02:31:02.358982+00:00', '2026-12-06T02:31:14.655261+00:00');


--
-- Data for Name: submissions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.submissions VALUES (1, 'mini', 'dee', 'raw:af9bf4a7d0af8a8b18cf7b79390312fa3f06aa5b612604d5ab584c8fa2635d39', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', 'class3/dee', '2026-12-06T02:30:53.236939+00:00', 0, 5, 'error', 'no mini/ package found in dee (looked for ops.py), nor a notebook (.ipynb)', 0, 0, NULL, NULL, 0, NULL, '2026-12-01T22:59:00+00:00', 0, 0, 'no time recorded');
INSERT INTO public.submissions VALUES (3, 'mini', 'bob', 'e85dbd9ba054350e565555a5e5fbfadcf1b399a1c262b5990e781a658c2434ba', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', 'class3/bob', '2026-12-06T02:31:02.358982+00:00', 0, 5, 'graded', '', 0.19, 0.0709, 452.1, '{"assignment": "mini", "submission": "class3/bob", "score": 0.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 0.0, "max_score": 2.0, "status": "not_implemented", "feedback": "not implemented (the function still raises NotImplementedError)", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 8, in scale)", "hint": "", "seed": 1591119095, "seconds": 0.0323, "cpu_seconds": 0.0094}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "not_implemented", "feedback": "not implemented (the function still raises NotImplementedError)", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 13, in row_sums)", "hint": "", "seed": 232093816, "seconds": 0.0364, "cpu_seconds": 0.012}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "not_implemented", "message": "NotImplementedError (mini/ops.py, line 13, in row_sums)", "hint": "", "seed": 784561298, "seconds": 0.0022, "cpu_seconds": 0.0}]}], "digest": "e85dbd9ba054350e565555a5e5fbfadcf1b399a1c262b5990e781a658c2434ba", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.19}', 0, '2026-12-02T09:00:00+00:00', '2026-12-01T22:59:00+00:00', 36060, 0.1, '10 h 1 min late (1 day counted): -10%');
INSERT INTO public.submissions VALUES (2, 'mini', 'ada', '1db7490300b983d90018011cc584f1c94b8bd9e5898ff26a99d23aa05365416c', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', 'class3/ada', '2026-12-06T02:31:02.142693+00:00', 5, 5, 'graded', '', 0.19, 0.0767, 452.1, '{"assignment": "mini", "submission": "class3/ada", "score": 5.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0362, "cpu_seconds": 0.014}]}, {"id": "row_sums", "title": "Row sums", "score": 3.0, "max_score": 3.0, "status": "passed", "feedback": "all 2 checks passed", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "passed", "message": "", "hint": "", "seed": 232093816, "seconds": 0.0379, "cpu_seconds": 0.0139}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 784561298, "seconds": 0.0026, "cpu_seconds": 0.0}]}], "digest": "1db7490300b983d90018011cc584f1c94b8bd9e5898ff26a99d23aa05365416c", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.19}', 5, '2026-11-30T10:00:00+00:00', '2026-12-01T22:59:00+00:00', 0, 0, 'on time');
INSERT INTO public.submissions VALUES (4, 'mini', 'cy', 'b682d4b1eb910805d5073873f54d5261c2adb5b5c2ab413a8e2c88ca78ec7de3', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', 'class3/cy', '2026-12-06T02:31:02.619665+00:00', 1.6, 5, 'graded', '', 0.24, 0.0862, 455.8, '{"assignment": "mini", "submission": "class3/cy", "score": 2.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0385, "cpu_seconds": 0.0108}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "failed", "feedback": "0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: row_sums(x (5, 3)): expected shape (5,), got (3,) Hint: You summed each column; a row sum reduces over the last dimension.", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "failed", "message": "row_sums(x (5, 3)): expected shape (5,), got (3,)", "hint": "You summed each column; a row sum reduces over the last dimension.", "seed": 232093816, "seconds": 0.0452, "cpu_seconds": 0.0134}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "failed", "message": "row_sums(x (1, 7)): expected shape (1,), got (7,)", "hint": "You summed each column; a row sum reduces over the last dimension.", "seed": 784561298, "seconds": 0.0025, "cpu_seconds": 0.0}]}], "digest": "b682d4b1eb910805d5073873f54d5261c2adb5b5c2ab413a8e2c88ca78ec7de3", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.24}', 2, '2026-12-03T12:00:00+00:00', '2026-12-01T22:59:00+00:00', 133260, 0.2, '1 d 13 h late (2 days counted): -20%');
INSERT INTO public.submissions VALUES (5, 'mini', 'eve', 'e29a5a3e17c033e72ce06c3c5adc7749ca356146993a4643a38ceca9a09dede3', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', 'class3/eve', '2026-12-06T02:31:02.858955+00:00', 5, 5, 'graded', '', 0.2, 0.0966, 455.8, '{"assignment": "mini", "submission": "class3/eve", "score": 5.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0379, "cpu_seconds": 0.0119}]}, {"id": "row_sums", "title": "Row sums", "score": 3.0, "max_score": 3.0, "status": "passed", "feedback": "all 2 checks passed", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "passed", "message": "", "hint": "", "seed": 232093816, "seconds": 0.0477, "cpu_seconds": 0.0111}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 784561298, "seconds": 0.011, "cpu_seconds": 0.0042}]}], "digest": "e29a5a3e17c033e72ce06c3c5adc7749ca356146993a4643a38ceca9a09dede3", "notes": [], "student_output": "--- output during scale.scale_values\n<script>alert(1)</script>", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.2}', 5, '2026-12-01T22:00:00+00:00', '2026-12-01T22:59:00+00:00', 0, 0, 'on time');
INSERT INTO public.submissions VALUES (6, 'mini', 'bob', '6d8e806df8eac9b2edbbc2654cb68b1415ddae537eb49970811240615345898d', '5df5f8ef4e13a8cee8b4948fbff90f39cee15cd3c56b61bdcb1e41c06effdacb', 'class3/bob', '2026-12-06T02:31:14.655261+00:00', 1.8, 5, 'graded', '', 0.3, 0.0978, 452.1, '{"assignment": "mini", "submission": "class3/bob", "score": 2.0, "max_score": 5.0, "tasks": [{"id": "scale", "title": "Scale a tensor", "score": 2.0, "max_score": 2.0, "status": "passed", "feedback": "all 1 checks passed", "checks": [{"name": "scale.scale_values", "description": "scale(x, factor) on a random (3, 4) tensor with factor 2.5", "weight": 1.0, "status": "passed", "message": "", "hint": "", "seed": 1591119095, "seconds": 0.0374, "cpu_seconds": 0.0114}]}, {"id": "row_sums", "title": "Row sums", "score": 0.0, "max_score": 3.0, "status": "error", "feedback": "0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "checks": [{"name": "row_sums.row_sums_values", "description": "row_sums(x) on a random (5, 3) tensor", "weight": 2.0, "status": "error", "message": "ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "hint": "", "seed": 232093816, "seconds": 0.0457, "cpu_seconds": 0.0132}, {"name": "row_sums.row_sums_single", "description": "row_sums(x) on a (1, 7) tensor", "weight": 1.0, "status": "error", "message": "ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)", "hint": "", "seed": 784561298, "seconds": 0.0147, "cpu_seconds": 0.0027}]}], "digest": "6d8e806df8eac9b2edbbc2654cb68b1415ddae537eb49970811240615345898d", "notes": [], "student_output": "", "environment": {"grader": "0.2.0", "python": "3.11.7", "torch": "2.13.0+cpu", "platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "seed": 424242, "isolation": "uid", "isolation_features": ["landlock", "landlock-net", "landlock-scope", "namespaces", "nproc", "rlimits", "uid"]}, "seconds": 0.3}', 2, '2026-12-02T09:00:00+00:00', '2026-12-01T22:59:00+00:00', 36060, 0.1, '10 h 1 min late (1 day counted): -10%');


--
-- Data for Name: task_scores; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.task_scores VALUES (2, 0, 'scale', 'Scale a tensor', 2, 2, 'passed', 'all 1 checks passed');
INSERT INTO public.task_scores VALUES (2, 1, 'row_sums', 'Row sums', 3, 3, 'passed', 'all 2 checks passed');
INSERT INTO public.task_scores VALUES (3, 0, 'scale', 'Scale a tensor', 0, 2, 'not_implemented', 'not implemented (the function still raises NotImplementedError)');
INSERT INTO public.task_scores VALUES (3, 1, 'row_sums', 'Row sums', 0, 3, 'not_implemented', 'not implemented (the function still raises NotImplementedError)');
INSERT INTO public.task_scores VALUES (4, 0, 'scale', 'Scale a tensor', 2, 2, 'passed', 'all 1 checks passed');
INSERT INTO public.task_scores VALUES (4, 1, 'row_sums', 'Row sums', 0, 3, 'failed', '0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: row_sums(x (5, 3)): expected shape (5,), got (3,) Hint: You summed each column; a row sum reduces over the last dimension.');
INSERT INTO public.task_scores VALUES (5, 0, 'scale', 'Scale a tensor', 2, 2, 'passed', 'all 1 checks passed');
INSERT INTO public.task_scores VALUES (5, 1, 'row_sums', 'Row sums', 3, 3, 'passed', 'all 2 checks passed');
INSERT INTO public.task_scores VALUES (6, 0, 'scale', 'Scale a tensor', 2, 2, 'passed', 'all 1 checks passed');
INSERT INTO public.task_scores VALUES (6, 1, 'row_sums', 'Row sums', 0, 3, 'error', '0 of 2 checks passed; first problem: row_sums(x) on a random (5, 3) tensor: ValueError: <b>not yet</b> (mini/ops.py, line 16, in row_sums)');


--
-- Name: check_results_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.check_results_id_seq', 15, true);


--
-- Name: grading_queue_claims; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.grading_queue_claims', 5, true);


--
-- Name: submissions_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.submissions_id_seq', 6, true);


--
-- Name: check_results check_results_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.check_results
    ADD CONSTRAINT check_results_pkey PRIMARY KEY (id);


--
-- Name: current current_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.current
    ADD CONSTRAINT current_pkey PRIMARY KEY (assignment, student);


--
-- Name: grading_queue grading_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.grading_queue
    ADD CONSTRAINT grading_queue_pkey PRIMARY KEY (assignment, student);


--
-- Name: meta meta_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.meta
    ADD CONSTRAINT meta_pkey PRIMARY KEY (key);


--
-- Name: sources sources_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sources
    ADD CONSTRAINT sources_pkey PRIMARY KEY (submission, file);


--
-- Name: students students_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.students
    ADD CONSTRAINT students_pkey PRIMARY KEY (id);


--
-- Name: submissions submissions_assignment_student_digest_fingerprint_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.submissions
    ADD CONSTRAINT submissions_assignment_student_digest_fingerprint_key UNIQUE (assignment, student, digest, fingerprint);


--
-- Name: submissions submissions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.submissions
    ADD CONSTRAINT submissions_pkey PRIMARY KEY (id);


--
-- Name: task_scores task_scores_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_scores
    ADD CONSTRAINT task_scores_pkey PRIMARY KEY (submission, task);


--
-- Name: check_results_submission; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX check_results_submission ON public.check_results USING btree (submission);


--
-- Name: check_results check_results_submission_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.check_results
    ADD CONSTRAINT check_results_submission_fkey FOREIGN KEY (submission) REFERENCES public.submissions(id) ON DELETE CASCADE;


--
-- Name: current current_student_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.current
    ADD CONSTRAINT current_student_fkey FOREIGN KEY (student) REFERENCES public.students(id);


--
-- Name: current current_submission_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.current
    ADD CONSTRAINT current_submission_fkey FOREIGN KEY (submission) REFERENCES public.submissions(id) ON DELETE CASCADE;


--
-- Name: sources sources_submission_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sources
    ADD CONSTRAINT sources_submission_fkey FOREIGN KEY (submission) REFERENCES public.submissions(id) ON DELETE CASCADE;


--
-- Name: submissions submissions_student_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.submissions
    ADD CONSTRAINT submissions_student_fkey FOREIGN KEY (student) REFERENCES public.students(id);


--
-- Name: task_scores task_scores_submission_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.task_scores
    ADD CONSTRAINT task_scores_submission_fkey FOREIGN KEY (submission) REFERENCES public.submissions(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


