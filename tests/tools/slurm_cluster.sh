#!/bin/sh
# tests/tools/slurm_cluster.sh start|stop DIR [PID]: a one-node Slurm cluster of this machine in DIR
# (Debian's slurm-wlm and munge, as root, without systemd, cgroups or slurmdbd), every daemon on
# 127.0.0.1 ports chosen free, state, spool, logs and munge's key and socket in DIR. `start`
# writes DIR/env (`. DIR/env` sets SLURM_CONF for sbatch, scontrol, sinfo) and returns once the
# node is idle; it exits 77 with the reason when Slurm cannot start here. `stop` ends the
# daemons it started (their pid files in DIR); given a PID, `start` also leaves a watcher that
# stops them once that process is gone (a test killed at its timeout cannot run its own trap).
# The recipe: /work/shared/ENVIRONMENT-NOTES.md,
# docs/testing-firmware.md ("A cluster for tests").
set -u
cmd=${1:-} dir=${2:-} watch=${3:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

skip() { echo "slurm_cluster: $*" >&2; exit 77; }

stop() {
  for p in slurmd slurmctld munged; do
    f="$dir/run/$p.pid"
    [ -s "$f" ] && kill "$(cat "$f" 2>/dev/null)" 2>/dev/null
  done
  for p in slurmd slurmctld munged; do # wait for them (a second at most each)
    f="$dir/run/$p.pid"
    i=0
    while [ -s "$f" ] && kill -0 "$(cat "$f" 2>/dev/null)" 2>/dev/null && [ $i -lt 20 ]; do
      sleep 0.05; i=$((i + 1))
    done
    [ -s "$f" ] && kill -9 "$(cat "$f" 2>/dev/null)" 2>/dev/null
    rm -f "$f"
  done
  return 0
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
    skip "$tool not found (Debian: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] || skip "the one-node cluster runs its daemons as root; this is uid $(id -u)"
PATH=$PATH:/usr/sbin

mkdir -p "$dir/run" "$dir/state" "$dir/spool" "$dir/log" "$dir/munge-key" "$dir/munge-run" || exit 1
chmod 0700 "$dir/munge-key"
chmod 0755 "$dir" "$dir/munge-run"
key=$dir/munge-key/munge.key socket=$dir/munge-run/munge.socket
dd if=/dev/urandom of="$key" bs=1024 count=1 2>/dev/null && chmod 0400 "$key"
munged --key-file="$key" --socket="$socket" --pid-file="$dir/run/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge-key/munged.seed" --force ||
  skip "munged did not start: $(tail -n 3 "$dir/log/munged.log" 2>/dev/null)"

# four free ports on 127.0.0.1 (the kernel's choice), for slurmctld, slurmd and srun
ports=$(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
set -- $ports
name=$(hostname -s)
cat > "$dir/slurm.conf" <<CONF
ClusterName=achilles-test
SlurmctldHost=$name(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SrunPortRange=$3-$(($3 + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ReturnToService=2
MinJobAge=300
NodeName=$name NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$name Default=YES MaxTime=INFINITE State=UP
CONF
echo "export SLURM_CONF='$dir/slurm.conf'" > "$dir/env"
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
echo $! > "$dir/run/slurmctld.pid"
slurmd -D -f "$SLURM_CONF" -N "$name" > "$dir/log/slurmd.out" 2>&1 &
echo $! > "$dir/run/slurmd.pid"
i=0
while [ "$(sinfo -h -n "$name" -o %T 2>/dev/null)" != idle ]; do
  i=$((i + 1))
  if [ $i -gt 300 ]; then # 30 s
    stop
    skip "the node did not become idle within 30 s: $(tail -n 3 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" 2>/dev/null)"
  fi
  sleep 0.1
done
if [ -n "$watch" ]; then
  (while kill -0 "$watch" 2>/dev/null && [ -s "$dir/run/slurmctld.pid" ]; do sleep 1; done
   stop) > /dev/null 2>&1 < /dev/null &
fi
exit 0
