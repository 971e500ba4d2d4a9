#!/bin/bash
# Hosts that a launcher reaches by ssh, as mpirun reaches other machines:
# N network namespaces (3 unless told) host0..hostN-1 on a bridge
# (lib/netns.sh), each with its own address and host name, each running
# OpenSSH's sshd on port 22 of its address. COMMAND... runs here, in this
# machine's own namespace (the launching host), which reaches the bridge by
# a link of its own: the link gains one address and one route, scope link,
# to the bridge's /24, and nothing else of this machine's routing changes.
# Everything sshd and ssh use is made in a temporary directory of this
# script (host keys, the user's key pair, authorized_keys, the daemons' and
# the client's configurations, known_hosts, pid files and logs); nothing is
# written to /etc or ~/.ssh. Prints what COMMAND prints and exits with its
# exit code; 77, and a line saying why, where the hosts cannot be made here.
# Every namespace, link, process, key and file is removed on the way out,
# whatever ends the script (a timeout too).
#
# COMMAND's environment:
#   GANTRY_TEST_SSH            an executable that is ssh with this
#                              configuration, for a launcher to run as its
#                              launch agent: `$GANTRY_TEST_SSH host1 hostname`
#   GANTRY_TEST_HOSTS          host0,host1,...
#   GANTRY_TEST_ADDRESSES      their addresses, in host order, one word each
#   GANTRY_TEST_NETNS          their namespaces, likewise
#   GANTRY_TEST_LINKS          each host's link to the bridge, in its
#                              namespace: `ip -n NS link set LINK down` cuts
#                              that host off
#   GANTRY_TEST_LOCAL_ADDRESS  this namespace's address on the bridge, the one
#                              the hosts reach the launching host at
#   GANTRY_TEST_HERE_ONLY      a directory this machine has and the hosts see
#                              empty (an empty tmpfs over it where their sshd
#                              runs): files that no shared file system takes
#                              to the other hosts
#
# Usage: ssh_hosts.sh [N] COMMAND...
set -u
# shellcheck source=tests/cli/scripts/lib/netns.sh
. "$(dirname "$0")/lib/netns.sh"
count=3
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
    count=$1
    shift
