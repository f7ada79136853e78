#!/usr/bin/env bash
# A Slurm job array for one large nhens ensemble without MPI: task I computes shard I of K = $SHARDS
# (default 64) into $OUT/part-I-of-K.json; a dependent job merges the K parts into $OUT/merged (the bytes
# of the one-process run). Submit with:   sbatch --array=1-64 scripts/slurm-array.sh
# then:                sbatch --dependency=afterok:JOBID --wrap "nhens merge $OUT/part-*-of-64.json --out $OUT/merged"
# A task that fails or is killed writes no part (files are whole or absent): resubmit that index alone
# with sbatch --array=I (K comes from SHARDS, not from the array, so shard I of 64 is computed again).
# K may be at most the run's chunk count (256 from 2048 trajectories on).
#SBATCH --job-name=nhens-shard
#SBATCH --cpus-per-task=2
#SBATCH --time=02:00:00
set -euo pipefail
K=${SHARDS:-64}
I=${SLURM_ARRAY_TASK_ID:?submit as a job array: sbatch --array=1-$K}
[ "$I" -ge 1 ] && [ "$I" -le "$K" ] || { echo "slurm-array.sh: task $I is not a shard of 1 to $K (SHARDS)" >&2; exit 2; }
OUT=${OUT:-$PWD/nhens-1e6}
exec nhens run --system quartic --method dla01 --h 0.1 --T 1000 --energy 3.06 --ensemble 1000000 --seed 1 \
  --threads "${SLURM_CPUS_PER_TASK:-1}" --blocks "$I/$K" --out "$OUT" --quiet
