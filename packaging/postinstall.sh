#!/bin/sh
# The idemctl package's postinstall (deb and rpm): the exporter's system
# user, no home, no login; then systemd told of the unit.
set -e
if ! getent passwd idemctl >/dev/null 2>&1; then
  if command -v systemd-sysusers >/dev/null 2>&1; then
    systemd-sysusers /usr/lib/sysusers.d/idemctl.conf
  else
    nologin=$(command -v nologin || echo /bin/false)
    useradd --system --user-group --no-create-home --home-dir /nonexistent \
      --shell "$nologin" --comment "idemctl exporter" idemctl
  fi
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
fi
