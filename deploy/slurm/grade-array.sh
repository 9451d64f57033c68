#!/usr/bin/env bash
# Grade one shard of a class as one task of a Slurm array (docs/BATCH.md, "Beyond one machine").
# `grader grade-all --shard auto` reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT,
# so --array may start at 0 or 1; change it (and nothing else) for another number of shards.
# Submit with submit.sh, which queues merge.sh to run once every task has succeeded.
#SBATCH --job-name=grade-assignment3
#SBATCH --array=1-4
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --output=logs/grade-%A_%a.out
set -euo pipefail

ASSIGNMENT="${ASSIGNMENT:-assignment3}"
SUBMISSIONS="${SUBMISSIONS:-$PWD/submissions}"
GRADEBOOKS="${GRADEBOOKS:-$PWD/gradebooks}"
mkdir -p "$GRADEBOOKS"
exec grader grade-all "$ASSIGNMENT" "$SUBMISSIONS" --jobs "${SLURM_CPUS_PER_TASK:-1}" --shard auto \
    --gradebook "$GRADEBOOKS/gradebook-${SLURM_ARRAY_TASK_ID}.db"
