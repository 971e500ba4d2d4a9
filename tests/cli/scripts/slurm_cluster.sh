#!/bin/bash
# A Slurm cluster of one node, this host, made for one test: munged,
# slurmctld and slurmd run as background processes of this script, from a
# temporary directory of its own that holds everything they use (the munge
# key and socket, slurm.conf, state, spool, pid and log files), with every
# address they are given on loopback. Once the node is idle, COMMAND... runs
# with SLURM_CONF set (srun, sinfo... talk to this cluster); prints what
# COMMAND prints and exits with its exit code. 77, and a line saying why,
# when the daemons cannot be started here. Every daemon is stopped and every
# file removed on the way out, whatever ends the script (a timeout too).
# Usage: slurm_cluster.sh COMMAND...
set -u
work=""
pids=()

cleanup() {
    if [ ${#pids[@]} -gt 0 ]; then
        # The cluster's jobs first, so that no step outlives its slurmd.
        timeout 5 scancel --quiet --user=root 2>/dev/null
        for _ in $(seq 50); do
            [ -z "$(timeout 2 squeue -h 2>/dev/null)" ] && break
            sleep 0.1
        done
        # slurmd, slurmctld, then munged, which they authenticate with.
        for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
            kill "${pids[$i]}" 2>/dev/null
            for _ in $(seq 50); do
                kill -0 "${pids[$i]}" 2>/dev/null || break
                sleep 0.1
            done
            kill -9 "${pids[$i]}" 2>/dev/null
            wait "${pids[$i]}" 2>/dev/null
        done
    fi
    [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

skip() {
    echo "SKIP: no Slurm cluster here: $*"
    exit 77
}

for program in munged mungekey slurmctld slurmd srun sinfo squeue scancel ss; do
    command -v "$program" >/dev/null || skip "no $program in PATH"
done
# slurmd starts every job's tasks as their owner, which takes root.
[ "$(id -u)" = 0 ] || skip "slurmd needs root"

work=$(mktemp -d) || exit 1
# munged wants its socket's directory searchable by every user.
chmod 755 "$work"
mkdir "$work/state" "$work/spool"
# The variables of a Slurm job this test may run in belong to another
# cluster.
for variable in $(compgen -e); do
    [[ $variable == SLURM_* ]] && unset "$variable"
done
export SLURM_CONF="$work/slurm.conf"

# Two free ports side by side, below the kernel's ephemeral range, so that
# no client's port takes them between now and the daemons' bind().
in_use=" $(ss -Htan | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u | tr '\n' ' ') "
port=""
for _ in $(seq 100); do
    p=$((20000 + RANDOM % 12000))
    case "$in_use" in
        *" $p "* | *" $((p + 1)) "*) ;;
        *) port=$p && break ;;
    esac
done
[ -n "$port" ] || skip "no free port"

host=$(hostname -s)
cat >"$SLURM_CONF" <<CONF
ClusterName=gantrytest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

mungekey --create --keyfile="$work/munge.key" --bits=1024 2>"$work/mungekey.err" ||
    skip "mungekey: $(tail -n 1 "$work/mungekey.err")"
# Each daemon in a session of its own: a timeout's signal to this script's
# process group reaches COMMAND (srun ends its step), while the daemons stay
# up until cleanup has cancelled what is left and stops them in order.
setsid munged --foreground --key-file="$work/munge.key" --socket="$work/munge.socket" \
    --pid-file="$work/munged.pid" --log-file="$work/munged.log" \
    --seed-file="$work/munged.seed" >"$work/munged.out" 2>&1 &
pids+=($!)
setsid slurmctld -D -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
setsid slurmd -D -f "$SLURM_CONF" -N "$host" >"$work/slurmd.out" 2>&1 &
pids+=($!)

# Up when the node is idle: slurmd has registered with slurmctld, both
# authenticated by munged. A daemon that died says why in its last line.
up=""
for _ in $(seq 150); do
    if [ "$(sinfo -h -N -o %T 2>/dev/null)" = idle ]; then
        up=yes
        break
    fi
    running=" $(jobs -rp | tr '\n' ' ') "
    for pid in "${pids[@]}"; do
        case "$running" in
            *" $pid "*) ;;
            *) skip "a daemon exited: $(tail -q -n 1 "$work"/*.out | tr '\n' ' ')" ;;
        esac
    done
    sleep 0.1
done
[ -n "$up" ] || skip "the node is not idle after 15 s: $(sinfo -h -N -o '%T %E' 2>&1)"

"$@"
