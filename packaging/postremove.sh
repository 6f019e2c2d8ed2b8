#!/bin/sh
# The idemctl package's postremove (deb and rpm). The system user stays,
# as Debian's policy asks: files it owned may remain.
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
fi
