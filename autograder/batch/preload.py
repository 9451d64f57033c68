"""What every grading worker needs, imported once by the batch's fork server before the workers are forked from it.

A worker used to be a fresh interpreter that imported torch and the grader itself (about 2 CPU seconds each, the
same pages twice). The fork server (``multiprocessing``'s ``forkserver``, see ``batch/pool.py``) imports this
module once; each worker, and each replacement of a worker that died, is a fork of it that shares those pages.
The fork server is the grader's own side: it runs nothing of a student's (their code only ever runs in the
sandbox's jobs).
"""

import gc

import torch  # noqa: F401 - the heavy import, paid once for every worker

import autograder.batch.pool  # noqa: F401 - the workers' entry point (unpickled by name in each worker)
import autograder.grading.grader  # noqa: F401 - the judge, the jobs, the sandbox's grader side
import autograder.sandbox.spawner  # noqa: F401 - a worker's way into the batch's zygote template

gc.freeze()  # what is imported here is never collected: a worker's collections do not copy these pages
