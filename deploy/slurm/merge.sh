#!/usr/bin/env bash
# Merge the array's gradebooks into one and export the class results (queued by submit.sh after the array).
#SBATCH --job-name=merge-assignment3
#SBATCH --cpus-per-task=1
#SBATCH --mem=2G
#SBATCH --time=00:30:00
#SBATCH --output=logs/merge-%j.out
set -euo pipefail

GRADEBOOKS="${GRADEBOOKS:-$PWD/gradebooks}"
RESULTS="${RESULTS:-$PWD/results}"
mkdir -p "$RESULTS"
grader gradebook merge "$RESULTS/class.db" "$GRADEBOOKS"/gradebook-*.db
grader gradebook export "$RESULTS/class.db" --csv "$RESULTS/grades.csv" --feedback "$RESULTS/feedback"
grader report "$RESULTS/class.db" --out "$RESULTS/class-report"
