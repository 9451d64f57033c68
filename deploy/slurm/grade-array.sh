#!/usr/bin/env bash
# Grade one shard of a class as one task of a Slurm array (docs/BATCH.md, "Beyond one machine"): the task id is
# the shard, 1..N. Queued by submit.sh (--array=1-N); re-run task K from the course folder with
#   sbatch --array=K /path/to/autograder/deploy/slurm/grade-array.sh
# which grades only shard K's submissions not yet graded (or changed since).
#SBATCH --job-name=grade
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --output=logs/grade-%A_%a.out
set -euo pipefail

# The run's settings, written by submit.sh into the course folder this job runs in (sbatch --chdir, or the
# folder a task was re-submitted from): the grader's full path, the folders and GRADER_SHARD_COUNT.
[[ -f grading-run.env ]] || { echo "error: no grading-run.env in $PWD: run submit.sh, and re-submit tasks, from" \
    "the course folder" >&2; exit 2; }
source ./grading-run.env
[[ -n "${SLURM_ARRAY_TASK_ID:-}" ]] || { echo "error: submit as an array task: sbatch --array=K $0" >&2; exit 2; }
export GRADER_SHARD_COUNT  # N, declared once by submit.sh: a re-submitted task's array has only itself
mkdir -p "$GRADEBOOKS"
exec "$GRADER" grade-all "$ASSIGNMENT" "$SUBMISSIONS" --jobs "${SLURM_CPUS_PER_TASK:-1}" --shard auto \
    --gradebook "$GRADEBOOKS/gradebook-$SLURM_ARRAY_TASK_ID.db"