fi
if [ "$count" -lt 1 ] || [ "$count" -gt 250 ] || [ $# -eq 0 ]; then
    echo "usage: ssh_hosts.sh [N] COMMAND... (N from 1 to 250)" >&2
    exit 2
fi
# sshd re-executes itself for each connection, which takes its full path.
sshd=/usr/sbin/sshd
tag="gs$$"
hub="$tag-hub"
# This namespace's link to the bridge, and the bridge's port at its end.
local_link="v${tag}r"
hosts=() links=() addresses=()
for ((i = 0; i < count; i++)); do
    hosts+=("$tag-$i")
    links+=("v$tag$i")
done
work=""
command_pid=""

# tree PID: PID and every process under it.
# shellcheck disable=SC2317 # called by cleanup
tree() {
    local child
    echo "$1"
    for child in $(pgrep -P "$1"); do
        tree "$child"
    done
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    # COMMAND and what it started first, when a signal ends the script
    # while it runs: SIGTERM, and SIGKILL to what is left after 1 s.
    if [ -n "$command_pid" ]; then
        local processes
        processes=$(tree "$command_pid")
        # shellcheck disable=SC2086 # one word per process
        kill $processes
        for _ in $(seq 20); do
            kill -0 "$command_pid" || break
            sleep 0.05
        done
        # shellcheck disable=SC2086 # one word per process
        kill -9 $processes
        wait "$command_pid"
    fi
    # The daemons, their sessions and all they started: every process in
    # the hosts' namespaces.
    netns_remove "${hosts[@]}" "$hub"
    wait
    # Gone with its peer in the hub already; its address and route with it.
    ip link del "$local_link" 2>/dev/null
    [ -n "$work" ] && rm -rf "$work"
} 2>/dev/null # the shell's notices of the daemons it killed
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

skip() {
    echo "SKIP: no ssh hosts here: $*"
    exit 77
}

[ -x "$sshd" ] || skip "no $sshd (Debian: openssh-server)"
for program in ssh ssh-keygen ip unshare; do
    command -v "$program" >/dev/null || skip "no $program in PATH"
done
work=$(mktemp -d) || exit 1
if ! netns_hub "$hub" 2>"$work/err"; then
    skip "cannot make network namespaces: $(cat "$work/err")"
fi

# This namespace's link, without IPv6: an IPv6 link would add a link-local
# address and routes of its own to this machine, and send router
# solicitations onto the bridge.
ip link add "$local_link" type veth peer name "p$local_link" netns "$hub" || exit 1
ip -n "$hub" link set "p$local_link" master br0 up || exit 1
sysctl -qw "net.ipv6.conf.$local_link.disable_ipv6=1" || exit 1
ip link set "$local_link" up || exit 1

# The bridge's /24: 10.214.S.0/24 for an S that no route of this machine
# covers yet (the default route aside), claimed by adding its one route:
# `ip route add` fails where the same route is there already, so that
# scripts running at once never share a subnet (which would send one's
# traffic to the other's bridge). The address is a /32, which brings no
# route of its own (no prefix, no broadcast), so that this route is the
# only one; the kernel lists the address itself in its local table.
subnet=""
for ((k = 0; k < 256; k++)); do
    s=$(((k + $$) % 256))
    ip -4 route show match "10.214.$s.0/24" | grep -qv '^default' && continue
    ip addr add "10.214.$s.254/32" dev "$local_link" || exit 1
    if ip route add "10.214.$s.0/24" dev "$local_link" proto kernel scope link \
        src "10.214.$s.254" 2>/dev/null; then
        subnet=10.214.$s
        break
    fi
    ip addr del "10.214.$s.254/32" dev "$local_link"
done
[ -n "$subnet" ] || skip "no free subnet in 10.214.0.0/16"

for ((i = 0; i < count; i++)); do
    addresses+=("$subnet.$((i + 1))")
    netns_host "$hub" "${hosts[$i]}" "${links[$i]}" "${addresses[$i]}/24" || exit 1
done

# Debian's sshd, as root, confines the unprivileged half of each connection
# to /run/sshd (fixed when it was built; no option names another) and will
# not start without it. Made as the package's service makes it, and left
# when the script ends: another script's sshd may be using it.
if [ ! -d /run/sshd ]; then
    mkdir -m 0755 /run/sshd || [ -d /run/sshd ] || exit 1
fi

# The shell that sshd runs a session's command with (root's, bash) reads
# ~/.bashrc. In the mount namespace of each host's sshd (`ip netns exec`
# makes one), /dev/null stands for it: what this machine's does (print,
# or take tenths of a second a session setting up tools) is not part of
# what the tests compare or the benchmarks time. There too, an empty tmpfs
# hides what this machine has in the directory here_only.
bashrc=$(getent passwd root | cut -d : -f 6)/.bashrc
here_only="$work/here-only"
mkdir "$here_only" || exit 1

# The user's key pair (ssh-keygen writes the private key 0600, as ssh
# wants) and every host's key, which known_hosts lists under the host's
# name and address: ssh then checks each host's key and never asks.
ssh-keygen -q -t ed25519 -N '' -C gantry-test -f "$work/id_ed25519" || exit 1
cp "$work/id_ed25519.pub" "$work/authorized_keys"
pids=()
for ((i = 0; i < count; i++)); do
    dir="$work/host$i"
    mkdir "$dir"
    ssh-keygen -q -t ed25519 -N '' -C "host$i" -f "$dir/ssh_host_ed25519_key" || exit 1
    echo "host$i,${addresses[$i]} $(cut -d ' ' -f 1,2 "$dir/ssh_host_ed25519_key.pub")" \
        >>"$work/known_hosts"
    # StrictModes no: it would refuse authorized_keys for the directories
    # above it, /tmp being writable by all (the temporary directory itself
    # is root's, 0700). PermitTTY no: sshd writes utmp, wtmp and lastlog
    # for a session with a terminal only, so it writes none. UsePAM no: no
    # PAM session (and none of its files) for a test's logins.
    cat >"$dir/sshd_config" <<CONFIG
ListenAddress ${addresses[$i]}:22
AddressFamily inet
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $work/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitTTY no
PermitUserRC no
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
AllowAgentForwarding no
CONFIG
    # -D: stays this script's child; -e: its log to the file, not syslog.
    # shellcheck disable=SC2016 # expanded by that sh
    netns_exec "${hosts[$i]}" "host$i" sh -c '{ [ ! -f "$0" ] || mount --bind /dev/null "$0"; } &&
        mount -t tmpfs -o size=64k,mode=0755 gantry-here-only "$1" && shift && exec "$@"' \
        "$bashrc" "$here_only" "$sshd" -D -e -f "$dir/sshd_config" 2>"$dir/sshd.log" &
    pids+=($!)
done
# sshd writes its pid file once it listens.
for ((i = 0; i < count; i++)); do
    for _ in $(seq 200); do
        [ -s "$work/host$i/sshd.pid" ] && break
        if ! kill -0 "${pids[$i]}" 2>/dev/null; then
            echo "ssh_hosts: sshd of host$i did not start: $(cat "$work/host$i/sshd.log")" >&2
            exit 1
        fi
        sleep 0.05
    done
    if [ ! -s "$work/host$i/sshd.pid" ]; then
        echo "ssh_hosts: sshd of host$i not listening after 10 s" >&2
        exit 1
    fi
done

# The client's whole configuration: with -F, ssh reads no other file
# (neither /etc/ssh/ssh_config nor ~/.ssh/config) and makes no ~/.ssh.
{
    for ((i = 0; i < count; i++)); do
        printf 'Host host%d\n    HostName %s\n' "$i" "${addresses[$i]}"
    done
    # ConnectTimeout 2: a host that is cut off is said to be so at 2 s,
    # before the kernel gives up finding it on the bridge (3 s), so that
    # it is always "Connection timed out".
    cat <<CONFIG
Host *
    User root
    Port 22
    IdentityFile $work/id_ed25519
    IdentitiesOnly yes
    IdentityAgent none
    UserKnownHostsFile $work/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    UpdateHostKeys no
    CheckHostIP no
    BatchMode yes
    ConnectTimeout 2
    ConnectionAttempts 1
    ControlMaster no
    ControlPath none
    ForwardAgent no
    ForwardX11 no
    LogLevel ERROR
CONFIG
} >"$work/ssh_config"
printf '#!/bin/sh\nexec ssh -F "%s" "$@"\n' "$work/ssh_config" >"$work/ssh"
chmod +x "$work/ssh"

names="host0"
for ((i = 1; i < count; i++)); do
    names+=",host$i"
done
export GANTRY_TEST_SSH="$work/ssh" GANTRY_TEST_HOSTS="$names"
export GANTRY_TEST_ADDRESSES="${addresses[*]}" GANTRY_TEST_NETNS="${hosts[*]}"
export GANTRY_TEST_LINKS="${links[*]}" GANTRY_TEST_LOCAL_ADDRESS="$subnet.254"
export GANTRY_TEST_HERE_ONLY="$here_only"
# In the background, so that a signal to the script is handled at once
# rather than after COMMAND ends; its standard input is the script's.
exec 3<&0
"$@" <&3 3<&- &
command_pid=$!
wait "$command_pid"
status=$?
command_pid=""
exit $status
