#!/bin/sh
# A short tour of gantry on this machine. Usage: scripts/demo.sh BUILD/gantry
set -eu
gantry=$1
"$gantry" --help
