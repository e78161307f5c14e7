#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store tests.
#
#   scripts/postgres.sh start DIR   initdb into DIR, start on 127.0.0.1 at a free port,
#                                   print `export GUARDSEARCH_TEST_PG_DSN=postgresql://...`
#   scripts/postgres.sh stop DIR    stop it (DIR can then be deleted)
#
#   eval "$(scripts/postgres.sh start /tmp/gs-pg)" && python3 -m pytest tests/unit/store
#
# Installs PostgreSQL from Debian packages (apt-get) when no pg_ctl is found. The
# server refuses to run as root, so as root it runs as the `postgres` user (created
# if missing). The pytest suite starts and stops its own server the same way.
set -euo pipefail

action=${1:-}
dir=${2:-}
if [[ -z "$action" || -z "$dir" ]]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi

find_bin() {
  local name=$1 found
  if found=$(command -v "$name" 2>/dev/null); then
    echo "$found"
    return 0
  fi
  found=$(ls -d /usr/lib/postgresql/*/bin/"$name" 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -n "$found" ]]; then
    echo "$found"
    return 0
  fi
  return 1
}

if ! find_bin pg_ctl >/dev/null || ! find_bin initdb >/dev/null; then
  echo "postgres.sh: PostgreSQL not found; installing it with apt-get" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "postgres.sh: need root to apt-get install postgresql" >&2
    exit 1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi
PG_CTL=$(find_bin pg_ctl)
INITDB=$(find_bin initdb)

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$action" in
  start)
    if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
      useradd --system --no-create-home --shell /usr/sbin/nologin postgres
    fi
    mkdir -p "$dir"
    if [[ $(id -u) -eq 0 ]]; then
      chown postgres "$dir"
    fi
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    as_owner "$INITDB" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
    as_owner "$PG_CTL" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off" \
      start >/dev/null
    echo "export GUARDSEARCH_TEST_PG_DSN=postgresql://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    as_owner "$PG_CTL" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  *)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
