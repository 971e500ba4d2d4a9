#!/bin/sh
# Makes sure the Debian packages gantry builds with are installed: installs
# the missing ones when run as root, otherwise prints the one command needed.
set -eu
packages="cmake ninja-build g++ pkg-config libhwloc-dev hwloc nlohmann-json3-dev libcli11-dev
libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev clang libclang-rt-14-dev
libasio-dev mpich libmpich-dev libpmix-dev openmpi-bin libopenmpi-dev jq libzmq3-dev cppzmq-dev lld
slurmctld slurmd slurm-client munge openssh-server openssh-client"
missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends $missing
else
    echo "deps: missing Debian packages; run as root:" >&2
    echo "  apt-get install -y$missing" >&2
    exit 1
fi
