#!/usr/bin/env bash
# A one-node Slurm cluster in a directory, for the test:slurm layer (and for trying the lab's sweep
# before a real cluster): munged with its own key and socket, slurmctld and slurmd (Debian's
# slurm-wlm 22.05, installed by scripts/bootstrap.sh), every file under DIR, nothing in /etc.
#   scripts/slurm-cluster.sh start DIR   # prints `export SLURM_CONF=DIR/slurm.conf` once the node is idle
#   scripts/slurm-cluster.sh stop DIR
# Needs root (the daemons run as root here, SlurmUser=root). The node is this machine, its CPUs
# and 90 % of its memory.
set -euo pipefail
cmd=${1:-} dir=${2:-}
[ -n "$dir" ] && [ "$cmd" = start -o "$cmd" = stop ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export SLURM_CONF=$dir/slurm.conf

if [ "$cmd" = stop ]; then
  scontrol shutdown >/dev/null 2>&1 || true
  pids=()
  for d in slurmctld slurmd munged; do
    [ -f "$dir/$d.pid" ] && pids+=("$(cat "$dir/$d.pid")")
  done
  [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true
  # Until they have exited (and written their last state), up to 20 s.
  for _ in $(seq 100); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && exit 0
    sleep 0.2
  done
  echo "slurm-cluster: daemons still running after 20 s: ${pids[*]}" >&2
  exit 1
fi

[ "$(id -u)" -eq 0 ] || { echo "slurm-cluster: needs root (the daemons run as root)" >&2; exit 1; }
for c in munged slurmctld slurmd sbatch; do
  command -v "$c" >/dev/null || { echo "slurm-cluster: $c is missing (scripts/bootstrap.sh installs it)" >&2; exit 1; }
done
mkdir -p "$dir"/{state,spool,log}

# A free TCP port from $1 up.
free_port() {
  local p=$1
  while ss -Htln "sport = :$p" | grep -q .; do p=$((p + 1)); done
  echo "$p"
}
ctld_port=$(free_port 6817)
slurmd_port=$(free_port $((ctld_port + 1)))
host=$(hostname -s)
mem=$(awk '/MemTotal/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)

head -c 1024 /dev/urandom > "$dir/munge.key"
chmod 600 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed"

cat > "$SLURM_CONF" <<CONF
ClusterName=posenc
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=lab Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -i
slurmd
for _ in $(seq 60); do
  if sinfo -h -o %T 2>/dev/null | grep -q idle; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 1
done
echo "slurm-cluster: the node did not become idle in 60 s; the logs:" >&2
tail -n 20 "$dir"/log/*.log >&2
"$0" stop "$dir"
exit 1
