#!/bin/sh
# A short tour of gantry on this machine: every command shown with what it
# prints. Usage: scripts/demo.sh BUILD/gantry
set -eu
bin=$1
probe=$(dirname "$bin")/tests/mpi_probe
gantry() { "$bin" "$@"; }

# Prints a command line as a user would type it, then runs it.
show() {
    printf '\n$ %s\n' "$1"
    eval "$1"
}

echo "== idsets (RFC 22): sets of ranks, cores, GPUs"
show 'gantry idset 1,2,3 7-9'
show 'gantry idset --count 0-2147483647'
show 'gantry idset --minus 0-10 2-3 8'

echo
echo "== hostlists (RFC 29): node names, compressed"
show 'gantry hostlist node3 node1 node2 node7'
show "gantry hostlist --sort --expand 'node[3,1]-ib' node2-ib"
show "gantry hostlist --minus 'node[1-1000000]' 'node[5-10]'"

echo
echo "== task maps (RFC 34): which node runs each task"
show "gantry taskmap '0,4,8,12;1,5,9,13;2,6,10,14;3,7,11,15'"
show "gantry taskmap --to=pmi '[[0,4,2,1],[4,2,4,1]]'"
show 'gantry taskmap --cyclic --nodes=4096 --ppn=256'
show "gantry taskmap --to=multiline '[[0,3,1,2]]'"

echo
echo "== resource sets (RFC 20): this machine, then a simulated cluster"
show 'gantry R encode --local | gantry R decode --short'
show "gantry R encode -r 0-3 -c 0-3 -g 0 -H 'node[0-3]' -p login:0 | gantry R decode --short --nodelist"
show '(gantry R encode -r 0-1 -c 0-1; gantry R encode -r 2-3 -c 0-1 -g 0-1) | gantry R append | gantry R decode --short'

echo
echo "== an MPMD program mapped on this machine (nothing is launched)"
show 'gantry run --dry-run --display map -n 1 hostname : -n 1 --map-by core --bind-to core hostname'

echo
echo "== the same kind of program on a simulated 2-node cluster, per-app policies"
show 'gantry run --dry-run --display map -H n0:4,n1:4 --topology "package:2 core:4 pu:2" -n 3 --map-by package ./solver : -n 4 --map-by core --rank-by node ./monitor'

echo
echo "== a real job on this machine: each task sees its rank and its binding"
show "gantry run -n 2 --label-io sh -c 'echo task \$GANTRY_TASK_RANK of \$GANTRY_JOB_SIZE; grep Cpus_allowed_list /proc/self/status'"

echo
echo "== a real MPMD MPI job (MPICH, through gantry's PMI-1 server): the map, then one line per rank"
show "gantry run --display map --label-io -n 1 --map-by core $probe : -n 1 --map-by package $probe"
