#!/usr/bin/env bash
# Queue a class's grading array and, once every task has succeeded, the merge (docs/BATCH.md, "Beyond one machine").
# Run it from the course folder: submissions/, gradebooks/, results/, logs/ and grading-run.env are relative to it.
#   /path/to/autograder/deploy/slurm/submit.sh [--assignment NAME] [--shards N] [--submissions DIR]
#                                              [--gradebooks DIR] [--results DIR]
# The grader is $GRADER_VENV/bin/grader, else the `grader` on this shell's PATH; its full path goes to the jobs in
# grading-run.env (the run's settings, read by grade-array.sh and merge.sh): a job never looks grader up on PATH.
set -euo pipefail
deploy="$(cd "$(dirname "$0")" && pwd)"
assignment=assignment3 shards=4 submissions=submissions gradebooks=gradebooks results=results

fail() { echo "error: $*" >&2; exit 2; }

while (($#)); do
    case "$1" in
        --assignment | --shards | --submissions | --gradebooks | --results)
            (($# >= 2)) || fail "$1 needs a value"
            printf -v "${1#--}" '%s' "$2"
            shift 2 ;;
        -h | --help) sed -n '2,7p' "$0"; exit 0 ;;
        *) fail "unknown option $1 (options: --assignment --shards --submissions --gradebooks --results)" ;;
    esac
done
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || fail "--shards must be a whole number of at least 1, not '$shards'"
command -v sbatch >/dev/null \
    || fail "sbatch not found on PATH: run submit.sh on a machine that submits Slurm jobs (a login node)"
if [[ -n "${GRADER_VENV:-}" ]]; then
    grader="$GRADER_VENV/bin/grader"
else
    grader="$(command -v grader)" \
        || fail "no grader on PATH: activate the grader's venv or set GRADER_VENV=/path/to/venv"
fi
[[ -x "$grader" ]] || fail "$grader is not an executable grader (GRADER_VENV=${GRADER_VENV:-})"
submissions="$(realpath -m -- "$submissions")"
[[ -d "$submissions" ]] || fail "submissions folder not found: $submissions"

mkdir -p logs  # Slurm opens logs/... before the job starts: without the folder a job fails with no log at all
{
    echo "# The settings of the grading run submitted from this folder by $deploy/submit.sh on $(date -u +%FT%TZ)."
    printf 'GRADER=%q\n' "$(realpath -- "$grader")"
    printf 'ASSIGNMENT=%q\n' "$assignment"
    printf 'SUBMISSIONS=%q\n' "$submissions"
    printf 'GRADEBOOKS=%q\n' "$(realpath -m -- "$gradebooks")"
    printf 'RESULTS=%q\n' "$(realpath -m -- "$results")"
    printf 'GRADER_SHARD_COUNT=%q\n' "$shards"
} >grading-run.env

array=$(sbatch --parsable --chdir="$PWD" --array="1-$shards" "$deploy/grade-array.sh")
array="${array%%;*}"  # --parsable prints "jobid" or "jobid;cluster"
merge=$(sbatch --parsable --chdir="$PWD" --dependency="afterok:$array" "$deploy/merge.sh")
merge="${merge%%;*}"
echo "grading array $array: $assignment in $shards shards; merge job $merge runs once every task has succeeded"
echo "a failed task K: fix it, then from this folder"
echo "  sbatch --array=K $deploy/grade-array.sh"
echo "  scontrol update JobId=$merge Dependency=afterok:<the new job id>"
