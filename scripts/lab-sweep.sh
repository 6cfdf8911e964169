#!/usr/bin/env bash
#SBATCH --job-name=posenc-lab
#SBATCH --output=lab-sweep-%A_%a.log
#SBATCH --cpus-per-task=2
# The lab's sweep (tasks × sizes × schemes × seeds) split into N shards: each shard trains every
# N-th (scheme, seed) job of every (task, size) run; one merge writes each run's JSON, the same
# file `posenc_lab` writes in one process (bit for bit but for the date and the timings).
#
#   scripts/lab-sweep.sh submit N [--wait]   # Slurm: an array of N shard tasks, then a merge job
#                                            #   that runs once every shard has succeeded
#   scripts/lab-sweep.sh shard K N           # any scheduler: shard K of N (GNU parallel, a
#                                            #   Kubernetes indexed job: K = its index)
#   scripts/lab-sweep.sh merge N             # once every shard is written
#
# The sweep, from the environment (sbatch passes it on to the jobs):
#   LAB_SWEEP_DIR    where shards and results go (default lab-sweep): DIR/TASK-SIZE.json
#   LAB_SWEEP_TASKS  tasks, comma-separated (default markov)
#   LAB_SWEEP_SIZES  sizes, comma-separated (default small)
#   LAB_SWEEP_ARGS   the other posenc_lab options, as for npm run lab (e.g. "--seeds 10 --steps 4000";
#                    a text task needs "--text FILE")
#   POSENC_LAB       the lab's command line (default build/native-release/posenc_lab; scripts/build.sh
#                    release builds it). Every node must run the same SIMD target (POSENC_SIMD pins
#                    it): --merge refuses shards of different targets.
set -euo pipefail
dir=${LAB_SWEEP_DIR:-lab-sweep}
IFS=, read -ra tasks <<<"${LAB_SWEEP_TASKS:-markov}"
IFS=, read -ra sizes <<<"${LAB_SWEEP_SIZES:-small}"
read -ra args <<<"${LAB_SWEEP_ARGS:-}"
lab=${POSENC_LAB:-build/native-release/posenc_lab}
usage() { sed -n '/^#   scripts/p' "$0" >&2; exit 2; }
count() { [[ "${1:-}" =~ ^[1-9][0-9]*$ ]] || { echo "lab-sweep: N must be a positive integer (got '${1:-}')" >&2; exit 2; }; }

case "${1:-}" in
  submit)
    count "${2:-}"
    n=$2 wait=()
    [ "${3:-}" = --wait ] && wait=(--wait)
    command -v sbatch >/dev/null || { echo "lab-sweep: sbatch is missing (no Slurm here)" >&2; exit 1; }
    mkdir -p "$dir"
    array=$(sbatch --parsable --array="0-$((n - 1))" --output="$dir/shard-%a.log" "$0" shard-array "$n")
    echo "lab-sweep: shards: job array $array ($n tasks)"
    merge=$(sbatch --parsable "${wait[@]}" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
      --output="$dir/merge.log" "$0" merge "$n")
    echo "lab-sweep: merge: job ${merge%%;*} (after every shard has succeeded)" ;;
  shard-array)  # a Slurm array task: its index from Slurm
    count "${2:-}"
    exec "$0" shard "${SLURM_ARRAY_TASK_ID:?not in a Slurm array job}" "$2" ;;
  shard)
    [[ "${2:-}" =~ ^[0-9]+$ ]] || usage
    count "${3:-}"
    k=$2 n=$3
    for task in "${tasks[@]}"; do
      for size in "${sizes[@]}"; do
        mkdir -p "$dir/$task-$size"
        "$lab" --task "$task" --size "$size" "${args[@]}" --shard "$k/$n" --out "$dir/$task-$size/shard-$k.json"
      done
    done ;;
  merge)
    count "${2:-}"
    n=$2
    for task in "${tasks[@]}"; do
      for size in "${sizes[@]}"; do
        files=()
        for ((k = 0; k < n; k++)); do files+=("$dir/$task-$size/shard-$k.json"); done
        "$lab" --merge "$(IFS=,; echo "${files[*]}")" --out "$dir/$task-$size.json"
      done
    done ;;
  *) usage ;;
esac
