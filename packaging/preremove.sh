#!/bin/sh
# The idemctl package's preremove (deb and rpm): stop the exporter when
# the package goes away (not on upgrade: deb "upgrade", rpm 1).
set -e
case "$1" in
  remove|purge|0)
    if [ -d /run/systemd/system ]; then
      systemctl stop idemctl-exporter.service >/dev/null 2>&1 || true
      systemctl disable idemctl-exporter.service >/dev/null 2>&1 || true
    fi
    ;;
esac
