#!/usr/bin/env bash
# Configures and starts munge and a one-node Slurm cluster (slurmctld + slurmd)
# on this host, for the sweep package's Slurm tests. Idempotent: when the
# cluster already answers with the configuration written here, it does
# nothing. Exits non-zero with a message naming the step that failed.
#
# Partitions:
#   debug  (default)  MaxTime=INFINITE
#   short             MaxTime=SLURM_SHORT_MAXTIME (default 1 minute), for
#                     tests of jobs that exceed their time limit
#
# Accounting storage is off; finished jobs are recorded by the job-completion
# log (jobcomp/filetxt) at $JOBCOMP (default /var/log/slurm/jobcomp.log).
# Requires root (it writes /etc/slurm/slurm.conf and starts the daemons).
set -euo pipefail

SHORT_MAXTIME=${SLURM_SHORT_MAXTIME:-1}
JOBCOMP=${JOBCOMP:-/var/log/slurm/jobcomp.log}
CONF=/etc/slurm/slurm.conf

die() { echo "slurm-up: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (writes $CONF, starts munged/slurmctld/slurmd)"
for b in munged slurmctld slurmd sinfo scontrol; do
	command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || die "$b not installed (apt-get install -y slurm-wlm munge)"
done
export PATH="$PATH:/usr/sbin"

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {printf "%d", $2/1024*0.8}' /proc/meminfo)

mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /var/lib/munge /var/log/munge
want=$(cat <<CONF
# Written by crosscluster .ci/slurm-up.sh: one-node test cluster.
ClusterName=crosscluster
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$JOBCOMP
MinJobAge=600
KillWait=2
OverTimeLimit=0
InactiveLimit=0
MaxArraySize=100001
MaxJobCount=200000
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=short Nodes=$host Default=NO MaxTime=$SHORT_MAXTIME State=UP
CONF
)

up() { timeout 5 sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; }

if [ -f "$CONF" ] && [ "$(cat "$CONF")" = "$want" ] && up; then
	echo "slurm-up: cluster already running ($host, $cpus CPUs)"
	exit 0
fi
printf '%s\n' "$want" > "$CONF"

# munge
if ! pgrep -x munged >/dev/null; then
	if [ ! -s /etc/munge/munge.key ]; then
		dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none || die "cannot create munge key"
	fi
	chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge 2>/dev/null || true
	chmod 0400 /etc/munge/munge.key
	if id munge >/dev/null 2>&1; then
		su -s /bin/sh munge -c munged 2>/dev/null || munged --force || die "munged did not start (see /var/log/munge/munged.log)"
	else
		munged --force || die "munged did not start (see /var/log/munge/munged.log)"
	fi
fi
for _ in $(seq 50); do munge -n </dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munge does not answer (munge -n | unmunge failed)"

# Restart the Slurm daemons so they read the configuration above.
# Stop only the daemons this configuration started, found by their pid files.
for d in slurmctld slurmd; do
	pidf=/run/$d.pid
	if [ -s "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
		kill "$(cat "$pidf")" || true
		for _ in $(seq 100); do kill -0 "$(cat "$pidf" 2>/dev/null)" 2>/dev/null || break; sleep 0.1; done
	fi
done
slurmctld -i || die "slurmctld did not start (see /var/log/slurm/slurmctld.log)"
slurmd || die "slurmd did not start (see /var/log/slurm/slurmd.log)"

for _ in $(seq 150); do
	if up; then
		scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true
		echo "slurm-up: cluster up ($host, $cpus CPUs; partitions debug, short MaxTime=$SHORT_MAXTIME; jobcomp $JOBCOMP)"
		exit 0
	fi
	st=$(timeout 5 sinfo -h -o '%t' 2>/dev/null || true)
	case "$st" in down*|drain*) scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true ;; esac
	sleep 0.2
done
die "node did not become idle within 30 s (sinfo: $(timeout 5 sinfo -h 2>&1 | head -1); see /var/log/slurm/slurmctld.log and slurmd.log)"
