#!/usr/bin/env bash
# Queue the grading array and, once every one of its tasks has succeeded, the merge job.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p logs
array=$(sbatch --parsable grade-array.sh)
array="${array%%;*}"  # --parsable prints "jobid" or "jobid;cluster"
merge=$(sbatch --parsable --dependency="afterok:${array}" merge.sh)
echo "grading array ${array}; merge job ${merge} runs after it succeeds"
