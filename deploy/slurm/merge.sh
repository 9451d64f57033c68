#!/usr/bin/env bash
# Merge the shards' gradebooks and export the class results (queued by submit.sh after the whole array).
# `grader gradebook merge` refuses a set missing a shard or a student of the class the shards recorded.
#SBATCH --job-name=merge
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=00:30:00
#SBATCH --output=logs/merge-%j.out
set -euo pipefail

[[ -f grading-run.env ]] || { echo "error: no grading-run.env in $PWD: run submit.sh from the course folder" >&2
    exit 2; }
source ./grading-run.env  # written by submit.sh: GRADER, GRADEBOOKS, RESULTS, GRADER_SHARD_COUNT
books=()
for ((k = 1; k <= GRADER_SHARD_COUNT; k++)); do books+=("$GRADEBOOKS/gradebook-$k.db"); done
mkdir -p "$RESULTS"
"$GRADER" gradebook merge "$RESULTS/class.db" "${books[@]}"
"$GRADER" gradebook export "$RESULTS/class.db" --csv "$RESULTS/grades.csv" --feedback "$RESULTS/feedback"
"$GRADER" report "$RESULTS/class.db" --out "$RESULTS/class-report"
